/**
 * Models on the real pinned CLI: the pinned id is what the API is asked for, and a model the API does
 * not know ends in UnknownModelError naming the role, the value and the ktx.yaml it came from.
 */
import { afterEach, describe, expect, it } from "vitest";
import { UnknownModelError } from "../../src/index.js";
import { turn } from "../../src/testing/scripted-api.js";
import { cleanup, firstPartyApi, remainingChildren, runtimeFor } from "../support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

describe("a model the API does not know", () => {
  it("rejects with UnknownModelError naming role, value, id and source; a loop returns it as its error", async () => {
    // The CLI tries the streaming request and one non-streaming retry, then reports [claude-code:unrecognized_model].
    const api = await firstPartyApi([turn.error(404, "model: claude-opus-9-9"), turn.error(404, "model: claude-opus-9-9")], { onExhausted: "repeat-last" });
    const runtime = runtimeFor(api, { models: { default: "sonnet", curator: "claude-opus-9-9" }, modelsSource: "/p/ktx.yaml" });
    let thrown: unknown;
    try {
      await runtime.generateText({ role: "curator", prompt: "hi" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UnknownModelError);
    expect(thrown).toMatchObject({ code: "unknown_model", role: "curator", value: "claude-opus-9-9", id: "claude-opus-9-9", source: "/p/ktx.yaml" });
    expect((thrown as Error).message).toMatch(/^The API does not know the model claude-opus-9-9, asked for role curator \(llm\.models\.curator in \/p\/ktx\.yaml: "claude-opus-9-9"\)/);
    expect((thrown as UnknownModelError).stderrTail).toContain("[claude-code:unrecognized_model]");
    expect(api.messageRequests.every((request) => request.body.model === "claude-opus-9-9")).toBe(true);
    // A loop (KTX's stage 3) records the same error as a failed work unit.
    const loop = await runtime.runAgentLoop({ modelRole: "curator", systemPrompt: "s", userPrompt: "u", toolSet: [], stepBudget: 2, telemetryTags: { unitKey: "wu-1" } });
    expect(loop.stopReason).toBe("error");
    expect(loop.error).toBeInstanceOf(UnknownModelError);
    expect(loop.error?.message).toMatch(/asked for role curator/);
  });
});

describe("roles alternating on the defaults (reuse and a spare)", () => {
  it("makes exactly one API request per one-turn call, each with its role's model, on one process", async () => {
    const api = await firstPartyApi((request) => turn.text(`answered by ${request.body.model}`));
    const runtime = runtimeFor(api, { models: { default: "sonnet", triage: "haiku" }, reuse: {}, warm: {} });
    const roles = ["triage", "default", "triage", "default", "triage", "default"] as const;
    const answers: string[] = [];
    for (const role of roles) answers.push(await runtime.generateText({ role, system: "KTX triage and descriptions.", prompt: "Is this about billing?" }));
    const models = roles.map((role) => (role === "triage" ? "claude-haiku-4-5" : "claude-sonnet-4-6"));
    expect(answers).toEqual(models.map((model) => `answered by ${model}`));
    // One request per call: the switch between models sends none (set_model would add a 1-token "Hi" each time).
    expect(api.messageRequests.map((request) => request.body.model)).toEqual(models);
    expect(runtime.reuseStats).toMatchObject({ started: 1, reusedCalls: 5 });
    await runtime.close();
  });
});
