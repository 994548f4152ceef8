/**
 * The golden-fixture catalog: each scenario is a scripted-model script plus one runtime call. The
 * same catalog is recorded live (fixtures record), replayed in tests, and run against other CLI
 * versions for the drift report (fixtures compare).
 */
import { appendFileSync, existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { ClaudeCodeError } from "../errors/index.js";
import type { KtxRuntimeToolDescriptor } from "../mcp/tools.js";
import { ClaudeCodeRuntime, type ClaudeCodeRuntimeOptions } from "../claude-code/runtime.js";
import type { RunLoopResult, ToolCallRecord } from "../runtime/types.js";
import { type Script, type ScriptedApiOptions, startScriptedMessagesApi, turn } from "./scripted-api.js";
import { SCENARIO_NAMES } from "./scenario-names.js";

export type Outcome = Record<string, unknown>;

export interface Scenario {
  name: string;
  description: string;
  /** False for runs that must not have an endpoint (the auth failure). */
  useApi: boolean;
  script?: Script;
  scriptOptions?: ScriptedApiOptions;
  /** Extra environment for the CLI (not scrubbed names), e.g. fewer API retries. */
  env?: Record<string, string>;
  run(runtime: ClaudeCodeRuntime, call: { transcript: { dir: string; name: string } | false }): Promise<Outcome>;
}

/** The caller's proxy settings, kept as the scrub keeps them: a proxy around the runner (e.g. a loopback trap) sees every connection. */
function proxyEnv(): Record<string, string> {
  const names = ["HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy"];
  return Object.fromEntries(names.flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : [])));
}

/** Tools of the catalog, also used by the end-to-end tests. */
export const lookup: KtxRuntimeToolDescriptor<{ term: string }> = {
  name: "lookup",
  description: "Look a term up in the KTX glossary",
  inputSchema: z.object({ term: z.string() }),
  execute: ({ term }) => ({ markdown: `**${term}**: a glossary entry`, structured: { term } }),
};
export const count: KtxRuntimeToolDescriptor<{ items: string[] }> = {
  name: "count",
  description: "Count items",
  inputSchema: z.object({ items: z.array(z.string()) }),
  execute: ({ items }) => ({ count: items.length }),
};
export const fetchPage: KtxRuntimeToolDescriptor<{ id: string }> = {
  name: "fetch_page",
  description: "Fetch a page",
  inputSchema: z.object({ id: z.string() }),
  execute: () => {
    throw new Error("page store is offline");
  },
};
const answerSchema = z.object({ answer: z.string(), n: z.number() });

/** Only what the caller sees, without ids or timings that differ between runs. */
function errorOutcome(error: unknown): Outcome {
  if (!ClaudeCodeError.isInstance(error)) throw error;
  const status = (error as { status?: number }).status;
  return { error: error.name, code: error.code, ...(status === undefined ? {} : { status }) };
}

function calls(records: ToolCallRecord[]) {
  return records.map((call) => ({ name: call.name, input: call.input, ok: call.ok }));
}

function loopOutcome(result: RunLoopResult, steps: number[]): Outcome {
  return {
    stopReason: result.stopReason,
    ...(result.error ? { error: errorOutcome(result.error) } : {}),
    steps,
    toolCalls: calls(result.toolCalls),
    toolFailures: result.toolFailures,
    text: result.text,
  };
}

async function capture(run: () => Promise<Outcome>): Promise<Outcome> {
  try {
    return await run();
  } catch (error) {
    return errorOutcome(error);
  }
}

function loop(toolSet: KtxRuntimeToolDescriptor[], stepBudget: number) {
  return (runtime: ClaudeCodeRuntime, call: { transcript: { dir: string; name: string } | false }) =>
    capture(async () => {
      const steps: number[] = [];
      const result = await runtime.runAgentLoop({
        modelRole: "default",
        systemPrompt: "You are the KTX curator.",
        userPrompt: "Curate the candidates.",
        toolSet,
        stepBudget,
        telemetryTags: { unitKey: "fixture" },
        onStepFinish: ({ stepIndex }) => {
          steps.push(stepIndex);
        },
        ...call,
      });
      return loopOutcome(result, steps);
    });
}

const FEW_RETRIES = { CLAUDE_CODE_MAX_RETRIES: "1" };

export const SCENARIOS: readonly Scenario[] = [
  {
    name: "text",
    description: "one-turn generateText",
    useApi: true,
    script: [turn.text("hello from the scripted model")],
    run: (runtime, call) => capture(async () => ({ text: (await runtime.generateTextResult({ prompt: "say hello", system: "You are a KTX test.", ...call })).text })),
  },
  {
    name: "object",
    description: "generateObject with a valid StructuredOutput call",
    useApi: true,
    // 2.1.330 ends the run at a valid StructuredOutput call; 2.1.142 asks the model once more.
    script: [turn.object({ answer: "forty-two", n: 42 }), turn.text("Done.")],
    run: (runtime, call) => capture(async () => ({ object: (await runtime.generateObjectResult({ prompt: "answer", schema: answerSchema, ...call })).object })),
  },
  {
    name: "object-schema-violation",
    description: "the model keeps sending objects that violate the schema until the CLI's retries run out",
    useApi: true,
    script: [turn.object({ wrong: true })],
    scriptOptions: { onExhausted: "repeat-last" },
    run: (runtime, call) => capture(async () => ({ object: (await runtime.generateObjectResult({ prompt: "answer", schema: answerSchema, ...call })).object })),
  },
  {
    name: "tool-loop",
    description: "two tools across three turns, natural end",
    useApi: true,
    script: [
      turn.tools({ name: "mcp__ktx__lookup", input: { term: "grain" } }),
      turn.tools({ name: "mcp__ktx__count", input: { items: ["a", "b", "c"] } }),
      turn.text("Curated."),
    ],
    run: loop([lookup, count], 6),
  },
  {
    name: "budget-exhausted",
    description: "the model keeps calling tools past a step budget of 2",
    useApi: true,
    script: [turn.tools({ name: "mcp__ktx__lookup", input: { term: "again" } })],
    scriptOptions: { onExhausted: "repeat-last" },
    run: loop([lookup], 2),
  },
  {
    name: "tool-throws",
    description: "a tool handler throws; the model sees the error and finishes",
    useApi: true,
    script: [turn.tools({ name: "mcp__ktx__fetch_page", input: { id: "p1" } }), turn.text("Gave up politely.")],
    run: loop([fetchPage], 4),
  },
  {
    name: "invalid-tool-arguments",
    description: "the model calls a tool with arguments its schema rejects",
    useApi: true,
    script: [turn.tools({ name: "mcp__ktx__lookup", input: { term: 42 } }), turn.tools({ name: "mcp__ktx__lookup", input: { term: "42" } }), turn.text("Fixed it.")],
    run: loop([lookup], 4),
  },
  {
    name: "hostile-tools",
    description: "the model asks for built-ins, another server's tool and an unknown ktx tool",
    useApi: true,
    script: [
      turn.tools(
        { name: "Bash", input: { command: "touch pwned" } },
        { name: "Write", input: { file_path: "pwned.txt", content: "pwned" } },
        { name: "Read", input: { file_path: "/etc/passwd" } },
        { name: "WebFetch", input: { url: "http://127.0.0.1:9/", prompt: "x" } },
        { name: "Task", input: { description: "x", prompt: "x", subagent_type: "general-purpose" } },
        { name: "Skill", input: { skill: "dataviz" } },
        { name: "mcp__github__create_issue", input: { title: "x" } },
        { name: "mcp__ktx__not_a_tool", input: {} },
      ),
      turn.text("I could not do any of that."),
    ],
    run: loop([lookup], 4),
  },
  {
    name: "api-429",
    description: "the API answers 429 to every request (CLI retries limited to 1)",
    useApi: true,
    env: FEW_RETRIES,
    script: () => turn.error(429, "rate limited (scripted)"),
    run: (runtime, call) => capture(async () => ({ text: (await runtime.generateTextResult({ prompt: "hi", ...call })).text })),
  },
  {
    name: "api-overloaded",
    description: "the API answers 529 overloaded to every request (CLI retries limited to 1)",
    useApi: true,
    env: FEW_RETRIES,
    script: () => turn.error(529, "overloaded (scripted)"),
    run: (runtime, call) => capture(async () => ({ text: (await runtime.generateTextResult({ prompt: "hi", ...call })).text })),
  },
  {
    name: "api-500-then-ok",
    description: "one 500, then an answer: the CLI's own retry recovers",
    useApi: true,
    script: [turn.error(500, "internal error (scripted)"), turn.text("recovered")],
    run: (runtime, call) => capture(async () => ({ text: (await runtime.generateTextResult({ prompt: "hi", ...call })).text })),
  },
  {
    name: "auth-failure",
    description: "no local session and no endpoint, with ANTHROPIC_API_KEY in the parent env",
    useApi: false,
    env: { ANTHROPIC_API_KEY: "sk-ant-parent-key-must-not-be-used" },
    run: (runtime, call) => capture(async () => ({ text: (await runtime.generateTextResult({ prompt: "hi", ...call })).text })),
  },
  {
    name: "huge-system-prompt",
    description: "a 256 KiB system prompt (over Linux's 128 KiB argv limit) travels over stdin",
    useApi: true,
    script: [turn.text("read it all")],
    run: (runtime, call) =>
      capture(async () => ({ text: (await runtime.generateTextResult({ prompt: "go", system: `BEGIN ${"k".repeat(256 * 1024)} END`, ...call })).text })),
  },
];

if (SCENARIOS.map((scenario) => scenario.name).join() !== SCENARIO_NAMES.join()) {
  throw new Error(`scenario-names.ts lists ${SCENARIO_NAMES.join(", ")}; the catalog holds ${SCENARIOS.map((scenario) => scenario.name).join(", ")}: make them the same`);
}

export function findScenario(name: string): Scenario {
  const scenario = SCENARIOS.find((candidate) => candidate.name === name);
  if (!scenario) throw new Error(`Unknown scenario ${JSON.stringify(name)}; known: ${SCENARIOS.map((s) => s.name).join(", ")}`);
  return scenario;
}

export interface ScenarioRunOptions {
  cliPath: string;
  allowUnverifiedCli?: boolean;
  /** Record the run's transcript as `<dir>/<scenario>.jsonl` with the outcome appended. */
  transcriptDir?: string;
  /** Replays need an endpoint shape identical to the recording but no server. */
  fakeEndpoint?: boolean;
  extra?: Partial<ClaudeCodeRuntimeOptions>;
  /**
   * Make the project dir exactly this many characters long (see `makeDirOfLength`); when no temp
   * root is short enough, the usual dir is used and the run's transcript header shows its length.
   */
  projectDirLength?: number;
}

/** The random tail `mkdtemp` appends. */
const RANDOM_TAIL = 6;

/**
 * A fresh directory whose path (as the CLI sees it, symlinks resolved) is exactly `length`
 * characters: under the temp dir, else under /tmp; undefined when neither is short enough. The CLI
 * names its project dir in every API request (the environment reminder), so the scripted API's
 * input-token counts, and the costs from them, follow the path's length: a drift report runs each
 * scenario in a dir as long as its recording's, whatever TMPDIR is.
 */
export function makeDirOfLength(prefix: string, length: number): string | undefined {
  const roots = [tmpdir(), "/tmp"].filter((root) => existsSync(root)).map((root) => realpathSync(root));
  for (const root of new Set(roots)) {
    const stem = length - root.length - 1 - RANDOM_TAIL;
    if (stem < 1) continue;
    const dir = mkdtempSync(join(root, prefix.slice(0, stem).padEnd(stem, "x")));
    if (dir.length === length) return dir;
    rmSync(dir, { recursive: true, force: true });
  }
  return undefined;
}

/** Runs one scenario in fresh project and HOME directories; returns its outcome. */
export async function runScenario(scenario: Scenario, options: ScenarioRunOptions): Promise<Outcome> {
  const prefix = `ktx-scenario-${scenario.name}-`;
  const projectDir = (options.projectDirLength !== undefined && makeDirOfLength(prefix, options.projectDirLength)) || mkdtempSync(join(tmpdir(), prefix));
  const home = mkdtempSync(join(tmpdir(), "ktx-scenario-home-"));
  const api = scenario.useApi && !options.fakeEndpoint ? await startScriptedMessagesApi(scenario.script ?? [], scenario.scriptOptions) : undefined;
  try {
    const runtime = new ClaudeCodeRuntime({
      projectDir,
      models: { default: "sonnet" },
      cliPath: options.cliPath,
      allowUnverifiedCli: options.allowUnverifiedCli,
      // Few API retries: a script that runs dry fails in seconds instead of backing off for minutes.
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, CLAUDE_CODE_MAX_RETRIES: "2", ...proxyEnv(), ...scenario.env },
      ...(scenario.useApi ? { apiEndpoint: { baseUrl: api?.baseUrl ?? "http://127.0.0.1:9", apiKey: "sk-test-scripted" } } : {}),
      // The catalog runs on the base URL or with no login at all (an empty HOME), and its replays on a stand-in
      // that makes no request: there is never a request for the runtime's interceptor to check, so it is off
      // explicitly (the fixtures were recorded so, every version alike).
      wire: false,
      idleTimeoutMs: 60_000,
      timeoutMs: 120_000,
      warm: false, reuse: false,
      ...options.extra,
    });
    const transcript = options.transcriptDir ? { dir: options.transcriptDir, name: scenario.name } : false;
    const outcome = await scenario.run(runtime, { transcript });
    if (options.transcriptDir) {
      appendFileSync(join(options.transcriptDir, `${scenario.name}.jsonl`), `${JSON.stringify({ kind: "outcome", scenario: scenario.name, outcome })}\n`);
    }
    return outcome;
  } finally {
    await api?.close();
    rmSync(projectDir, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
}
