/**
 * `experimentalTelemetry` on the real pinned CLI: spans named and attributed as the AI SDK's, with KTX's
 * factory shape `(telemetryTags) => TelemetrySettings`, recorded by an in-memory tracer.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { TelemetrySettings } from "ai";
import { createInMemoryTracer } from "../../src/testing/in-memory-tracer.js";
import { turn } from "../../src/testing/scripted-api.js";
import { cleanup, firstPartyApi, remainingChildren, runtimeFor } from "../support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

const tags = { operationName: "ingest.workUnit", unitKey: "wu-7", source: "RESEARCH", jobId: "job-1" };

describe("experimentalTelemetry", () => {
  it("a loop with KTX's factory shape: ai.generateText, a doGenerate per step, ai.toolCall per tool (errors recorded), usage, every span ended", async () => {
    const api = await firstPartyApi([
      turn.tools({ name: "mcp__ktx__lookup", input: { q: "orders" } }),
      turn.tools({ name: "mcp__ktx__save", input: { q: "broken" } }),
      turn.text("done"),
    ]);
    const memory = createInMemoryTracer();
    const seen: Array<Record<string, string>> = [];
    // KTX's deps.telemetry.createTelemetry(tags): the tags become metadata.
    const createTelemetry = (telemetryTags: Record<string, string>): TelemetrySettings => {
      seen.push(telemetryTags);
      return { isEnabled: true, tracer: memory.tracer, functionId: telemetryTags.operationName, metadata: telemetryTags };
    };
    const runtime = runtimeFor(api, { experimentalTelemetry: createTelemetry });
    const toolSet = [
      { name: "lookup", description: "Look up", inputSchema: z.object({ q: z.string() }), execute: async ({ q }: { q: string }) => ({ markdown: `found ${q}` }) },
      { name: "save", description: "Save", inputSchema: z.object({ q: z.string() }), execute: async () => { throw new Error("disk full"); } },
    ];
    const loop = await runtime.runAgentLoop({ modelRole: "curator", systemPrompt: "sys", userPrompt: "go", toolSet, stepBudget: 5, telemetryTags: tags });
    expect(loop.stopReason).toBe("natural");
    expect(seen).toEqual([tags]);

    const root = memory.spans.find((span) => span.name === "ai.generateText")!;
    expect(root.parentSpanId).toBeUndefined();
    expect(root.attributes).toMatchObject({
      "operation.name": "ai.generateText ingest.workUnit",
      "ai.operationId": "ai.generateText",
      "ai.telemetry.functionId": "ingest.workUnit",
      "ai.telemetry.metadata.unitKey": "wu-7",
      "ai.telemetry.metadata.operationName": "ingest.workUnit",
      "ai.telemetry.metadata.source": "RESEARCH",
      "ai.model.provider": "claude-code",
      "ai.model.id": "claude-sonnet-4-6",
      "ai.response.finishReason": "stop",
      "ai.response.text": "done",
    });
    // Usage as the AI SDK names it; input counts every prompt token, cached or not (tokenUsage).
    const usage = loop.metrics!.usage;
    expect(root.attributes["ai.usage.inputTokens"]).toBe(usage.inputTokens);
    expect(root.attributes["ai.usage.outputTokens"]).toBe(usage.outputTokens);
    expect(root.attributes["ai.usage.totalTokens"]).toBe(usage.totalTokens);
    expect(usage.totalTokens).toBeGreaterThan(0);

    const steps = memory.spans.filter((span) => span.name === "ai.generateText.doGenerate");
    expect(steps).toHaveLength(3);
    for (const step of steps) expect(step.parentSpanId).toBe(root.spanId);

    const toolSpans = memory.spans.filter((span) => span.name === "ai.toolCall");
    expect(toolSpans.map((span) => span.attributes["ai.toolCall.name"])).toEqual(["lookup", "save"]);
    for (const span of toolSpans) {
      expect(span.parentSpanId).toBe(root.spanId);
      expect(span.attributes["ai.telemetry.metadata.unitKey"]).toBe("wu-7");
      expect(span.attributes["ai.toolCall.id"]).toMatch(/^toolu_/);
    }
    expect(toolSpans[0]!.attributes["ai.toolCall.args"]).toBe(JSON.stringify({ q: "orders" }));
    expect(toolSpans[0]!.attributes["ai.toolCall.result"]).toBe(JSON.stringify({ markdown: "found orders" }));
    expect(toolSpans[1]!.status).toMatchObject({ code: 2, message: "disk full" });
    expect(toolSpans[1]!.events).toEqual([{ name: "exception", attributes: { "exception.type": "Error", "exception.message": "disk full" } }]);
    expect(memory.unended()).toEqual([]);
  });

  it("text and object calls (the factory gets {}), a failed call recorded as an error, recordInputs/recordOutputs honoured", async () => {
    const api = await firstPartyApi([turn.text("hi"), turn.object({ title: "Orders" }), turn.error(400, "bad (scripted)")], { onExhausted: "repeat-last" });
    const memory = createInMemoryTracer();
    const runtime = runtimeFor(api, { experimentalTelemetry: (telemetryTags) => ({ isEnabled: true, tracer: memory.tracer, metadata: { ...telemetryTags, call: "x" }, recordInputs: false }) });
    await runtime.generateText({ prompt: "say hi", system: "s" });
    await runtime.generateObject({ prompt: "describe", schema: z.object({ title: z.string() }) });
    await expect(runtime.generateText({ prompt: "fails" })).rejects.toThrow();
    expect(memory.spans.map((span) => span.name)).toEqual(["ai.generateText", "ai.generateObject", "ai.generateText"]);
    const [text, object, failed] = memory.spans;
    expect(text!.attributes).toMatchObject({ "operation.name": "ai.generateText", "ai.telemetry.metadata.call": "x", "ai.response.text": "hi", "ai.response.finishReason": "stop" });
    expect(text!.attributes).not.toHaveProperty("ai.prompt");
    expect(object!.attributes["ai.response.object"]).toBe(JSON.stringify({ title: "Orders" }));
    expect(failed!.status?.code).toBe(2);
    expect(failed!.events[0]).toMatchObject({ name: "exception", attributes: { "exception.type": "ClaudeCodeApiError" } });
    expect(memory.unended()).toEqual([]);
    // Three CLI runs on the first-party path (a TLS proxy and the OAuth profile each): generous on a loaded machine.
  }, 180_000);

  it("is off unless isEnabled is true", async () => {
    const api = await firstPartyApi(() => turn.text("hi"));
    const memory = createInMemoryTracer();
    await runtimeFor(api, { experimentalTelemetry: { tracer: memory.tracer } }).generateText({ prompt: "a" });
    await runtimeFor(api, { experimentalTelemetry: () => undefined }).generateText({ prompt: "b" });
    await runtimeFor(api).generateText({ prompt: "c" });
    expect(memory.spans).toEqual([]);
  }, 180_000);
});
