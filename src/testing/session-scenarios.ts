/**
 * Golden session scenarios: a multi-turn session (sessions/session.ts) recorded as one session transcript
 * (docs/transcript-format.md, "Sessions") from the real CLI against the scripted API, and replayed by the
 * stand-in CLI, one recorded process per start (replay-cli.ts). Kept apart from the KTX call catalog
 * (scenarios.ts): `fixtures record` records them when named (`--scenarios session-tool-interrupt-crash`).
 */
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { ClaudeCodeError } from "../errors/index.js";
import { ClaudeCodeHost } from "../claude-code/host.js";
import type { KtxRuntimeToolDescriptor } from "../mcp/tools.js";
import type { ClaudeCodeSession } from "../sessions/session.js";
import { lookup, makeDirOfLength, type Outcome, type ScenarioRunOptions } from "./scenarios.js";
import { type Script, startScriptedMessagesApi, turn } from "./scripted-api.js";
import { SESSION_SCENARIO_NAMES } from "./scenario-names.js";

export interface SessionScenario {
  name: string;
  description: string;
  script: Script;
  /** Runs the session's turns; `pid()` is the session's CLI process now (a tool that crashes it needs it). */
  run(session: ClaudeCodeSession, context: { pid(): number | undefined; interrupt(): void }): Promise<Outcome>;
}

/** What the caller sees of a turn, without ids or timings that differ between runs. */
async function turnOutcome(session: ClaudeCodeSession, input: string): Promise<Outcome> {
  const turn = session.send(input);
  const events: string[] = [];
  for await (const event of turn) if (event.type === "tool_call" || event.type === "tool_result") events.push(`${event.type} ${event.name}`);
  try {
    const result = await turn.result;
    return { input, text: result.text, history: result.history, stopReason: result.stopReason, toolCalls: result.toolCalls.map((call) => ({ name: call.name, input: call.input, ok: call.ok })), events };
  } catch (error) {
    if (!ClaudeCodeError.isInstance(error)) throw error;
    const signal = (error as { signal?: unknown }).signal;
    return { input, error: error.name, code: error.code, ...(typeof signal === "string" ? { signal } : {}), events };
  }
}

/** The scenario's own tools: one interrupts its turn while it runs, one kills the session's CLI (a crash mid-turn). */
function sessionTools(context: { pid(): number | undefined; interrupt(): void }): KtxRuntimeToolDescriptor[] {
  const search: KtxRuntimeToolDescriptor<{ query: string }> = {
    name: "search",
    description: "Search the archive (slow)",
    inputSchema: z.object({ query: z.string() }),
    // The caller interrupts while the tool runs: the CLI has asked for it, so the interrupt's place in the protocol is fixed.
    execute: async (_input, { signal }) => {
      context.interrupt();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 3000);
        signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
      });
      return "search stopped";
    },
  };
  const archive: KtxRuntimeToolDescriptor<{ id: string }> = {
    name: "archive",
    description: "Archive a page",
    inputSchema: z.object({ id: z.string() }),
    // The CLI dies while it waits for this tool (SIGKILL, as an OOM kill does); a replay's stand-in may be gone already.
    execute: async () => {
      const pid = context.pid();
      try {
        if (pid !== undefined) process.kill(pid, "SIGKILL");
      } catch {
        // Already ended: the replay's stand-in plays the recorded kill itself.
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      return "archived";
    },
  };
  return [lookup, search, archive];
}

export const SESSION_SCENARIOS: readonly SessionScenario[] = [
  {
    name: "session-tool-interrupt-crash",
    description: "a session: a tool turn, an interrupted turn, a text turn, a turn whose CLI is killed, and the turn after it on a new process with the history replayed",
    script: [
      turn.tools({ name: "mcp__ktx__lookup", input: { term: "grain" } }),
      turn.text("Grain is the level of detail of one row."),
      turn.tools({ name: "mcp__ktx__search", input: { query: "grain history" } }),
      turn.text("The level of detail."),
      turn.tools({ name: "mcp__ktx__archive", input: { id: "grain" } }),
      turn.text("We looked up grain: the level of detail of one row."),
    ],
    run: async (session) => {
      const turns: Outcome[] = [];
      for (const input of ["What does grain mean?", "Search the archive for its history.", "Say it in three words.", "Archive the grain page.", "What did we find so far?"]) {
        turns.push(await turnOutcome(session, input));
      }
      return { turns, history: session.history.map((record) => (record.result ? record.result.history : (record.error?.code ?? "?"))) };
    },
  },
];

if (SESSION_SCENARIOS.map((scenario) => scenario.name).join() !== SESSION_SCENARIO_NAMES.join()) {
  throw new Error(`scenario-names.ts lists sessions ${SESSION_SCENARIO_NAMES.join(", ")}; the catalog holds ${SESSION_SCENARIOS.map((scenario) => scenario.name).join(", ")}: make them the same`);
}

export function findSessionScenario(name: string): SessionScenario {
  const scenario = SESSION_SCENARIOS.find((candidate) => candidate.name === name);
  if (!scenario) throw new Error(`Unknown session scenario ${JSON.stringify(name)}; known: ${SESSION_SCENARIOS.map((s) => s.name).join(", ")}`);
  return scenario;
}

/**
 * Runs one session scenario in fresh project and HOME directories on a host of its own (the scripted API at a
 * base URL, as the call catalog's are recorded; no interceptor, no spare processes); with `transcriptDir` its
 * session transcript is `<dir>/<scenario>.jsonl`, the outcome appended. Returns the outcome.
 */
export async function runSessionScenario(scenario: SessionScenario, options: ScenarioRunOptions): Promise<Outcome> {
  const prefix = `ktx-scenario-${scenario.name}-`;
  const projectDir = (options.projectDirLength !== undefined && makeDirOfLength(prefix, options.projectDirLength)) || mkdtempSync(join(tmpdir(), prefix));
  const home = mkdtempSync(join(tmpdir(), "ktx-scenario-home-"));
  const api = options.fakeEndpoint ? undefined : await startScriptedMessagesApi(scenario.script);
  const host = new ClaudeCodeHost({
    projectDir,
    cliPath: options.cliPath,
    allowUnverifiedCli: options.allowUnverifiedCli,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, CLAUDE_CODE_MAX_RETRIES: "2" },
    apiEndpoint: { baseUrl: api?.baseUrl ?? "http://127.0.0.1:9", apiKey: "sk-test-scripted" },
    wire: false,
    idleTimeoutMs: 60_000,
    timeoutMs: 120_000,
    // No spare processes, and close() retires the session's process (no rewind after the last recorded line).
    warm: false,
    reuse: false,
    ...options.extra,
  });
  let session: ClaudeCodeSession | undefined;
  const context = { pid: () => host.reusePids[0], interrupt: () => session?.interrupt() };
  try {
    session = host.createSession({
      model: "sonnet",
      system: "You are the KTX curator.",
      tools: sessionTools(context),
      transcript: options.transcriptDir ? { dir: options.transcriptDir, name: scenario.name } : false,
    });
    const outcome = await scenario.run(session, context);
    await session.close();
    if (options.transcriptDir) appendFileSync(join(options.transcriptDir, `${scenario.name}.jsonl`), `${JSON.stringify({ kind: "outcome", scenario: scenario.name, outcome })}\n`);
    return outcome;
  } finally {
    await session?.close();
    await host.close();
    await api?.close();
    rmSync(projectDir, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
}
