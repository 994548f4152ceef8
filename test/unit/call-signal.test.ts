/** A call's one signal (src/runtime/port-support.ts, `callSignal`): joined by listeners, released when the call ends. */
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { callSignal } from "../../src/runtime/port-support.js";

describe("callSignal", () => {
  it("gives a single signal as it is, and nothing to release", () => {
    const runtime = new AbortController();
    const caller = new AbortController();
    expect(callSignal({}, runtime.signal).signal).toBe(runtime.signal);
    expect(callSignal({ abortSignal: caller.signal }).signal).toBe(caller.signal);
    expect(callSignal({}).signal).toBeUndefined();
    expect(getEventListeners(runtime.signal, "abort")).toHaveLength(0);
  });

  it("aborts with the reason of whichever source aborts first, and then lets go of the others", () => {
    const runtime = new AbortController();
    const caller = new AbortController();
    const { signal } = callSignal({ abortSignal: caller.signal }, runtime.signal);
    expect(signal).not.toBe(caller.signal);
    expect(signal!.aborted).toBe(false);
    const reason = new Error("the work unit was cancelled");
    caller.abort(reason);
    expect(signal!.aborted).toBe(true);
    expect(signal!.reason).toBe(reason);
    expect(getEventListeners(runtime.signal, "abort")).toHaveLength(0);

    const second = callSignal({ abortSignal: new AbortController().signal, signal: new AbortController().signal }, runtime.signal);
    runtime.abort(new Error("the runtime was closed"));
    expect((second.signal!.reason as Error).message).toBe("the runtime was closed");
  });

  it("is aborted at once when a source already is", () => {
    const reason = new Error("too late");
    const { signal } = callSignal({ abortSignal: AbortSignal.abort(reason) }, new AbortController().signal);
    expect(signal!.aborted).toBe(true);
    expect(signal!.reason).toBe(reason);
  });

  it("leaves nothing on the runtime's long-lived signal after release, however many calls it joined", () => {
    const runtime = new AbortController();
    for (let i = 0; i < 1000; i += 1) {
      const caller = new AbortController();
      const joined = callSignal({ abortSignal: caller.signal }, runtime.signal);
      expect(getEventListeners(runtime.signal, "abort")).toHaveLength(1);
      joined.release();
      expect(getEventListeners(caller.signal, "abort")).toHaveLength(0);
    }
    expect(getEventListeners(runtime.signal, "abort")).toHaveLength(0);
  });

  it("after release, a source's abort no longer reaches the call's signal", () => {
    const runtime = new AbortController();
    const caller = new AbortController();
    const joined = callSignal({ abortSignal: caller.signal }, runtime.signal);
    joined.release();
    caller.abort();
    runtime.abort();
    expect(joined.signal!.aborted).toBe(false);
  });
});
