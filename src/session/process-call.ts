/**
 * What one call on a CLI process is (session/pooled-process.ts): its inputs, its end, the state the
 * process follows while it runs, and the error a process that ends early gives the call.
 */
import { AbortError, ClaudeCodeError, CliCrashError, CliNotFoundError, ProtocolError } from "../errors/index.js";
import type { CliMessage, ResultMessage } from "../protocol/messages.js";
import type { InitializeRequest } from "../protocol/outbound.js";
import type { RequestCancel } from "../mcp/cancel.js";
import { InFlight } from "../mcp/in-flight.js";
import type { CliProcessOptions, ExitInfo } from "../transport/process.js";
import type { ControlHandlers, WireDirection } from "./control.js";
import type { Logger } from "./logger.js";
import { CallTimers } from "./support.js";

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
  /** The call's CLI permission mode; the process is switched (`set_permission_mode`) when its current one differs (it persists). */
  permissionMode?: string;
  /** Rewind and keep the process after the result; false: stdin EOF at the result, the process exits. */
  keep: boolean;
  /**
   * A conversation's turn (with `keep`): after the result the process is not rewound, so the next call
   * continues the conversation; `rewindConversation` later takes it back to before its first turn.
   */
  continues?: boolean;
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
  /** The uuid of the call's user line (a conversation rewinds to its first turn's). */
  uuid: string;
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

/** The call a process runs now: what it waits for, the CLI's requests being answered, its clocks. */
export class ActiveCall {
  /** The uuid of the call's user line, once it is written. */
  uuid: string | undefined = undefined;
  result: ResultMessage | undefined = undefined;
  failure: ClaudeCodeError | undefined = undefined;
  sawInit = false;
  /** Control requests being answered, by their cancellation (which carries the request id). */
  readonly inflight = new InFlight<RequestCancel>();
  readonly timers: CallTimers;
  /** Settles once the call has its outcome (`done`). */
  readonly finished: Promise<void>;
  done!: () => void;
  private readonly onAbort: () => void;

  constructor(
    readonly call: ProcessCall,
    /** A timeout or an abort of the call: the process's `failActive`, which may also mark the process unusable. */
    failActive: (error: ClaudeCodeError, retireReason?: string) => void,
  ) {
    this.finished = new Promise<void>((resolve) => (this.done = resolve));
    // The idle clock is quiet while a handler runs and once the call has its outcome.
    this.timers = new CallTimers(call, failActive, () => this.inflight.size > 0 || this.result !== undefined || this.failure !== undefined);
    this.onAbort = () => failActive(new AbortError(call.signal?.reason));
  }

  /** The call's clocks and its abort signal start. */
  start(): void {
    this.call.signal?.addEventListener("abort", this.onAbort, { once: true });
    this.timers.start();
  }

  /** The call has its outcome (or gave up waiting): no clock or abort reaches it any more. */
  stop(): void {
    this.call.signal?.removeEventListener("abort", this.onAbort);
    this.timers.clear();
  }

  /** The first failure wins: it is recorded, the handlers still running are cancelled, the wait ends. */
  fail(error: ClaudeCodeError): void {
    if (this.failure || this.result) return;
    this.failure = error;
    this.cancelAll(error);
    this.done();
  }

  /** Cancels every request of the CLI still being answered. */
  cancelAll(reason: unknown): void {
    for (const cancel of this.inflight.snapshot()) cancel.abort(reason);
  }

  /** `control_cancel_request`: the CLI no longer wants the answer to one of its requests. */
  cancelRequest(requestId: string): void {
    this.inflight.find((cancel) => cancel.requestId === requestId)?.abort(new Error("cancelled by the CLI"));
  }

  /**
   * After `interrupt`: resolves once the turn's result is in, the process has ended (`ended`: a CLI
   * that exits without a result writes none later), or after `graceMs`.
   */
  async awaitResult(graceMs: number, ended: Promise<unknown>): Promise<void> {
    const timer = setTimeout(() => this.done(), graceMs);
    timer.unref();
    const wait = new Promise<void>((resolve) => (this.done = resolve));
    void ended.then(() => this.done());
    await wait;
    clearTimeout(timer);
  }
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
