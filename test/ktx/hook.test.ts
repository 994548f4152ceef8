/**
 * `createClaudeCodeRuntime`, KTX's factory hook, called as KTX's factory calls it: every dep arrives
 * (the governor on the real CLI against the scripted API in subscription mode), `query` is refused,
 * and a project dir that does not exist fails the first call, not construction.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ClaudeCodeRuntime, ProjectDirNotFoundError, UnsupportedKtxDepError, UnsupportedModelError, createClaudeCodeRuntime, isAbortError } from "../../src/index.js";
import type { RateLimitGovernorPort, RateLimitSignal } from "../../src/limits/governor.js";
import { cliMessage, createScriptedCli } from "../../src/testing/index.js";
import { lookup } from "../../src/testing/scenarios.js";
import { turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, cleanup, remainingChildren, scriptedApi, tempDir, testEnv } from "../support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

/** KTX's governor shape, recording what it is asked and told. */
function recordingGovernor() {
  const waits: Array<AbortSignal | undefined> = [];
  const reports: RateLimitSignal[] = [];
  const governor: RateLimitGovernorPort = {
    waitForReady: async (signal) => void waits.push(signal),
    report: (signal) => void reports.push(signal),
    maxRetryAttempts: () => 3,
  };
  return { governor, waits, reports };
}

describe("createClaudeCodeRuntime: KTX's hook deps, all of them", () => {
  it("KTX's governor receives waitForReady and a warning report from a subscription response with allowed_warning headers (real CLI)", async () => {
    const resetsAt = new Date(Date.now() + 2 * 3_600_000);
    const api = await scriptedApi([turn.withRateLimit(turn.text("described"), { status: "allowed_warning", window: "five_hour", utilization: 0.91, resetsAt })]);
    const { governor, waits, reports } = recordingGovernor();
    // Exactly what KTX's factory passes ({ projectDir, modelSlots, env, rateLimitGovernor }), plus test-only options.
    const runtime = createClaudeCodeRuntime({
      projectDir: tempDir("project"),
      modelSlots: { default: "sonnet", triage: undefined },
      env: testEnv(),
      rateLimitGovernor: governor,
      apiEndpoint: api.endpoint("subscription"),
      passEnv: TEST_PASS_ENV,
      warm: false,
      reuse: false,
    });
    expect(await runtime.generateText({ role: "triage", prompt: "Is this page about billing?", temperature: 0 })).toBe("described");
    expect(waits).toHaveLength(1);
    expect(reports).toEqual([
      { provider: "claude-subscription", status: "warning", resetAtMs: Math.ceil(resetsAt.getTime() / 1000) * 1000, rateLimitType: "five_hour", utilization: 0.91 },
    ]);
    // The role left unset by KTX (undefined) fell back to default: sonnet's pinned id.
    expect(api.messageRequests[0]!.body.model).toBe("claude-sonnet-4-6");
  });

  it("refuses KTX's Agent SDK `query` seam with a typed error naming it, instead of dropping it", () => {
    const query = () => (async function* () {})();
    const make = () => createClaudeCodeRuntime({ projectDir: tempDir("project"), modelSlots: { default: "sonnet" }, query });
    expect(make).toThrow(UnsupportedKtxDepError);
    expect(make).toThrow(/does not take `query`.*createScriptedCli/);
    try {
      make();
    } catch (error) {
      expect(error).toMatchObject({ name: "UnsupportedKtxDepError", code: "invalid_input", dep: "query" });
    }
  });

  it("rejects a model KTX's backend rejects, naming it", () => {
    expect(() => createClaudeCodeRuntime({ projectDir: "/p", modelSlots: { default: "gpt-5" } })).toThrow(UnsupportedModelError);
    expect(() => createClaudeCodeRuntime({ projectDir: "/p", modelSlots: { default: "gpt-5" } })).toThrow(/gpt-5/);
  });
});

describe("projectDir is checked when a call starts, never at construction", () => {
  it("constructs with a directory that does not exist; every operation then rejects with ProjectDirNotFoundError naming the option, and no CLI starts", async () => {
    const cli = createScriptedCli([cliMessage.result()]);
    const direct = new ClaudeCodeRuntime({ projectDir: "/does/not/exist", models: { default: "sonnet" }, cliPath: cli.path, warm: false });
    const viaHook = createClaudeCodeRuntime({ projectDir: "/does/not/exist", modelSlots: { default: "sonnet" }, cliPath: cli.path, warm: false });
    for (const runtime of [direct, viaHook]) {
      const text = await runtime.generateText({ role: "default", prompt: "hi" }).catch((error: unknown) => error);
      expect(text).toBeInstanceOf(ProjectDirNotFoundError);
      expect(text).toMatchObject({ code: "invalid_input", option: "projectDir", projectDir: "/does/not/exist" });
      expect((text as Error).message).toMatch(/^projectDir \/does\/not\/exist is not an existing directory/);
      expect(isAbortError(text)).toBe(false);
      const loop = runtime.runAgentLoop({ modelRole: "curator", systemPrompt: "s", userPrompt: "u", toolSet: [lookup], stepBudget: 2, telemetryTags: {} });
      await expect(loop).rejects.toBeInstanceOf(ProjectDirNotFoundError);
      await runtime.close();
    }
    expect(cli.invocations()).toEqual([]);
  });

  it("a path that is a file is refused the same way", async () => {
    const runtime = new ClaudeCodeRuntime({ projectDir: import.meta.filename, models: { default: "sonnet" }, warm: false });
    await expect(runtime.generateText({ role: "default", prompt: "hi" })).rejects.toBeInstanceOf(ProjectDirNotFoundError);
  });
});
