/**
 * The first-party shape recorder (docs/isolation.md, "The wire check"; docs/compatibility.md): runs a
 * CLI on the first-party path against the scripted API's first-party mode, through the runtime's
 * interceptor in record mode (nothing checked, every request captured and forwarded), over the call
 * kinds that matter, and returns what it sent. wire-shape-derive.ts turns that into the version's
 * shape file (shape-file.ts).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { cliVersion } from "../binary/locate.js";
import { ClaudeCodeRuntime, type ClaudeCodeRuntimeOptions } from "../claude-code/runtime.js";
import { WireInterceptor, type WireRecordedRequest } from "../claude-code/wire/interceptor.js";
import { resolveModelValue } from "../claude-code/models.js";
import { type InstructionFile, projectInstructionFiles } from "../claude-code/capabilities/project.js";
import type { KtxRuntimeToolDescriptor } from "../mcp/tools.js";
import { FIRST_PARTY_HOSTS } from "./first-party.js";
import { clockShiftLibrary, gitWorktree, midnightClockLine } from "./clock-shift.js";
import { type RecordedRequest, startScriptedMessagesApi, type ScriptedTurn, turn } from "./scripted-api.js";

/** One request the CLI sent, with the call kind it belonged to. */
export interface RecordedWireRequest extends WireRecordedRequest {
  call: string;
  /** The status the scripted API answered a Messages request with instead of a turn (the 503 of the re-sent call). */
  answeredWith?: number;
}

/** What a call of the recording was built from: what the check compares the request with. */
export interface RecordedCall {
  name: string;
  model: string;
  system: string;
  prompt: string;
  /** Values the CLI writes into its reminders, to turn into placeholders. */
  projectDir: string;
  /** The project's instruction files the call opted into (`capabilities.projectInstructions`), as the CLI reads them. */
  instructions?: InstructionFile[];
  ok: boolean;
  error?: string;
  ms: number;
}

export interface WireRecording {
  version: string;
  cliPath: string;
  requests: RecordedWireRequest[];
  calls: RecordedCall[];
  /** CONNECTs and requests the recording interceptor could not serve (hosts outside the first-party ones), per call. */
  refused: Array<{ call: string; what: string }>;
  /** The values of this machine the CLI names in its reminders (placeholder values). */
  values: { email: string; date: string };
  ms: number;
}

export const RECORDER_SYSTEM = "You are terse.";
export const RECORDER_EMAIL = "scripted@example.invalid";

const echo: KtxRuntimeToolDescriptor<{ text: string }> = {
  name: "echo",
  description: "Echoes its text.",
  inputSchema: z.object({ text: z.string() }),
  execute: async ({ text }) => ({ markdown: `echo: ${text}` }),
};
const titleSchema = z.object({ title: z.string() });
const NUDGE_PROMPT = "A title, after one reply without it";
const LOOP_SYSTEM = "Use echo twice.";
/** A full model id with a date, as a ktx.yaml may name one. */
const DATED_MODEL = "claude-sonnet-4-5-20250929";
/** A model id the CLI has no facts for (a newer model than the CLI). */
const UNKNOWN_MODEL = "claude-scripted-9-9";
/** The call kind whose non-Messages requests are not needed (non-essential traffic, refused in use). */
export const CHATTY = "text, non-essential traffic on";
/**
 * The call kind whose first Messages request is answered 503 (a transient outage), so what the CLI
 * sends when it tries again becomes part of the shape (2.1.286 on, first party, re-send it once, silently,
 * with `anthropic-dispatch-id: v2p`; 2.1.142 and 2.1.200 retry it announced, with nothing new); then a second call on the same process, which shows whether
 * anything of the re-send stays on the process's later requests.
 */
export const RESENT = "text, 503 once";
/** The status of the recorder's scripted outage. */
export const RESENT_STATUS = 503;
/**
 * The call kind that drives a session's compaction (two turns, the first answered with a usage past the
 * session's auto-compact window): its summary request and the turn after it become the shape's `compaction`.
 */
export const COMPACTION_CALL = "session, compaction";
/** The same after a tool call (2.1.330's instructions then hold one more rule). */
export const COMPACTION_TOOL_CALL = "session, compaction after a tool call";
/** Inside a session's first turn, between a tool call and its result (the continuation then keeps no later message). */
export const COMPACTION_IN_TURN_CALL = "session, compaction inside a turn";
export const COMPACTION_CALLS: readonly string[] = [COMPACTION_CALL, COMPACTION_TOOL_CALL, COMPACTION_IN_TURN_CALL];
export const COMPACTION_PROMPT_3 = "Echo 7, then stop";
/** The first turn's prompt and the summary the recorder's model writes (wire-shape-derive.ts finds it in the continuation). */
export const COMPACTION_PROMPT_1 = "Remember the number 7";
export const COMPACTION_PROMPT_2 = "And now?";
export const COMPACTION_SUMMARY = "The user asked to remember the number 7.";
/** The call kind that opts into the built-in file tools (`capabilities.builtinTools: "edit"`): their definitions become the shape's `builtinTools`. */
export const BUILTIN_TOOLS_CALL = "text, built-in file tools";
/** The call kind that opts into Bash unsandboxed (`capabilities.bash: { sandbox: false }`): its definition becomes the shape's `builtinTools` entry "Bash". */
export const BASH_CALL = "text, bash unsandboxed";
/** The call kind that opts into web search (`capabilities.webSearch`): WebSearch's definition and the CLI's own search request become the shape's. */
export const WEB_SEARCH_CALL = "text, web search";
/** The call kind that opts into subagents (`capabilities.subagents`): the Agent tool's definition and the subagent's own request become the shape's. */
export const SUBAGENTS_CALL = "text, subagent";
/** The recorder's agent: its name, prompt and the task its model hands it. */
export const RECORDER_AGENT = { name: "reviewer", description: "Reviews one statement.", prompt: "You are the recorder's reviewer. Answer in one line." } as const;
export const RECORDER_AGENT_TASK = "Review the statement: one row per order line.";
/**
 * What the recorder's model searches for, and the scripted API's server-side results: text in a scripted answer
 * (example.com, reserved for examples), which nothing fetches; the API runs a real search server side.
 */
export const WEB_SEARCH_QUERY = "grain of an orders table";
export const WEB_SEARCH_RESULTS = [{ url: "https://example.com/orders-grain", title: "The grain of an orders table" }] as const;

const toolResults = (body: any): number =>
  (body?.messages ?? []).reduce((sum: number, message: any) => sum + (Array.isArray(message.content) ? message.content.filter((block: any) => block.type === "tool_result").length : 0), 0);
const firstUserText = (body: any): string => {
  const content = body?.messages?.[0]?.content;
  return typeof content === "string" ? content : Array.isArray(content) ? content.filter((block: any) => block.type === "text" && !String(block.text).startsWith("<system-reminder>")).map((block: any) => block.text).join("") : "";
};

/** The call kind that opts into the project's instructions (`capabilities.projectInstructions`): their reminder becomes the shape's `projectInstructions`. */
export const PROJECT_INSTRUCTIONS_CALL = "text, project instructions";
/** Its project's CLAUDE.md and one rule: two files, so the recording shows what stands between two. */
export const PROJECT_INSTRUCTIONS_FILES: Readonly<Record<string, string>> = {
  "CLAUDE.md": "Answer in one short sentence.\n",
  ".claude/rules/tone.md": "Keep a friendly tone.\n",
};

/**
 * Model ids recorded with their own calls (MODEL_VARIANT call kinds): what each adds to the base shape
 * becomes the shape file's `modelVariants`, admitted only for those ids; an id that adds nothing is left
 * out. Every id of the CLI's own model table (read from its binary: `{id:"claude-sonnet-5-5",family:…}`,
 * `cliModelIds`), or where none is found these, 2.1.330's (2.1.331's and 2.1.332's are the same): the ids
 * with `per_turn_effort` in its table (claude-haiku-5-5, claude-sonnet-5-5, claude-opus-5-5, where its aliases
 * point, claude-fable-5-1, -5-2, claude-mythos-5-2) add the beta per-turn-control-2026-07-01 and effort per
 * turn; `silent_turn_reminder` is claude-sonnet-5-5's (measured: others get the reminder too); and others
 * of the table send their environment as a system turn (claude-sonnet-5, claude-opus-5…), measured.
 */
export const VARIANT_MODELS: readonly string[] = [
  "claude-3-5-haiku", "claude-haiku-5-5", "claude-3-5-sonnet", "claude-3-7-sonnet", "claude-sonnet-4-0", "claude-sonnet-4-5", "claude-sonnet-5", "claude-sonnet-5-5",
  "claude-opus-4-0", "claude-opus-4-1", "claude-opus-4-5", "claude-opus-4-6", "claude-opus-4-8", "claude-opus-5", "claude-opus-5-5",
  "claude-fable-5", "claude-fable-5-1", "claude-fable-5-2", "claude-mythos-5", "claude-mythos-5-1", "claude-mythos-5-2",
];

/** The ids of the CLI's model table in its binary (each entry starts `{id:"claude-…",family:"`), without those the base calls record. */
export function cliModelIds(cliPath: string): string[] {
  let binary: Buffer;
  try {
    binary = readFileSync(cliPath);
  } catch {
    return [];
  }
  const ids = new Set<string>();
  const marker = Buffer.from('{id:"claude-');
  for (let at = binary.indexOf(marker); at >= 0; at = binary.indexOf(marker, at + marker.length)) {
    const entry = /^\{id:"(claude-[a-z0-9.-]+)",family:"/.exec(binary.subarray(at, at + 120).toString("latin1"));
    if (entry) ids.add(entry[1]!);
  }
  return [...ids].filter((id) => !BASE_MODEL_IDS.includes(id));
}

/** The ids the base calls run on (the aliases' targets in models.ts). */
const BASE_MODEL_IDS: readonly string[] = ["claude-sonnet-4-6", "claude-haiku-4-5", "claude-opus-4-7"];
/** The call kinds recorded per variant model (the model id follows). */
export const MODEL_VARIANT = "model variant";
/**
 * `[1m]` ids (models.ts accepts them): 2.1.330 strips the suffix from the body's model of every id and adds
 * the beta context-1m-2025-08-07, except on ids whose table entry has a 1M window of its own (`native_1m`:
 * claude-sonnet-5-5[1m], claude-fable-5[1m] sent no beta, measured). Two ids with the beta are recorded.
 */
export const ONE_M_MODELS: readonly string[] = ["claude-sonnet-4-6[1m]", "claude-opus-4-7[1m]"];
export const ONE_M_CALL = "text, [1m] model id";
/** The call kind whose project dir is a linked git worktree (the environment reminder gets lines of its own). */
export const WORKTREE_CALL = "text, project dir in a git worktree";
/**
 * The call kind of an agent loop that runs across midnight UTC, so the CLI's date-change reminder becomes
 * part of the shape: the CLI runs with a clock shifted to 3 s before midnight (clock-shift.ts, an
 * LD_PRELOAD library; 2.1.330 honours no date setting of its own — CLAUDE_CODE_OVERRIDE_DATE, in its
 * bundle, changed nothing, measured), and the loop's tool waits past midnight. Not recorded where the
 * library cannot be built (no C compiler).
 */
export const MIDNIGHT_CALL = "agent loop across midnight UTC";
const MIDNIGHT_PROMPT = "go, past midnight";
const MIDNIGHT_WAIT_MS = 4_000;
/** A tool that waits `ms` (the midnight loop's, and the e2e test's of it). */
export const waitTool: KtxRuntimeToolDescriptor<{ ms: number }> = {
  name: "wait",
  description: "Waits.",
  inputSchema: z.object({ ms: z.number() }),
  execute: async ({ ms }) => {
    await new Promise((done) => setTimeout(done, ms));
    return { markdown: "waited" };
  },
};

/** An agent loop's prompt that makes the scripted model call a tool SILENT_STEPS times without text (the silent-turn reminder comes after 5). */
const SILENT_PROMPT = "go, silently";
const SILENT_STEPS = 6;
/** Whether a call kind is one of the variant kinds (kept out of the base shape: what they add is admitted only for them). */
export const isVariantCall = (name: string): boolean => name.startsWith(`${MODEL_VARIANT}, `) || name.startsWith(`${ONE_M_CALL}, `) || name === WORKTREE_CALL;

/** The file the built-in tools call reads (in its project dir), set while that call runs. */
let builtinReadPath: string | undefined;
export const BUILTIN_READ_TEXT = "one row per order line\n";

/** The scripted model: answers each request by what it carries, so every call kind gets the turns it needs on any version. */
function answer(request: RecordedRequest): ScriptedTurn {
  const body = request.body;
  if (request.headers["x-claude-code-request-class"] === "compaction") return turn.text(`<analysis>One turn.</analysis>\n\n<summary>\n${COMPACTION_SUMMARY}\n</summary>`);
  // Past the session's window (100k): the CLI compacts before the next turn.
  // After a compaction the summary stands for the turns before: the model is done.
  if (JSON.stringify(body?.messages ?? []).includes(COMPACTION_SUMMARY)) return turn.text("Done.");
  // A tool call whose response is past the window: the CLI compacts before it sends the tool's result.
  if (firstUserText(body) === COMPACTION_PROMPT_3 && (body?.messages?.length ?? 0) === 1) return { toolCalls: [{ name: "mcp__ktx__echo", input: { text: "7" } }], usage: { input_tokens: 190_000 } };
  if (firstUserText(body) === COMPACTION_PROMPT_1 && (body?.messages?.length ?? 0) === 1) {
    return (body?.tools ?? []).some((tool: any) => tool.name === "mcp__ktx__echo") ? turn.tools({ name: "mcp__ktx__echo", input: { text: "7" } }) : { text: "Noted.", usage: { input_tokens: 190_000 } };
  }
  if (firstUserText(body) === COMPACTION_PROMPT_1 && (body?.messages?.length ?? 0) === 3) return { text: "Noted.", usage: { input_tokens: 190_000 } };
  const tools: string[] = (body?.tools ?? []).map((tool: any) => tool.name);
  const results = toolResults(body);
  if (tools.includes("StructuredOutput")) {
    // 2.1.142 asks once more after a valid StructuredOutput call: a closing text.
    if (results > 0) return turn.text("Done.");
    // The nudge: one reply without the object, so the CLI adds its structured-output reminder.
    if (firstUserText(body) === NUDGE_PROMPT && (body?.messages?.length ?? 0) === 1) return turn.text("No object yet.");
    return turn.object({ title: "T" });
  }
  if (tools.includes("Read") && builtinReadPath) {
    // One Read of a file in the project dir, so what the CLI adds to a built-in tool's result is recorded too.
    if (results === 0) return turn.tools({ name: "Read", input: { file_path: builtinReadPath } });
    return turn.text("read");
  }
  if (JSON.stringify(body?.system ?? "").includes(RECORDER_AGENT.prompt)) return turn.text("Reviewed: it holds.");
  if (tools.includes("Agent")) {
    if (results === 0) return turn.tools({ name: "Agent", input: { subagent_type: RECORDER_AGENT.name, description: "Review it", prompt: RECORDER_AGENT_TASK } });
    return turn.text("delegated");
  }
  if ((body?.tools ?? []).some((tool: any) => String(tool?.type ?? "").startsWith("web_search_"))) {
    // The CLI's own search request: the API runs the search server side.
    return turn.webSearch(WEB_SEARCH_QUERY, WEB_SEARCH_RESULTS, "One row per order line.");
  }
  if (tools.includes("WebSearch")) {
    if (results === 0) return turn.tools({ name: "WebSearch", input: { query: WEB_SEARCH_QUERY } });
    return turn.text("searched");
  }
  if (tools.includes("Bash")) {
    // One command in the project dir, so what the CLI adds to Bash's result is recorded too.
    if (results === 0) return turn.tools({ name: "Bash", input: { command: "pwd", description: "Print the working directory" } });
    return turn.text("ran");
  }
  if (tools.includes("mcp__ktx__wait")) return results === 0 ? turn.tools({ name: "mcp__ktx__wait", input: { ms: MIDNIGHT_WAIT_MS } }) : turn.text("after midnight");
  if (tools.includes("mcp__ktx__echo") && firstUserText(body) === SILENT_PROMPT) return results < SILENT_STEPS ? turn.tools({ name: "mcp__ktx__echo", input: { text: String(results) } }) : turn.text("loop done");
  if (tools.includes("mcp__ktx__echo")) {
    if (results === 0) return turn.tools({ name: "mcp__ktx__echo", input: { text: "a" } });
    if (results === 1) return turn.tools({ name: "mcp__ktx__echo", input: { text: "b" } });
    return turn.text("loop done");
  }
  return turn.text("hello");
}

export interface RecordWireOptions {
  cliPath: string;
  /** Progress lines (stderr). */
  progress?(text: string): void;
  /** Extra environment for the CLI (tests). */
  env?: Record<string, string>;
  /** Only these call kinds (besides the first, "text, fresh login"): a quicker partial recording. */
  only?: readonly string[];
}

/** Runs the call kinds on `cliPath` and returns every request it sent, per call. */
export async function recordWire(options: RecordWireOptions): Promise<WireRecording> {
  const started = performance.now();
  const version = await cliVersion(options.cliPath);
  // A wrapper script at cliPath has no table: the fixed list then.
  const read = cliModelIds(options.cliPath);
  const variantModels = read.length > 0 ? read : VARIANT_MODELS;
  // The first Messages request of the RESENT call is answered with the outage (marked on the interceptor's copy of it).
  let outage = false;
  const api = await startScriptedMessagesApi(
    (request) => {
      if (!outage) return answer(request);
      outage = false;
      const sent = requests.findLast((recorded) => recorded.method === "POST" && recorded.path === "/v1/messages");
      if (sent) sent.answeredWith = RESENT_STATUS;
      return turn.error(RESENT_STATUS, "scripted outage (the recorder's re-sent call)");
    },
    { firstParty: true },
  );
  const front = api.firstParty!;
  const requests: RecordedWireRequest[] = [];
  const calls: RecordedCall[] = [];
  const refused: WireRecording["refused"] = [];
  let current = "start";
  const interceptor = await WireInterceptor.start({
    env: {},
    upstream: { proxy: front.proxyUrl, ca: front.caPem },
    record: { hosts: [...FIRST_PARTY_HOSTS], onRequest: (request) => requests.push({ ...request, call: current }) },
  });
  const session = interceptor.newSession();
  const dirs: string[] = [];
  const dir = (prefix: string) => {
    const path = mkdtempSync(join(tmpdir(), `ktx-wire-${prefix}-`));
    dirs.push(path);
    return path;
  };
  const home = (expired = false) => front.login(dir("home"), { expired });
  const envFor = (homeDir: string): Record<string, string> => ({
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: homeDir,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    ...options.env,
    // The recording interceptor as the user's proxy: the runtime's own interceptor is off (`wire: false`), so it stays out of the way.
    ...session.env,
    NO_PROXY: "127.0.0.1,localhost,::1",
  });
  const projects = new WeakMap<ClaudeCodeRuntime, string>();
  const runtime = (homeDir: string, extra: Partial<ClaudeCodeRuntimeOptions> = {}) => {
    const projectDir = dir("project");
    const made = new ClaudeCodeRuntime({
      projectDir,
      models: { default: "sonnet", triage: "haiku", curator: "opus", repair: DATED_MODEL, reconcile: UNKNOWN_MODEL },
      env: envFor(homeDir),
      cliPath: options.cliPath,
      allowUnverifiedCli: true,
      wire: false,
      warm: false,
      reuse: false,
      ...extra,
    });
    projects.set(made, projectDir);
    return made;
  };
  const call = async (name: string, rt: ClaudeCodeRuntime, model: string, system: string, prompt: string, work: () => Promise<unknown>) => {
    current = name;
    const began = performance.now();
    const entry: RecordedCall = { name, model, system, prompt, projectDir: projects.get(rt)!, ok: true, ms: 0 };
    try {
      await work();
    } catch (error) {
      entry.ok = false;
      entry.error = `${(error as Error).name}: ${(error as Error).message}`.split("\n")[0];
    }
    entry.ms = Math.round(performance.now() - began);
    for (const what of [...session.refusals.splice(0), ...front.refused.splice(0)]) refused.push({ call: name, what });
    calls.push(entry);
    options.progress?.(`  ${name}: ${entry.ok ? "ok" : entry.error} (${(entry.ms / 1000).toFixed(1)} s)\n`);
  };
  try {
    const mainHome = home();
    const plain = runtime(mainHome);
    const text = (name: string, rt: ClaudeCodeRuntime, role: "default" | "triage" | "curator" | "repair" | "reconcile", model: string, system = RECORDER_SYSTEM) =>
      call(name, rt, model, system, "Say hi", () => rt.generateText({ role, ...(system ? { system } : {}), prompt: "Say hi" }));
    const steps: Array<[string, () => Promise<unknown>]> = [
      // The first call of a fresh HOME goes out before the OAuth profile is cached (no account context yet).
      ["text, fresh login", () => text("text, fresh login", plain, "default", "sonnet")],
      ["text", () => text("text", plain, "default", "sonnet")],
      ["text, no system prompt", () => text("text, no system prompt", plain, "default", "sonnet", "")],
      ["text, haiku", () => text("text, haiku", plain, "triage", "haiku")],
      ["text, opus", () => text("text, opus", plain, "curator", "opus")],
      ["text, dated model id", () => text("text, dated model id", plain, "repair", DATED_MODEL)],
      ["text, unknown model id", () => text("text, unknown model id", plain, "reconcile", UNKNOWN_MODEL)],
      ["object", () => call("object", plain, "sonnet", "", "A title", () => plain.generateObject({ role: "default", prompt: "A title", schema: titleSchema }))],
      ["object, nudged", () => call("object, nudged", plain, "sonnet", "", NUDGE_PROMPT, () => plain.generateObject({ role: "default", prompt: NUDGE_PROMPT, schema: titleSchema }))],
      ["agent loop, 2 tool calls", () => call("agent loop, 2 tool calls", plain, "sonnet", LOOP_SYSTEM, "go", () => plain.runAgentLoop({ modelRole: "default", systemPrompt: LOOP_SYSTEM, userPrompt: "go", toolSet: { echo }, stepBudget: 5, telemetryTags: {} }))],
      ["agent loop, step budget reached", () => call("agent loop, step budget reached", plain, "sonnet", LOOP_SYSTEM, "go, once", () => plain.runAgentLoop({ modelRole: "default", systemPrompt: LOOP_SYSTEM, userPrompt: "go, once", toolSet: { echo }, stepBudget: 1, telemetryTags: {} }))],
      ...(["off", { budgetTokens: 2048 }] as const).map((thinking): [string, () => Promise<unknown>] => {
        const name = thinking === "off" ? "thinking off" : "thinking budget";
        return [name, async () => {
          const rt = runtime(mainHome, { thinking });
          await text(name, rt, "default", "sonnet");
          await rt.close();
        }];
      }),
      ["reused process", async () => {
        const reused = runtime(mainHome, { reuse: {} });
        for (const index of [1, 2]) await text(`reused process, call ${index}`, reused, "default", "sonnet");
        await reused.close();
      }],
      [RESENT, async () => {
        // Its own HOME and process, so whatever the CLI keeps of an outage changes no other call kind's requests.
        const resent = runtime(home(), { reuse: {} });
        outage = true;
        await text(RESENT, resent, "default", "sonnet");
        await text(`${RESENT}, then a call on the same process`, resent, "default", "sonnet");
        await resent.close();
      }],
      [BUILTIN_TOOLS_CALL, async () => {
        const rt = runtime(mainHome);
        const model = resolveModelValue("sonnet")!.id;
        builtinReadPath = join(projects.get(rt)!, "grain.md");
        writeFileSync(builtinReadPath, BUILTIN_READ_TEXT);
        try {
          await call(BUILTIN_TOOLS_CALL, rt, model, RECORDER_SYSTEM, "Say hi", () =>
            rt.host.run({ model, system: RECORDER_SYSTEM, prompt: "Say hi", maxTurns: 3, tools: [], capabilities: { builtinTools: "edit" } }, rt.host.limitsFor(undefined, rt.host.logger)),
          );
        } finally {
          builtinReadPath = undefined;
        }
        await rt.close();
      }],
      [PROJECT_INSTRUCTIONS_CALL, async () => {
        const rt = runtime(mainHome);
        const model = resolveModelValue("sonnet")!.id;
        const projectDir = projects.get(rt)!;
        for (const [name, text] of Object.entries(PROJECT_INSTRUCTIONS_FILES)) {
          mkdirSync(join(projectDir, name, ".."), { recursive: true });
          writeFileSync(join(projectDir, name), text);
        }
        await call(PROJECT_INSTRUCTIONS_CALL, rt, model, RECORDER_SYSTEM, "Say hi", () =>
          rt.host.run({ model, system: RECORDER_SYSTEM, prompt: "Say hi", maxTurns: 1, tools: [], capabilities: { projectInstructions: true } }, rt.host.limitsFor(undefined, rt.host.logger)),
        );
        calls.at(-1)!.instructions = projectInstructionFiles(projectDir);
        await rt.close();
      }],
      ...variantModels.map((model): [string, () => Promise<unknown>] => [`${MODEL_VARIANT}, ${model}`, async () => {
        const rt = runtime(mainHome, { models: { default: model } });
        await text(`${MODEL_VARIANT}, ${model}, text`, rt, "default", model);
        await call(`${MODEL_VARIANT}, ${model}, object`, rt, model, "", "A title", () => rt.generateObject({ role: "default", prompt: "A title", schema: titleSchema }));
        await call(`${MODEL_VARIANT}, ${model}, agent loop, ${SILENT_STEPS} silent tool calls`, rt, model, LOOP_SYSTEM, SILENT_PROMPT, () =>
          rt.runAgentLoop({ modelRole: "default", systemPrompt: LOOP_SYSTEM, userPrompt: SILENT_PROMPT, toolSet: { echo }, stepBudget: SILENT_STEPS + 2, telemetryTags: {} }),
        );
        await rt.close();
      }]),
      ...ONE_M_MODELS.map((model): [string, () => Promise<unknown>] => [`${ONE_M_CALL}, ${model}`, async () => {
        const rt = runtime(mainHome, { models: { default: model } });
        await text(`${ONE_M_CALL}, ${model}`, rt, "default", model);
        await rt.close();
      }]),
      [WORKTREE_CALL, async () => {
        const worktree = gitWorktree(dir("worktree"));
        const rt = runtime(mainHome, { projectDir: worktree });
        projects.set(rt, worktree);
        await text(WORKTREE_CALL, rt, "default", "sonnet");
        await rt.close();
      }],
      [MIDNIGHT_CALL, async () => {
        const library = clockShiftLibrary(dir("clock"));
        if (!library) {
          options.progress?.(`  ${MIDNIGHT_CALL}: not recorded (no C compiler for the clock-shift library)\n`);
          return;
        }
        // 3 s before the next midnight UTC when the CLI starts (it starts with the call: no warm or reused process).
        const wrapper = join(dir("bin"), "claude-midnight");
        writeFileSync(wrapper, `#!/bin/sh\n${midnightClockLine(library)}\nexec '${options.cliPath.replace(/'/g, "'\\''")}' "$@"\n`, { mode: 0o755 });
        const rt = runtime(mainHome, { cliPath: wrapper });
        await call(MIDNIGHT_CALL, rt, "sonnet", LOOP_SYSTEM, MIDNIGHT_PROMPT, () => rt.runAgentLoop({ modelRole: "default", systemPrompt: LOOP_SYSTEM, userPrompt: MIDNIGHT_PROMPT, toolSet: { wait: waitTool }, stepBudget: 3, telemetryTags: {} }));
        await rt.close();
      }],
      [BASH_CALL, async () => {
        const rt = runtime(mainHome);
        const model = resolveModelValue("sonnet")!.id;
        await call(BASH_CALL, rt, model, RECORDER_SYSTEM, "Say hi", () =>
          rt.host.run({ model, system: RECORDER_SYSTEM, prompt: "Say hi", maxTurns: 3, tools: [], capabilities: { bash: { sandbox: false } } }, rt.host.limitsFor(undefined, rt.host.logger)),
        );
        await rt.close();
      }],
      [WEB_SEARCH_CALL, async () => {
        const rt = runtime(mainHome);
        const model = resolveModelValue("sonnet")!.id;
        await call(WEB_SEARCH_CALL, rt, model, RECORDER_SYSTEM, "Say hi", () =>
          rt.host.run({ model, system: RECORDER_SYSTEM, prompt: "Say hi", maxTurns: 3, tools: [], capabilities: { webSearch: true } }, rt.host.limitsFor(undefined, rt.host.logger)),
        );
        await rt.close();
      }],
      [SUBAGENTS_CALL, async () => {
        const rt = runtime(mainHome);
        const model = resolveModelValue("sonnet")!.id;
        const subagents = { [RECORDER_AGENT.name]: { description: RECORDER_AGENT.description, prompt: RECORDER_AGENT.prompt } };
        await call(SUBAGENTS_CALL, rt, model, RECORDER_SYSTEM, "Say hi", () =>
          rt.host.run({ model, system: RECORDER_SYSTEM, prompt: "Say hi", maxTurns: 3, tools: [], capabilities: { subagents } }, rt.host.limitsFor(undefined, rt.host.logger)),
        );
        await rt.close();
      }],
      ...COMPACTION_CALLS.map((name): [string, () => Promise<unknown>] => [
        name,
        async () => {
          const rt = runtime(mainHome);
          const model = resolveModelValue("sonnet")!.id;
          const session = rt.host.createSession({ model, system: RECORDER_SYSTEM, compaction: { windowTokens: 100_000 }, ...(name !== COMPACTION_CALL ? { tools: { echo } } : {}) });
          await call(name, rt, model, RECORDER_SYSTEM, COMPACTION_PROMPT_2, async () => {
            if (name === COMPACTION_IN_TURN_CALL) return await session.send(COMPACTION_PROMPT_3).result;
            await session.send(COMPACTION_PROMPT_1).result;
            await session.send(COMPACTION_PROMPT_2).result;
          });
          await session.close();
          await rt.close();
        },
      ]),
      [CHATTY, async () => {
        // A wrapper turns non-essential traffic back on (as the CLI's cached feature flags may differ then): its
        // Messages requests count, its other requests (analytics, which the interceptor refuses) do not.
        const wrapper = join(dir("bin"), "claude-chatty");
        writeFileSync(wrapper, `#!/bin/sh\nunset CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC\nexec '${options.cliPath.replace(/'/g, "'\\''")}' "$@"\n`, { mode: 0o755 });
        const chatty = runtime(mainHome, { cliPath: wrapper });
        await text(CHATTY, chatty, "default", "sonnet");
        await chatty.close();
      }],
      ["expired login", async () => {
        const expired = runtime(home(true));
        await text("expired login", expired, "default", "sonnet");
        await expired.close();
      }],
    ];
    for (const [name, step] of steps) if (!options.only || name === "text, fresh login" || options.only.includes(name)) await step();
    await plain.close();
  } finally {
    await interceptor.close();
    await api.close();
    for (const path of dirs) rmSync(path, { recursive: true, force: true });
  }
  const today = new Date();
  const date = `${today.getFullYear()}-${String(today.getMonth() + 1).padStart(2, "0")}-${String(today.getDate()).padStart(2, "0")}`;
  return { version, cliPath: options.cliPath, requests, calls, refused: [...refused, ...[...session.refusals, ...front.refused].map((what) => ({ call: "after the calls", what }))], values: { email: RECORDER_EMAIL, date }, ms: Math.round(performance.now() - started) };
}
