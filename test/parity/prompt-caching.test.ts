/**
 * Prompt caching, read off the recorded Messages API requests: where each runtime puts
 * `cache_control`. The claude-code runtime never sends KTX's markers (llm.promptCaching changes
 * nothing on the wire); the CLI places its own. The AI SDK runtime applies KTX's markers.
 */
import { afterEach, describe, expect, it } from "vitest";
import { turn } from "../../src/testing/scripted-api.js";
import { cleanup, remainingChildren, testEnv } from "../support.js";
import { type ParityScript, type Side, cacheMarkers, count, lookup, side } from "./harness.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

/** Two tool steps, then the answer: enough for history breakpoints to move. */
const threeSteps: ParityScript = (t) => {
  if (t.turnIndex === 0) return turn.tools(t.call("lookup", { term: "grain" }));
  if (t.turnIndex === 1) return turn.tools(t.call("count", { items: ["a"] }));
  return turn.text("done");
};

async function markersOfLoop(s: Side): Promise<string[][]> {
  const result = await s.runtime.runAgentLoop({ modelRole: "default", systemPrompt: "You are the KTX curator.", userPrompt: "Curate.", toolSet: [lookup, count], stepBudget: 5 });
  expect(result.stopReason).toBe("natural");
  return s.api.messageRequests.map((request) => cacheMarkers(request.body));
}

const NON_DEFAULT = { enabled: true, cacheSystem: false, cacheTools: true, cacheHistory: false, systemTtl: "5m", toolsTtl: "5m", historyTtl: "1h" };

describe("prompt caching on claude-code: the CLI's own breakpoints, never KTX's", () => {
  it("marks its system blocks and the latest message, 5-minute default TTL, no tools breakpoint", async () => {
    const cli = await side("claude-code", threeSteps);
    const markers = await markersOfLoop(cli);
    expect(markers).toEqual([
      // system[0] is the CLI's billing header (unmarked); [1] its own preamble; [2] KTX's system prompt.
      ["system[1]:default", "system[2]:default", "messages[1].content[0] (system text):default"],
      ["system[1]:default", "system[2]:default", "messages[3].content[0] (user tool_result):default"],
      ["system[1]:default", "system[2]:default", "messages[5].content[0] (user tool_result):default"],
    ]);
    const body = cli.api.messageRequests[0]!.body;
    expect(body.system[2].text).toBe("You are the KTX curator.");
    // No 1-hour TTL, so no extended-cache-ttl beta either.
    expect(String(cli.api.messageRequests[0]!.headers["anthropic-beta"])).not.toMatch(/extended-cache-ttl/);
  });

  it("sends exactly the same cache_control with a non-default llm.promptCaching (KTX markers are never sent) and warns per field", async () => {
    const plain = await markersOfLoop(await side("claude-code", threeSteps));
    const warnings: string[] = [];
    const configured = await side("claude-code", threeSteps, {
      promptCaching: NON_DEFAULT,
      extra: { logger: { debug() {}, info() {}, warn: (m) => void warnings.push(m), error() {} } },
    });
    expect(await markersOfLoop(configured)).toEqual(plain);
    for (const request of configured.api.messageRequests) expect(JSON.stringify(request.body)).not.toMatch(/"ttl":"1h"/);
    expect(warnings.map((w) => /llm\.promptCaching\.(\w+)/.exec(w)?.[1])).toEqual(Object.keys(NON_DEFAULT));
  });

  it("follows Claude Code's own environment knobs, which pass through the scrub (DISABLE_PROMPT_CACHING, CLAUDE_CODE_PROMPT_CACHE_TTL)", async () => {
    const off = await side("claude-code", () => turn.text("ok"), { extra: { env: testEnv({ DISABLE_PROMPT_CACHING: "1" }) } });
    await off.runtime.generateTextResult({ prompt: "hi", system: "S" });
    expect(cacheMarkers(off.api.messageRequests[0]!.body)).toEqual([]);
    const hour = await side("claude-code", () => turn.text("ok"), { extra: { env: testEnv({ CLAUDE_CODE_PROMPT_CACHE_TTL: "1h" }) } });
    await hour.runtime.generateTextResult({ prompt: "hi", system: "S" });
    expect(cacheMarkers(hour.api.messageRequests[0]!.body)).toEqual(["system[1]:1h", "system[2]:1h", "messages[1].content[0] (system text):1h"]);
    expect(String(hour.api.messageRequests[0]!.headers["anthropic-beta"])).toMatch(/extended-cache-ttl-2025-04-11/);
  });
});

describe("prompt caching on the AI SDK runtime: KTX's markers", () => {
  it("defaults: system 1h, the last tool by name 1h, the latest message 5m from the second step on", async () => {
    const markers = await markersOfLoop(await side("ai-sdk", threeSteps));
    expect(markers).toEqual([
      ["system[0]:1h", "tool lookup:1h"],
      ["system[0]:1h", "tool lookup:1h", "messages[2].content[0] (user tool_result):5m"],
      ["system[0]:1h", "tool lookup:1h", "messages[4].content[0] (user tool_result):5m"],
    ]);
  });

  it("applies llm.promptCaching: per-section switches and TTLs, and enabled: false sends none", async () => {
    expect(await markersOfLoop(await side("ai-sdk", threeSteps, { promptCaching: NON_DEFAULT }))).toEqual([
      ["tool lookup:5m"],
      ["tool lookup:5m"],
      ["tool lookup:5m"],
    ]);
    const off = await markersOfLoop(await side("ai-sdk", threeSteps, { promptCaching: { enabled: false } }));
    expect(off).toEqual([[], [], []]);
  });
});
