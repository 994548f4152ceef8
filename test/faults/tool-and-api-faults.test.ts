/** Tool handler faults, API faults and concurrency, on the real pinned CLI with the scripted API. */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AbortError, ClaudeCodeApiError, type KtxRuntimeToolDescriptor, PromptTooLongError } from "../../src/index.js";
import { lookup } from "../../src/testing/scenarios.js";
import { turn } from "../../src/testing/scripted-api.js";
import { childPids, cleanup, remainingChildren, runtimeFor, scriptedApi, testEnv, toolResultsIn } from "../support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

function tool(name: string, execute: KtxRuntimeToolDescriptor<Record<string, never>>["execute"]): KtxRuntimeToolDescriptor<Record<string, never>> {
  return { name, description: name, inputSchema: z.object({}), execute };
}

const loop = (toolSet: KtxRuntimeToolDescriptor[], extra: Record<string, unknown> = {}) => ({
  modelRole: "default" as const,
  systemPrompt: "s",
  userPrompt: "u",
  toolSet,
  stepBudget: 4,
  ...extra,
});

describe("tool handler faults", () => {
  it("turns a 50 MiB output and a non-serialisable output into answers the loop survives", async () => {
    const api = await scriptedApi([turn.tools({ name: "mcp__ktx__huge", input: {} }, { name: "mcp__ktx__bigint", input: {} }), turn.text("survived")]);
    const huge = tool("huge", () => "y".repeat(50 * 1024 * 1024));
    const bigint = tool("bigint", () => ({ value: 10n }));
    const result = await runtimeFor(api).runAgentLoop(loop([huge, bigint]));
    expect(result.stopReason).toBe("natural");
    expect(result.text).toBe("survived");
    const seen = toolResultsIn(api.messageRequests[1]!.body);
    expect(seen).toHaveLength(2);
    expect(seen[1]).toMatchObject({ is_error: true });
    expect(seen[1]!.text).toMatch(/cannot be sent to the model/);
    expect(result.toolCalls.find((call) => call.name === "mcp__ktx__bigint")!.ok).toBe(false);
  });

  it("aborts the call and the running tool handler when the caller's signal fires during a tool call", async () => {
    const api = await scriptedApi([turn.tools({ name: "mcp__ktx__wait", input: {} }), turn.text("never")]);
    const controller = new AbortController();
    let handlerAborted = false;
    const wait = tool("wait", (_input, { signal }) => {
      setTimeout(() => controller.abort(new Error("stop now")), 50);
      return new Promise((_resolve, reject) =>
        signal.addEventListener("abort", () => {
          handlerAborted = true;
          reject(new Error("aborted"));
        }),
      );
    });
    const error = await runtimeFor(api)
      .runAgentLoop(loop([wait], { abortSignal: controller.signal }))
      .then(() => undefined, (caught: unknown) => caught);
    // An abort is thrown, not returned as stopReason "error": KTX rethrows it and does not fail the unit.
    expect(error).toBeInstanceOf(AbortError);
    expect((error as Error).name).toBe("AbortError");
    expect((error as Error).message).toBe("The Claude Code run was aborted by its AbortSignal: stop now.");
    expect(handlerAborted).toBe(true);
    expect(api.messageRequests).toHaveLength(1);
  });
});

describe("API faults (the CLI retries; we add no retry of our own)", () => {
  it("a stream broken mid-answer is retried by the CLI and the call succeeds", async () => {
    const api = await scriptedApi([{ brokenStream: true, text: "half an ans" }, turn.text("whole answer")]);
    const runtime = runtimeFor(api, { env: testEnv({ CLAUDE_CODE_MAX_RETRIES: "2" }) });
    expect((await runtime.generateTextResult({ prompt: "hi" })).text).toBe("whole answer");
    expect(api.messageRequests).toHaveLength(2);
  });

  it("a slow stream is waited for, not cut off", async () => {
    const api = await scriptedApi([{ text: "slow but complete answer", delayMs: 1_500, chunkDelayMs: 200 }]);
    const result = await runtimeFor(api, { idleTimeoutMs: 10_000 }).generateTextResult({ prompt: "hi" });
    expect(result.text).toBe("slow but complete answer");
  });

  it("a persistent 529 ends in ClaudeCodeApiError with the status after exactly the CLI's retries", async () => {
    const api = await scriptedApi(() => turn.error(529, "overloaded (scripted)"));
    const runtime = runtimeFor(api, { env: testEnv({ CLAUDE_CODE_MAX_RETRIES: "1" }) });
    const error = (await runtime.generateTextResult({ prompt: "hi" }).catch((e: unknown) => e)) as ClaudeCodeApiError;
    expect(error).toBeInstanceOf(ClaudeCodeApiError);
    expect(error.status).toBe(529);
    expect(error.message).toMatch(/^The Anthropic API failed with status 529 after 1 retry by the CLI: .*retry later \(the CLI already retried 1 time with backoff\), or lower maxConcurrentRuns/s);
    expect(api.messageRequests).toHaveLength(2);
  });

  it.each([500, 429])("a persistent %i ends in ClaudeCodeApiError with the status after exactly the CLI's retries", async (status) => {
    const api = await scriptedApi(() => turn.error(status, `scripted ${status} error`));
    const runtime = runtimeFor(api, { env: testEnv({ CLAUDE_CODE_MAX_RETRIES: "1" }) });
    const error = (await runtime.generateTextResult({ prompt: "hi" }).catch((e: unknown) => e)) as ClaudeCodeApiError;
    expect(error).toBeInstanceOf(ClaudeCodeApiError);
    expect(error.status).toBe(status);
    expect(error.terminalReason).toBe("api_error");
    expect(error.message).toMatch(new RegExp(`^The Anthropic API failed with status ${status} after 1 retry by the CLI: .*scripted ${status} error.*retry (later|once the limit resets)`, "s"));
    // The first attempt plus CLAUDE_CODE_MAX_RETRIES=1 retry; nothing of ours on top.
    expect(api.messageRequests).toHaveLength(2);
  });
});

describe("a prompt over the context window", () => {
  it("is refused by the CLI itself, with no request sent: PromptTooLongError saying to shorten it, not to check the network", async () => {
    const api = await scriptedApi([turn.text("never")]);
    const error = (await runtimeFor(api).generateTextResult({ prompt: "x ".repeat(2 * 1024 * 1024) }).catch((e: unknown) => e)) as PromptTooLongError;
    expect(error).toBeInstanceOf(PromptTooLongError);
    expect(error.terminalReason).toBe("blocking_limit");
    expect(error.message).toMatch(/^The prompt is too long for the model's context window: the CLI refused it before sending any request \(Prompt is too long, terminal_reason blocking_limit\)\. Shorten the prompt/);
    expect(error.message).not.toMatch(/network|proxy|apiEndpoint/);
    expect(api.messageRequests).toHaveLength(0);
  });
});

describe("concurrency", () => {
  // 8 loops on 2 slots: each slot serves four loops in turn.
  it("finishes 8 agent loops started at once, never running more CLIs than maxConcurrentRuns", async () => {
    const api = await scriptedApi((request) => {
      const prompt = String(request.body.messages[0].content.at(-1).text);
      const hasResult = JSON.stringify(request.body.messages).includes("tool_result");
      return hasResult ? turn.text(`done ${prompt}`) : turn.tools({ name: "mcp__ktx__lookup", input: { term: prompt } });
    });
    const runtime = runtimeFor(api, { maxConcurrentRuns: 2 });
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, childPids().length)), 20);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, index) => runtime.runAgentLoop({ ...loop([lookup]), userPrompt: `unit-${index}`, telemetryTags: { unitKey: `u${index}` } })),
    );
    clearInterval(sampler);
    results.forEach((result, index) => {
      expect(result.stopReason).toBe("natural");
      expect(result.text).toBe(`done unit-${index}`);
      expect(result.toolCalls).toEqual([expect.objectContaining({ name: "mcp__ktx__lookup", input: { term: `unit-${index}` }, ok: true })]);
    });
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(2);
  });
});
