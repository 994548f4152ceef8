/**
 * KTX's call sites (ktx 0.12.0, ../shared/ktx/README.md) driven exactly as KTX drives them, through
 * KTX's port types only, against the real pinned CLI and the scripted Messages API.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AbortError, createAgentRunnerPort, isAbortError, type KtxCallMetrics, type KtxLlmRuntimePort, type KtxRunLoopParams } from "../../src/index.js";
import { turn } from "../../src/testing/scripted-api.js";
import { cleanup, remainingChildren, runtimeFor, scriptedApi } from "../support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

/** KTX's tool shape: a record of descriptors whose execute takes the input only. */
function ktxTools(onSearch: (signal: { aborted: boolean }) => Promise<{ markdown: string }>, saved: string[]) {
  return {
    search_docs: {
      name: "search_docs",
      description: "Search the project's documents",
      inputSchema: z.object({ query: z.string() }),
      execute: async (input: unknown) => onSearch({ aborted: false }).then((out) => ({ markdown: `${out.markdown} for ${(input as { query: string }).query}` })),
    },
    save_candidate: {
      name: "save_candidate",
      description: "Save a context candidate",
      inputSchema: z.object({ title: z.string() }),
      execute: async (input: unknown) => {
        saved.push((input as { title: string }).title);
        return { markdown: "saved", structured: { ok: true } };
      },
    },
  };
}

const stage3 = (toolSet: KtxRunLoopParams["toolSet"], abortSignal?: AbortSignal): KtxRunLoopParams => ({
  modelRole: "curator",
  systemPrompt: "You curate KTX context.",
  userPrompt: "Work unit wu-7: find and save candidates.",
  toolSet,
  stepBudget: 40,
  telemetryTags: { operationName: "ingest.stage3", source: "docs", unitKey: "wu-7", jobId: "job-1" },
  ...(abortSignal ? { abortSignal } : {}),
});

describe("KTX call sites through KTX's port", () => {
  it("page triage and scan descriptions get strings; generateObject's object is re-parsed by its schema; onMetrics once per call", async () => {
    const api = await scriptedApi([turn.text("  relevant  "), turn.text("Orders placed by customers.\n"), turn.object({ title: "Orders", columns: 3 })]);
    const port: KtxLlmRuntimePort = runtimeFor(api, { models: { default: "sonnet", triage: "haiku" } });
    const metrics: KtxCallMetrics[] = [];
    const onMetrics = (m: KtxCallMetrics) => metrics.push(m);

    const triage = await port.generateText({ role: "triage", system: "Answer relevant or not.", prompt: "Page: billing FAQ", temperature: 0, onMetrics });
    expect(triage).toBe("  relevant  ");
    const description = (await port.generateText({ role: "default", system: "Describe tables.", prompt: "Table orders", temperature: 0.2, onMetrics })).trim();
    expect(description).toBe("Orders placed by customers.");

    const schema = z.object({ title: z.string(), columns: z.number().int() });
    const object = await port.generateObject<z.infer<typeof schema>, typeof schema>({ role: "default", system: "s", prompt: "Describe", schema, onMetrics });
    expect(schema.parse(object)).toEqual({ title: "Orders", columns: 3 });

    expect(metrics).toHaveLength(3);
    for (const m of metrics) {
      expect(m.totalMs).toBeGreaterThan(0);
      expect(m.usage.inputTokens).toBeGreaterThan(0);
      expect(m.usage.totalTokens).toBe((m.usage.inputTokens ?? 0) + (m.usage.outputTokens ?? 0));
    }
    // Each role's pinned id (KTX's table), never the bare alias, is what the API was asked for.
    expect(api.messageRequests.map((request) => request.body.model)).toEqual(["claude-haiku-4-5", "claude-sonnet-4-6", "claude-sonnet-4-6"]);
  });

  it("onMetrics is called when a call fails after the CLI answered (schema violation), not before", async () => {
    const api = await scriptedApi([turn.text("not an object")], { onExhausted: "repeat-last" });
    const port: KtxLlmRuntimePort = runtimeFor(api);
    const metrics: KtxCallMetrics[] = [];
    const schema = z.object({ title: z.string() });
    await expect(port.generateObject<z.infer<typeof schema>, typeof schema>({ role: "default", prompt: "p", schema, onMetrics: (m) => metrics.push(m) })).rejects.toThrow();
    expect(metrics).toHaveLength(1);
    expect(metrics[0]!.usage.inputTokens).toBeGreaterThan(0);
  });

  it("a stage-3 loop with two tools and telemetryTags: natural stop, metrics with one boundary per step, failures counted for the unit", async () => {
    const api = await scriptedApi([
      turn.tools({ name: "mcp__ktx__search_docs", input: { query: "orders" } }),
      turn.tools({ name: "mcp__ktx__save_candidate", input: { title: "Orders table" } }, { name: "mcp__ktx__search_docs", input: {} }),
      turn.text("done"),
    ]);
    const runtime = runtimeFor(api);
    const saved: string[] = [];
    const runner = createAgentRunnerPort(runtime);
    const result = await runner.runLoop(stage3(ktxTools(async () => ({ markdown: "3 hits" }), saved)));
    expect(result.stopReason).toBe("natural");
    expect(saved).toEqual(["Orders table"]);
    const metrics = result.metrics;
    expect(metrics.stepCount).toBe(3);
    expect(metrics.stepBoundariesMs).toHaveLength(3);
    expect([...metrics.stepBoundariesMs].sort((a, b) => a - b)).toEqual(metrics.stepBoundariesMs);
    expect(metrics.stepBoundariesMs.at(-1)!).toBeLessThanOrEqual(metrics.totalMs);
    expect(metrics.usage.totalTokens).toBeGreaterThan(0);
    // The second search had no query: invalid arguments, seen by the model, counted for wu-7.
    expect(runner.toolFailureCount("wu-7")).toBe(1);
  });

  it("a loop that fails carries metrics too (stopReason error)", async () => {
    const api = await scriptedApi([turn.tools({ name: "mcp__ktx__search_docs", input: { query: "x" } }), turn.error(400, "prompt is too long (scripted)")]);
    const result = await runtimeFor(api).runAgentLoop(stage3(ktxTools(async () => ({ markdown: "hit" }), [])));
    expect(result.stopReason).toBe("error");
    expect(result.metrics.stepCount).toBe(1);
    expect(result.metrics.stepBoundariesMs).toHaveLength(1);
    expect(result.metrics.totalMs).toBeGreaterThan(0);
  });

  it("abortSignal already aborted: nothing starts, AbortError from every operation", async () => {
    const api = await scriptedApi([turn.text("never")]);
    const port: KtxLlmRuntimePort = runtimeFor(api);
    const controller = new AbortController();
    controller.abort(new DOMException("ingest cancelled", "AbortError"));
    const schema = z.object({ a: z.string() });
    const calls = [
      port.generateText({ role: "default", prompt: "p", abortSignal: controller.signal }),
      port.generateObject<{ a: string }, typeof schema>({ role: "default", prompt: "p", schema, abortSignal: controller.signal }),
      port.runAgentLoop(stage3({}, controller.signal)),
    ];
    for (const call of calls) {
      const error = await call.then(() => undefined, (caught: unknown) => caught);
      expect(isAbortError(error)).toBe(true);
    }
    expect(api.requests).toHaveLength(0);
  });

  // 10 cancelled work units, two at a time: each aborted while its tool runs. KTX rethrows the abort (it
  // is not a failed unit); the tool's own signal fires; no API request follows the abort; no process is left.
  it("abortSignal mid-tool, 10 times: rejects with AbortError, the tool's signal aborted, 0 requests after the abort", async () => {
    const runs = 10;
    const outcomes: Array<{ name: string; toolAborted: boolean; requestsAfter: number; ms: number }> = [];
    const one = async () => {
      const api = await scriptedApi([turn.tools({ name: "mcp__ktx__wait", input: {} }), turn.text("must never be asked for")]);
      const controller = new AbortController();
      let abortedAt = 0;
      let toolAborted = false;
      const wait = {
        name: "wait",
        description: "Waits for a slow source",
        inputSchema: z.object({}),
        execute: (_input: unknown, context: { signal: AbortSignal }) =>
          new Promise<never>((_resolve, reject) => {
            context.signal.addEventListener("abort", () => {
              toolAborted = true;
              reject(new Error("tool aborted"));
            });
            setTimeout(() => {
              abortedAt = Date.now();
              controller.abort(new DOMException("ingest cancelled", "AbortError"));
            }, 30);
          }),
      };
      const error = await runtimeFor(api)
        .runAgentLoop({ ...stage3({}, controller.signal), toolSet: [wait] })
        .then(() => undefined, (caught: unknown) => caught as Error);
      outcomes.push({
        name: error?.name ?? "none",
        toolAborted,
        requestsAfter: api.requests.filter((request) => request.receivedAt >= abortedAt).length,
        ms: Date.now() - abortedAt,
      });
      expect(error).toBeInstanceOf(AbortError);
    };
    for (let i = 0; i < runs; i += 2) await Promise.all([one(), one()]);
    expect(outcomes.map((o) => o.name)).toEqual(Array(runs).fill("AbortError"));
    expect(outcomes.every((o) => o.toolAborted)).toBe(true);
    expect(outcomes.map((o) => o.requestsAfter)).toEqual(Array(runs).fill(0));
    const sorted = outcomes.map((o) => o.ms).sort((a, b) => a - b);
    console.log(`abort to rejection over ${runs} runs: median ${sorted[runs / 2]} ms, max ${sorted.at(-1)} ms`);
  }, 180_000);
});
