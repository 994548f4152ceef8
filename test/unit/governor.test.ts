/** The rate-limit governor with fake timers: throttle, pause until the reset, order, abort, maxWaitMs, backoff, ticks. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AbortError } from "../../src/errors/index.js";
import { UsageLimitError } from "../../src/limits/errors.js";
import type { GovernorEvent } from "../../src/limits/events.js";
import { RateLimitGovernor, type RateLimitSignal, processRateLimitGovernor } from "../../src/limits/governor.js";

const T0 = Date.UTC(2026, 10, 23, 12, 0, 0);
beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

const rejected = (inMs: number, window = "five_hour"): RateLimitSignal => ({ provider: "claude-subscription", status: "rejected", resetAtMs: Date.now() + inMs, rateLimitType: window });

/** A promise's state without waiting for it. */
function track<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error: unknown) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

describe("throttle", () => {
  it("starts calls one at a time under pressure, and all at once again when usage drops", async () => {
    const governor = new RateLimitGovernor({}, { random: () => 0.5 });
    const events: GovernorEvent[] = [];
    governor.subscribe((event) => events.push(event));
    governor.report({ provider: "claude-subscription", status: "allowed", utilization: 0.85, rateLimitType: "five_hour" });
    expect(governor.snapshot().concurrencyLimit).toBe(1);
    const first = await governor.acquire();
    const second = track(governor.acquire());
    const third = track(governor.acquire());
    await vi.advanceTimersByTimeAsync(0);
    expect([second.settled, third.settled]).toEqual([false, false]);
    first();
    await vi.advanceTimersByTimeAsync(0);
    expect([second.settled, third.settled]).toEqual([true, false]);
    governor.report({ provider: "claude-subscription", status: "allowed", utilization: 0.3, rateLimitType: "five_hour" });
    await vi.advanceTimersByTimeAsync(0);
    expect(third.settled).toBe(true);
    expect(events.filter((event) => event.type === "concurrency_adjusted").map((event) => [(event as { from: number }).from, (event as { to: number }).to])).toEqual([
      [Infinity, 1],
      [1, Infinity],
    ]);
  });

  it("throttles on a warning whatever the utilization, and caps at maxConcurrency", () => {
    const governor = new RateLimitGovernor({ maxConcurrency: 3, minConcurrencyUnderPressure: 2 });
    expect(governor.snapshot().concurrencyLimit).toBe(3);
    governor.report({ provider: "claude-subscription", status: "warning" });
    expect(governor.snapshot().concurrencyLimit).toBe(2);
  });
});

describe("pause after a rejection", () => {
  it("holds every new call until the reset plus the margin, then lets them through in order", async () => {
    const governor = new RateLimitGovernor({ resetMarginMs: 500 });
    governor.report(rejected(10_000));
    const order: number[] = [];
    const waits = [1, 2, 3].map((n) => governor.acquire().then((release) => (order.push(n), release)));
    const ready = track(governor.waitForReady());
    await vi.advanceTimersByTimeAsync(10_499);
    expect(order).toEqual([]);
    expect(ready.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(order).toEqual([1, 2, 3]);
    expect(ready.settled).toBe(true);
    for (const release of await Promise.all(waits)) release();
    // The window reset: the pressure that came with the rejection is gone.
    expect(governor.snapshot()).toMatchObject({ paused: false, concurrencyLimit: Infinity, active: 0 });
  });

  it("by default lets the calls go at the reported reset itself, as KTX's own governor does", async () => {
    const governor = new RateLimitGovernor();
    governor.report(rejected(10_000));
    const ready = track(governor.waitForReady());
    await vi.advanceTimersByTimeAsync(9_999);
    expect(ready.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(ready.settled).toBe(true);
  });

  it("uses one timer while calls wait (no polling), none when nobody waits", async () => {
    const governor = new RateLimitGovernor();
    governor.report(rejected(3_600_000));
    expect(vi.getTimerCount()).toBe(0);
    const controller = new AbortController();
    const waiting = track(governor.waitForReady(controller.signal));
    track(governor.waitForReady(controller.signal));
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(1);
    controller.abort();
    await vi.advanceTimersByTimeAsync(0);
    expect(waiting.error).toBeInstanceOf(AbortError);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("lets an aborted waiter go without disturbing the others", async () => {
    const governor = new RateLimitGovernor({ resetMarginMs: 0 });
    governor.report(rejected(5_000));
    const controller = new AbortController();
    const aborted = track(governor.waitForReady(controller.signal));
    const kept = track(governor.waitForReady());
    controller.abort(new Error("user stop"));
    await vi.advanceTimersByTimeAsync(0);
    expect(aborted.error).toBeInstanceOf(AbortError);
    expect(kept.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(5_000);
    expect([kept.settled, kept.error]).toEqual([true, undefined]);
    await expect(governor.waitForReady(AbortSignal.abort())).rejects.toBeInstanceOf(AbortError);
  });

  it("only extends a pause, never shortens it", async () => {
    const governor = new RateLimitGovernor({ resetMarginMs: 0 });
    governor.report(rejected(10_000));
    governor.report(rejected(2_000));
    const ready = track(governor.waitForReady());
    await vi.advanceTimersByTimeAsync(9_999);
    expect(ready.settled).toBe(false);
    governor.report(rejected(1));
    await vi.advanceTimersByTimeAsync(1);
    expect(ready.settled).toBe(true);
    governor.report(rejected(1_000));
    const extended = track(governor.waitForReady());
    governor.report(rejected(4_000));
    await vi.advanceTimersByTimeAsync(3_999);
    expect(extended.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(extended.settled).toBe(true);
  });
});

describe("maxWaitMs", () => {
  it("fails a call at once with UsageLimitError when the reset is further away, and waits when it is not", async () => {
    const governor = new RateLimitGovernor({ maxWaitMs: 60_000, resetMarginMs: 0 });
    governor.report({ ...rejected(2 * 3_600_000, "seven_day"), utilization: 1 });
    const error = await governor.waitForReady().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageLimitError);
    expect(error).toMatchObject({ reason: "wait_exceeds_max", window: "seven_day", resetsAt: new Date(T0 + 2 * 3_600_000), utilization: 1 });
    expect((error as Error).message).toContain("beyond ingest.rateLimit.maxWaitMs=60000 (1 min)");
    await vi.advanceTimersByTimeAsync(2 * 3_600_000 - 60_000);
    const ready = track(governor.waitForReady());
    await vi.advanceTimersByTimeAsync(60_000);
    expect([ready.settled, ready.error]).toEqual([true, undefined]);
  });

  it("fails calls already waiting when a longer rejection arrives", async () => {
    const governor = new RateLimitGovernor({ maxWaitMs: 10_000, resetMarginMs: 0 });
    governor.report(rejected(5_000));
    const waiting = [track(governor.acquire()), track(governor.acquire())];
    governor.report(rejected(3_600_000));
    await vi.advanceTimersByTimeAsync(0);
    expect(waiting.map((state) => (state.error as UsageLimitError)?.reason)).toEqual(["wait_exceeds_max", "wait_exceeds_max"]);
  });
});

describe("backoff without a reset time", () => {
  it("pauses for KTX's opaque backoff: base * 2^n, capped, jittered; an allowed signal starts over", async () => {
    const governor = new RateLimitGovernor({ resetMarginMs: 0, retry: { baseDelayMs: 1_000, maxDelayMs: 3_000, jitter: false } });
    const opaque: RateLimitSignal = { provider: "claude-subscription", status: "rejected", rateLimitType: "opaque" };
    const pauseAfter = (signal: RateLimitSignal) => {
      const start = Date.now();
      governor.report(signal);
      const resumeAt = governor.snapshot().resumeAt!.getTime() - start;
      vi.setSystemTime(start + resumeAt);
      governor.snapshot();
      return resumeAt;
    };
    expect([pauseAfter(opaque), pauseAfter(opaque), pauseAfter(opaque)]).toEqual([1_000, 2_000, 3_000]);
    governor.report({ provider: "claude-subscription", status: "allowed" });
    expect(pauseAfter(opaque)).toBe(1_000);
    const jittered = new RateLimitGovernor({ retry: { baseDelayMs: 1_000 } }, { random: () => 1 });
    jittered.report(opaque);
    expect(jittered.snapshot().resumeAt!.getTime() - Date.now()).toBe(1_250);
  });
});

describe("a rejection after its own reset", () => {
  it("backs off as without a reset time (the API's clock is behind ours by more than the margin), instead of letting calls run again at once", async () => {
    const governor = new RateLimitGovernor({ resetMarginMs: 500, retry: { baseDelayMs: 1_000, jitter: false } });
    const events: GovernorEvent[] = [];
    governor.subscribe((event) => events.push(event));
    // The reset the API named is 600 ms past by our clock: margin included, it has passed.
    governor.report(rejected(-600));
    const ready = track(governor.waitForReady());
    await vi.advanceTimersByTimeAsync(999);
    expect(ready.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(ready.settled).toBe(true);
    // Rejected again at once: twice the backoff, as KTX's retry policy says.
    governor.report(rejected(-1_600));
    expect(governor.snapshot().resumeAt!.getTime() - Date.now()).toBe(2_000);
    expect(events.filter((event) => event.type === "wait_started")).toHaveLength(2);
  });

  it("within the margin still waits for the reset plus the margin: the reset is not past yet by our reckoning", async () => {
    const governor = new RateLimitGovernor({ resetMarginMs: 500 });
    governor.report(rejected(-200));
    expect(governor.snapshot().resumeAt!.getTime() - Date.now()).toBe(300);
  });
});

describe("wait events", () => {
  it("reports the wait started, a tick per tickMs with the remaining time, and finished", async () => {
    const governor = new RateLimitGovernor({ resetMarginMs: 0, tickMs: 1_000 });
    const events: GovernorEvent[] = [];
    governor.subscribe((event) => events.push(event));
    governor.report(rejected(3_000));
    const ready = governor.waitForReady();
    await vi.advanceTimersByTimeAsync(3_000);
    await ready;
    const waits = events.filter((event) => event.type.startsWith("wait_")).map((event) => [event.type, (event as { remainingMs: number }).remainingMs]);
    expect(waits).toEqual([
      ["wait_started", 3_000],
      ["wait_tick", 2_000],
      ["wait_tick", 1_000],
      ["wait_finished", 0],
    ]);
    expect(events[0]).toMatchObject({ type: "rate_limit_observed", status: "rejected", window: "five_hour", resetsAt: new Date(T0 + 3_000) });
  });

  it("releases the waiters when the last tick, not the pause timer, ends the pause", async () => {
    const governor = new RateLimitGovernor({ resetMarginMs: 0, tickMs: 1_000 });
    governor.subscribe(() => undefined);
    governor.report(rejected(3_000));
    await vi.advanceTimersByTimeAsync(2_000);
    // Armed after the tick timer that expires at the same moment, so the tick fires first.
    const ready = track(governor.acquire());
    await vi.advanceTimersByTimeAsync(1_000);
    expect(ready.settled).toBe(true);
    expect(governor.snapshot()).toMatchObject({ paused: false, waiting: 0, active: 1 });
  });

  it("keeps no tick timer without listeners, and a listener's exception does not disturb the governor", async () => {
    const governor = new RateLimitGovernor();
    governor.report(rejected(10_000));
    expect(vi.getTimerCount()).toBe(0);
    const unsubscribe = governor.subscribe(() => {
      throw new Error("listener bug");
    });
    expect(vi.getTimerCount()).toBe(1);
    expect(() => governor.report(rejected(20_000))).not.toThrow();
    unsubscribe();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("configuration", () => {
  it("does nothing when disabled: no wait, no retry", async () => {
    const governor = new RateLimitGovernor({ enabled: false });
    governor.report(rejected(60_000));
    await expect(governor.waitForReady()).resolves.toBeUndefined();
    expect(governor.maxRetryAttempts()).toBe(1);
    expect(new RateLimitGovernor().maxRetryAttempts()).toBe(6);
  });

  it("has one governor per process, reconfigured by the latest options", () => {
    const first = processRateLimitGovernor();
    expect(processRateLimitGovernor({ maxWaitMs: 1_000 })).toBe(first);
    expect(first.options.maxWaitMs).toBe(1_000);
    expect(first.options.throttleThreshold).toBe(0.8);
    processRateLimitGovernor({});
    expect(first.options.maxWaitMs).toBeUndefined();
  });
});
