/**
 * One Claude Code CLI process, the only kind there is (docs/performance.md, "One process lifecycle").
 * It serves calls one at a time: a cold call is a new process's first call, a warm spare is a started
 * process that has served nothing yet, and a kept process serves the next call of its shape.
 *
 * The first call sends `initialize` (its system prompt, schema and MCP server); the prompt waits for
 * the reply, so a wrong account is refused before any API request. Every call writes its user line
 * with a fresh random uuid. After the `result` the process is either rewound to that uuid (kept: the
 * next call's API requests equal a fresh process's) or retired at once (stdin EOF). Anything
 * unexpected retires it; a retiring process keeps the host alive until it is reaped.
 *
 * Below it, `CliChannel` (cli-channel.ts) turns the process's stdout into checked messages and carries
 * our control requests; `ActiveCall` (process-call.ts) is the running call's own state and clocks.
 */
import { randomUUID } from "node:crypto";
import { AbortError, ClaudeCodeError, CliCrashError, ProtocolError } from "../errors/index.js";
import type { CliMessage } from "../protocol/messages.js";
import type { CliProcess, ExitInfo } from "../transport/process.js";
import { CliChannel } from "./cli-channel.js";
import { type ControlRequests, answerControl } from "./control.js";
import { type Logger, silentLogger } from "./logger.js";
import {
  ActiveCall,
  DEFAULT_CONTROL_TIMEOUT_MS,
  INTERRUPT_GRACE_MS,
  type PooledProcessOptions,
  type ProcessCall,
  type ProcessCallEnd,
  asClaudeCodeError,
  crashError,
} from "./process-call.js";
import { ProcessCost, residentMiB } from "./support.js";

export { DEFAULT_CONTROL_TIMEOUT_MS, INTERRUPT_GRACE_MS, type ModelSwitch, type PooledProcessOptions, type ProcessCall, type ProcessCallEnd } from "./process-call.js";

export class PooledProcess {
  readonly proc: CliProcess;
  /** Names this launch in every transcript of a call it served. */
  readonly launchId = randomUUID().slice(0, 8);
  private readonly logger: Logger;
  private readonly controlTimeoutMs: number;
  private readonly channel: CliChannel;
  private readonly requests: ControlRequests;
  private initialized = false;
  private model: string | undefined;
  private permissionMode: string | undefined;
  private calls = 0;
  private readonly cost = new ProcessCost();
  private active: ActiveCall | undefined;
  /** The running call's preparation (initialize, model and mode switches), until its prompt is out. */
  private preparing: Promise<unknown> = Promise.resolve();
  private retiredBecause: string | undefined;
  private anomaly: string | undefined;
  private settling: Promise<boolean> = Promise.resolve(true);

  constructor(private readonly options: PooledProcessOptions) {
    this.logger = options.logger ?? silentLogger;
    this.controlTimeoutMs = options.controlTimeoutMs ?? DEFAULT_CONTROL_TIMEOUT_MS;
    this.channel = new CliChannel(
      options.process,
      {
        lineArrived: () => this.active?.timers.touch(),
        message: (message) => this.onMessage(message),
        broken: (error, reason) => this.failActive(error, reason),
        noise: (text) => {
          this.anomaly ??= `the CLI wrote a non-JSON line: ${text.slice(0, 100)}`;
        },
        stdoutEnd: () => this.onStdoutEnd(),
        exit: (exit) => this.onExit(exit),
        unanswered: (reason) => void this.kill(reason),
      },
      this.logger,
    );
    this.proc = this.channel.proc;
    this.requests = this.channel.requests;
    // Idle, a process never keeps the host alive (it ends with the host); serving or retiring, it does.
    this.proc.keepHostAlive(false);
    this.model = /^--model=(.*)$/.exec(this.proc.launchArgs.find((arg) => arg.startsWith("--model=")) ?? "")?.[1];
    this.permissionMode = /^--permission-mode=(.*)$/.exec(this.proc.launchArgs.find((arg) => arg.startsWith("--permission-mode=")) ?? "")?.[1];
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  get launchArgs(): readonly string[] {
    return this.proc.launchArgs;
  }

  /** Calls started on this process so far (0: a warm spare). */
  get callCount(): number {
    return this.calls;
  }

  /** The model the process runs now (its launch model until switched). */
  get currentModel(): string | undefined {
    return this.model;
  }

  /** Why the process was retired; undefined while it may serve calls. */
  get retired(): string | undefined {
    return this.retiredBecause ?? (this.proc.isRunning ? undefined : "exited");
  }

  get busy(): boolean {
    return this.active !== undefined;
  }

  /** Settles after the last call's rewind (true) or once the process has exited (false). */
  get settled(): Promise<boolean> {
    return this.settling;
  }

  /** Resident memory of the CLI in MiB (Linux /proc); undefined elsewhere or once it is gone. */
  rssMiB(): number | undefined {
    return residentMiB(this.proc.pid);
  }

  /**
   * Runs one call. Resolves at the `result` (rewind or exit continue in `settled`); throws the call's
   * typed error otherwise, after which the process is rewound when that is safe, else stopped.
   */
  async call(call: ProcessCall): Promise<ProcessCallEnd> {
    if (this.active) throw new ProtocolError("A Claude Code process was given a second call while one was running.");
    if (this.retired) throw new ProtocolError(`This Claude Code process was retired (${this.retired}).`);
    if (call.signal?.aborted) throw new AbortError(call.signal.reason);
    this.calls += 1;
    const callIndex = this.calls;
    const active = new ActiveCall(call, (error, reason) => this.failActive(error, reason));
    this.active = active;
    this.proc.keepHostAlive(true);
    this.channel.attach(call.onWire);
    active.start();
    try {
      // A process initialized and on the call's model (a reused one, the usual case) has nothing to prepare.
      if (!this.initialized || (call.model !== undefined && call.model !== this.model) || (call.permissionMode !== undefined && call.permissionMode !== this.permissionMode)) {
        const prepared = (this.preparing = this.prepare(active)).then(
          () => true,
          (error: unknown) => {
            this.failActive(asClaudeCodeError(error));
            return false;
          },
        );
        await Promise.race([prepared, active.finished]);
      }
      if (!active.failure && !active.result) {
        active.uuid = randomUUID();
        this.channel.write({ type: "user", uuid: active.uuid, session_id: "", message: { role: "user", content: [{ type: "text", text: call.prompt }] }, parent_tool_use_id: null });
      }
      await active.finished;
    } catch (error) {
      this.failActive(asClaudeCodeError(error));
    } finally {
      active.stop();
    }
    const stderrTail = this.proc.stderrTail();
    if (active.result && !active.failure) {
      const result = this.cost.perCall(active.result);
      this.settling = call.keep && !this.anomaly ? (call.continues ? this.afterTurn() : this.afterResult(active)) : this.endAfterCall(call.endReason ?? "single use");
      return { result, stderrTail, callIndex, uuid: active.uuid!, settled: this.settling };
    }
    const failure = active.failure ?? this.exitError(undefined);
    this.settling = this.afterFailure(active, failure);
    if (!failure.stderrTail && stderrTail) (failure as { stderrTail: string }).stderrTail = stderrTail;
    throw failure;
  }

  /**
   * After a conversation's last turn: rewound to before the user line `uuid` (its first turn's), so it
   * may serve other calls as a process that served none of the conversation; `settled` says whether it can.
   * `lastSeen` is its last turn's user line: the CLI refuses (`stale_target`) to rewind across turns it
   * was not told the caller has seen.
   */
  rewindConversation(uuid: string, lastSeen: string): Promise<boolean> {
    if (this.active) return Promise.reject(new ProtocolError("A Claude Code process was rewound while a call was running."));
    if (this.retired) return (this.settling = Promise.resolve(false));
    // Idle, the process does not keep the host alive; until the rewind's reply, it must (becomeIdle lets go again).
    this.proc.keepHostAlive(true);
    this.settling = this.afterResult({ uuid }, lastSeen);
    return this.settling;
  }

  /** Retires an idle process: `end_session`, then stdin EOF, escalating to signals if it lingers. */
  async retire(reason: string): Promise<ExitInfo> {
    if (!this.retiredBecause) {
      this.retiredBecause = reason;
      this.logger.debug(`retiring Claude Code process ${this.pid}: ${reason}`);
      if (this.proc.isRunning && !this.active) this.requests.notify({ subtype: "end_session" });
    }
    // Until it is reaped: a host awaiting close() must not exit under it.
    if (this.proc.isRunning) this.proc.keepHostAlive(true);
    return this.proc.stop(true);
  }

  /** Ends the process at once (it misbehaved, or its call was stopped in a way that cannot be undone). */
  private kill(reason: string): Promise<ExitInfo> {
    this.retiredBecause ??= reason;
    this.logger.debug(`stopping Claude Code process ${this.pid}: ${reason}`);
    this.requests.clear();
    if (this.proc.isRunning) this.proc.keepHostAlive(true);
    return this.proc.stop(false);
  }

  private async prepare(active: ActiveCall): Promise<void> {
    const { call } = active;
    if (!this.initialized) {
      const response = await this.requests.send(call.initialize, 0);
      this.initialized = true;
      call.onInitialized?.(response);
    }
    if (call.model !== undefined && this.model !== call.model && !active.failure) {
      // apply_flag_settings switches without an API request (set_model would first send a 1-token one).
      if (this.options.modelSwitch === "apply_flag_settings") await this.requests.send({ subtype: "apply_flag_settings", settings: { model: call.model } }, this.controlTimeoutMs);
      else throw new ProtocolError(`This Claude Code process runs ${this.model} and cannot switch to ${call.model} (its CLI version has no verified model switch).`);
      this.model = call.model;
    }
    // Within the call, so the `system/status` line the CLI answers it with arrives while a call is running.
    if (call.permissionMode !== undefined && this.permissionMode !== call.permissionMode && !active.failure) {
      await this.requests.send({ subtype: "set_permission_mode", mode: call.permissionMode }, this.controlTimeoutMs);
      this.permissionMode = call.permissionMode;
    }
  }

  /**
   * Switches the running call's CLI permission mode now (`set_permission_mode` while the turn runs, after its
   * preparation): a tool use the CLI decides after the answer follows the new mode. False when no call runs
   * (the next call's preparation switches it then).
   */
  async switchPermissionMode(mode: string): Promise<boolean> {
    if (!this.active || this.active.failure || this.retired) return false;
    await this.preparing.catch(() => {});
    if (!this.active || this.active.failure) return false;
    if (this.permissionMode === mode) return true;
    await this.requests.send({ subtype: "set_permission_mode", mode }, this.controlTimeoutMs);
    this.permissionMode = mode;
    return true;
  }

  /** A single-use process, or one that may not be kept: stdin EOF now, settled once it has exited. */
  private async endAfterCall(reason: string): Promise<boolean> {
    this.retiredBecause ??= reason;
    await this.proc.stop(true);
    this.becomeIdle();
    return false;
  }

  /** A conversation's turn ended: the process waits, unrewound, for the conversation's next turn. */
  private async afterTurn(): Promise<boolean> {
    this.becomeIdle();
    return true;
  }

  /** Rewinds to the call's user line; the process serves again only on `rewound: true`. */
  private async afterResult(active: Pick<ActiveCall, "uuid">, lastSeen?: string): Promise<boolean> {
    try {
      const request = { subtype: "rewind_conversation", target_message_uuid: active.uuid, ...(lastSeen !== undefined ? { last_seen_user_message_uuid: lastSeen } : {}) };
      const reply = await this.requests.send(request, this.controlTimeoutMs);
      if (reply.rewound !== true) throw new Error(`rewind refused: ${JSON.stringify(reply).slice(0, 200)}`);
      this.becomeIdle();
      return true;
    } catch (error) {
      this.becomeIdle();
      await this.retire((error as Error).message);
      return false;
    }
  }

  /**
   * After a failed call. Once the prompt is out, the turn is interrupted first, whatever the failure: a
   * CLI stopped by EOF or a signal alone may still finish a pending tool call as failed and ask the API
   * once more. A kept process whose call was aborted is rewound and reused if the CLI ended the turn
   * with a result; every other failure stops it.
   */
  private async afterFailure(active: ActiveCall, failure: ClaudeCodeError): Promise<boolean> {
    active.cancelAll(new Error("call ended"));
    const reusable = active.call.keep && failure instanceof AbortError && this.initialized && !this.anomaly;
    if (active.uuid !== undefined && !active.result && this.proc.isRunning) {
      this.requests.notify({ subtype: "interrupt" });
      // A process about to be stopped anyway gets a short grace; one that may serve again, the full one.
      const grace = reusable ? this.controlTimeoutMs : Math.min(this.controlTimeoutMs, INTERRUPT_GRACE_MS);
      await active.awaitResult(grace, this.proc.exited);
      if (!active.result && reusable) return this.stopAfterFailure(`no result within ${grace} ms of an interrupt`);
    }
    if (!reusable || !this.proc.isRunning || this.requests.size > 0) {
      return this.stopAfterFailure(failure instanceof AbortError ? "aborted" : `call failed: ${failure.message.slice(0, 200)}`);
    }
    if (active.uuid === undefined) {
      this.becomeIdle();
      return true;
    }
    // The interrupted call's cost is its own: the next call's difference starts after it.
    this.cost.perCall(active.result!);
    return this.afterResult(active);
  }

  private async stopAfterFailure(reason: string): Promise<boolean> {
    await this.kill(reason);
    this.becomeIdle();
    return false;
  }

  private becomeIdle(): void {
    this.active = undefined;
    this.channel.detach();
    if (this.proc.isRunning && !this.retiredBecause) this.proc.keepHostAlive(false);
  }

  private onMessage(message: CliMessage): void {
    const active = this.active;
    if (!active) {
      // Between calls only bookkeeping lines may come (e.g. `command_lifecycle`); anything else is not ours to act on.
      if (message.kind !== "unknown_message" && message.kind !== "keep_alive") void this.kill(`a ${message.kind} line arrived between calls`);
      return;
    }
    this.route(active, message);
  }

  private route(active: ActiveCall, message: CliMessage): void {
    switch (message.kind) {
      case "control_request":
        void answerControl(active, message.message.request_id, message.message.request, (line) => this.channel.write(line), () => this.active === active);
        return;
      case "control_cancel_request":
        active.cancelRequest(message.message.request_id);
        return;
      case "unknown_message":
        this.logger.info(`passing through unknown CLI message type ${JSON.stringify(message.message.type)}`);
        break;
      case "system_init":
        active.sawInit = true;
        break;
      case "result":
        if (active.uuid === undefined || active.result) {
          this.anomaly ??= "a result arrived that no call of ours was waiting for";
          return;
        }
        active.result = message.message;
        // A process that will not be kept gets stdin EOF at once: nothing more is asked of it.
        if (!active.failure && !active.call.keep) this.proc.endInput();
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

  /**
   * Stops the running call from outside its stream (the interceptor refused one of its requests) and
   * retires the process; with no call running, the process is stopped.
   */
  failCall(error: ClaudeCodeError, retireReason: string): void {
    this.failActive(error, retireReason);
  }

  /** First failure of the current call wins; `retireReason` marks the process as unusable afterwards. */
  private failActive(error: ClaudeCodeError, retireReason?: string): void {
    if (retireReason) this.anomaly ??= retireReason;
    if (this.active) this.active.fail(error);
    else if (retireReason) void this.kill(retireReason);
  }

  private onStdoutEnd(): void {
    const active = this.active;
    if (!active || active.result || active.failure) return;
    // Exit usually follows at once and gives the better message; only a CLI that lives on without stdout is stopped here.
    const timer = setTimeout(() => {
      if (this.proc.isRunning && this.active === active) this.failActive(new CliCrashError("The Claude Code CLI closed its stdout before its result but kept running; it was stopped.", undefined, undefined), "stdout closed");
    }, 1_000);
    timer.unref();
  }

  private onExit(exit: ExitInfo): void {
    this.requests.clear(this.exitError(exit));
    const active = this.active;
    active?.call.onExit?.(exit);
    if (active && !active.result && !active.failure) this.failActive(this.exitError(exit));
  }

  private exitError(exit: ExitInfo | undefined): ClaudeCodeError {
    return crashError(exit, {
      path: this.options.process.path,
      initialized: this.initialized,
      active: this.active,
      calls: this.calls,
      noise: this.channel.noiseLines,
      firstNoise: this.channel.firstNoise,
      stderrTail: this.proc.stderrTail(),
    });
  }
}
