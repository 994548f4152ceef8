/**
 * One CLI run over the control protocol: sends `initialize` and the prompt, answers every control
 * request the CLI sends (or an error envelope), cancels handlers on `control_cancel_request`, watches
 * the overall/idle timeouts and the AbortSignal, and ends with the `result` or one typed error.
 * A single recorded termination reason decides the error text.
 */
import {
  AbortError,
  ClaudeCodeError,
  CliCrashError,
  CliNotFoundError,
  ProtocolError,
  TimeoutError,
} from "../errors/index.js";
import { type CliMessage, type ResultMessage, parseCliMessage } from "../protocol/messages.js";
import { type InitializeRequest, controlError, controlRequest, controlSuccess, userMessage } from "../protocol/outbound.js";
import { CliProcess, type CliProcessOptions, type ExitInfo, type ProcessHandlers } from "../transport/process.js";
import { type Logger, silentLogger } from "./logger.js";

export interface ControlHandlers {
  /** JSON-RPC for an in-process MCP server; resolves with the JSON-RPC reply. */
  mcpMessage?(serverName: string, message: unknown, signal: AbortSignal): Promise<unknown>;
  /** Permission question; resolves with `{behavior: "allow" | "deny", …}`. */
  canUseTool(request: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>>;
}

export type WireDirection = "out" | "in" | "stderr" | "dropped";

export interface SessionOptions {
  process: CliProcessOptions;
  /** A pre-started process spawned with `process` (warm pool); the session adopts it instead of spawning. */
  warmProcess?: CliProcess;
  control: ControlHandlers;
  onMessage(message: CliMessage): void;
  /** Every line in both directions, before it is interpreted (transcripts). */
  onWire?(direction: WireDirection, text: string): void;
  /**
   * Called with the CLI's reply to `initialize`, before the prompt is sent; calling `fail` from here
   * ends the run before the model is ever asked anything.
   */
  onInitialized?(response: Record<string, unknown>): void;
  /** Exit of the child, after the session's outcome is known (transcripts). */
  onExit?(exit: ExitInfo): void;
  timeoutMs?: number;
  idleTimeoutMs?: number;
  signal?: AbortSignal;
  logger?: Logger;
  /**
   * Resolve as soon as the result is in, while the child finishes exiting (~45 ms) in the background;
   * `reaped` settles once it is gone. Off when the exit must be known first (transcripts).
   */
  reapInBackground?: boolean;
}

export interface SessionEnd {
  result: ResultMessage;
  stderrTail: string;
  /** Settles when the child has exited and been reaped. */
  reaped: Promise<ExitInfo>;
}

/** Answers one control request of the CLI with the call's handlers (a one-shot Session and a reusable process alike). */
export async function dispatchControl(control: ControlHandlers, request: Record<string, unknown> & { subtype: string }, signal: AbortSignal): Promise<unknown> {
  switch (request.subtype) {
    case "mcp_message": {
      const server = String(request.server_name);
      if (!control.mcpMessage) throw new Error(`No MCP server named ${JSON.stringify(server)} in this run`);
      return { mcp_response: await control.mcpMessage(server, request.message, signal) };
    }
    case "can_use_tool":
      return control.canUseTool(request, signal);
    default:
      throw new Error(`ktx-claude-code does not handle control request subtype ${JSON.stringify(request.subtype)}`);
  }
}

export const DEFAULT_IDLE_TIMEOUT_MS = 300_000;
/** How long a failed run waits for the CLI to confirm its interrupt before stopping it regardless. */
export const INTERRUPT_GRACE_MS = 1_000;

let requestCounter = 0;
const nextRequestId = () => `ktx_${process.pid}_${++requestCounter}`;

export class Session {
  private proc: CliProcess | undefined;
  private failure: ClaudeCodeError | undefined;
  private result: ResultMessage | undefined;
  private sawInit = false;
  private noiseCount = 0;
  private firstNoise = "";
  /** Our one outstanding request (initialize, then each setup request) and what it was. */
  private pendingId: string | undefined;
  private pendingSubtype = "";
  private setup: Array<{ subtype: string }> = [];
  private initializeAnswered = false;
  private prompt: string | undefined;
  private promptSent = false;
  private interruptId: string | undefined;
  private interruptConfirmed: (() => void) | undefined;
  private readonly inflight = new Map<string, AbortController>();
  private readonly timers: NodeJS.Timeout[] = [];
  private idleTimer: NodeJS.Timeout | undefined;
  private settle!: () => void;
  private readonly settled = new Promise<void>((resolve) => (this.settle = resolve));
  private readonly logger: Logger;

  constructor(private readonly options: SessionOptions) {
    this.logger = options.logger ?? silentLogger;
  }

  /** Stops the run with `error` (first failure wins); the handlers still running are aborted at once. */
  fail(error: ClaudeCodeError): void {
    if (this.failure || this.result) return;
    this.failure = error;
    for (const controller of this.inflight.values()) controller.abort(error);
    this.settle();
  }

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /**
   * `setup` requests (e.g. `set_model` on a warm process) are sent one at a time after the initialize
   * reply, each awaited, and the prompt only after the last; a refused one fails the run.
   */
  async run(initialize: InitializeRequest, prompt: string, setup: ReadonlyArray<{ subtype: string }> = []): Promise<SessionEnd> {
    const { signal } = this.options;
    if (signal?.aborted) throw new AbortError(signal.reason);
    const handlers: ProcessHandlers = {
      line: (text) => this.onLine(text),
      oversizedLine: (bytes, limit) =>
        this.fail(new ProtocolError(`The CLI wrote a ${bytes}-byte line, over maxLineBytes=${limit}; the message was dropped and the run stopped. Raise maxLineBytes if such output is expected.`)),
      stderr: (text) => this.options.onWire?.("stderr", text),
      writeDropped: (text, reason) => {
        this.options.onWire?.("dropped", text);
        this.logger.warn(`write to CLI dropped (${reason})`);
      },
      stdoutEnd: () => this.onStdoutEnd(),
    };
    const proc = this.options.warmProcess ?? new CliProcess(this.options.process, handlers);
    if (this.options.warmProcess) proc.attach(handlers);
    this.proc = proc;
    const onAbort = () => this.fail(new AbortError(signal?.reason));
    signal?.addEventListener("abort", onAbort, { once: true });
    void proc.exited.then(() => this.settle());
    this.startTimers();
    try {
      // The prompt waits for the initialize reply so a wrong account or provider is refused before any
      // API request; the CLI handles initialize first anyway, so this costs no measurable time.
      this.pendingId = nextRequestId();
      this.pendingSubtype = "initialize";
      this.setup = [...setup];
      this.prompt = prompt;
      this.write(controlRequest(this.pendingId, initialize));
      await this.settled;
      if (this.failure && this.promptSent && !this.result) await this.interrupt(proc);
      const reaped = proc.stop(!this.failure).then((exit) => {
        this.options.onExit?.(exit);
        return exit;
      });
      if (this.result && !this.failure && this.options.reapInBackground) {
        return { result: this.result, stderrTail: proc.stderrTail(), reaped };
      }
      return this.outcome(await reaped, proc);
    } finally {
      signal?.removeEventListener("abort", onAbort);
      this.clearTimers();
      for (const controller of this.inflight.values()) controller.abort(new Error("run ended"));
      if (!this.result || this.failure || !this.options.reapInBackground) await proc.stop(false);
    }
  }

  private outcome(exit: ExitInfo, proc: CliProcess): SessionEnd {
    const stderrTail = proc.stderrTail();
    if (this.failure) throw this.withTail(this.failure, stderrTail);
    if (this.result) return { result: this.result, stderrTail, reaped: Promise.resolve(exit) };
    throw this.exitError(exit, stderrTail);
  }

  private withTail(error: ClaudeCodeError, stderrTail: string): ClaudeCodeError {
    if (!error.stderrTail && stderrTail) (error as { stderrTail: string }).stderrTail = stderrTail;
    return error;
  }

  private exitError(exit: ExitInfo, stderrTail: string): ClaudeCodeError {
    if (exit.spawnError) {
      const code = exit.spawnError.code;
      const reason = code === "ENOENT" ? "file not found" : code === "EACCES" ? "not executable" : exit.spawnError.message;
      return new CliNotFoundError(this.options.process.path, reason, { cause: exit.spawnError });
    }
    const stage = this.sawInit ? "before its result" : this.initializeAnswered ? "before its init message" : "before answering initialize";
    const how = exit.signal
      ? `was killed by ${exit.signal}`
      : exit.exitCode === 0
        ? "exited with code 0"
        : `exited with code ${exit.exitCode}`;
    const noise = this.noiseCount ? ` It wrote ${this.noiseCount} line(s) that were not JSON, first: ${JSON.stringify(this.firstNoise)}.` : "";
    const error = new CliCrashError(
      `The Claude Code CLI ${how} ${stage}.${noise} Check the stderr tail below and the transcript; rerun with a transcript dir to capture the stream.`,
      exit.exitCode,
      exit.signal,
      { stderrTail },
    );
    error.beforeInitialize = !this.initializeAnswered;
    return error;
  }

  private write(value: unknown): void {
    if (!this.proc) return;
    if (this.proc.send(value)) this.options.onWire?.("out", JSON.stringify(value));
  }

  private onLine(text: string): void {
    this.options.onWire?.("in", text);
    this.touchIdle();
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // Peers saw non-JSON noise on stdout: record it, keep reading; it is reported if the run fails.
      if (this.noiseCount++ === 0) this.firstNoise = text.slice(0, 200);
      this.logger.warn(`ignored a non-JSON stdout line: ${text.slice(0, 200)}`);
      return;
    }
    const parsed = parseCliMessage(value);
    if (parsed.kind === "invalid") {
      this.fail(new ProtocolError(`The CLI wrote a message that does not match the stream-json protocol: ${parsed.issues}\nLine: ${text.slice(0, 500)}`));
      return;
    }
    this.route(parsed);
  }

  private route(message: CliMessage): void {
    switch (message.kind) {
      case "control_request":
        void this.answer(message.message.request_id, message.message.request);
        return;
      case "control_cancel_request":
        this.cancel(message.message.request_id);
        return;
      case "control_response":
        this.onControlResponse(message.message.response);
        return;
      case "unknown_message":
        this.logger.info(`passing through unknown CLI message type ${JSON.stringify(message.message.type)}`);
        break;
      case "system_init":
        this.sawInit = true;
        break;
      case "result":
        if (!this.failure) {
          this.result = message.message;
          // stdin stays open until the result (later control requests need it) and is closed right after.
          this.proc?.endInput();
        } else {
          // The failed run's turn has ended (normally the answer to our interrupt): nothing more will be asked of the API.
          this.interruptConfirmed?.();
        }
        break;
      default:
        break;
    }
    try {
      this.options.onMessage(message);
    } catch (error) {
      this.fail(ClaudeCodeError.isInstance(error) ? error : new ProtocolError(`handling a CLI message failed: ${(error as Error).message}`, { cause: error }));
    }
    if (this.result) this.settle();
  }

  /**
   * A run that fails after the prompt went out (abort, timeout, protocol error) is interrupted before
   * its CLI is stopped: stdin EOF or a signal alone let the CLI finish a pending tool call as failed and
   * send one more API request while it shuts down; after `interrupt` it ends the turn (a result line)
   * instead. The wait is bounded: a CLI that has not ended its turn within INTERRUPT_GRACE_MS is stopped
   * all the same.
   */
  private async interrupt(proc: CliProcess): Promise<void> {
    if (!proc.isRunning) return;
    this.interruptId = nextRequestId();
    const confirmed = new Promise<void>((resolve) => (this.interruptConfirmed = resolve));
    this.write(controlRequest(this.interruptId, { subtype: "interrupt" }));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      confirmed,
      proc.exited,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, INTERRUPT_GRACE_MS);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
  }

  private onControlResponse(response: { subtype: string; request_id: string; response?: unknown; error?: unknown }): void {
    // The interrupt's own answer comes before the turn ends; the result line that follows is awaited.
    if (response.request_id === this.interruptId) return;
    if (response.request_id !== this.pendingId || this.prompt === undefined) {
      this.logger.warn(`ignored a control_response for unknown request ${response.request_id}`);
      return;
    }
    // An error to one of our requests means the CLI refused our session setup.
    if (response.subtype === "error") {
      const error = new ProtocolError(`The CLI rejected the ${this.pendingSubtype} request: ${String(response.error)}`);
      error.refusedRequest = this.pendingSubtype;
      this.fail(error);
      return;
    }
    if (!this.initializeAnswered) {
      this.initializeAnswered = true;
      this.options.onInitialized?.((response.response ?? {}) as Record<string, unknown>);
    }
    if (this.failure) return;
    const next = this.setup.shift();
    if (next) {
      this.pendingId = nextRequestId();
      this.pendingSubtype = next.subtype;
      this.write(controlRequest(this.pendingId, next));
      return;
    }
    const prompt = this.prompt;
    this.prompt = undefined;
    this.promptSent = true;
    this.write(userMessage(prompt));
  }

  private async answer(requestId: string, request: Record<string, unknown> & { subtype: string }): Promise<void> {
    const controller = new AbortController();
    this.inflight.set(requestId, controller);
    this.pauseIdle();
    try {
      const response = await this.dispatch(request, controller.signal);
      // After a failure the CLI is being stopped: feeding it more would let it act (e.g. ask the API again).
      if (!controller.signal.aborted && !this.failure) this.write(controlSuccess(requestId, response));
    } catch (error) {
      if (!controller.signal.aborted && !this.failure) this.write(controlError(requestId, (error as Error).message ?? String(error)));
    } finally {
      this.inflight.delete(requestId);
      this.touchIdle();
    }
  }

  private async dispatch(request: Record<string, unknown> & { subtype: string }, signal: AbortSignal): Promise<unknown> {
    return dispatchControl(this.options.control, request, signal);
  }

  /** A cancelled request gets no reply; its handler is aborted. */
  private cancel(requestId: string): void {
    this.inflight.get(requestId)?.abort(new Error("cancelled by the CLI"));
  }

  private onStdoutEnd(): void {
    if (this.result || this.failure) return;
    // Exit usually follows at once and gives the better message; only a CLI that lives on without stdout is stopped here.
    const timer = setTimeout(() => {
      if (this.proc?.isRunning) this.fail(new CliCrashError("The Claude Code CLI closed its stdout before its result but kept running; it was stopped.", undefined, undefined));
    }, 1_000);
    timer.unref();
    this.timers.push(timer);
  }

  private startTimers(): void {
    const { timeoutMs } = this.options;
    if (timeoutMs !== undefined && timeoutMs > 0) {
      const timer = setTimeout(() => this.fail(new TimeoutError("overall", timeoutMs)), timeoutMs);
      timer.unref();
      this.timers.push(timer);
    }
    this.touchIdle();
  }

  /** The idle clock runs only while the CLI owes us output, not while we are answering it (a slow tool). */
  private touchIdle(): void {
    this.pauseIdle();
    const idleMs = this.options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    if (idleMs <= 0 || this.inflight.size > 0 || this.result || this.failure) return;
    this.idleTimer = setTimeout(() => this.fail(new TimeoutError("idle", idleMs)), idleMs);
    this.idleTimer.unref();
  }

  private pauseIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  private clearTimers(): void {
    this.pauseIdle();
    for (const timer of this.timers) clearTimeout(timer);
  }
}
