/**
 * The rate-limit governor: one per process (shared by every runtime), fed by the usage signals the CLI
 * reports. It throttles new calls under pressure, holds every new call while a usage window is
 * exhausted until its reset, and backs off on rate limits without a reset time. It has KTX's governor
 * shape (`waitForReady`, `report`, `maxRetryAttempts`), so either side's governor fits the other.
 * Waiting uses one timer per pause (plus an unref'd tick timer while someone listens): no polling.
 */
import { AbortError } from "../errors/index.js";
import { UsageLimitError } from "./errors.js";
import type { GovernorEvent, RateLimitProvider } from "./events.js";
import { type RateLimitOptions, type ResolvedRateLimitOptions, resolveRateLimitOptions } from "./options.js";

export type { RateLimitProvider } from "./events.js";

/** KTX's signal type (packages/cli/src/context/llm/rate-limit-governor.ts), field for field. */
export interface RateLimitSignal {
  provider: RateLimitProvider;
  status: "allowed" | "warning" | "rejected";
  resetAtMs?: number;
  retryAfterMs?: number;
  utilization?: number;
  rateLimitType?: string;
}

/** What a runtime needs from a governor: KTX's shape, so KTX's own governor plugs in unchanged. */
export interface RateLimitGovernorPort {
  waitForReady(signal?: AbortSignal): Promise<void>;
  report(signal: RateLimitSignal): void;
  /** Attempts a rate-limited call may make, the first included (1 = no retry). */
  maxRetryAttempts(): number;
}

export type Release = () => void;

interface Waiter {
  /** Needs a concurrency slot (acquire) or only the end of a pause (waitForReady). */
  slot: boolean;
  grant(): void;
  fail(error: Error): void;
}

interface Pause {
  until: number;
  provider: RateLimitProvider;
  window: string | undefined;
  /** The reported reset (without the margin); undefined for a backoff. */
  resetAtMs: number | undefined;
  utilization: number | undefined;
}

export interface GovernorSnapshot {
  enabled: boolean;
  paused: boolean;
  resumeAt: Date | undefined;
  window: string | undefined;
  concurrencyLimit: number;
  active: number;
  waiting: number;
}

const MAX_TIMER_MS = 2 ** 31 - 1;

export class RateLimitGovernor implements RateLimitGovernorPort {
  private config: ResolvedRateLimitOptions;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly listeners = new Set<(event: GovernorEvent) => void>();
  private readonly queue: Waiter[] = [];
  private active = 0;
  private limit: number;
  private pause: Pause | undefined;
  private pauseTimer: NodeJS.Timeout | undefined;
  private tickTimer: NodeJS.Timeout | undefined;
  private readonly opaqueAttempts = new Map<RateLimitProvider, number>();

  constructor(options: RateLimitOptions = {}, deps: { now?: () => number; random?: () => number } = {}) {
    this.config = resolveRateLimitOptions(options);
    this.now = deps.now ?? Date.now;
    this.random = deps.random ?? Math.random;
    this.limit = this.config.maxConcurrency;
  }

  get options(): ResolvedRateLimitOptions {
    return this.config;
  }

  /** Replaces the options (the latest ktx.yaml wins); the current pause and pressure stay. */
  configure(options: RateLimitOptions): void {
    const underPressure = this.limit < this.config.maxConcurrency;
    this.config = resolveRateLimitOptions(options);
    this.limit = underPressure ? Math.min(this.config.minConcurrencyUnderPressure, this.config.maxConcurrency) : this.config.maxConcurrency;
    this.drain();
  }

  maxRetryAttempts(): number {
    return this.config.enabled ? Math.max(1, this.config.retry.maxAttempts) : 1;
  }

  snapshot(): GovernorSnapshot {
    this.drain();
    return {
      enabled: this.config.enabled,
      paused: this.pause !== undefined,
      resumeAt: this.pause ? new Date(this.pause.until) : undefined,
      window: this.pause?.window,
      concurrencyLimit: this.limit,
      active: this.active,
      waiting: this.queue.length,
    };
  }

  /** Listens to governor events; returns the unsubscribe function. */
  subscribe(listener: (event: GovernorEvent) => void): () => void {
    this.listeners.add(listener);
    this.armTicks();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stopTicks();
    };
  }

  report(signal: RateLimitSignal): void {
    if (!this.config.enabled) return;
    this.emit({
      type: "rate_limit_observed",
      provider: signal.provider,
      status: signal.status,
      ...(signal.rateLimitType ? { window: signal.rateLimitType } : {}),
      ...(signal.resetAtMs !== undefined ? { resetsAt: new Date(signal.resetAtMs) } : {}),
      ...(signal.retryAfterMs !== undefined ? { retryAfterMs: signal.retryAfterMs } : {}),
      ...(signal.utilization !== undefined ? { utilization: signal.utilization } : {}),
    });
    if (signal.status === "rejected") {
      this.applyPause(signal);
    } else if (signal.status === "warning" || (signal.utilization ?? 0) >= this.config.throttleThreshold) {
      this.setLimit(this.config.minConcurrencyUnderPressure, signal, `usage at or above the throttle threshold (${this.config.throttleThreshold})`);
    } else {
      this.opaqueAttempts.delete(signal.provider);
      this.setLimit(this.config.maxConcurrency, signal, "usage below the throttle threshold");
    }
    this.drain();
  }

  /** Resolves once no pause holds new calls; rejects with UsageLimitError when the wait would pass maxWaitMs. */
  async waitForReady(signal?: AbortSignal): Promise<void> {
    await this.enter(false, signal);
  }

  /**
   * Waits like `waitForReady`, then for a concurrency slot (in order); the returned function frees it.
   * Used by this library's runtimes; KTX's scheduler has its own slots.
   */
  async acquire(signal?: AbortSignal): Promise<Release> {
    const counted = await this.enter(true, signal);
    if (!counted) return () => undefined;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active -= 1;
      this.drain();
    };
  }

  /** Resolves true when a slot was counted (the governor is enabled). */
  private enter(slot: boolean, signal: AbortSignal | undefined): Promise<boolean> {
    if (signal?.aborted) return Promise.reject(new AbortError(signal.reason));
    if (!this.config.enabled) return Promise.resolve(false);
    this.drain();
    if (!this.pause && this.queue.length === 0 && (!slot || this.active < this.limit)) {
      if (slot) this.active += 1;
      return Promise.resolve(slot);
    }
    const tooLong = this.waitTooLong();
    if (tooLong) return Promise.reject(tooLong);
    return new Promise<boolean>((resolve, reject) => {
      const onAbort = () => {
        this.remove(waiter);
        reject(new AbortError(signal?.reason));
      };
      const waiter: Waiter = {
        slot,
        grant: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve(slot);
        },
        fail: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.queue.push(waiter);
      this.drain();
    });
  }

  private remove(waiter: Waiter): void {
    const index = this.queue.indexOf(waiter);
    if (index >= 0) this.queue.splice(index, 1);
    this.drain();
  }

  /** The error for a call that would wait past maxWaitMs, or undefined. */
  private waitTooLong(): UsageLimitError | undefined {
    const { maxWaitMs } = this.config;
    if (!this.pause || maxWaitMs === undefined || this.pause.until - this.now() <= maxWaitMs) return undefined;
    return new UsageLimitError(new Date(this.pause.resetAtMs ?? this.pause.until), this.pause.window ?? "opaque", {
      reason: "wait_exceeds_max",
      maxWaitMs,
      ...(this.pause.utilization !== undefined ? { utilization: this.pause.utilization } : {}),
    });
  }

  /** Lets through, in order, every waiter that may go now; arms the pause timer for the rest. */
  private drain(): void {
    this.endExpiredPause();
    if (this.pause) {
      const tooLong = this.waitTooLong();
      if (tooLong) for (const waiter of this.queue.splice(0)) waiter.fail(tooLong);
      this.armPauseTimer();
      return;
    }
    this.clearPauseTimer();
    for (let index = 0; index < this.queue.length; ) {
      const waiter = this.queue[index]!;
      if (waiter.slot && this.active >= this.limit) {
        index += 1;
        continue;
      }
      this.queue.splice(index, 1);
      if (waiter.slot) this.active += 1;
      waiter.grant();
    }
  }

  private applyPause(signal: RateLimitSignal): void {
    const now = this.now();
    const afterReset = signal.resetAtMs !== undefined ? signal.resetAtMs + this.config.resetMarginMs : undefined;
    // A rejection after its own reset (by our clock, margin included) means the API's clock is behind
    // ours by more than the margin: the calls back off as for a limit without a reset, instead of
    // running again at once until their attempts are spent.
    const until =
      afterReset !== undefined && afterReset > now
        ? afterReset
        : signal.retryAfterMs !== undefined
          ? now + signal.retryAfterMs
          : now + this.backoff(signal.provider);
    this.setLimit(this.config.minConcurrencyUnderPressure, signal, "usage limit reached");
    if (until <= now || (this.pause && until <= this.pause.until)) return;
    this.pause = { until, provider: signal.provider, window: signal.rateLimitType, resetAtMs: signal.resetAtMs, utilization: signal.utilization };
    this.emitWait("wait_started");
    this.armTicks();
  }

  /** KTX's backoff: base · 2^attempt, capped, with 75–125 % jitter. */
  private backoff(provider: RateLimitProvider): number {
    const { baseDelayMs, maxDelayMs, maxAttempts, jitter } = this.config.retry;
    const attempts = this.opaqueAttempts.get(provider) ?? 0;
    this.opaqueAttempts.set(provider, Math.min(attempts + 1, maxAttempts));
    const base = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(attempts, Math.max(0, maxAttempts - 1)));
    return Math.round(base * (jitter ? 0.75 + this.random() * 0.5 : 1));
  }

  private setLimit(to: number, signal: RateLimitSignal, reason: string): void {
    const bounded = Math.max(1, Math.min(to, this.config.maxConcurrency));
    if (bounded === this.limit) return;
    const from = this.limit;
    this.limit = bounded;
    this.emit({
      type: "concurrency_adjusted",
      provider: signal.provider,
      from,
      to: bounded,
      reason,
      ...(signal.rateLimitType ? { window: signal.rateLimitType } : {}),
      ...(signal.utilization !== undefined ? { utilization: signal.utilization } : {}),
    });
  }

  /** Only drain() calls this, so waiters are released whenever a pause ends. */
  private endExpiredPause(): void {
    const pause = this.pause;
    if (!pause || this.now() < pause.until) return;
    this.emitWait("wait_finished");
    this.pause = undefined;
    this.stopTicks();
    this.clearPauseTimer();
    // A window that reset starts empty: the pressure that came with the rejection is gone.
    if (pause.resetAtMs !== undefined) this.setLimit(this.config.maxConcurrency, { provider: pause.provider, status: "allowed", rateLimitType: pause.window }, "usage window reset");
  }

  /** One timer per pause, and only while calls wait: it keeps the process alive for them. */
  private armPauseTimer(): void {
    if (!this.pause || this.queue.length === 0) return this.clearPauseTimer();
    if (this.pauseTimer) return;
    this.pauseTimer = setTimeout(
      () => {
        this.pauseTimer = undefined;
        this.drain();
      },
      Math.min(MAX_TIMER_MS, Math.max(0, this.pause.until - this.now())),
    );
  }

  private clearPauseTimer(): void {
    if (this.pauseTimer) clearTimeout(this.pauseTimer);
    this.pauseTimer = undefined;
  }

  /** wait_tick events while paused and someone listens; unref'd, so ticks never keep the process alive. */
  private armTicks(): void {
    if (this.tickTimer || !this.pause || this.listeners.size === 0) return;
    const tick = () => {
      this.tickTimer = undefined;
      // The last tick can fire before the pause timer: ending the pause here must release the waiters too.
      this.drain();
      if (!this.pause || this.listeners.size === 0) return;
      this.emitWait("wait_tick");
      this.schedule(tick);
    };
    this.schedule(tick);
  }

  private schedule(tick: () => void): void {
    const remaining = (this.pause?.until ?? this.now()) - this.now();
    this.tickTimer = setTimeout(tick, Math.max(1, Math.min(this.config.tickMs, remaining)));
    this.tickTimer.unref?.();
  }

  private stopTicks(): void {
    if (this.tickTimer) clearTimeout(this.tickTimer);
    this.tickTimer = undefined;
  }

  private emitWait(type: "wait_started" | "wait_tick" | "wait_finished"): void {
    const pause = this.pause;
    if (!pause) return;
    this.emit({
      type,
      provider: pause.provider,
      ...(pause.window ? { window: pause.window } : {}),
      resumeAt: new Date(pause.until),
      remainingMs: type === "wait_finished" ? 0 : Math.max(0, pause.until - this.now()),
      waiting: this.queue.length,
    });
  }

  private emit(event: GovernorEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch {
        // A listener's failure must not disturb the governor or other listeners.
      }
    }
  }
}

const PROCESS_KEY = Symbol.for("ktx-claude-code.rate-limit-governor");

/**
 * The process's governor, shared by every runtime (and by duplicated copies of this package). Options
 * reconfigure it: the latest `ingest.rateLimit` wins.
 */
export function processRateLimitGovernor(options?: RateLimitOptions): RateLimitGovernor {
  const holder = globalThis as { [PROCESS_KEY]?: RateLimitGovernor };
  const existing = holder[PROCESS_KEY];
  if (!existing) return (holder[PROCESS_KEY] = new RateLimitGovernor(options));
  if (options) existing.configure(options);
  return existing;
}
