/**
 * One CLI process that serves many calls, one at a time (docs/performance.md, "Session reuse").
 * The first call sends `initialize`; every call writes its user line with a fresh random uuid and,
 * after its `result`, rewinds the conversation to that uuid, which leaves the next call's API
 * requests identical to a fresh process's. The process is reusable only after `rewound: true`;
 * anything unexpected retires it (stdin EOF / `end_session`, or a kill when it misbehaves).
 */
import { randomUUID } from "node:crypto";
import { AbortError, ClaudeCodeError, CliCrashError, CliNotFoundError, ProtocolError } from "../errors/index.js";
import { type CliMessage, type ResultMessage, parseCliMessage } from "../protocol/messages.js";
import { type InitializeRequest, controlError, controlRequest, controlSuccess } from "../protocol/outbound.js";
import { CliProcess, type CliProcessOptions, type ExitInfo, type ProcessHandlers } from "../transport/process.js";
import { type Logger, silentLogger } from "./logger.js";
import { CallTimers, ProcessCost, residentMiB } from "./reuse-support.js";
import { type ControlHandlers, type WireDirection, dispatchControl } from "./session.js";

/**
 * How long one of our control requests (initialize excepted) may take, and how long the CLI has to write
 * an interrupted call's `result`, before the process is retired.
 */
export const DEFAULT_CONTROL_TIMEOUT_MS = 10_000;

export interface ReusableCall {
  prompt: string;
  /** The call's model; `set_model` is sent when it differs from the process's current one (it persists). */
  model: string;
  control: ControlHandlers;
  onMessage(message: CliMessage): void;
  /** Called with the initialize reply on the process's first call, before the prompt; throw to refuse. */
  onInitialized?(response: Record<string, unknown>): void;
  onWire?(direction: WireDirection, text: string): void;
  onExit?(exit: ExitInfo): void;
  timeoutMs?: number;
  idleTimeoutMs?: number;
  signal?: AbortSignal;
}

export interface ReusableCallEnd {
  /** The call's result, with `total_cost_usd` (and `modelUsage`) made per call. */
  result: ResultMessage;
  stderrTail: string;
  /** 1 for the process's first call. */
  callIndex: number;
  /** Settles once the process is rewound (reusable) or retired; the call's lines are all written then. */
  settled: Promise<boolean>;
}

export interface ReusableProcessOptions {
  process: CliProcessOptions;
  /** A pre-started process spawned with `process` (warm pool), adopted instead of spawning. */
  warmProcess?: CliProcess;
  initialize: InitializeRequest;
  /** See DEFAULT_CONTROL_TIMEOUT_MS. */
  controlTimeoutMs?: number;
  logger?: Logger;
}

type Pending = { subtype: string; resolve(response: Record<string, unknown>): void; reject(error: ClaudeCodeError): void; timer?: NodeJS.Timeout };

/** Per-call state: what the current call is waiting for. */
interface Active {
  call: ReusableCall;
  uuid: string | undefined;
  result: ResultMessage | undefined;
  failure: ClaudeCodeError | undefined;
  inflight: Map<string, AbortController>;
  timers: CallTimers;
  done(): void;
}

let requestCounter = 0;
const nextRequestId = () => `ktx_${process.pid}_r${++requestCounter}`;

export class ReusableProcess {
  readonly proc: CliProcess;
  private readonly logger: Logger;
  private readonly controlTimeoutMs: number;
  private initialized = false;
  private model: string | undefined;
  private calls = 0;
  private readonly cost = new ProcessCost();
  private active: Active | undefined;
  private readonly pending = new Map<string, Pending>();
  private retiredBecause: string | undefined;
  private anomaly: string | undefined;
  private noise = 0;
  private settling: Promise<boolean> = Promise.resolve(true);

  constructor(private readonly options: ReusableProcessOptions) {
    this.logger = options.logger ?? silentLogger;
    this.controlTimeoutMs = options.controlTimeoutMs ?? DEFAULT_CONTROL_TIMEOUT_MS;
    const handlers: ProcessHandlers = {
      line: (text) => this.onLine(text),
      oversizedLine: (bytes, limit) =>
        this.failActive(new ProtocolError(`The CLI wrote a ${bytes}-byte line, over maxLineBytes=${limit}; the message was dropped and the run stopped. Raise maxLineBytes if such output is expected.`), "oversized line"),
      stderr: (text) => this.active?.call.onWire?.("stderr", text),
      writeDropped: (text) => this.active?.call.onWire?.("dropped", text),
    };
    this.proc = options.warmProcess ?? new CliProcess(options.process, handlers);
    if (options.warmProcess) options.warmProcess.attach(handlers);
    this.proc.keepHostAlive(false);
    this.model = /^--model=(.*)$/.exec(this.proc.launchArgs.find((arg) => arg.startsWith("--model=")) ?? "")?.[1];
    void this.proc.exited.then((exit) => this.onExit(exit));
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  get launchArgs(): readonly string[] {
    return this.proc.launchArgs;
  }

  /** Calls started on this process so far. */
  get callCount(): number {
    return this.calls;
  }

  /** Why the process was retired; undefined while it may serve calls. */
  get retired(): string | undefined {
    return this.retiredBecause ?? (this.proc.isRunning ? undefined : "exited");
  }

  get busy(): boolean {
    return this.active !== undefined;
  }

  /** Settles after the last call's rewind (true: the process may serve again) or its retirement (false). */
  get settled(): Promise<boolean> {
    return this.settling;
  }

  /** Resident memory of the CLI in MiB (Linux /proc); undefined elsewhere or once it is gone. */
  rssMiB(): number | undefined {
    return residentMiB(this.proc.pid);
  }

  /**
   * Runs one call. Resolves at the `result` (the rewind continues in `settled`); throws the call's
   * typed error otherwise, after which the process is rewound when that is safe, else retired.
   */
  async call(call: ReusableCall): Promise<ReusableCallEnd> {
    if (this.active) throw new ProtocolError("A reused Claude Code process was given a second call while one was running.");
    if (this.retired) throw new ProtocolError(`This Claude Code process was retired (${this.retired}).`);
    if (call.signal?.aborted) throw new AbortError(call.signal.reason);
    this.calls += 1;
    const callIndex = this.calls;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const inflight = new Map<string, AbortController>();
    // The idle clock is quiet while a handler runs and once the call has its outcome.
    const quiet = () => inflight.size > 0 || active.result !== undefined || active.failure !== undefined;
    const timers = new CallTimers(call, (error, reason) => this.failActive(error, reason), quiet);
    const active: Active = { call, uuid: undefined, result: undefined, failure: undefined, inflight, timers, done };
    this.active = active;
    this.proc.keepHostAlive(true);
    const onAbort = () => this.failActive(new AbortError(call.signal?.reason));
    call.signal?.addEventListener("abort", onAbort, { once: true });
    active.timers.start();
    try {
      const prepared = this.prepare(active).then(
        () => true,
        (error: unknown) => {
          this.failActive(ClaudeCodeError.isInstance(error) ? error : new ProtocolError((error as Error).message, { cause: error }));
          return false;
        },
      );
      await Promise.race([prepared, finished]);
      if (!active.failure && !active.result) {
        active.uuid = randomUUID();
        this.write({ type: "user", uuid: active.uuid, session_id: "", message: { role: "user", content: [{ type: "text", text: call.prompt }] }, parent_tool_use_id: null });
      }
      await finished;
    } catch (error) {
      this.failActive(ClaudeCodeError.isInstance(error) ? error : new ProtocolError((error as Error).message, { cause: error }));
    } finally {
      call.signal?.removeEventListener("abort", onAbort);
      active.timers.clear();
    }
    const stderrTail = this.proc.stderrTail();
    if (active.result && !active.failure) {
      const result = this.cost.perCall(active.result);
      this.settling = this.afterResult(active);
      return { result, stderrTail, callIndex, settled: this.settling };
    }
    const failure = active.failure ?? this.exitError(undefined);
    this.settling = this.afterFailure(active, failure);
    if (!failure.stderrTail && stderrTail) (failure as { stderrTail: string }).stderrTail = stderrTail;
    throw failure;
  }

  /** Retires the process: `end_session`, then stdin EOF, escalating to signals if it lingers. */
  async retire(reason: string): Promise<ExitInfo> {
    if (!this.retiredBecause) {
      this.retiredBecause = reason;
      this.logger.debug(`retiring Claude Code process ${this.pid}: ${reason}`);
      if (this.proc.isRunning && !this.active) this.proc.send(controlRequest(nextRequestId(), { subtype: "end_session" }));
    }
    return this.proc.stop(true);
  }

  /** Ends the process at once (it misbehaved, or its call was stopped in a way that cannot be undone). */
  private kill(reason: string): void {
    this.retiredBecause ??= reason;
    this.logger.debug(`stopping Claude Code process ${this.pid}: ${reason}`);
    for (const pending of this.pending.values()) clearTimeout(pending.timer);
    this.pending.clear();
    void this.proc.stop(false);
  }

  private async prepare(active: Active): Promise<void> {
    if (!this.initialized) {
      // Like a cold run, the prompt waits for the initialize reply so a wrong account is refused first.
      const response = await this.request(this.options.initialize, 0);
      this.initialized = true;
      active.call.onInitialized?.(response);
    }
    if (this.model !== active.call.model && !active.failure) {
      await this.request({ subtype: "set_model", model: active.call.model }, this.controlTimeoutMs);
      this.model = active.call.model;
    }
  }

  /** Sends one control request of ours and resolves with the reply's `response` (timeout 0: none). */
  private request(request: { subtype: string; [field: string]: unknown } | InitializeRequest, timeoutMs: number): Promise<Record<string, unknown>> {
    const id = nextRequestId();
    return new Promise((resolve, reject) => {
      const entry: Pending = { subtype: request.subtype, resolve, reject };
      if (timeoutMs > 0) {
        entry.timer = setTimeout(() => {
          this.pending.delete(id);
          this.kill(`${request.subtype} got no reply within ${timeoutMs} ms`);
          reject(new ProtocolError(`The CLI did not answer the ${request.subtype} request within ${timeoutMs} ms; its process was stopped.`));
        }, timeoutMs);
        entry.timer.unref();
      }
      this.pending.set(id, entry);
      this.write(controlRequest(id, request));
    });
  }

  /** Rewinds to the call's user line; the process serves again only on `rewound: true`. */
  private async afterResult(active: Active): Promise<boolean> {
    try {
      if (this.anomaly) throw new Error(this.anomaly);
      const reply = await this.request({ subtype: "rewind_conversation", target_message_uuid: active.uuid }, this.controlTimeoutMs);
      if (reply.rewound !== true) throw new Error(`rewind refused: ${JSON.stringify(reply).slice(0, 200)}`);
      return true;
    } catch (error) {
      void this.retire((error as Error).message);
      return false;
    } finally {
      this.becomeIdle();
    }
  }

  /**
   * After a failed call. Once the prompt is out, the turn is interrupted first, whatever the failure: a
   * CLI stopped by EOF or a signal alone may still finish a pending tool call as failed and ask the API
   * once more. An aborted call's process is then rewound and reused if the CLI ended the turn with a
   * result; every other failure retires it.
   */
  private async afterFailure(active: Active, failure: ClaudeCodeError): Promise<boolean> {
    for (const controller of active.inflight.values()) controller.abort(new Error("call ended"));
    const reusable = failure instanceof AbortError && this.initialized && !this.anomaly;
    if (active.uuid !== undefined && !active.result && this.proc.isRunning) {
      this.write(controlRequest(nextRequestId(), { subtype: "interrupt" }));
      // A process about to be stopped anyway gets a short grace; one that may serve again, the full one.
      const grace = reusable ? this.controlTimeoutMs : Math.min(this.controlTimeoutMs, 1_000);
      const timer = setTimeout(() => active.done(), grace);
      timer.unref();
      await new Promise<void>((resolve) => (active.done = resolve));
      clearTimeout(timer);
      if (!active.result && reusable) {
        this.kill(`no result within ${grace} ms of an interrupt`);
        this.becomeIdle();
        return false;
      }
    }
    if (!reusable || !this.proc.isRunning || this.pending.size > 0) {
      this.kill(`call failed: ${failure.message.slice(0, 200)}`);
      this.becomeIdle();
      return false;
    }
    if (active.uuid === undefined) {
      this.becomeIdle();
      return true;
    }
    // The interrupted call's cost is its own: the next call's difference starts after it.
    this.cost.perCall(active.result!);
    return this.afterResult(active);
  }

  /** Between calls the process never keeps the host alive (execa's cleanup ends it with the host). */
  private becomeIdle(): void {
    this.active = undefined;
    if (this.proc.isRunning) this.proc.keepHostAlive(false);
  }

  private write(value: unknown): void {
    if (this.proc.send(value)) this.active?.call.onWire?.("out", JSON.stringify(value));
  }

  private onLine(text: string): void {
    const active = this.active;
    active?.call.onWire?.("in", text);
    active?.timers.touch();
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      if (this.noise++ === 0) this.logger.warn(`ignored a non-JSON stdout line: ${text.slice(0, 200)}`);
      this.anomaly ??= `the CLI wrote a non-JSON line: ${text.slice(0, 100)}`;
      return;
    }
    const parsed = parseCliMessage(value);
    if (parsed.kind === "invalid") {
      this.failActive(new ProtocolError(`The CLI wrote a message that does not match the stream-json protocol: ${parsed.issues}\nLine: ${text.slice(0, 500)}`), "invalid message");
      return;
    }
    if (parsed.kind === "control_response") {
      this.onControlResponse(parsed.message.response);
      return;
    }
    if (!active) {
      // Between calls only bookkeeping lines may come (e.g. `command_lifecycle`); anything else is not ours to act on.
      if (parsed.kind !== "unknown_message" && parsed.kind !== "keep_alive") this.kill(`a ${parsed.kind} line arrived between calls`);
      return;
    }
    this.route(active, parsed);
  }

  private route(active: Active, message: CliMessage): void {
    switch (message.kind) {
      case "control_request":
        void this.answer(active, message.message.request_id, message.message.request);
        return;
      case "control_cancel_request":
        active.inflight.get(message.message.request_id)?.abort(new Error("cancelled by the CLI"));
        return;
      case "result":
        if (active.uuid === undefined || active.result) {
          this.anomaly ??= "a result arrived that no call of ours was waiting for";
          return;
        }
        active.result = message.message;
        break;
      default:
        break;
    }
    if (!active.failure) {
      try {
        active.call.onMessage(message);
      } catch (error) {
        this.failActive(ClaudeCodeError.isInstance(error) ? error : new ProtocolError(`handling a CLI message failed: ${(error as Error).message}`, { cause: error }));
      }
    }
    if (active.result) active.done();
  }

  private onControlResponse(response: { subtype: string; request_id: string; response?: unknown; error?: unknown }): void {
    const pending = this.pending.get(response.request_id);
    if (!pending) {
      // Replies to `interrupt` and `end_session` are not awaited.
      return;
    }
    this.pending.delete(response.request_id);
    clearTimeout(pending.timer);
    if (response.subtype === "error") {
      const error = new ProtocolError(`The CLI rejected the ${pending.subtype} request: ${String(response.error)}`);
      error.refusedRequest = pending.subtype;
      pending.reject(error);
      return;
    }
    pending.resolve((response.response ?? {}) as Record<string, unknown>);
  }

  private async answer(active: Active, requestId: string, request: Record<string, unknown> & { subtype: string }): Promise<void> {
    if (active.failure) {
      // The call was stopped: no handler runs any more. Notifications (e.g. `notifications/cancelled`) are still
      // acknowledged so the CLI's MCP client settles; other requests stay unanswered until the interrupt ends them.
      const message = request.message as { id?: unknown; method?: unknown } | undefined;
      if (request.subtype === "mcp_message" && message?.id === undefined && typeof message?.method === "string") {
        this.write(controlSuccess(requestId, { mcp_response: { jsonrpc: "2.0", result: {}, id: 0 } }));
      }
      return;
    }
    const controller = new AbortController();
    active.inflight.set(requestId, controller);
    active.timers.pause();
    try {
      const response = await dispatchControl(active.call.control, request, controller.signal);
      // After a failure nothing more is fed to the CLI: a tool result would let it ask the API again.
      if (!controller.signal.aborted && !active.failure && this.active === active) this.write(controlSuccess(requestId, response));
    } catch (error) {
      if (!controller.signal.aborted && !active.failure && this.active === active) this.write(controlError(requestId, (error as Error).message ?? String(error)));
    } finally {
      active.inflight.delete(requestId);
      active.timers.touch();
    }
  }

  /** First failure of the current call wins; `retireReason` marks the process as unusable afterwards. */
  private failActive(error: ClaudeCodeError, retireReason?: string): void {
    if (retireReason) this.anomaly ??= retireReason;
    const active = this.active;
    if (!active || active.failure || active.result) {
      if (!active && retireReason) this.kill(retireReason);
      return;
    }
    active.failure = error;
    active.done();
  }

  private onExit(exit: ExitInfo): void {
    for (const pending of this.pending.values()) {
      clearTimeout(pending.timer);
      pending.reject(this.exitError(exit));
    }
    this.pending.clear();
    const active = this.active;
    active?.call.onExit?.(exit);
    if (active && !active.result && !active.failure) this.failActive(this.exitError(exit));
  }

  private exitError(exit: ExitInfo | undefined): ClaudeCodeError {
    if (exit?.spawnError) {
      const code = exit.spawnError.code;
      const reason = code === "ENOENT" ? "file not found" : code === "EACCES" ? "not executable" : exit.spawnError.message;
      return new CliNotFoundError(this.options.process.path, reason, { cause: exit.spawnError });
    }
    const how = !exit ? "ended" : exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.exitCode}`;
    const stage = !this.initialized ? "before answering initialize" : this.active?.uuid === undefined ? "before the call's prompt was sent" : "before its result";
    const error = new CliCrashError(
      `The Claude Code CLI (a reused process, call ${this.calls}) ${how} ${stage}. Check the stderr tail below and the transcript; rerun with a transcript dir to capture the stream.`,
      exit?.exitCode,
      exit?.signal,
      { stderrTail: this.proc.stderrTail() },
    );
    // Nothing was asked of the model yet: the caller may run the call on another process.
    error.beforeInitialize = this.active?.uuid === undefined;
    return error;
  }
}
