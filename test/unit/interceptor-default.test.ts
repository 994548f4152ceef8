/** The runtime's interceptor, opt-in (issue 31): the option's default, how results report it, the stand-in advice. */
import { describe, expect, it } from "vitest";
import { describeInterceptor, interceptorState, networkRoute } from "../../src/claude-code/checks/billing.js";
import { uncheckedTurns } from "../../src/claude-code/run/wire-binding.js";
import { ClaudeCodeRuntime } from "../../src/index.js";

describe("the interceptor's default", () => {
  it("is on only with wire: true or an object, off without it, and never used with an apiEndpoint", () => {
    expect(interceptorState({})).toBe("off");
    expect(interceptorState({ wire: true })).toBe("on");
    expect(interceptorState({ wire: { bodies: true } })).toBe("on");
    expect(interceptorState({ wire: false })).toBe("off");
    const apiEndpoint = { baseUrl: "http://127.0.0.1:1", apiKey: "k" };
    expect(interceptorState({ apiEndpoint })).toBe("apiEndpoint");
    expect(interceptorState({ apiEndpoint, wire: true })).toBe("apiEndpoint");
    expect(new ClaudeCodeRuntime({ projectDir: "/p", models: { default: "sonnet" } }).interceptor).toBe("off");
    expect(new ClaudeCodeRuntime({ projectDir: "/p", models: { default: "sonnet" }, wire: true }).interceptor).toBe("on");
    expect(new ClaudeCodeRuntime({ projectDir: "/p", models: { default: "sonnet" }, wire: false }).interceptor).toBe("off");
  });

  it("is on the network route only when a runtime decided it, and described for status", () => {
    expect(networkRoute({})).not.toHaveProperty("interceptor");
    expect(networkRoute({}, "on")).toMatchObject({ interceptor: "on" });
    expect(describeInterceptor("on")).toMatch(/^on \(every request checked/);
    expect(describeInterceptor("off")).toMatch(/^off \(opt-in with wire: true; without it requests leave unchecked, egress is not refused, no request records\)/);
    expect(describeInterceptor("apiEndpoint")).toMatch(/apiEndpoint/);
  });

  it("tells a test author with a stand-in to run it without wire when nothing passed the interceptor, and only then", () => {
    expect(uncheckedTurns(["msg_1"], [{ messageId: "msg_1" }])).toBeUndefined();
    expect(uncheckedTurns(["msg_1"], [])!.message).toMatch(/If this is a stand-in CLI that answers without any request .* run it without `wire`/);
    // Some requests passed: a CLI that talks to the network, so no stand-in advice.
    expect(uncheckedTurns(["msg_1", "msg_2", "msg_3"], [{ messageId: "msg_1" }])!.message).not.toMatch(/stand-in/);
  });
});
