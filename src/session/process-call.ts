/**
 * What one call on a CLI process is (session/pooled-process.ts): its inputs, its end, the state the
 * process follows while it runs, and the error a process that ends early gives the call.
 */
import { ClaudeCodeError, CliCrashError, CliNotFoundError, ProtocolError } from "../errors/index.js";
import type { CliMessage, ResultMessage } from "../protocol/messages.js";
import type { InitializeRequest } from "../protocol/outbound.js";
import type { RequestCancel } from "../mcp/cancel.js";
import type { InFlight } from "../mcp/in-flight.js";
import type { CliProcessOptions, ExitInfo } from "../transport/process.js";
import type { ControlHandlers, WireDirection } from "./control.js";
import type { Logger } from "./logger.js";
import type { CallTimers } from "./support.js";

/** How long one of our control requests (initialize excepted) may take before the process is retired. */
export const DEFAULT_CONTROL_TIMEOUT_MS = 10_000;
/** How long a failed call waits for the CLI to end its turn after `interrupt` before the process is stopped. */
export const INTERRUPT_GRACE_MS = 1_000;

/** How a started process is switched to another model (binary/versions.ts); undefined: it cannot be. */
export type ModelSwitch = "apply_flag_settings";

export interface ProcessCall {
  /** Sent on the process's first call only (system prompt, schema and MCP server are fixed afterwards). */
  initialize: InitializeRequest;
  prompt: string;
  /** The call's model; the process is switched when its current one differs (it persists). */
  model?: string;
  /** Rewind and keep the process after the result; false: stdin EOF at the result, the process exits. */
  keep: boolean;
  /** Why the process ends after the call when it is not kept (`single use`, `call limit`, `pool closed`). */
  endReason?: string;
  control: ControlHandlers;
  onMessage(message: CliMessage): void;
  /** The initialize reply (first call only), before the prompt; throw to refuse the run. */
  onInitialized?(response: Record<string, unknown>): void;
  /** Every line in both directions, before it is interpreted (transcripts). */
  onWire?(direction: WireDirection, text: string): void;
  /** The process's exit, when it ends during the call or is retired right after it. */
  onExit?(exit: ExitInfo): void;
  timeoutMs?: number;
  idleTimeoutMs?: number;
  signal?: AbortSignal;
}

export interface ProcessCallEnd {
  /** The call's result, with `total_cost_usd` and `modelUsage` made this call's own. */
  result: ResultMessage;
  stderrTail: string;
  /** 1 for the process's first call. */
  callIndex: number;
  /** Settles once the process is rewound (true: it may serve again) or has exited (false). */
  settled: Promise<boolean>;
}

export interface PooledProcessOptions {
  process: CliProcessOptions;
  modelSwitch?: ModelSwitch;
  /** See DEFAULT_CONTROL_TIMEOUT_MS. */
  controlTimeoutMs?: number;
  logger?: Logger;
}

/** What the current call is waiting for. */
export interface ActiveCall {
  call: ProcessCall;
  uuid: string | undefined;
  result: ResultMessage | undefined;
  failure: ClaudeCodeError | undefined;
  sawInit: boolean;
  /** Control requests being answered, by their cancellation (which carries the request id). */
  inflight: InFlight<RequestCancel>;
  timers: CallTimers;
  done(): void;
}

/** Where the process was in its call when it ended, for the crash message. */
export interface CrashContext {
  path: string;
  initialized: boolean;
  /** The current call, if any. */
  active: Pick<ActiveCall, "uuid" | "sawInit"> | undefined;
  calls: number;
  noise: number;
  firstNoise: string;
  stderrTail: string;
}

/** The typed error of a process that ended (or could not start) before the call's result. */
export function crashError(exit: ExitInfo | undefined, context: CrashContext): ClaudeCodeError {
  if (exit?.spawnError) {
    const code = exit.spawnError.code;
    const reason = code === "ENOENT" ? "file not found" : code === "EACCES" ? "not executable" : exit.spawnError.message;
    return new CliNotFoundError(context.path, reason, { cause: exit.spawnError });
  }
  const { active } = context;
  const how = !exit ? "ended" : exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.exitCode}`;
  const stage = !context.initialized
    ? "before answering initialize"
    : active?.uuid === undefined
      ? "before the call's prompt was sent"
      : !active.sawInit
        ? "before its init message"
        : "before its result";
  const which = context.calls > 1 ? ` (a reused process, call ${context.calls})` : "";
  const noise = context.noise ? ` It wrote ${context.noise} line(s) that were not JSON, first: ${JSON.stringify(context.firstNoise)}.` : "";
  const error = new CliCrashError(
    `The Claude Code CLI${which} ${how} ${stage}.${noise} Check the stderr tail below and the transcript; rerun with a transcript dir to capture the stream.`,
    exit?.exitCode,
    exit?.signal,
    { stderrTail: context.stderrTail },
  );
  // Nothing was asked of the model yet: the caller may run the call on another process.
  error.beforeInitialize = active?.uuid === undefined;
  return error;
}

export function asClaudeCodeError(error: unknown): ClaudeCodeError {
  return ClaudeCodeError.isInstance(error) ? error : new ProtocolError((error as Error).message, { cause: error });
}
