/**
 * The `thinking` option on the real pinned CLI, read at the scripted API: each role's requests carry
 * the setting given for it, a reused process never serves a role with another setting, and no
 * request carries the CLI's token-budget reminder.
 */
import { afterEach, describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/index.js";
import { turn } from "../../src/testing/scripted-api.js";
import { cleanup, firstPartyApi, remainingChildren, runtimeFor } from "../support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

const userText = (body: any): string => JSON.stringify(body.messages);

describe("thinking", () => {
  it("per role: off sends thinking disabled, a budget sends enabled with it, reused processes keep them apart", async () => {
    const api = await firstPartyApi(() => turn.text("ok"));
    const runtime = runtimeFor(api, {
      models: { default: "sonnet", triage: "haiku" },
      thinking: { default: "off", triage: { budgetTokens: 2048 } },
      reuse: {},
    });
    await runtime.generateText({ prompt: "a" });
    await runtime.generateText({ role: "triage", prompt: "b" });
    await runtime.generateText({ prompt: "c" });
    await runtime.generateText({ role: "triage", prompt: "d" });
    expect(api.messageRequests.map((r) => [r.body.model, r.body.thinking])).toEqual([
      ["claude-sonnet-4-6", { type: "disabled" }],
      ["claude-haiku-4-5", { type: "enabled", budget_tokens: 2048, display: "updates" }],
      ["claude-sonnet-4-6", { type: "disabled" }],
      ["claude-haiku-4-5", { type: "enabled", budget_tokens: 2048, display: "updates" }],
    ]);
    const stats = { ...runtime.reuseStats };
    await runtime.close();
    // Two launches (one per setting), each reused once.
    expect(stats).toMatchObject({ started: 2, reusedCalls: 2 });
    for (const request of api.messageRequests) expect(userText(request.body)).not.toContain("<total_tokens>");
  });

  it("one value for every role; the default leaves the CLI's own choice (adaptive on sonnet 4.6)", async () => {
    const api = await firstPartyApi(() => turn.text("ok"));
    const off = runtimeFor(api, { models: { default: "sonnet", triage: "haiku" }, thinking: "off" });
    await off.generateText({ role: "triage", prompt: "a" });
    const loop = await off.runAgentLoop({ modelRole: "curator", systemPrompt: "s", userPrompt: "u", toolSet: [], stepBudget: 2, telemetryTags: { unitKey: "wu" } });
    expect(loop.stopReason).toBe("natural");
    const plain = runtimeFor(api);
    await plain.generateText({ prompt: "b" });
    expect(api.messageRequests.map((r) => r.body.thinking)).toEqual([{ type: "disabled" }, { type: "disabled" }, { type: "adaptive", display: "updates" }]);
  });

  it("refuses a budget under the API's minimum and an unknown value", () => {
    expect(() => runtimeFor(undefined, { thinking: { budgetTokens: 10 } })).toThrow(InvalidInputError);
    expect(() => runtimeFor(undefined, { thinking: "always" as never })).toThrow(InvalidInputError);
    expect(() => runtimeFor(undefined, { thinking: { nope: "off" } as never })).toThrow(InvalidInputError);
  });
});
