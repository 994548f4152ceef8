/**
 * A runtime's side of the limits: each call goes through `run`, which admits every attempt through the
 * governor, reports what the CLI says about limits and retries, turns the stream into progress events,
 * and runs a rate-limited call again once the governor lets it (only when nothing in it had acted).
 */
import { type CliMessage, apiRetryInfo, rateLimitInfo } from "../protocol/messages.js";
import { type Logger, silentLogger } from "../session/logger.js";
import type { ToolCallRecord } from "../runtime/types.js";
import { ClaudeCodeApiError, ClaudeCodeError } from "../errors/index.js";
import { ApiRetryBudgetError, UsageLimitError } from "./errors.js";
import type { CallEvent, GovernorEvent, KtxProgressEvent, ProgressListener } from "./events.js";
import { type RateLimitGovernorPort, type RateLimitSignal, type Release, RateLimitGovernor } from "./governor.js";
import { describeEvent, isChatty } from "./describe.js";
import { apiRetrySignal, rateLimitSignal } from "./signals.js";
import { fromKtxWaitState } from "./ktx-governor.js";

/** What the runtime wires into one attempt of a call. */
export interface AttemptHooks {
  /** Waits for the governor (a reset, a slot under pressure); call after taking the runtime's own slot. */
  admit(signal?: AbortSignal): Promise<void>;
  /** Frees what `admit` took; idempotent. */
  done(): void;
  /** Whether this failure will be run again (so the call's slot and process may wait for it). */
  willRetry(error: unknown): boolean;
  /** Every CLI message of the run; throws ApiRetryBudgetError to stop a run that retries too long. */
  onCliMessage(message: CliMessage): void;
  onStepFinish(stepIndex: number): void;
  onToolSettled(call: ToolCallRecord): void;
}

export interface CallLimitsOptions {
  governor: RateLimitGovernorPort;
  onEvent?: ProgressListener;
  logger: Logger;
  /** Infinity: the CLI may retry as long as it likes. */
  apiRetryBudgetMs: number;
}

/** Governors told of a retry (a rate limit without usage figures) since their last "allowed". */
const retrySignalled = new WeakSet<RateLimitGovernorPort>();

interface CallInfo {
  signal?: AbortSignal;
  unitKey?: string;
}

export class CallLimits {
  private calls = 0;
  private active = 0;
  private unsubscribe: (() => void) | undefined;
  private lastTickLog = 0;

  constructor(private readonly options: CallLimitsOptions) {}

  get governor(): RateLimitGovernorPort {
    return this.options.governor;
  }

  async run<T>(info: CallInfo, attempt: (hooks: AttemptHooks) => Promise<T>): Promise<T> {
    const callId = ++this.calls;
    this.enter();
    try {
      const maxAttempts = Math.max(1, this.options.governor.maxRetryAttempts());
      for (let number = 1; ; number += 1) {
        const hooks = new Attempt(this, callId, info.unitKey, number >= maxAttempts, info.signal);
        try {
          const output = await attempt(hooks);
          hooks.succeeded();
          return output;
        } catch (caught) {
          const error = hooks.usageLimit(caught);
          const reason = hooks.retryReason(error);
          if (reason === undefined) throw hooks.finalError(error);
          this.emit({ type: "call_retry", callId, ...(info.unitKey ? { unitKey: info.unitKey } : {}), attempt: number + 1, maxAttempts, reason });
        } finally {
          hooks.done();
        }
      }
    } finally {
      this.leave();
    }
  }

  /** @internal */
  report(signal: RateLimitSignal): void {
    const governor = this.options.governor;
    if (signal.rateLimitType === "opaque" || signal.rateLimitType === "api_retry") retrySignalled.add(governor);
    if (signal.status === "allowed") retrySignalled.delete(governor);
    governor.report(signal);
  }

  /**
   * @internal After a success without usage figures (an API-key session never sends any), pressure from
   * retry signals lifts: reported as "allowed" once, by whichever runtime of the process succeeds first.
   */
  recovered(): void {
    if (retrySignalled.has(this.options.governor)) this.report({ provider: "claude-subscription", status: "allowed" });
  }

  /** @internal */
  get retryBudgetMs(): number {
    return this.options.apiRetryBudgetMs;
  }

  /** @internal No `onEvent` and no logger: a call's progress events have nowhere to go, so none are made. */
  get unheard(): boolean {
    return this.options.onEvent === undefined && this.options.logger === silentLogger;
  }

  /** @internal */
  emit(event: KtxProgressEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch (error) {
      this.options.logger.warn(`onEvent threw on ${event.type}; ignored: ${(error as Error)?.message ?? error}`);
    }
    if (event.type === "wait_tick") {
      // A wait can last hours: the log gets a line a minute, onEvent every tick.
      if (Date.now() - this.lastTickLog < 60_000) return;
      this.lastTickLog = Date.now();
    }
    // No logger, no line: a loop makes a dozen events.
    if (this.options.logger === silentLogger) return;
    const line = describeEvent(event);
    if (isChatty(event)) this.options.logger.debug(line);
    else this.options.logger.info(line);
  }

  /** Governor events reach this runtime's listeners while it has calls in progress. */
  private enter(): void {
    this.active += 1;
    // Nobody would hear the governor's events: no need to follow them.
    if (this.active > 1 || this.unheard) return;
    const governor = this.options.governor as RateLimitGovernorPort & { subscribe?: (listener: (state: never) => void) => () => void };
    if (typeof governor.subscribe !== "function") return;
    const forward = (event: GovernorEvent) => this.emit(event);
    this.unsubscribe =
      governor instanceof RateLimitGovernor
        ? governor.subscribe(forward)
        : governor.subscribe(((state: unknown) => {
            const event = fromKtxWaitState(state);
            if (event) forward(event);
          }) as (state: never) => void);
  }

  private leave(): void {
    this.active -= 1;
    if (this.active === 0) {
      this.unsubscribe?.();
      this.unsubscribe = undefined;
    }
  }
}

class Attempt implements AttemptHooks {
  private release: Release | undefined;
  private toolsSettled = 0;
  private reportedRejection = false;
  /** The reset of a `rejected` rate_limit_event of this attempt, when it named one. */
  private rejection: { resetsAt: Date; window: string; utilization?: number } | undefined;
  private sawUsageReport = false;
  private firstRetryAt: number | undefined;
  private readonly started = new Map<string, { name: string; at: number }>();

  constructor(
    private readonly limits: CallLimits,
    private readonly callId: number,
    private readonly unitKey: string | undefined,
    private readonly last: boolean,
    private readonly signal: AbortSignal | undefined,
  ) {}

  async admit(signal?: AbortSignal): Promise<void> {
    const governor = this.limits.governor;
    if (governor instanceof RateLimitGovernor) this.release = await governor.acquire(signal);
    else await governor.waitForReady(signal);
  }

  done(): void {
    this.release?.();
    this.release = undefined;
  }

  onCliMessage(message: CliMessage): void {
    switch (message.kind) {
      case "rate_limit": {
        const info = rateLimitInfo(message.message);
        if (!info) return;
        const signal = rateLimitSignal(info);
        this.sawUsageReport = true;
        if (signal.status === "rejected") this.reportedRejection = true;
        if (signal.status === "rejected" && info.resetsAt) {
          this.rejection = { resetsAt: info.resetsAt, window: info.window ?? "five_hour", ...(info.utilization !== undefined ? { utilization: info.utilization } : {}) };
        }
        this.limits.report(signal);
        return;
      }
      case "api_retry":
        return this.apiRetry(apiRetryInfo(message.message));
      case "system": {
        // The CLI compacted the conversation (a session's `compaction`): its summary now stands for the turns before.
        if (message.message.subtype !== "compact_boundary") return;
        const meta = (message.message as { compact_metadata?: { trigger?: unknown; pre_tokens?: unknown; post_tokens?: unknown } }).compact_metadata ?? {};
        const count = (value: unknown) => (typeof value === "number" ? value : undefined);
        this.emit({ type: "compacted", trigger: meta.trigger === "manual" ? "manual" : "auto", preTokens: count(meta.pre_tokens), postTokens: count(meta.post_tokens) });
        return;
      }
      case "assistant": {
        if (message.message.parent_tool_use_id != null || this.limits.unheard) return;
        for (const block of message.message.message.content) {
          if (block.type !== "tool_use") continue;
          const use = block as unknown as { id: string; name: string; input: unknown };
          this.started.set(use.id, { name: use.name, at: Date.now() });
          this.emit({ type: "tool_call_started", toolUseId: use.id, name: use.name, input: use.input });
        }
        return;
      }
      case "stream_event": {
        if ((message.message as { parent_tool_use_id?: unknown }).parent_tool_use_id != null || this.limits.unheard) return;
        const event = message.message.event as { type?: string; delta?: { type?: string; text?: unknown } } | undefined;
        if (event?.type === "content_block_delta" && event.delta?.type === "text_delta" && typeof event.delta.text === "string") {
          this.emit({ type: "text_delta", text: event.delta.text });
        }
        return;
      }
      default:
        return;
    }
  }

  onStepFinish(stepIndex: number): void {
    if (!this.limits.unheard) this.emit({ type: "step_finished", stepIndex });
  }

  onToolSettled(call: ToolCallRecord): void {
    this.toolsSettled += 1;
    if (this.limits.unheard) return;
    const started = this.started.get(call.toolUseId);
    this.emit({
      type: "tool_call_finished",
      toolUseId: call.toolUseId,
      name: call.name,
      ok: call.ok,
      durationMs: call.durationMs ?? (started ? Date.now() - started.at : 0),
      ...(call.error !== undefined ? { error: call.error } : {}),
    });
  }

  succeeded(): void {
    if (!this.sawUsageReport) this.limits.recovered();
  }

  /**
   * A failed result after a `rejected` rate_limit_event with a reset is that usage limit, also when the
   * result itself does not say so (the CLI's own lines mark it; the event alone is what KTX's backend
   * reads): an API error, or a run that ended with an error subtype (`error_during_execution`:
   * `RunFailedError`, matched by its code because claude-code/run imports this module).
   */
  usageLimit(error: unknown): unknown {
    const failedResult = error instanceof ClaudeCodeApiError || (ClaudeCodeError.isInstance(error) && error.code === "run_failed");
    if (!this.rejection || !failedResult) return error;
    const { resetsAt, window, utilization } = this.rejection;
    return new UsageLimitError(resetsAt, window, { cause: error, ...(utilization !== undefined ? { utilization } : {}), ...(error.stderrTail ? { stderrTail: error.stderrTail } : {}) });
  }

  /**
   * A usage-limit rejection (it has a reset to wait for) runs again when nothing had acted (no tool
   * ran), attempts are left and the call was not aborted. Other API errors were already retried by the CLI.
   */
  willRetry(error: unknown): boolean {
    const limit = this.usageLimit(error);
    return limit instanceof UsageLimitError && limit.reason === "rejected" && this.toolsSettled === 0 && !this.last && !this.signal?.aborted;
  }

  /** Why the failed attempt runs again, or undefined (willRetry); takes `usageLimit(error)`. */
  retryReason(error: unknown): string | undefined {
    if (!(error instanceof UsageLimitError) || error.reason !== "rejected") return undefined;
    // A CLI that reported the rejection only in its result: the governor still has to hold the other calls.
    if (!this.reportedRejection) {
      this.limits.report({ provider: "claude-subscription", status: "rejected", resetAtMs: error.resetsAt.getTime(), rateLimitType: error.window });
    }
    if (!this.willRetry(error)) return undefined;
    return `${error.window} usage limit reached; running again after the reset`;
  }

  /** A usage limit that stopped a call after its tools ran says so (the caller decides what to redo). */
  finalError(error: unknown): unknown {
    if (error instanceof UsageLimitError && this.toolsSettled > 0 && error.toolCallsBefore === 0) {
      return new UsageLimitError(error.resetsAt, error.window, {
        cause: error,
        reason: error.reason,
        toolCallsBefore: this.toolsSettled,
        ...(error.utilization !== undefined ? { utilization: error.utilization } : {}),
        ...(error.stderrTail ? { stderrTail: error.stderrTail } : {}),
        ...(error.transcriptPath ? { transcriptPath: error.transcriptPath } : {}),
      });
    }
    return error;
  }

  private apiRetry(retry: ReturnType<typeof apiRetryInfo>): void {
    const now = Date.now();
    this.firstRetryAt ??= now;
    this.emit({ type: "cli_retry", attempt: retry.attempt, maxRetries: retry.maxRetries, delayMs: retry.delayMs, status: retry.status, error: retry.error });
    this.limits.report(apiRetrySignal(retry));
    const elapsedMs = now - this.firstRetryAt;
    if (elapsedMs + (retry.delayMs ?? 0) > this.limits.retryBudgetMs) {
      throw new ApiRetryBudgetError(retry.status, retry.attempt ?? 0, elapsedMs, this.limits.retryBudgetMs, retry.error ? { lastError: retry.error } : {});
    }
  }

  private emit(event: DistributiveOmit<CallEvent, "callId" | "unitKey">): void {
    this.limits.emit({ ...event, callId: this.callId, ...(this.unitKey ? { unitKey: this.unitKey } : {}) } as CallEvent);
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
