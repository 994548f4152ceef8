/**
 * The AI SDK provider (`ktx-claude-code/provider`) driven by the real AI SDK (`ai` 6) on the real CLI,
 * against the scripted API on the first-party path behind the host's interceptor: one-turn calls and their
 * reuse, streaming, structured output, a loop of tools the app executes (parked between steps on one CLI),
 * and the ends a parked turn can come to (abort, never resumed).
 */
import { type ModelMessage, Output, generateObject, generateText, stepCountIs, streamObject, streamText, tool } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ClaudeCodeHost } from "../../src/index.js";
import { RateLimitGovernor } from "../../src/limits/governor.js";
import { createClaudeCode, type ClaudeCodeProvider, ParkedTurnExpiredError } from "../../src/provider/index.js";
import { type RecordedRequest, type ScriptedMessagesApi, type ScriptedTurn, turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, cleanup, cliOption, firstPartyApi, firstPartyEnv, pidAlive, remainingChildren, tempDir, toolResultsIn } from "../support.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
  await cleanup();
});

/** The call a request belongs to: its prompt is `case=<name>` (the CLI adds its own text around it). */
function caseOf(request: RecordedRequest): string {
  const first = request.body?.messages?.[0];
  const text = typeof first?.content === "string" ? first.content : (first?.content ?? []).map((part: { text?: string }) => part.text ?? "").join("");
  return /case=(\S+)/.exec(text)?.[1] ?? "unknown";
}

function script(request: RecordedRequest): ScriptedTurn {
  const name = caseOf(request);
  const step = (request.body?.messages ?? []).filter((m: { role: string }) => m.role === "assistant").length;
  const results = toolResultsIn(request.body);
  if (name === "object") return turn.object({ title: "Quarterly report", pages: 12 });
  if (name === "slow") return { text: "one two three four five six seven eight nine ten eleven twelve", chunkDelayMs: 400 };
  if (name === "loop") {
    // Two calls in one response, then one more, then the answer quoting every result the model got.
    if (step === 0) return { text: "Looking both up.", toolCalls: [{ name: "mcp__ktx__weather", input: { city: "Paris" } }, { name: "mcp__ktx__clock", input: { city: "Paris" } }] };
    if (step === 1) return turn.tools({ name: "mcp__ktx__weather", input: { city: "Oslo" } });
    return turn.text(`done: ${results.map((result) => `${result.is_error ? "error " : ""}${result.text}`).join(" | ")}`);
  }
  if (name === "typed") return step === 0 ? turn.tools({ name: "mcp__ktx__weather", input: { city: "Lima" } }) : turn.object({ city: "Lima", summary: results[0]?.text ?? "none" });
  if (name === "approve") return step === 0 ? turn.tools({ name: "mcp__ktx__weather", input: { city: "Kyiv" } }) : turn.text(`got: ${results.map((result) => `${result.is_error ? "error " : ""}${result.text}`).join(" | ")}`);
  if (name === "own") return step === 0 ? turn.tools({ name: "mcp__ktx__add", input: { a: 2, b: 3 } }) : turn.text(`sum: ${results.map((result) => result.text).join(" | ")}`);
  if (name === "mixed") {
    if (step === 0) return { text: "", toolCalls: [{ name: "mcp__ktx__add", input: { a: 1, b: 1 } }, { name: "mcp__ktx__weather", input: { city: "Bern" } }] };
    return turn.text(`mixed: ${results.map((result) => result.text).join(" | ")}`);
  }
  if (name === "park") return step === 0 ? turn.tools({ name: "mcp__ktx__weather", input: { city: "Rome" } }) : turn.text("after the tool");
  return turn.text(`answer to ${name}`);
}

async function setup(options: { parkMs?: number; maxConcurrentRuns?: number; warnings?: string[] } = {}): Promise<{ api: ScriptedMessagesApi; provider: ClaudeCodeProvider; host: ClaudeCodeHost }> {
  const api = await firstPartyApi(script);
  const host = new ClaudeCodeHost({
    projectDir: tempDir("project"),
    env: firstPartyEnv(api),
    passEnv: TEST_PASS_ENV,
    ...cliOption(),
    idleTimeoutMs: 30_000,
    warm: false,
    rateLimitGovernor: new RateLimitGovernor(),
    ...(options.maxConcurrentRuns ? { maxConcurrentRuns: options.maxConcurrentRuns } : {}),
    ...(options.warnings ? { logger: { debug: () => {}, info: () => {}, warn: (message: string) => void options.warnings!.push(message), error: () => {} } } : {}),
  });
  const provider = createClaudeCode({ host, ...(options.parkMs ? { parkMs: options.parkMs } : {}) });
  closers.push(async () => {
    await provider.close();
    await host.close();
  });
  return { api, provider, host };
}

const meta = (metadata: unknown): Record<string, any> => (metadata as Record<string, Record<string, any>>)["claude-code"] ?? {};

describe("ktx-claude-code/provider with the AI SDK", () => {

  it("the model's own tools (settings.tools) run in-process within the turn: one step, the call and result as provider-executed dynamic parts", { timeout: 180_000 }, async () => {
    const { api, provider } = await setup();
    const ran: unknown[] = [];
    const add = tool({ description: "Adds two numbers.", inputSchema: z.object({ a: z.number(), b: z.number() }), execute: async ({ a, b }) => (ran.push({ a, b }), { sum: a + b }) });
    const model = provider("sonnet", { tools: { add } });
    const result = await generateText({ model, prompt: "case=own" });
    expect(ran).toEqual([{ a: 2, b: 3 }]);
    // The CLI ran the tool and asked the model again within the one step the app sees.
    expect(result.steps).toHaveLength(1);
    expect(result.finishReason).toBe("stop");
    expect(result.text).toMatch(/^sum: .*"sum": 5/s);
    expect(result.toolCalls).toEqual([expect.objectContaining({ toolName: "add", input: { a: 2, b: 3 }, providerExecuted: true, dynamic: true })]);
    expect(result.toolResults).toEqual([expect.objectContaining({ toolName: "add", output: { sum: 5 }, dynamic: true })]);
    expect(api.messageRequests.filter((request) => caseOf(request) === "own")).toHaveLength(2);

    // Streamed, the same parts in the full stream, and the app's own tool beside it still parks for the app.
    const weather = tool({ description: "Weather for a city.", inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `sunny in ${city}` });
    const stream = streamText({ model, prompt: "case=mixed", tools: { weather }, stopWhen: stepCountIs(3) });
    const parts: Array<{ type: string; toolName?: string; dynamic?: boolean; providerExecuted?: boolean }> = [];
    for await (const part of stream.fullStream) parts.push(part as never);
    expect(ran).toEqual([{ a: 2, b: 3 }, { a: 1, b: 1 }]);
    expect(await stream.text).toMatch(/^mixed: .*"sum": 2.*sunny in Bern/s);
    const calls = parts.filter((part) => part.type === "tool-call").map((part) => [part.toolName, part.dynamic === true, part.providerExecuted === true]);
    expect(calls).toEqual(expect.arrayContaining([["add", true, true], ["weather", false, false]]));
    expect(parts.filter((part) => part.type === "tool-result").map((part) => part.toolName).sort()).toEqual(["add", "weather"]);
    expect((await stream.steps).length).toBe(2);
  });
  it("generateText answers one turn, and the same call again runs on the same process (pool: reused)", { timeout: 180_000 }, async () => {
    const { provider, host } = await setup();
    const model = provider("sonnet");
    const first = await generateText({ model, system: "Be brief.", prompt: "case=hello" });
    expect(first.text).toBe("answer to hello");
    expect(first.finishReason).toBe("stop");
    expect(first.warnings ?? []).toEqual([]);
    expect(first.usage.inputTokens).toBeGreaterThan(0);
    expect(first.usage.outputTokens).toBeGreaterThan(0);
    const firstMeta = meta(first.providerMetadata);
    expect(firstMeta.pool).toBe("cold");
    expect(firstMeta.network?.interceptor).toBe("on");
    expect(typeof firstMeta.sessionId).toBe("string");
    const second = await generateText({ model, system: "Be brief.", prompt: "case=hello", temperature: 0.2 });
    expect(second.text).toBe("answer to hello");
    const secondMeta = meta(second.providerMetadata);
    expect(secondMeta.pool).toBe("reused");
    expect(secondMeta.pid).toBe(firstMeta.pid);
    expect(second.warnings).toEqual([expect.objectContaining({ type: "unsupported", feature: "temperature" })]);
    expect(host.poolStats.started).toBe(1);
  });

  it("streamText streams the answer as several text deltas (the CLI's partial messages)", { timeout: 180_000 }, async () => {
    const { provider } = await setup();
    const result = streamText({ model: provider("sonnet"), prompt: "case=streaming-works-in-pieces" });
    const chunks: string[] = [];
    for await (const chunk of result.textStream) chunks.push(chunk);
    expect(chunks.join("")).toBe("answer to streaming-works-in-pieces");
    expect(chunks.length).toBeGreaterThan(1);
    expect(await result.finishReason).toBe("stop");
    expect(meta(await result.providerMetadata).pool).toBe("cold");
  });

  it("generateObject gets the CLI's structured output, checked by the zod schema", { timeout: 180_000 }, async () => {
    const { provider, api } = await setup();
    const { object } = await generateObject({ model: provider("sonnet"), schema: z.object({ title: z.string(), pages: z.number() }), prompt: "case=object" });
    expect(object).toEqual({ title: "Quarterly report", pages: 12 });
    const tools = (api.messageRequests[0]?.body?.tools ?? []).map((t: { name: string }) => t.name);
    expect(tools).toContain("StructuredOutput");
  });

  it("streamObject streams the structured output and ends with the object the schema checked", { timeout: 180_000 }, async () => {
    const { provider } = await setup();
    const result = streamObject({ model: provider("sonnet"), schema: z.object({ title: z.string(), pages: z.number() }), prompt: "case=object" });
    const partials: unknown[] = [];
    for await (const partial of result.partialObjectStream) partials.push(partial);
    expect(await result.object).toEqual({ title: "Quarterly report", pages: 12 });
    expect(partials.at(-1)).toEqual({ title: "Quarterly report", pages: 12 });
  });

  it("generateText runs two app-executed tools over three steps on one CLI process", { timeout: 240_000 }, async () => {
    const { provider, host } = await setup();
    const executed: string[] = [];
    const steps: Array<{ finishReason: string; toolCalls: number; pids: number[] }> = [];
    const result = await generateText({
      model: provider("sonnet"),
      prompt: "case=loop",
      stopWhen: stepCountIs(5),
      tools: {
        weather: tool({
          description: "The weather in a city.",
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => (executed.push(`weather ${city}`), `sunny in ${city}`),
        }),
        clock: tool({
          description: "The time in a city.",
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }): Promise<string> => {
            executed.push(`clock ${city}`);
            throw new Error(`no clock for ${city}`);
          },
        }),
      },
      onStepFinish: (step) => void steps.push({ finishReason: step.finishReason, toolCalls: step.toolCalls.length, pids: host.reusePids }),
    });
    expect(executed.sort()).toEqual(["clock Paris", "weather Oslo", "weather Paris"]);
    expect(steps.map((step) => [step.finishReason, step.toolCalls])).toEqual([
      ["tool-calls", 2],
      ["tool-calls", 1],
      ["stop", 0],
    ]);
    expect(result.steps).toHaveLength(3);
    // The model saw each result as the app gave it: a tool's error as an error result.
    expect(result.text).toBe("done: sunny in Paris | error no clock for Paris | sunny in Oslo");
    // One process served every step: the live process while parked is the one that answered at the end.
    const pid = meta(result.providerMetadata).pid;
    expect(steps.every((step) => step.pids.includes(pid))).toBe(true);
    expect(host.poolStats.started).toBe(1);
    expect(meta(result.steps[0]!.providerMetadata).parked).toBe(true);
    // Each step reports its own model responses' tokens.
    for (const step of result.steps) expect([step.usage.inputTokens! > 0, step.usage.outputTokens! > 0]).toEqual([true, true]);
  });

  it("streamText runs the app's tools between steps: fullStream carries tool input, calls, results and both steps' finishes", { timeout: 240_000 }, async () => {
    const { provider, host } = await setup();
    const result = streamText({
      model: provider("sonnet"),
      prompt: "case=park",
      stopWhen: stepCountIs(3),
      tools: { weather: tool({ description: "The weather.", inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `rain in ${city}` }) },
    });
    const types: string[] = [];
    for await (const part of result.fullStream) types.push(part.type);
    const kinds = [...new Set(types)];
    for (const kind of ["start-step", "tool-input-start", "tool-input-delta", "tool-input-end", "tool-call", "tool-result", "text-start", "text-delta", "text-end", "finish-step", "finish"]) expect(kinds).toContain(kind);
    expect(types.filter((type) => type === "finish-step")).toHaveLength(2);
    expect(await result.text).toBe("after the tool");
    expect(host.poolStats.started).toBe(1);
  });

  it("generateText with Output.object and a tool: the app's tool runs, then the structured output is the answer", { timeout: 180_000 }, async () => {
    const { provider, host } = await setup();
    const result = await generateText({
      model: provider("sonnet"),
      prompt: "case=typed",
      stopWhen: stepCountIs(4),
      output: Output.object({ schema: z.object({ city: z.string(), summary: z.string() }) }),
      tools: { weather: tool({ description: "The weather.", inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `cold in ${city}` }) },
    });
    expect(result.output).toEqual({ city: "Lima", summary: "cold in Lima" });
    expect(result.steps).toHaveLength(2);
    expect(host.poolStats.started).toBe(1);
  });

  it("a tool needing approval: the loop stops at the request, and the approved call resumes the parked turn on its process", { timeout: 180_000 }, async () => {
    const { provider, host } = await setup();
    const model = provider("sonnet");
    const tools = { weather: tool({ description: "The weather.", inputSchema: z.object({ city: z.string() }), needsApproval: true, execute: async ({ city }: { city: string }) => `snow in ${city}` }) };
    const messages: ModelMessage[] = [{ role: "user", content: "case=approve" }];
    const first = await generateText({ model, messages, tools, stopWhen: stepCountIs(3) });
    const request = first.content.find((part) => part.type === "tool-approval-request");
    expect(request).toBeDefined();
    const pid = host.reusePids;
    messages.push(...first.response.messages, { role: "tool", content: [{ type: "tool-approval-response", approvalId: (request as { approvalId: string }).approvalId, approved: true }] });
    const second = await generateText({ model, messages, tools, stopWhen: stepCountIs(3) });
    expect(second.text).toBe("got: snow in Kyiv");
    expect(meta(second.providerMetadata).pid).toBe(pid[0]);
    expect(host.poolStats.started).toBe(1);
  });

  it("a denied approval reaches the model as a tool error, on the parked turn's process", { timeout: 180_000 }, async () => {
    const { provider, host } = await setup();
    const model = provider("sonnet");
    const executed: string[] = [];
    const tools = { weather: tool({ description: "The weather.", inputSchema: z.object({ city: z.string() }), needsApproval: true, execute: async ({ city }: { city: string }) => (executed.push(city), `snow in ${city}`) }) };
    const messages: ModelMessage[] = [{ role: "user", content: "case=approve" }];
    const first = await generateText({ model, messages, tools });
    const request = first.content.find((part) => part.type === "tool-approval-request") as { approvalId: string } | undefined;
    messages.push(...first.response.messages, { role: "tool", content: [{ type: "tool-approval-response", approvalId: request!.approvalId, approved: false, reason: "not today" }] });
    const second = await generateText({ model, messages, tools });
    expect(second.text).toBe("got: error Tool execution denied: not today");
    expect(executed).toEqual([]);
    expect(host.poolStats.started).toBe(1);
  });

  it("a prompt with history runs flattened into one user prompt, with a compatibility warning", { timeout: 180_000 }, async () => {
    const { provider, api } = await setup();
    const result = await generateText({
      model: provider("sonnet"),
      messages: [
        { role: "user", content: "case=history" },
        { role: "assistant", content: "Earlier answer." },
        { role: "user", content: "And now?" },
      ],
    });
    expect(result.text).toBe("answer to history");
    expect(result.warnings).toEqual([expect.objectContaining({ type: "compatibility", feature: "conversation history" })]);
    const sent = JSON.stringify(api.messageRequests[0]!.body.messages);
    expect(sent).toContain("Human: case=history");
    expect(sent).toContain("Assistant: Earlier answer.");
  });

  it("an abort mid-stream ends the turn: the CLI is interrupted and nothing is left running after close", { timeout: 180_000 }, async () => {
    const { provider, host } = await setup();
    const controller = new AbortController();
    const result = streamText({ model: provider("sonnet"), prompt: "case=slow", abortSignal: controller.signal, onError: () => {} });
    let first = "";
    // The stream ends at the abort (the AI SDK may end it quietly or with the AbortError).
    await (async () => {
      for await (const chunk of result.textStream) {
        first ||= chunk;
        controller.abort();
      }
    })().catch((error: Error) => expect(error.name).toBe("AbortError"));
    expect(first.length).toBeGreaterThan(0);
    // The answer never completed.
    expect(await Promise.resolve(result.text).catch(() => "")).not.toBe("one two three four five six seven eight nine ten eleven twelve");
    const pids = host.reusePids;
    await provider.close();
    await host.close();
    for (const pid of pids) expect(pidAlive(pid)).toBe(false);
    expect(await remainingChildren()).toEqual([]);
  });

  it("a turn parked at a tool call and never resumed ends after parkMs and frees its slot", { timeout: 180_000 }, async () => {
    const warnings: string[] = [];
    const { provider, api } = await setup({ parkMs: 1_000, maxConcurrentRuns: 1, warnings });
    const model = provider("sonnet");
    const tools = [{ type: "function" as const, name: "weather", description: "The weather.", inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }];
    const step = await model.doGenerate({ prompt: [{ role: "user", content: [{ type: "text", text: "case=park" }] }], tools });
    expect(step.finishReason.unified).toBe("tool-calls");
    expect(step.content).toEqual([expect.objectContaining({ type: "tool-call", toolName: "weather", input: JSON.stringify({ city: "Rome" }) })]);
    // With one slot, this call runs only once the parked turn has given its slot back.
    const next = await generateText({ model, prompt: "case=after-park" });
    expect(next.text).toBe("answer to after-park");
    expect(warnings.filter((warning) => warning.startsWith(`${ParkedTurnExpiredError.name}:`))).toHaveLength(1);
    // The CLI was stopped in its tool call: the model never got a result, so no second request of that turn was made.
    expect(api.messageRequests.map((request) => caseOf(request))).toEqual(["park", "after-park"]);
  });

  it("close() ends a parked turn: its CLI is interrupted and reaped", { timeout: 180_000 }, async () => {
    const { provider, host, api } = await setup();
    const model = provider("sonnet");
    const tools = [{ type: "function" as const, name: "weather", description: "The weather.", inputSchema: { type: "object", properties: { city: { type: "string" } } } }];
    const step = await model.doGenerate({ prompt: [{ role: "user", content: [{ type: "text", text: "case=park" }] }], tools });
    expect(step.finishReason.unified).toBe("tool-calls");
    const pids = host.reusePids;
    expect(pids).toHaveLength(1);
    await provider.close();
    await host.close();
    expect(pidAlive(pids[0]!)).toBe(false);
    expect(await remainingChildren()).toEqual([]);
    expect(api.messageRequests).toHaveLength(1);
  });

  it("an abort while parked (the app's tool aborts the loop) ends the turn and leaves no process behind", { timeout: 180_000 }, async () => {
    const { provider, host } = await setup();
    const controller = new AbortController();
    const outcome = await generateText({
      model: provider("sonnet"),
      prompt: "case=park",
      abortSignal: controller.signal,
      stopWhen: stepCountIs(5),
      tools: {
        weather: tool({
          description: "The weather.",
          inputSchema: z.object({ city: z.string() }),
          execute: async () => {
            controller.abort();
            return "never used";
          },
        }),
      },
    }).then(
      () => "resolved",
      (error: Error) => error.name,
    );
    expect(outcome).toBe("AbortError");
    await provider.close();
    await host.close();
    expect(await remainingChildren()).toEqual([]);
  });
});
