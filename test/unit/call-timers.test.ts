/** A call's idle clock (session/support.ts): one timer, restarted by output, standing still while quiet. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { TimeoutError } from "../../src/errors/index.js";
import { CallTimers } from "../../src/session/support.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

function timers(limits: { timeoutMs?: number; idleTimeoutMs?: number }) {
  const failures: Array<{ kind: string; reason: string }> = [];
  const state = { quiet: false };
  const clock = new CallTimers(limits, (error, reason) => failures.push({ kind: (error as TimeoutError).kind, reason }), () => state.quiet);
  return { clock, failures, state };
}

describe("CallTimers", () => {
  it("fails after idleTimeoutMs without output, counted from the last line", () => {
    const { clock, failures } = timers({ idleTimeoutMs: 1_000 });
    clock.start();
    vi.advanceTimersByTime(600);
    clock.touch();
    vi.advanceTimersByTime(600);
    clock.touch();
    vi.advanceTimersByTime(999);
    expect(failures).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(failures).toEqual([{ kind: "idle", reason: "idle timeout" }]);
  });

  it("keeps one timer however many lines arrive", () => {
    const { clock } = timers({ idleTimeoutMs: 1_000 });
    clock.start();
    for (let i = 0; i < 50; i += 1) clock.touch();
    expect(vi.getTimerCount()).toBe(1);
  });

  it("stands still while quiet (a handler runs) and restarts at the next touch", () => {
    const { clock, failures, state } = timers({ idleTimeoutMs: 1_000 });
    clock.start();
    state.quiet = true;
    vi.advanceTimersByTime(5_000);
    expect(failures).toEqual([]);
    state.quiet = false;
    clock.touch();
    vi.advanceTimersByTime(999);
    expect(failures).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(failures).toHaveLength(1);
  });

  it("has no idle clock with idleTimeoutMs 0, and the overall timeout regardless of output", () => {
    const { clock, failures } = timers({ idleTimeoutMs: 0, timeoutMs: 2_000 });
    clock.start();
    for (let t = 0; t < 1_900; t += 100) {
      vi.advanceTimersByTime(100);
      clock.touch();
    }
    expect(failures).toEqual([]);
    vi.advanceTimersByTime(100);
    expect(failures).toEqual([{ kind: "overall", reason: "overall timeout" }]);
  });

  it("arms nothing once cleared", () => {
    const { clock, failures } = timers({ idleTimeoutMs: 1_000, timeoutMs: 5_000 });
    clock.start();
    clock.clear();
    clock.touch();
    vi.advanceTimersByTime(10_000);
    expect(failures).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
