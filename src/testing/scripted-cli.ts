/**
 * A scripted stand-in CLI: the unit-test seam the size of KTX's injected `query`. A test gives the
 * stream-json lines each run writes (init, assistant turns, `rate_limit_event`, `system/api_retry`,
 * results of any subtype) and passes `cli.path` as `cliPath`; no real binary, no server. The stand-in
 * answers the control protocol (initialize, interrupt, and what reuse sends), calls KTX tools through
 * our MCP server when a step says so, and records its argv, environment and every line it received.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, watch, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { registerStandInCli } from "../binary/stand-in.js";
import { NEWEST_VERIFIED_CLI_VERSION } from "../binary/versions.js";

/** The compiled stand-in (the same path from src/ under vitest and from dist/). */
export const SCRIPTED_CLI_SCRIPT = fileURLToPath(new URL("../../dist/testing/scripted-cli-main.js", import.meta.url));

/** One stream-json line, written as given (an init line is completed with what the real CLI reports; see `cliMessage.init`). */
export type ScriptedCliLine = { type: string; [key: string]: unknown };

/** One step of a run: a line, or an action of the stand-in. */
export type ScriptedCliStep = ScriptedCliLine | ScriptedCliAction;

/** What the stand-in does rather than writes. */
export type ScriptedCliAction =
  /** The model calls a KTX tool: an assistant `tool_use` line, the call through our MCP server, the `tool_result` line. */
  | { $tool: { name: string; input?: unknown; id?: string } }
  /** Waits until the host sends `interrupt` (already answered); the steps after it are what the CLI writes then. */
  | { $waitForInterrupt: true }
  /** Asks the host's permission handler (`can_use_tool`); the answer is in `invocations()[i].received`. */
  | { $permission: { tool_name: string; input?: unknown } }
  | { $sleep: number }
  | { $stderr: string }
  /** Exits with this code at once (no result unless one was written before). */
  | { $exit: number };

export interface ScriptedCliScript {
  /** The version `--version` reports (default: the newest verified version, so no `allowUnverifiedCli` is needed). */
  version: string;
  /** Each user message (each call, retries included) takes the next run; the last one repeats. */
  runs: ScriptedCliStep[][];
}

/** What one stand-in process was started with and received. */
export interface ScriptedCliInvocation {
  pid: number;
  argv: string[];
  cwd: string;
  /** The child's whole environment (what the runtime's scrub let through, plus what it adds). */
  env: Record<string, string>;
  /** Every line the host wrote (parsed): `control_request/initialize`, the user message, control answers. */
  received: Array<Record<string, any>>;
  /** Indexes of the runs this process played. */
  runs: number[];
  interrupts: number;
}

export interface ScriptedCli {
  /** Pass as the runtime's `cliPath`. */
  path: string;
  dir: string;
  /** Every process started so far, oldest first (the `--version` probe is not one). */
  invocations(): ScriptedCliInvocation[];
  /**
   * Resolves once a stand-in process has started playing a run, i.e. a call's prompt reached it (the
   * moment a test may abort, or look at what the CLI was started with): any run, or run number `run`
   * (0-based, counted across processes). Resolves with that process's invocation; rejects after
   * `timeoutMs` (default 10 s). Event-driven (a watch on the invocation records), no polling.
   */
  started(options?: { run?: number; timeoutMs?: number }): Promise<ScriptedCliInvocation>;
}

/**
 * Writes an executable stand-in CLI that plays `runs` (one array of steps per run, or one array for
 * every run). Pass `warm: false` to the runtime so no process waits idle for a later test. A runtime
 * whose `cliPath` is `path` runs without the interceptor (`network.interceptor: "standIn"`): the
 * stand-in answers without any request. It is this process's own record of the path it wrote that
 * says so (src/binary/stand-in.ts), never anything the stand-in says about itself.
 */
export function createScriptedCli(runs: ScriptedCliStep[] | ScriptedCliStep[][], options: { version?: string; dir?: string } = {}): ScriptedCli {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "ktx-scripted-cli-"));
  const list = runs.length > 0 && Array.isArray(runs[0]) ? (runs as ScriptedCliStep[][]) : [runs as ScriptedCliStep[]];
  const script: ScriptedCliScript = { version: options.version ?? NEWEST_VERIFIED_CLI_VERSION, runs: list };
  writeFileSync(join(dir, "script.json"), JSON.stringify(script));
  const folder = join(dir, "invocations");
  mkdirSync(folder, { recursive: true });
  const path = join(dir, "claude-scripted");
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  // `--version` (read once per runtime) is answered by the shell: a Node start less per test.
  const version = `${script.version} (Claude Code)`;
  writeFileSync(path, `#!/bin/sh\nif [ "$#" = 1 ] && [ "$1" = --version ]; then printf '%s\\n' ${quote(version)}; exit 0; fi\nexec ${quote(process.execPath)} ${quote(SCRIPTED_CLI_SCRIPT)} ${quote(dir)} "$@"\n`);
  chmodSync(path, 0o755);
  registerStandInCli(path);
  const invocations = (): ScriptedCliInvocation[] =>
    readdirSync(folder)
      .filter((name) => name.endsWith(".json"))
      .sort((a, b) => Number(a.split("-")[0]) - Number(b.split("-")[0]))
      .flatMap((name) => {
        try {
          return [JSON.parse(readFileSync(join(folder, name), "utf8")) as ScriptedCliInvocation];
        } catch {
          // Renamed over while read (records are replaced whole): the next event reads it again.
          return [];
        }
      });
  return {
    path,
    dir,
    invocations: () => (existsSync(folder) ? invocations() : []),
    started: ({ run, timeoutMs = 10_000 } = {}) => waitForRun(folder, invocations, run, timeoutMs),
  };
}

/** See `ScriptedCli.started`: checks the records on every change of the folder, and once up front. */
function waitForRun(folder: string, invocations: () => ScriptedCliInvocation[], run: number | undefined, timeoutMs: number): Promise<ScriptedCliInvocation> {
  const find = () => invocations().find((invocation) => (run === undefined ? invocation.runs.length > 0 : invocation.runs.includes(run)));
  return new Promise((resolve, reject) => {
    const settle = (invocation: ScriptedCliInvocation | undefined, error?: Error) => {
      watcher.close();
      clearTimeout(timer);
      if (invocation) resolve(invocation);
      else reject(error);
    };
    const watcher = watch(folder, () => {
      const invocation = find();
      if (invocation) settle(invocation);
    });
    const timer = setTimeout(() => settle(undefined, new Error(`the stand-in CLI started no ${run === undefined ? "run" : `run ${run}`} within ${timeoutMs} ms (${invocations().length} process(es) started)`)), timeoutMs);
    const already = find();
    if (already) settle(already);
  });
}

/** Builders for the lines a run writes, in the CLI's (and the Agent SDK's) message shapes. */
export const cliMessage = {
  /** `system/init`: tools, MCP servers, model and cwd default to what the run was started with; give fields to change them. */
  init: (fields: Record<string, unknown> = {}): ScriptedCliLine => ({ type: "system", subtype: "init", ...fields }),
  /** An assistant turn with text. */
  text: (text: string, fields: Record<string, unknown> = {}): ScriptedCliLine => ({
    type: "assistant",
    message: { id: `msg_${Math.random().toString(36).slice(2)}`, role: "assistant", content: [{ type: "text", text }] },
    parent_tool_use_id: null,
    ...fields,
  }),
  /** `rate_limit_event`; `resetsAt` in Unix seconds as the CLI writes it (an ISO string is read too). */
  rateLimit: (info: { status: "allowed" | "allowed_warning" | "rejected"; resetsAt?: number | string; rateLimitType?: string; utilization?: number; [key: string]: unknown }): ScriptedCliLine => ({
    type: "rate_limit_event",
    rate_limit_info: info,
  }),
  /** `system/api_retry`: the CLI announces its own retry of a failed request. */
  apiRetry: (fields: { retry_delay_ms?: number; error_status?: number; attempt?: number; max_retries?: number; error?: string } = {}): ScriptedCliLine => ({
    type: "system",
    subtype: "api_retry",
    attempt: 1,
    max_retries: 10,
    ...fields,
  }),
  /** A `result` line; default a successful one-turn answer `"ok"`. Any subtype (`error_max_turns`, `error_during_execution`, …). */
  result: (fields: Record<string, unknown> = {}): ScriptedCliLine => ({
    type: "result",
    subtype: "success",
    is_error: false,
    result: "ok",
    num_turns: 1,
    duration_ms: 1,
    total_cost_usd: 0,
    usage: { input_tokens: 0, output_tokens: 0 },
    ...fields,
  }),
  tool: (name: string, input: unknown = {}, id?: string): ScriptedCliStep => ({ $tool: { name, input, ...(id ? { id } : {}) } }),
  waitForInterrupt: (): ScriptedCliStep => ({ $waitForInterrupt: true }),
  permission: (tool_name: string, input: unknown = {}): ScriptedCliStep => ({ $permission: { tool_name, input } }),
  exit: (code: number): ScriptedCliStep => ({ $exit: code }),
  sleep: (ms: number): ScriptedCliStep => ({ $sleep: ms }),
};
