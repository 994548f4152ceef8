/**
 * The deliberate differences between ClaudeCodeRuntime and AiSdkKtxLlmRuntime, each pinned by a
 * test on the same scripted script. docs/parity.md cites these tests by name; a change in behaviour
 * fails here first.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { StructuredOutputError } from "../../src/index.js";
import { createInMemoryTracer, enableAsyncContext } from "../../src/testing/in-memory-tracer.js";
import { turn } from "../../src/testing/scripted-api.js";
import { cleanup, remainingChildren, systemText } from "../support.js";
import { MODEL, bothSides, calls, lookup, outcomeOf, seenToolResults, side } from "./harness.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

describe("deliberate differences", () => {
  it("tool names: mcp__ktx__<name> through the CLI, <name> through the AI SDK; both sorted by name", async () => {
    const empty = { name: "empty", description: "Returns nothing", inputSchema: z.object({}), execute: () => undefined };
    const sides = await bothSides(
      (t) => (t.turnIndex === 0 ? turn.tools(t.call("lookup", { term: "a" }), t.call("empty", {})) : turn.text("done")),
      async ({ runtime, api }) => {
        const result = await runtime.runAgentLoop({ modelRole: "default", systemPrompt: "s", userPrompt: "u", toolSet: [lookup, empty], stepBudget: 3 });
        return { names: result.toolCalls.map((c) => c.name), offered: api.messageRequests[0]!.body.tools.map((t: { name: string }) => t.name), seen: seenToolResults(api) };
      },
    );
    expect(sides["claude-code"].names).toEqual(["mcp__ktx__lookup", "mcp__ktx__empty"]);
    expect(sides["ai-sdk"].names).toEqual(["lookup", "empty"]);
    // The CLI also offers its DeferredToolPlaceholder tool; the order is by name on both.
    expect(sides["claude-code"].offered).toEqual(["mcp__ktx__empty", "DeferredToolPlaceholder", "mcp__ktx__lookup"]);
    expect(sides["ai-sdk"].offered).toEqual(["empty", "lookup"]);
    // A tool without output: the CLI's placeholder text, mirrored with the name the model used.
    expect(sides["claude-code"].seen[1]!.text).toBe("(mcp__ktx__empty completed with no output)");
    expect(sides["ai-sdk"].seen[1]!.text).toBe("(empty completed with no output)");
  });

  it("system prompt: the CLI adds its own system blocks and an environment message; the AI SDK sends KTX's system prompt alone", async () => {
    const sides = await bothSides(
      () => turn.text("ok"),
      async ({ runtime, api }) => {
        await runtime.generateTextResult({ prompt: "hi", system: "You are the KTX triager." });
        return { body: api.messageRequests[0]!.body };
      },
    );
    const cli = sides["claude-code"].body;
    const ai = sides["ai-sdk"].body;
    expect(cli.system).toHaveLength(3);
    expect(cli.system[1].text).toMatch(/Claude Agent SDK/);
    expect(cli.system[2].text).toBe("You are the KTX triager.");
    expect(cli.messages.some((m: { role: string }) => m.role === "system")).toBe(true);
    expect(systemText(ai)).toBe("You are the KTX triager.");
    expect(ai.messages).toHaveLength(1);
  });

  it("structured output: the CLI's StructuredOutput tool vs the AI SDK's output_config.format", async () => {
    const sides = await bothSides(
      (t) => t.object({ n: 1 }),
      async ({ runtime, api }) => {
        await runtime.generateObjectResult({ prompt: "n", schema: z.object({ n: z.number() }) });
        return { body: api.messageRequests[0]!.body };
      },
    );
    expect(sides["claude-code"].body.tools.map((t: { name: string }) => t.name)).toContain("StructuredOutput");
    expect(sides["claude-code"].body.output_config?.format).toBeUndefined();
    expect(sides["ai-sdk"].body.tools).toBeUndefined();
    expect(sides["ai-sdk"].body.output_config.format.type).toBe("json_schema");
  });

  it("schema retries: the CLI asks the model again (5 requests) before failing; the AI SDK fails after the first answer", async () => {
    const sides = await bothSides(
      (t) => t.object({ wrong: true }),
      async ({ runtime, api }) => {
        const { error } = await outcomeOf(() => runtime.generateObjectResult({ prompt: "answer", schema: z.object({ a: z.string() }) }));
        return { error: error as StructuredOutputError, requests: api.messageRequests.length };
      },
    );
    expect(sides["claude-code"].error).toBeInstanceOf(StructuredOutputError);
    expect(sides["ai-sdk"].error).toBeInstanceOf(StructuredOutputError);
    expect(sides["claude-code"].requests).toBe(5);
    expect(sides["claude-code"].error.message).toMatch(/within the CLI's retries/);
    expect(sides["ai-sdk"].requests).toBe(1);
    expect(sides["ai-sdk"].error.issues).toEqual(["a: Invalid input: expected string, received undefined"]);
  });

  it("num_turns: the CLI reports its own count, not always the step count; the AI SDK runtime reports steps", async () => {
    const simple = await bothSides(
      (t) => (t.turnIndex === 0 ? turn.tools(t.call("lookup", { term: "a" })) : turn.text("done")),
      async ({ runtime }) => {
        const r = await runtime.runAgentLoop({ modelRole: "default", systemPrompt: "s", userPrompt: "u", toolSet: [lookup], stepBudget: 4 });
        return { steps: r.steps, numTurns: r.numTurns };
      },
    );
    expect(simple["claude-code"]).toMatchObject({ steps: 2, numTurns: 2 });
    expect(simple["ai-sdk"]).toMatchObject({ steps: 2, numTurns: 2 });
    // One step with three calls, two of them refused, then the answer.
    const refused = await bothSides(
      (t) => (t.turnIndex === 0 ? turn.tools(t.call("lookup", { term: "a" }), { name: "Bash", input: { command: "ls" } }, { name: "nope", input: {} }) : turn.text("done")),
      async ({ runtime }) => {
        const r = await runtime.runAgentLoop({ modelRole: "default", systemPrompt: "s", userPrompt: "u", toolSet: [lookup], stepBudget: 4 });
        return { steps: r.steps, numTurns: r.numTurns };
      },
    );
    expect(refused["claude-code"]).toMatchObject({ steps: 2, numTurns: 4 });
    expect(refused["ai-sdk"]).toMatchObject({ steps: 2, numTurns: 2 });
    const budget = await bothSides(
      (t) => turn.tools(t.call("lookup", { term: "again" })),
      async ({ runtime }) => {
        const r = await runtime.runAgentLoop({ modelRole: "default", systemPrompt: "s", userPrompt: "u", toolSet: [lookup], stepBudget: 2 });
        return { stopReason: r.stopReason, steps: r.steps, numTurns: r.numTurns };
      },
    );
    expect(budget["claude-code"]).toMatchObject({ stopReason: "budget", steps: 2, numTurns: 3 });
    expect(budget["ai-sdk"]).toMatchObject({ stopReason: "budget", steps: 2, numTurns: 2 });
  });

  it("same-step tool-call repair: the AI SDK runtime repairs invalid arguments within the step (repairToolCall); the CLI reports the failure and the model corrects itself next turn", async () => {
    const script = (t: import("./harness.js").TurnContext) => {
      if (t.turnIndex === 0) return turn.tools(t.call("lookup", { term: 42 }));
      if (t.turnIndex === 1 && t.offered.includes("mcp__ktx__lookup")) return turn.tools(t.call("lookup", { term: "42" }));
      return turn.text("done");
    };
    const cli = await side("claude-code", script);
    const cliResult = await cli.runtime.runAgentLoop({ modelRole: "default", systemPrompt: "s", userPrompt: "u", toolSet: [lookup], stepBudget: 4 });
    const repairs: string[] = [];
    const ai = await side("ai-sdk", script, {
      extra: {
        repairToolCall: async ({ toolCall, error }) => {
          repairs.push(error.message);
          const input = JSON.parse(toolCall.input) as { term: unknown };
          return { ...toolCall, input: JSON.stringify({ term: String(input.term) }) };
        },
      },
    });
    const aiResult = await ai.runtime.runAgentLoop({ modelRole: "default", systemPrompt: "s", userPrompt: "u", toolSet: [lookup], stepBudget: 4 });
    expect(calls(cliResult.toolCalls).map((c) => c.ok)).toEqual([false, true]);
    expect(cliResult.steps).toBe(3);
    expect(calls(aiResult.toolCalls)).toEqual([{ tool: "lookup", input: { term: "42" }, ok: true }]);
    expect(aiResult.steps).toBe(2);
    expect(repairs).toHaveLength(1);
    expect(repairs[0]).toMatch(/Invalid input for tool lookup/);
    expect(ai.api.messageRequests).toHaveLength(2);
    expect(cli.api.messageRequests).toHaveLength(3);
  });

  it("unknown and built-in tools: refused and counted as failures on both, with each backend's own message", async () => {
    const sides = await bothSides(
      (t) => (t.turnIndex === 0 ? turn.tools({ name: "Bash", input: { command: "ls" } }, { name: t.tool("not_a_tool"), input: {} }) : turn.text("done")),
      async ({ runtime, api }) => {
        const r = await runtime.runAgentLoop({ modelRole: "default", systemPrompt: "s", userPrompt: "u", toolSet: [lookup], stepBudget: 3 });
        return { failures: r.toolFailures, seen: seenToolResults(api), stopReason: r.stopReason };
      },
    );
    for (const kind of ["claude-code", "ai-sdk"] as const) {
      expect(sides[kind]).toMatchObject({ failures: 2, stopReason: "natural" });
      expect(sides[kind].seen.map((r) => r.isError)).toEqual([true, true]);
    }
    expect(sides["claude-code"].seen[0]!.text).toMatch(/No such tool available: Bash/);
    expect(sides["ai-sdk"].seen[0]!.text).toBe("Model tried to call unavailable tool 'Bash'. Available tools: lookup.");
  });

  it("API errors: the CLI retries a 400 twice with fewer beta features; the AI SDK does not retry a 400", async () => {
    const sides = await bothSides(
      () => turn.error(400, "bad request (scripted)"),
      async ({ runtime, api }) => {
        const { error } = await outcomeOf(() => runtime.generateTextResult({ prompt: "hi" }));
        return { error: (error as Error).name, requests: api.messageRequests.length };
      },
    );
    expect(sides["claude-code"]).toMatchObject({ error: "ClaudeCodeApiError", requests: 3 });
    expect(sides["ai-sdk"]).toMatchObject({ error: "ClaudeCodeApiError", requests: 1 });
  });

  it("telemetry: with KTX's factory shape both backends give one ai.generateText span per loop, ai.toolCall children and the tags as metadata", async () => {
    const disable = enableAsyncContext();
    try {
      const traces: Record<string, ReturnType<typeof createInMemoryTracer>> = {};
      for (const kind of ["ai-sdk", "claude-code"] as const) {
        const memory = createInMemoryTracer();
        traces[kind] = memory;
        const createTelemetry = (telemetryTags: Record<string, string>) => ({ isEnabled: true, tracer: memory.tracer, functionId: telemetryTags.operationName, metadata: telemetryTags });
        const { runtime } = await side(kind, (c) => (c.turnIndex === 0 ? turn.tools(c.call("lookup", { term: "churn" })) : turn.text("done")), { extra: { telemetry: createTelemetry } });
        const loop = await runtime.runAgentLoop({ modelRole: "default", systemPrompt: "s", userPrompt: "u", toolSet: [lookup], stepBudget: 3, telemetryTags: { operationName: "ingest.workUnit", unitKey: "wu-1", source: "RESEARCH" } });
        expect(loop.stopReason).toBe("natural");
      }
      for (const memory of Object.values(traces)) {
        const root = memory.spans.find((span) => span.name === "ai.generateText" && span.parentSpanId === undefined)!;
        expect(root.attributes).toMatchObject({ "operation.name": "ai.generateText ingest.workUnit", "ai.telemetry.metadata.unitKey": "wu-1", "ai.telemetry.metadata.source": "RESEARCH", "ai.response.finishReason": "stop" });
        expect(typeof root.attributes["ai.usage.totalTokens"]).toBe("number");
        const tool = memory.spans.find((span) => span.name === "ai.toolCall")!;
        expect(tool.parentSpanId).toBe(root.spanId);
        expect(tool.attributes).toMatchObject({ "ai.toolCall.name": "lookup", "ai.telemetry.metadata.unitKey": "wu-1" });
        expect(memory.spans.filter((span) => span.name === "ai.generateText.doGenerate")).toHaveLength(2);
        expect(memory.unended()).toEqual([]);
      }
      // The provider differs by name; the AI SDK also puts per-step usage on each doGenerate span, the CLI reports usage per call only.
      expect(traces["ai-sdk"]!.spans.find((span) => span.name === "ai.generateText")!.attributes["ai.model.provider"]).toBe("anthropic.messages");
      expect(traces["claude-code"]!.spans.find((span) => span.name === "ai.generateText")!.attributes["ai.model.provider"]).toBe("claude-code");
      if (process.env.KTX_PRINT_TRACES) {
        const keys = ["ai.telemetry.metadata.unitKey", "ai.toolCall.name", "ai.usage.totalTokens", "ai.model.provider"];
        for (const [kind, memory] of Object.entries(traces)) process.stdout.write(`\n${kind}:\n${memory.tree(keys)}\n`);
      }
    } finally {
      disable();
    }
  });

  it("run facts: cost, session id and CLI version come from the CLI; the AI SDK runtime reports 0, the response id and an empty version", async () => {
    const sides = await bothSides(
      () => turn.text("x"),
      async ({ runtime }) => {
        const r = await runtime.generateTextResult({ prompt: "p" });
        return { costUsd: r.costUsd, sessionId: r.sessionId, cliVersion: r.cliVersion, numTurns: r.numTurns, model: r.model, warmStart: r.warmStart };
      },
    );
    expect(sides["claude-code"]).toMatchObject({ cliVersion: "2.1.330", numTurns: 1, model: MODEL, warmStart: false });
    expect(sides["claude-code"].costUsd).toBeGreaterThan(0);
    expect(sides["claude-code"].sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(sides["ai-sdk"]).toMatchObject({ costUsd: 0, sessionId: "msg_scripted_0", cliVersion: "", numTurns: 1, model: MODEL, warmStart: false });
  });
});
