/** End to end: agent loops with KTX tools hosted in-process, on the real CLI and the scripted API. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgentRunnerPort, type KtxRuntimeToolDescriptor, type StepFinishEvent } from "../../src/index.js";
import { turn } from "../../src/testing/scripted-api.js";
import { count, fetchPage, lookup } from "../../src/testing/scenarios.js";
import { cleanup, remainingChildren, runtimeFor, firstPartyApi, toolResultsIn } from "../support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

function loopParams(overrides: Record<string, unknown> = {}) {
  const steps: StepFinishEvent[] = [];
  return {
    steps,
    params: {
      modelRole: "curator" as const,
      systemPrompt: "You are the KTX curator.",
      userPrompt: "Curate the candidates.",
      toolSet: [lookup, count],
      stepBudget: 6,
      telemetryTags: { unitKey: "unit-1" },
      onStepFinish: (event: StepFinishEvent) => void steps.push(event),
      ...overrides,
    },
  };
}

describe("runAgentLoop", () => {
  it("calls two tools across three turns, ends naturally, and reports one step per turn", async () => {
    const api = await firstPartyApi([
      turn.tools({ name: "mcp__ktx__lookup", input: { term: "grain" } }),
      turn.tools({ name: "mcp__ktx__count", input: { items: ["a", "b", "c"] } }),
      turn.text("Curated."),
    ]);
    const runtime = runtimeFor(api, { models: { default: "sonnet", curator: "opus" } });
    const { params, steps } = loopParams();
    const result = await runtime.runAgentLoop(params);
    expect(result.stopReason).toBe("natural");
    expect(result.text).toBe("Curated.");
    expect(result.model).toBe("claude-opus-4-7");
    expect(steps).toEqual([1, 2, 3].map((stepIndex) => ({ stepIndex, stepBudget: 6 })));
    expect(result.toolCalls.map((call) => [call.name, call.ok])).toEqual([["mcp__ktx__lookup", true], ["mcp__ktx__count", true]]);
    expect(result.toolFailures).toBe(0);
    // The tool outputs reached the model: only markdown for lookup, a fenced JSON block for count.
    expect(toolResultsIn(api.messageRequests[1]!.body).map((r) => r.text)).toEqual(["**grain**: a glossary entry"]);
    expect(toolResultsIn(api.messageRequests[2]!.body)[1]!.text).toMatch(/```json[\s\S]*"count": 3/);
    const offered = api.messageRequests[0]!.body.tools.map((tool: { name: string }) => tool.name).filter((n: string) => n.startsWith("mcp__"));
    expect(offered.sort()).toEqual(["mcp__ktx__count", "mcp__ktx__lookup"]);
  });

  it("stops at its step budget with stopReason budget and exactly stepBudget callbacks", async () => {
    const api = await firstPartyApi([turn.tools({ name: "mcp__ktx__lookup", input: { term: "again" } })], { onExhausted: "repeat-last" });
    const { params, steps } = loopParams({ stepBudget: 2 });
    const result = await runtimeFor(api).runAgentLoop(params);
    expect(result.stopReason).toBe("budget");
    expect(steps.map((s) => s.stepIndex)).toEqual([1, 2]);
    expect(api.messageRequests).toHaveLength(2);
    expect(result.numTurns).toBe(3);
  });

  it("lets the model see a throwing tool and invalid arguments as errors, continues, and counts failures per unitKey", async () => {
    const api = await firstPartyApi([
      turn.tools({ name: "mcp__ktx__fetch_page", input: { id: "p1" } }),
      turn.tools({ name: "mcp__ktx__lookup", input: { term: 42 } }),
      turn.text("Gave up politely."),
    ]);
    const runtime = runtimeFor(api);
    const { params } = loopParams({ toolSet: [fetchPage, lookup], telemetryTags: { unitKey: "wu-7" } });
    const result = await runtime.runAgentLoop(params);
    expect(result.stopReason).toBe("natural");
    expect(result.toolFailures).toBe(2);
    expect(runtime.toolFailureCount("wu-7")).toBe(2);
    expect(runtime.toolFailureCount("other")).toBe(0);
    const seen = toolResultsIn(api.messageRequests[2]!.body);
    expect(seen[0]).toMatchObject({ is_error: true });
    expect(seen[0]!.text).toContain("page store is offline");
    expect(seen[1]).toMatchObject({ is_error: true });
    expect(seen[1]!.text).toMatch(/Invalid arguments for tool lookup/);
  });

  it("keeps the tool calls and failures of a loop that then fails, and counts them for its unitKey", async () => {
    // 400 is not retried by the CLI: the second model call ends the run as an API error.
    const api = await firstPartyApi([turn.tools({ name: "mcp__ktx__fetch_page", input: { id: "p1" } }), turn.error(400, "prompt is malformed")]);
    // Through KTX's AgentRunnerPort, as KTX's work-unit stage calls it.
    const port = createAgentRunnerPort(runtimeFor(api));
    const { params, steps } = loopParams({ toolSet: [fetchPage], telemetryTags: { unitKey: "wu-9" } });
    const result = await port.runLoop(params);
    expect(result.stopReason).toBe("error");
    expect(result.error?.name).toBe("ClaudeCodeApiError");
    expect(steps.map((s) => s.stepIndex)).toEqual([1]);
    expect(result.numTurns).toBe(1);
    expect(result.toolCalls.map((call) => [call.name, call.ok])).toEqual([["mcp__ktx__fetch_page", false]]);
    expect(result.toolCalls[0]!.error).toContain("page store is offline");
    expect(result.toolFailures).toBe(1);
    expect(port.toolFailureCount!("wu-9")).toBe(1);
  });

  it("times out a hanging tool after toolTimeoutMs and tells the model", async () => {
    const hanging: KtxRuntimeToolDescriptor<Record<string, never>> = {
      name: "slow",
      description: "Never returns",
      inputSchema: z.object({}),
      execute: (_input, { signal }) => new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(new Error("aborted")))),
    };
    const api = await firstPartyApi([turn.tools({ name: "mcp__ktx__slow", input: {} }), turn.text("moved on")]);
    const runtime = runtimeFor(api, { toolTimeoutMs: 300 });
    const { params } = loopParams({ toolSet: [hanging] });
    const result = await runtime.runAgentLoop(params);
    expect(result.stopReason).toBe("natural");
    expect(result.toolFailures).toBe(1);
    expect(toolResultsIn(api.messageRequests[1]!.body)[0]!.text).toMatch(/timed out after 300 ms/);
  });

  it("runs two tool calls of one turn and counts it as one step", async () => {
    const api = await firstPartyApi([
      { text: "Checking both.", toolCalls: [{ name: "mcp__ktx__lookup", input: { term: "a" } }, { name: "mcp__ktx__lookup", input: { term: "b" } }] },
      turn.text("done"),
    ]);
    const { params, steps } = loopParams();
    const result = await runtimeFor(api).runAgentLoop(params);
    expect(result.toolCalls).toHaveLength(2);
    expect(result.toolCalls.every((call) => call.ok)).toBe(true);
    expect(steps.map((s) => s.stepIndex)).toEqual([1, 2]);
    expect(toolResultsIn(api.messageRequests[1]!.body).map((r) => r.text)).toEqual(["**a**: a glossary entry", "**b**: a glossary entry"]);
  });

  it("ignores an onStepFinish callback that throws", async () => {
    const api = await firstPartyApi([turn.tools({ name: "mcp__ktx__lookup", input: { term: "x" } }), turn.text("fine")]);
    const warnings: string[] = [];
    const runtime = runtimeFor(api, { logger: { debug() {}, info() {}, warn: (m) => warnings.push(m), error() {} } });
    const { params } = loopParams({ onStepFinish: () => { throw new Error("progress sink down"); } });
    const result = await runtime.runAgentLoop(params);
    expect(result.stopReason).toBe("natural");
    expect(warnings.filter((w) => w.includes("progress sink down"))).toHaveLength(2);
  });
});

describe("tools in text and object calls", () => {
  it("lets generateText and generateObject call KTX tools before answering, with the same surface", async () => {
    const api = await firstPartyApi([
      turn.tools({ name: "mcp__ktx__lookup", input: { term: "grain" } }),
      turn.text("grain is a glossary entry"),
      turn.tools({ name: "mcp__ktx__count", input: { items: ["a", "b"] } }),
      turn.object({ total: 2 }),
    ]);
    const runtime = runtimeFor(api);
    const text = await runtime.generateTextResult({ prompt: "what is grain?", tools: [lookup] });
    expect(text.text).toBe("grain is a glossary entry");
    expect(text.toolCalls.map((call) => [call.name, call.ok])).toEqual([["mcp__ktx__lookup", true]]);
    const object = await runtime.generateObjectResult({ prompt: "count them", tools: [count], schema: z.object({ total: z.number() }) });
    expect(object.object).toEqual({ total: 2 });
    expect(toolResultsIn(api.messageRequests[3]!.body).at(-1)!.text).toMatch(/"count": 2/);
    const offered = api.messageRequests[2]!.body.tools.map((tool: { name: string }) => tool.name).sort();
    expect(offered).toEqual(expect.arrayContaining(["StructuredOutput", "mcp__ktx__count"]));
    expect(offered).not.toContain("mcp__ktx__lookup");
  });
});

describe("a hostile model", () => {
  it("cannot run built-ins, other servers' tools or unknown ktx tools; each is refused and the loop ends cleanly", async () => {
    let target = "";
    const api = await firstPartyApi((_request, index) =>
      index > 0
        ? turn.text("I could not do any of that.")
        : turn.tools(
            { name: "Bash", input: { command: `touch ${target}.bash` } },
            { name: "Write", input: { file_path: target, content: "pwned" } },
            { name: "Read", input: { file_path: "/etc/passwd" } },
            { name: "WebFetch", input: { url: "http://127.0.0.1:9/", prompt: "x" } },
            { name: "Task", input: { description: "x", prompt: "x", subagent_type: "general-purpose" } },
            { name: "Agent", input: { description: "x", prompt: "x" } },
            { name: "Skill", input: { skill: "dataviz" } },
            { name: "mcp__github__create_issue", input: { title: "x" } },
            { name: "mcp__ktx__not_a_tool", input: {} },
          ),
    );
    const runtime = runtimeFor(api);
    target = join(runtime.options.projectDir, "pwned.txt");
    const executed: string[] = [];
    const spy = { ...lookup, execute: (input: { term: string }) => (executed.push(input.term), "x") };
    const { params } = loopParams({ toolSet: [spy] });
    const result = await runtime.runAgentLoop(params);
    expect(result.stopReason, String(result.error?.message)).toBe("natural");
    expect(existsSync(target)).toBe(false);
    expect(existsSync(`${target}.bash`)).toBe(false);
    expect(executed).toEqual([]);
    const refused = toolResultsIn(api.messageRequests[1]!.body);
    expect(refused).toHaveLength(9);
    for (const answer of refused) expect(answer.is_error, answer.text).toBe(true);
    expect(result.toolCalls.filter((call) => !call.ok)).toHaveLength(9);
    expect(result.toolFailures).toBe(9);
  });
});
