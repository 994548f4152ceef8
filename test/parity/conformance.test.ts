/**
 * The runtime-port conformance suite, run against BOTH runtimes on the same scripted Messages API
 * script: every case asserts that ClaudeCodeRuntime and AiSdkKtxLlmRuntime produce equal outcomes
 * (text, object, tool-call sequence and arguments, steps and callbacks, stop reason, failure counts,
 * and the tool results the model saw). Deliberate differences are in differences.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type KtxRuntimeToolDescriptor, MaxTurnsError, StructuredOutputError, type StepFinishEvent } from "../../src/index.js";
import { turn } from "../../src/testing/scripted-api.js";
import { cleanup, remainingChildren } from "../support.js";
import { MODEL, bothSides, calls, count, fetchPage, loopOutcome, lookup, outcomeOf, seenToolResults } from "./harness.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

const answer = z.object({ answer: z.string(), n: z.number() });

describe("parity: generateText", () => {
  it("returns the same text and model, in one request each", async () => {
    const sides = await bothSides(
      () => turn.text("hello from the scripted model"),
      async ({ runtime }) => {
        const result = await runtime.generateTextResult({ prompt: "say hello", system: "You are a KTX test." });
        return { text: result.text, model: result.model, toolCalls: result.toolCalls, toolFailures: result.toolFailures };
      },
    );
    const { side: cc, ...claudeCode } = sides["claude-code"];
    const { side: ai, ...aiSdk } = sides["ai-sdk"];
    expect(claudeCode).toEqual(aiSdk);
    expect(claudeCode).toEqual({ text: "hello from the scripted model", model: MODEL, toolCalls: [], toolFailures: 0 });
    expect(cc.api.messageRequests).toHaveLength(1);
    expect(ai.api.messageRequests).toHaveLength(1);
    // Same prompt and model reach the API.
    for (const s of [cc, ai]) {
      expect(s.api.messageRequests[0]!.body.model).toBe(MODEL);
      expect(s.api.messageRequests[0]!.body.messages[0].content[0].text).toBe("say hello");
    }
  });

  it("calls tools before answering, with the same calls and results", async () => {
    const sides = await bothSides(
      (t) => (t.turnIndex === 0 ? turn.tools(t.call("lookup", { term: "grain" })) : turn.text("grain is a glossary entry")),
      async ({ runtime, api }) => {
        const result = await runtime.generateTextResult({ prompt: "what is grain?", tools: [lookup] });
        return { text: result.text, toolCalls: calls(result.toolCalls), seen: seenToolResults(api), requests: api.messageRequests.length };
      },
    );
    const { side: _a, ...claudeCode } = sides["claude-code"];
    const { side: _b, ...aiSdk } = sides["ai-sdk"];
    expect(claudeCode).toEqual(aiSdk);
    expect(claudeCode.seen).toEqual([{ text: "**grain**: a glossary entry", isError: false }]);
  });

  it("throws MaxTurnsError on both when the model is still calling tools at maxTurns", async () => {
    const sides = await bothSides(
      (t) => turn.tools(t.call("lookup", { term: "again" })),
      async ({ runtime, api }) => {
        const { error } = await outcomeOf(() => runtime.generateTextResult({ prompt: "loop", tools: [lookup], maxTurns: 2 }));
        return { error: (error as Error)?.constructor?.name, requests: api.messageRequests.length };
      },
    );
    expect(sides["claude-code"].error).toBe(MaxTurnsError.name);
    expect(sides["ai-sdk"].error).toBe(MaxTurnsError.name);
    expect(sides["claude-code"].requests).toBe(2);
    expect(sides["ai-sdk"].requests).toBe(2);
  });
});

describe("parity: generateObject", () => {
  it("returns the same validated object", async () => {
    const sides = await bothSides(
      (t) => t.object({ answer: "forty-two", n: 42 }),
      async ({ runtime, api }) => {
        const result = await runtime.generateObjectResult({ prompt: "answer", schema: answer });
        return { object: result.object, model: result.model, requests: api.messageRequests.length };
      },
    );
    expect(sides["claude-code"].object).toEqual({ answer: "forty-two", n: 42 });
    expect(sides["ai-sdk"].object).toEqual(sides["claude-code"].object);
    expect(sides["ai-sdk"].model).toBe(sides["claude-code"].model);
    expect(sides["ai-sdk"].requests).toBe(sides["claude-code"].requests);
    // The model was given the same JSON Schema: as the StructuredOutput tool's input, or as the output format.
    const cliSchema = sides["claude-code"].side.api.messageRequests[0]!.body.tools.find((t: { name: string }) => t.name === "StructuredOutput").input_schema;
    const aiSchema = sides["ai-sdk"].side.api.messageRequests[0]!.body.output_config.format.schema;
    expect(aiSchema.properties).toEqual(cliSchema.properties);
    expect(aiSchema.required).toEqual(cliSchema.required);
  });

  it("unwraps a non-object schema the same way", async () => {
    const sides = await bothSides(
      (t) => t.object({ value: ["a", "b"] }),
      async ({ runtime }) => ({ object: (await runtime.generateObjectResult({ prompt: "list", schema: z.array(z.string()) })).object }),
    );
    expect(sides["claude-code"].object).toEqual(["a", "b"]);
    expect(sides["ai-sdk"].object).toEqual(["a", "b"]);
  });

  it("fails with StructuredOutputError on both when the model keeps violating the schema", async () => {
    const sides = await bothSides(
      (t) => t.object({ wrong: true }),
      async ({ runtime }) => {
        const { error } = await outcomeOf(() => runtime.generateObjectResult({ prompt: "answer", schema: answer }));
        return { error };
      },
    );
    for (const kind of ["claude-code", "ai-sdk"] as const) {
      expect(sides[kind].error, kind).toBeInstanceOf(StructuredOutputError);
      expect((sides[kind].error as StructuredOutputError).code).toBe("structured_output_failed");
    }
  });

  it("fails with the same StructuredOutputError (message, issues, received) when only the zod schema rejects the object", async () => {
    const even = z.object({ n: z.number().refine((n) => n % 2 === 0, "must be even") });
    const sides = await bothSides(
      (t) => t.object({ n: 3 }),
      async ({ runtime }) => {
        const { error } = await outcomeOf(() => runtime.generateObjectResult({ prompt: "an even number", schema: even }));
        const e = error as StructuredOutputError;
        return { name: e?.name, message: e?.message, issues: e?.issues, received: e?.received };
      },
    );
    const { side: _a, ...claudeCode } = sides["claude-code"];
    const { side: _b, ...aiSdk } = sides["ai-sdk"];
    expect(claudeCode).toEqual(aiSdk);
    expect(claudeCode).toEqual({ name: "StructuredOutputError", message: expect.stringMatching(/must be even/), issues: ["n: must be even"], received: { n: 3 } });
  });
});

describe("parity: runAgentLoop", () => {
  function loop(stepBudget: number, toolSet: KtxRuntimeToolDescriptor[] = [lookup, count], unitKey = "wu-1") {
    return async ({ runtime, api }: { runtime: import("../../src/ai-sdk/index.js").KtxLlmRuntime; api: import("../../src/testing/scripted-api.js").ScriptedMessagesApi }) => {
      const steps: StepFinishEvent[] = [];
      const result = await runtime.runAgentLoop({
        modelRole: "curator",
        systemPrompt: "You are the KTX curator.",
        userPrompt: "Curate the candidates.",
        toolSet,
        stepBudget,
        telemetryTags: { unitKey },
        onStepFinish: (event) => void steps.push(event),
      });
      return { outcome: loopOutcome(result, steps, runtime.toolFailureCount(unitKey)), seen: seenToolResults(api), requests: api.messageRequests.length };
    };
  }

  it("multi-tool loop: same calls and arguments, same results to the model, one step and callback per response, natural end", async () => {
    const sides = await bothSides((t) => {
      if (t.turnIndex === 0) return turn.tools(t.call("lookup", { term: "grain" }));
      if (t.turnIndex === 1) return { text: "Counting and checking.", toolCalls: [t.call("count", { items: ["a", "b", "c"] }), t.call("lookup", { term: "fact" })] };
      return turn.text("Curated.");
    }, loop(6));
    const claudeCode = sides["claude-code"];
    const aiSdk = sides["ai-sdk"];
    expect(aiSdk.outcome).toEqual(claudeCode.outcome);
    expect(aiSdk.seen).toEqual(claudeCode.seen);
    expect(aiSdk.requests).toBe(claudeCode.requests);
    expect(claudeCode.outcome).toMatchObject({
      stopReason: "natural",
      text: "Curated.",
      model: MODEL,
      steps: 3,
      callbacks: [1, 2, 3].map((stepIndex) => ({ stepIndex, stepBudget: 6 })),
      toolCalls: [
        { tool: "lookup", input: { term: "grain" }, ok: true },
        { tool: "count", input: { items: ["a", "b", "c"] }, ok: true },
        { tool: "lookup", input: { term: "fact" }, ok: true },
      ],
      toolFailures: 0,
      failuresForUnit: 0,
    });
    // Only markdown reached the model: the descriptor's markdown, and data as a fenced JSON block.
    expect(claudeCode.seen.map((r) => r.text)).toEqual(["**grain**: a glossary entry", '```json\n{\n  "count": 3\n}\n```', "**fact**: a glossary entry"]);
  });

  it("budget: the model still calls tools at the step budget; both stop with budget after exactly stepBudget steps", async () => {
    const sides = await bothSides((t) => turn.tools(t.call("lookup", { term: "again" })), loop(2, [lookup]));
    expect(sides["ai-sdk"].outcome).toEqual(sides["claude-code"].outcome);
    expect(sides["claude-code"].outcome).toMatchObject({
      stopReason: "budget",
      steps: 2,
      callbacks: [1, 2].map((stepIndex) => ({ stepIndex, stepBudget: 2 })),
      toolCalls: [
        { tool: "lookup", input: { term: "again" }, ok: true },
        { tool: "lookup", input: { term: "again" }, ok: true },
      ],
    });
    expect(sides["claude-code"].requests).toBe(2);
    expect(sides["ai-sdk"].requests).toBe(2);
  });

  it("tool failure: a throwing tool and invalid arguments become error results the model sees (same text), the loop goes on, failures are counted per unitKey", async () => {
    const sides = await bothSides((t) => {
      if (t.turnIndex === 0) return turn.tools(t.call("fetch_page", { id: "p1" }));
      if (t.turnIndex === 1) return turn.tools(t.call("lookup", { term: 42 }));
      if (t.turnIndex === 2) return turn.tools(t.call("lookup", { term: "42" }));
      return turn.text("Gave up politely.");
    }, loop(6, [fetchPage, lookup], "wu-7"));
    const claudeCode = sides["claude-code"];
    const aiSdk = sides["ai-sdk"];
    expect(aiSdk.outcome).toEqual(claudeCode.outcome);
    expect(aiSdk.seen).toEqual(claudeCode.seen);
    expect(claudeCode.outcome).toMatchObject({ stopReason: "natural", steps: 4, toolFailures: 2, failuresForUnit: 2, text: "Gave up politely." });
    expect(claudeCode.seen).toEqual([
      { text: "page store is offline", isError: true },
      { text: expect.stringMatching(/^Invalid arguments for tool lookup: .*expected string, received number/s), isError: true },
      { text: "**42**: a glossary entry", isError: false },
    ]);
    expect(claudeCode.outcome.toolCalls.map((c) => c.ok)).toEqual([false, false, true]);
    for (const s of [claudeCode, aiSdk]) expect(s.side.runtime.toolFailureCount("another-unit")).toBe(0);
  });

  it("a loop that fails after a tool failure: both return error with the API error, and keep and count the failed call", async () => {
    // 400 is retried by neither the CLI nor the AI SDK, so both see exactly one failing request.
    const sides = await bothSides((t) => (t.turnIndex === 0 ? turn.tools(t.call("fetch_page", { id: "p1" })) : turn.error(400, "prompt is malformed")), loop(6, [fetchPage], "wu-9"));
    const claudeCode = sides["claude-code"];
    expect(sides["ai-sdk"].outcome).toEqual(claudeCode.outcome);
    expect(claudeCode.outcome).toMatchObject({
      stopReason: "error",
      error: { name: "ClaudeCodeApiError" },
      steps: 1,
      toolCalls: [{ tool: "fetch_page", input: { id: "p1" }, ok: false }],
      toolFailures: 1,
      failuresForUnit: 1,
    });
  });

  it("a throwing onStepFinish is ignored on both; the loop result is unaffected", async () => {
    const sides = await bothSides(
      (t) => (t.turnIndex === 0 ? turn.tools(t.call("lookup", { term: "x" })) : turn.text("fine")),
      async ({ runtime }) => {
        const warnings: string[] = [];
        const result = await runtime.runAgentLoop({
          modelRole: "default",
          systemPrompt: "s",
          userPrompt: "u",
          toolSet: [lookup],
          stepBudget: 4,
          onStepFinish: () => {
            warnings.push("called");
            throw new Error("progress sink down");
          },
        });
        return { stopReason: result.stopReason, text: result.text, callbacks: warnings.length };
      },
    );
    const { side: _a, ...claudeCode } = sides["claude-code"];
    const { side: _b, ...aiSdk } = sides["ai-sdk"];
    expect(claudeCode).toEqual({ stopReason: "natural", text: "fine", callbacks: 2 });
    expect(aiSdk).toEqual(claudeCode);
  });

  it("tool timeout: a hanging tool is stopped after toolTimeoutMs on both, and the model sees the same text", async () => {
    const slow = {
      name: "slow",
      description: "Never returns",
      inputSchema: z.object({}),
      execute: (_input: unknown, { signal }: { signal: AbortSignal }) => new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(new Error("aborted")))),
    };
    const sides = await bothSides(
      (t) => (t.turnIndex === 0 ? turn.tools(t.call("slow", {})) : turn.text("moved on")),
      async ({ runtime, api }) => {
        const result = await runtime.runAgentLoop({ modelRole: "default", systemPrompt: "s", userPrompt: "u", toolSet: [slow], stepBudget: 3 });
        return { stopReason: result.stopReason, failures: result.toolFailures, seen: seenToolResults(api) };
      },
      { extra: { toolTimeoutMs: 300 } },
    );
    const { side: _a, ...claudeCode } = sides["claude-code"];
    const { side: _b, ...aiSdk } = sides["ai-sdk"];
    expect(claudeCode).toEqual({ stopReason: "natural", failures: 1, seen: [{ text: "Tool slow timed out after 300 ms", isError: true }] });
    expect(aiSdk).toEqual(claudeCode);
  });

  it("abort: the caller's AbortSignal makes the loop throw AbortError on both, with no request after it", async () => {
    const sides = await bothSides(
      (t) => (t.turnIndex === 0 ? turn.tools(t.call("stop", {})) : turn.text("should not be reached")),
      async ({ runtime, api }) => {
        const controller = new AbortController();
        const stop = { name: "stop", description: "Stops the run", inputSchema: z.object({}), execute: () => (controller.abort(), "stopping") };
        const error = await runtime
          .runAgentLoop({ modelRole: "default", systemPrompt: "s", userPrompt: "u", toolSet: [stop], stepBudget: 3, telemetryTags: {}, abortSignal: controller.signal })
          .then(() => undefined, (caught: unknown) => caught as Error);
        return { error: error?.name, requests: api.messageRequests.length };
      },
    );
    const { side: _a, ...claudeCode } = sides["claude-code"];
    const { side: _b, ...aiSdk } = sides["ai-sdk"];
    expect(claudeCode).toEqual({ error: "AbortError", requests: 1 });
    expect(aiSdk).toEqual(claudeCode);
  });

  it("error: an API failure ends the loop with stopReason error and the same typed error", async () => {
    const sides = await bothSides(
      () => turn.error(400, "prompt is too long (scripted)"),
      async ({ runtime }) => {
        const result = await runtime.runAgentLoop({ modelRole: "default", systemPrompt: "s", userPrompt: "u", toolSet: [lookup], stepBudget: 3 });
        return { stopReason: result.stopReason, error: result.error?.name, status: (result.error as { status?: number })?.status, steps: result.steps };
      },
    );
    const { side: _a, ...claudeCode } = sides["claude-code"];
    const { side: _b, ...aiSdk } = sides["ai-sdk"];
    expect(claudeCode).toEqual({ stopReason: "error", error: "ClaudeCodeApiError", status: 400, steps: 0 });
    expect(aiSdk).toEqual(claudeCode);
  });
});
