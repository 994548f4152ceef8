/** The runtime's interceptor, on by default (issue 45): the option's default, stand-ins, how results report it. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeInterceptor, interceptorState, networkRoute } from "../../src/claude-code/checks/billing.js";
import { uncheckedTurns } from "../../src/claude-code/run/wire-binding.js";
import { ClaudeCodeRuntime, createClaudeCodeRuntime } from "../../src/index.js";
import { createClaudeCodeRuntimeFromConfig } from "../../src/factory.js";
import { createReplayCli, createScriptedCli } from "../../src/testing/index.js";
import { tempDir } from "../support.js";

const runtime = (options: Partial<ConstructorParameters<typeof ClaudeCodeRuntime>[0]> = {}) => new ClaudeCodeRuntime({ projectDir: "/p", models: { default: "sonnet" }, ...options });

describe("the interceptor's default", () => {
  it("is on without a wire option, off only with wire: false, and never used with an apiEndpoint", () => {
    expect(interceptorState({})).toBe("on");
    expect(interceptorState({ wire: true })).toBe("on");
    expect(interceptorState({ wire: { bodies: true } })).toBe("on");
    expect(interceptorState({ wire: false })).toBe("off");
    const apiEndpoint = { baseUrl: "http://127.0.0.1:1", apiKey: "k" };
    expect(interceptorState({ apiEndpoint })).toBe("apiEndpoint");
    expect(interceptorState({ apiEndpoint, wire: true })).toBe("apiEndpoint");
    expect(runtime().interceptor).toBe("on");
    expect(runtime({ wire: true }).interceptor).toBe("on");
    expect(runtime({ wire: false }).interceptor).toBe("off");
    expect(runtime({ apiEndpoint }).interceptor).toBe("apiEndpoint");
  });

  it("is the same through KTX's hook and the factory", () => {
    expect(createClaudeCodeRuntime({ projectDir: "/p", modelSlots: { default: "sonnet" } }).interceptor).toBe("on");
    expect(createClaudeCodeRuntime({ projectDir: "/p", modelSlots: { default: "sonnet" }, wire: false }).interceptor).toBe("off");
    const config = { provider: { backend: "claude-code" }, models: { default: "sonnet" } };
    expect((createClaudeCodeRuntimeFromConfig(config, { projectDir: "/p" }) as ClaudeCodeRuntime).interceptor).toBe("on");
    expect((createClaudeCodeRuntimeFromConfig(config, { projectDir: "/p", wire: false }) as ClaudeCodeRuntime).interceptor).toBe("off");
  });

  it("is off for the testing helpers' stand-ins, whatever wire says, and for nothing else at a path", () => {
    const scripted = createScriptedCli([]);
    const transcript = join(tempDir("replay"), "run.jsonl");
    writeFileSync(transcript, "");
    const replay = createReplayCli(transcript);
    expect(runtime({ cliPath: scripted.path }).interceptor).toBe("standIn");
    expect(runtime({ cliPath: scripted.path, wire: true }).interceptor).toBe("standIn");
    expect(runtime({ cliPath: replay }).interceptor).toBe("standIn");
    // The same path spelled otherwise is the same stand-in.
    expect(runtime({ cliPath: join(scripted.dir, ".", "claude-scripted") }).interceptor).toBe("standIn");
    // A script of the same name the helpers did not write (a wrapper could be anything) is intercepted.
    const other = join(tempDir("bin"), "claude-scripted");
    writeFileSync(other, "#!/bin/sh\n");
    expect(runtime({ cliPath: other }).interceptor).toBe("on");
  });

  it("is on the network route only when a runtime decided it, and described for status", () => {
    expect(networkRoute({})).not.toHaveProperty("interceptor");
    expect(networkRoute({}, "on")).toMatchObject({ interceptor: "on" });
    expect(describeInterceptor("on")).toMatch(/^on \(every request checked/);
    expect(describeInterceptor("off")).toMatch(/^off \(wire: false: requests leave unchecked, egress is not refused, no request records\)/);
    expect(describeInterceptor("apiEndpoint")).toMatch(/apiEndpoint/);
    expect(describeInterceptor("standIn")).toMatch(/^off \(a stand-in CLI of ktx-claude-code\/testing/);
  });

  it("tells a test author with a script of their own to pass wire: false when nothing passed the interceptor, and only then", () => {
    expect(uncheckedTurns(["msg_1"], [{ messageId: "msg_1" }])).toBeUndefined();
    expect(uncheckedTurns(["msg_1"], [])!.message).toMatch(/If this is a stand-in CLI that answers without any request .* run it with `wire: false`/);
    // Some requests passed: a CLI that talks to the network, so no stand-in advice.
    expect(uncheckedTurns(["msg_1", "msg_2", "msg_3"], [{ messageId: "msg_1" }])!.message).not.toMatch(/stand-in/);
  });
});
