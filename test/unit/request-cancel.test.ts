import { describe, expect, it } from "vitest";
import { RequestCancel, onCancel, signalOf } from "../../src/mcp/cancel.js";

describe("RequestCancel (a control request's cancellation)", () => {
  it("aborts once, like AbortController: the first reason stays, and without one it is an AbortError", () => {
    const plain = new RequestCancel();
    plain.abort();
    expect(plain.aborted).toBe(true);
    expect(plain.reason).toBeInstanceOf(DOMException);
    expect((plain.reason as DOMException).name).toBe("AbortError");
    const real = new AbortController();
    real.abort();
    expect((plain.reason as DOMException).message).toBe((real.signal.reason as DOMException).message);

    const cancel = new RequestCancel();
    const first = new Error("first");
    cancel.abort(first);
    cancel.abort(new Error("second"));
    expect(cancel.reason).toBe(first);
  });

  it("makes a real signal only when asked, aborted with the same reason before or after", () => {
    const early = new RequestCancel();
    const signal = early.signal;
    expect(signal.aborted).toBe(false);
    early.abort("gone");
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe("gone");

    const late = new RequestCancel();
    late.abort("gone too");
    expect(late.signal.aborted).toBe(true);
    expect(late.signal.reason).toBe("gone too");
    expect(signalOf(late)).toBe(late.signal);
  });

  it("calls each listener once, and not one that was forgotten; an AbortSignal is listened to the same way", () => {
    const cancel = new RequestCancel();
    const heard: string[] = [];
    onCancel(cancel, () => heard.push("kept"));
    const forget = onCancel(cancel, () => heard.push("forgotten"));
    forget();
    cancel.abort();
    cancel.abort();
    expect(heard).toEqual(["kept"]);

    const controller = new AbortController();
    const fromSignal: string[] = [];
    const stop = onCancel(controller.signal, () => fromSignal.push("signal"));
    onCancel(controller.signal, () => fromSignal.push("other"));
    stop();
    controller.abort();
    expect(fromSignal).toEqual(["other"]);
    expect(signalOf(controller.signal)).toBe(controller.signal);
  });
});
