/**
 * A session's compaction on the real CLI (scripted API, first-party path behind the interceptor): a
 * response whose usage nears the session's auto-compact window makes the CLI summarise the conversation
 * before the next turn; the summary request passes the wire check, the turn reports a `compact` event, and
 * the next requests carry the summary in place of the earlier turns.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ClaudeCodeApiError, ClaudeCodeHost, type ClaudeCodeHostOptions, InvalidInputError, type SessionEvent, type SessionTurn } from "../../src/index.js";
import { RateLimitGovernor } from "../../src/limits/governor.js";
import { wireShapeFor } from "../../src/claude-code/wire/shape.js";
import { type RecordedRequest, type ScriptedTurn, turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, callRecords, cleanup, cliOption, cliVersionInUse, firstPartyApi, firstPartyEnv, remainingChildren, tempDir } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const SUMMARY = "The user greeted the assistant (case=t1) and asked about grain; the lookup tool said it is the level of detail of one row.";

const textsOf = (request: RecordedRequest): string[] =>
  (request.body?.messages ?? []).flatMap((message: { content?: unknown }) =>
    typeof message.content === "string" ? [message.content] : ((message.content ?? []) as Array<{ type?: string; text?: string }>).filter((block) => block.type === "text").map((block) => block.text ?? ""),
  );
const lastText = (request: RecordedRequest): string => textsOf(request).at(-1) ?? "";
/** The version's summary instructions, as recorded in its shape (`fixtures record-wire`). */
let prompts: readonly string[] = [];
beforeAll(async () => {
  prompts = wireShapeFor(await cliVersionInUse())?.compaction?.prompts ?? [];
  expect(prompts.length).toBeGreaterThan(0);
});
// What the CLI classes a summary request, with the recorded instructions as its last user turn.
const isSummaryRequest = (request: RecordedRequest) => request.headers["x-claude-code-request-class"] === "compaction" && prompts.includes(lastText(request));

function script(request: RecordedRequest): ScriptedTurn {
  if (isSummaryRequest(request)) return turn.text(`<analysis>Two turns so far.</analysis>\n\n<summary>\n${SUMMARY}\n</summary>`);
  const texts = textsOf(request).join("\n");
  const last = [...texts.matchAll(/case=(\w+)/g)].at(-1)?.[1];
  const toolDone = (request.body?.messages ?? []).some((message: { content?: unknown }) => Array.isArray(message.content) && message.content.some((block: { type?: string }) => block.type === "tool_result"));
  switch (last) {
    case "t1":
      return turn.text("one");
    case "t2":
      // The second step's usage nears the session's window (100k): the CLI compacts before the next turn.
      return toolDone ? { text: "two", usage: { input_tokens: 190_000 } } : { toolCalls: [{ name: "mcp__ktx__lookup", input: { term: "grain" }, id: "toolu_c2" }] };
    case "t3":
      return turn.text("three");
    case "t4":
      return turn.text("four");
    default:
      return turn.text(`unexpected ${last}`);
  }
}

const tools = {
  lookup: { description: "Look a term up.", inputSchema: z.object({ term: z.string() }), execute: async ({ term }: { term: string }) => `${term}: the level of detail of one row` },
};

async function drain(turnRun: SessionTurn): Promise<SessionEvent[]> {
  const events: SessionEvent[] = [];
  for await (const event of turnRun) events.push(event);
  return events;
}

describe("session compaction", () => {
  it("compacts near the window: the summary request passes the wire check, a compact event, and the next turns carry the summary instead of the earlier turns", { timeout: 240_000 }, async () => {
    const api = await firstPartyApi(script);
    const options: ClaudeCodeHostOptions = {
      projectDir: tempDir("project"),
      env: firstPartyEnv(api),
      passEnv: TEST_PASS_ENV,
      ...cliOption(),
      idleTimeoutMs: 30_000,
      warm: false,
      rateLimitGovernor: new RateLimitGovernor(),
      transcript: { dir: tempDir("transcripts") },
    };
    const host = new ClaudeCodeHost(options);
    expect(host.interceptor).toBe("on");
    const session = host.createSession({ model: "sonnet", system: "You are a chat assistant.", tools, compaction: { windowTokens: 100_000 } });
    try {
      expect((await session.send("case=t1 hello").result).text).toBe("one");
      const [pid] = host.reusePids;
      const second = session.send("case=t2 what is grain?");
      const secondEvents = await drain(second);
      expect((await second.result).text).toBe("two");
      expect(secondEvents.some((event) => event.type === "compact")).toBe(false);

      // Turn 3: the CLI summarises first (the summary request, checked and forwarded), then sends the turn.
      const third = session.send("case=t3 and now?");
      const thirdEvents = await drain(third);
      const thirdResult = await third.result;
      expect(thirdResult.text).toBe("three");
      const compact = thirdEvents.find((event) => event.type === "compact");
      expect(compact).toMatchObject({ type: "compact", trigger: "auto" });
      expect((compact as { preTokens?: number }).preTokens).toBeGreaterThan(100_000);
      expect(host.reusePids).toEqual([pid]);

      const summaryRequests = api.messageRequests.filter(isSummaryRequest);
      expect(summaryRequests).toHaveLength(1);
      // The summary request: the conversation so far (turns 1 and 2 with the tool's result), then the instructions.
      const summaryTexts = textsOf(summaryRequests[0]!).join("\n");
      expect(summaryTexts).toContain("case=t1 hello");
      expect(summaryTexts).toContain("case=t2 what is grain?");
      expect(summaryTexts).not.toContain("case=t3");
      // Same model, system and tools as the turns' requests.
      const turnRequest = api.messageRequests.at(-1)!;
      expect(summaryRequests[0]!.body.model).toBe(turnRequest.body.model);
      expect(summaryRequests[0]!.body.tools).toEqual(turnRequest.body.tools);

      // Turn 3's request: the summary in place of turns 1 and 2.
      const turn3Texts = textsOf(turnRequest).join("\n");
      expect(turn3Texts).toContain(`Summary:\n${SUMMARY}`);
      expect(turn3Texts).toContain("case=t3 and now?");
      expect(turn3Texts).not.toContain("case=t1 hello");
      expect(turn3Texts).not.toContain("case=t2 what is grain?");
      expect(JSON.stringify(turnRequest.body.messages)).not.toContain("toolu_c2");

      // Turn 4 goes on from the summary: it carries the summary, turn 3 and its answer, and passes the check too.
      const fourth = session.send("case=t4 last one");
      const fourthResult = await fourth.result;
      expect(fourthResult.text).toBe("four");
      // Its cost does include the summary request (a larger request than the turn's own): more than twice a like turn's without one.
      expect(thirdResult.costUsd).toBeGreaterThan(fourthResult.costUsd * 2);
      const turn4Texts = textsOf(api.messageRequests.at(-1)!).join("\n");
      expect(turn4Texts).toContain(`Summary:\n${SUMMARY}`);
      expect(turn4Texts).toContain("case=t3 and now?");
      expect(turn4Texts).not.toContain("case=t1 hello");
      expect(api.messageRequests.filter(isSummaryRequest)).toHaveLength(1);
      expect(host.reusePids).toEqual([pid]);

      // One transcript for the session, a call record per turn: turn 3's holds the compaction (its line, and the summary request among the call's requests, marked).
      const dir = options.transcript!.dir;
      const files = readdirSync(dir).sort().map((file) => join(dir, file));
      expect(files).toHaveLength(1);
      const calls = callRecords(files[0]!);
      expect(calls).toHaveLength(4);
      const compacting = calls[2];
      expect(compacting.requests.map((request: { status?: number; compaction?: boolean }) => [request.status, request.compaction ?? false])).toEqual([
        [200, true],
        [200, false],
      ]);
      expect(compacting.refused).toEqual([]);
      // The turn's usage is its own request's, not the summary request's too (the CLI leaves that out).
      expect(thirdResult.usage.inputTokens).toBe(compacting.requests[1].usage.input_tokens);
      expect(calls[3].requests.map((request: { compaction?: boolean }) => request.compaction ?? false)).toEqual([false]);
      const shown = await execa(process.execPath, ["dist/cli/main.js", "transcript", "show", files[0]!]);
      expect(shown.stdout).toMatch(/COMPACTED the conversation \(auto\): \d+ -> \d+ tokens/);
    } finally {
      await session.close();
      await host.close();
    }
    expect(await remainingChildren()).toEqual([]);
  });

  it("by default compacts when the API refuses a prompt too long, and the turn goes on from the summary", { timeout: 240_000 }, async () => {
    const REACTIVE_SUMMARY = "The user said hello and got an answer.";
    let refused = false;
    const api = await firstPartyApi((request) => {
      if (isSummaryRequest(request)) return turn.text(`<analysis>One turn so far.</analysis>\n<summary>\n${REACTIVE_SUMMARY}\n</summary>`);
      const last = [...textsOf(request).join("\n").matchAll(/case=(\w+)/g)].at(-1)?.[1];
      if (last === "t2" && !refused) {
        refused = true;
        return { error: { status: 400, type: "invalid_request_error", message: "prompt is too long: 250000 tokens > 200000 maximum" } };
      }
      return turn.text(last === "t1" ? "one" : last === "t2" ? "two" : `unexpected ${last}`);
    });
    const host = new ClaudeCodeHost({ projectDir: tempDir("project"), env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
    const session = host.createSession({ model: "sonnet" });
    try {
      expect((await session.send("case=t1 hello").result).text).toBe("one");
      const second = session.send("case=t2 go on");
      const events = await drain(second);
      expect((await second.result).text).toBe("two");
      expect(events.find((event) => event.type === "compact")).toMatchObject({ type: "compact", trigger: "auto" });
      // The refused request, the summary request (checked and forwarded), the turn again from the summary.
      expect(api.messageRequests.map((request) => (isSummaryRequest(request) ? "summary" : (textsOf(request).join("\n").match(/case=\w+/g) ?? []).join("+")))).toEqual(["case=t1", "case=t1+case=t2", "summary", "case=t2"]);
      expect(textsOf(api.messageRequests.at(-1)!).join("\n")).toContain(`Summary:\n${REACTIVE_SUMMARY}`);
    } finally {
      await session.close();
      await host.close();
    }
  });

  it("with compaction off, a prompt too long fails the turn and nothing is summarised", { timeout: 240_000 }, async () => {
    const api = await firstPartyApi((request) => {
      const last = [...textsOf(request).join("\n").matchAll(/case=(\w+)/g)].at(-1)?.[1];
      if (last === "t2") return { error: { status: 400, type: "invalid_request_error", message: "prompt is too long: 250000 tokens > 200000 maximum" } };
      return turn.text(last === "t1" ? "one" : `unexpected ${last}`);
    });
    const host = new ClaudeCodeHost({ projectDir: tempDir("project"), env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
    const session = host.createSession({ model: "sonnet", compaction: "off" });
    try {
      expect((await session.send("case=t1 hello").result).text).toBe("one");
      const error = (await session.send("case=t2 go on").result.catch((thrown: unknown) => thrown)) as Error;
      expect(error).toBeInstanceOf(ClaudeCodeApiError);
      expect(error.message).toMatch(/too long/);
      expect(api.messageRequests.filter(isSummaryRequest)).toEqual([]);
      expect(() => host.createSession({ model: "sonnet", compaction: { windowTokens: 10 } })).toThrow(InvalidInputError);
    } finally {
      await session.close();
      await host.close();
    }
  });

  it("compacts inside a session's first turn, between two model responses, and the turn goes on from the summary", { timeout: 240_000 }, async () => {
    const FIRST_SUMMARY = "The user asked about grain; the lookup tool was called.";
    const api = await firstPartyApi((request) => {
      if (isSummaryRequest(request)) return turn.text(`<analysis>A tool call.</analysis>\n<summary>\n${FIRST_SUMMARY}\n</summary>`);
      const toolDone = JSON.stringify(request.body?.messages ?? []).includes('"tool_result"') || textsOf(request).join("\n").includes(FIRST_SUMMARY);
      // The tool call's response is past the window: the CLI compacts before it sends the tool's result.
      return toolDone ? turn.text("grain is one row") : { toolCalls: [{ name: "mcp__ktx__lookup", input: { term: "grain" }, id: "toolu_f1" }], usage: { input_tokens: 190_000 } };
    });
    const host = new ClaudeCodeHost({ projectDir: tempDir("project"), env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
    const session = host.createSession({ model: "sonnet", tools, compaction: { windowTokens: 100_000 } });
    try {
      const first = session.send("case=f1 what is grain?");
      const events = await drain(first);
      const result = await first.result;
      expect(result.text).toBe("grain is one row");
      const kinds = events.map((event) => event.type);
      expect(kinds.filter((type) => ["tool_call", "tool_result", "compact"].includes(type))).toEqual(["tool_call", "tool_result", "compact"]);
      expect(events.find((event) => event.type === "compact")).toMatchObject({ trigger: "auto" });
      expect(api.messageRequests.map((request) => (isSummaryRequest(request) ? "summary" : "turn"))).toEqual(["turn", "summary", "turn"]);
      // The summary request carried the tool's result before the instructions; the next request only the summary, for the prompt and the tool's result.
      expect(JSON.stringify(api.messageRequests[1]!.body.messages)).toContain("grain: the level of detail of one row");
      const after = textsOf(api.messageRequests.at(-1)!).join("\n");
      expect(after).toContain(`Summary:\n${FIRST_SUMMARY}`);
      expect(after).not.toContain("case=f1");
      expect(JSON.stringify(api.messageRequests.at(-1)!.body.messages)).not.toContain("tool_result");
      // The turn's process goes on: a second turn from the summary.
      expect((await session.send("case=f2 thanks").result).text).toBe("grain is one row");
    } finally {
      await session.close();
      await host.close();
    }
  });
});
