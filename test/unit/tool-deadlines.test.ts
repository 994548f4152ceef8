/** Tool timeouts on one timer (src/mcp/deadlines.ts, `Deadlines`). */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Deadlines } from "../../src/mcp/deadlines.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const entry = (expire: () => unknown) => ({ expire: () => void expire() });

describe("Deadlines", () => {
  it("expires each handler after its own time, however the calls overlap", () => {
    const deadlines = new Deadlines();
    const expired: string[] = [];
    deadlines.add(entry(() => expired.push("a")), 1_000);
    vi.advanceTimersByTime(400);
    deadlines.add(entry(() => expired.push("b")), 1_000);
    deadlines.add(entry(() => expired.push("c")), 100);
    vi.advanceTimersByTime(99);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(["c"]);
    vi.advanceTimersByTime(499);
    expect(expired).toEqual(["c"]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(["c", "a"]);
    vi.advanceTimersByTime(400);
    expect(expired).toEqual(["c", "a", "b"]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("never expires a handler that finished, and one timer serves calls one after another", () => {
    const deadlines = new Deadlines();
    const expired: number[] = [];
    for (let call = 0; call < 20; call += 1) {
      const handler = entry(() => expired.push(call));
      deadlines.add(handler, 1_000);
      vi.advanceTimersByTime(30);
      deadlines.delete(handler);
      expect(vi.getTimerCount()).toBe(1);
    }
    // The last call's time is measured from its own start.
    const last = entry(() => expired.push(99));
    deadlines.add(last, 1_000);
    vi.advanceTimersByTime(999);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual([99]);
    deadlines.delete(last);
    vi.advanceTimersByTime(10_000);
    expect(expired).toEqual([99]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
