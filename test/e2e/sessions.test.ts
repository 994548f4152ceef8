/**
 * Sessions on the real CLI (scripted API), on the first-party path behind the runtime's interceptor as
 * real use runs them: turns on one pinned process that keeps the conversation, each later turn's
 * request carrying the earlier ones and passing the wire check, events while a turn runs, an interrupt
 * and an API error the session survives, and close() giving the process back to the pool as a process
 * that served none of the conversation.
 */
import { readdirSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AbortError, ClaudeCodeApiError, ClaudeCodeHost, CliCrashError, type ClaudeCodeHostOptions, ClaudeCodeRuntime, InvalidInputError, SessionBusyError, SessionClosedError, type SessionEvent, type SessionTurn } from "../../src/index.js";
import { RateLimitGovernor } from "../../src/limits/governor.js";
import { resolveModelValue } from "../../src/claude-code/models.js";
import { type RecordedRequest, type ScriptedTurn, turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, callRecords, cleanup, cliOption, firstPartyApi, firstPartyEnv, remainingChildren, tempDir, toolResultsIn } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const SYSTEM = "You are a chat assistant.";

/** The text of a user message's text blocks. */
function textOf(message: { content?: unknown }): string {
  return typeof message.content === "string" ? message.content : ((message.content ?? []) as Array<{ type?: string; text?: string }>).map((part) => (part.type === "text" ? (part.text ?? "") : "")).join("");
}

/** The turn a request belongs to (the last user message with a `case=`) and its step within that turn. */
function turnOf(request: RecordedRequest): { name: string; step: number } {
  const messages: Array<{ role: string; content?: unknown }> = request.body?.messages ?? [];
  let at = -1;
  let name = "unknown";
  messages.forEach((message, index) => {
    // The last `case=` of the message: after a failed turn the CLI sends the next prompt in the same user message.
    const found = message.role === "user" ? [...textOf(message).matchAll(/case=(\w+)/g)].at(-1) : undefined;
    if (found) [at, name] = [index, found[1]!];
  });
  return { name, step: messages.slice(at + 1).filter((message) => message.role === "assistant").length };
}

function script(request: RecordedRequest): ScriptedTurn {
  const { name, step } = turnOf(request);
  switch (name) {
    case "t1":
      return turn.text("one");
    case "t2":
      return step === 0 ? { toolCalls: [{ name: "mcp__ktx__lookup", input: { term: "grain" }, id: "toolu_t2" }] } : turn.text("two");
    case "t3":
      return turn.text("three");
    case "slow":
      return { text: "a long answer still streaming when the user interrupts it", chunkDelayMs: 400 };
    case "t4":
      return turn.text("four");
    case "e500":
      return turn.error(500, "scripted failure", { "x-should-retry": "false" });
    default:
      return turn.text(`unexpected ${name}`);
  }
}

const tools = {
  lookup: { description: "Look a term up.", inputSchema: z.object({ term: z.string() }), execute: async ({ term }: { term: string }) => `${term}: the level of detail of one row` },
};

/** What may differ between two processes: the session id and per-request random ids. */
function normalized(request: RecordedRequest): unknown {
  const headers = { ...request.headers };
  const session = String(headers["x-claude-code-session-id"] ?? "");
  delete headers["x-client-request-id"];
  // First party, 2.1.330 names the MCP tools its session has used in this header, and a rewind does not
  // forget them: after the session's tool call the reused process lists `lookup` where a fresh one lists none.
  delete headers["x-claude-code-sandy-plover"];
  delete headers["x-claude-code-prompt-id"];
  // The body is compared below, without the account context reminder (which changes its length).
  delete headers["content-length"];
  // First party: the billing line's per-request hash and prompt id.
  // The account context reminder (the user's email) comes once the CLI's OAuth profile request has answered,
  // which races the first Messages request of a fresh process: whether a request has it is timing, not the process.
  const body = structuredClone(request.body) as { messages?: Array<{ content?: unknown }> };
  for (const message of body.messages ?? []) {
    if (Array.isArray(message.content)) message.content = message.content.filter((block: { text?: string }) => !block.text?.startsWith("<system-reminder>\nAs you answer the user's questions, you can use the following context:"));
  }
  const text = JSON.stringify({ headers, body }).replace(/cch=[0-9a-f]+/g, "cch=<hash>").replace(/cc_prompt_id=[0-9a-f-]+/g, "cc_prompt_id=<id>");
  return JSON.parse(session ? text.split(session).join("<session>") : text);
}

async function drain(turnRun: SessionTurn): Promise<SessionEvent[]> {
  const events: SessionEvent[] = [];
  for await (const event of turnRun) events.push(event);
  return events;
}

describe("sessions", () => {
  it("keeps the conversation on one process across turns, survives an interrupt, and gives the process back on close", { timeout: 240_000 }, async () => {
    const api = await firstPartyApi(script);
    const options: ClaudeCodeHostOptions = {
      projectDir: tempDir("project"),
      env: firstPartyEnv(api),
      passEnv: TEST_PASS_ENV,
      ...cliOption(),
      idleTimeoutMs: 30_000,
      warm: false,
      rateLimitGovernor: new RateLimitGovernor(),
    };
    const host = new ClaudeCodeHost(options);
    expect(host.interceptor).toBe("on");
    // Compaction off: a process with the CLI's auto-compaction never serves a KTX call, and this test hands it to one after close().
    const session = host.createSession({ model: "sonnet", system: SYSTEM, tools, compaction: "off" });

    // Turn 1: its text streams as deltas, the iteration ends with the turn.
    const first = session.send("case=t1 hello");
    const firstEvents = await drain(first);
    expect((await first.result).text).toBe("one");
    expect(firstEvents.filter((event) => event.type === "text_delta").map((event) => (event as { text: string }).text).join("")).toBe("one");
    const [pid] = host.reusePids;
    expect(pid).toBeDefined();

    // Turn 2: a tool call and its result as events.
    const second = session.send("case=t2 what is grain?");
    const secondEvents = await drain(second);
    const secondResult = await second.result;
    expect(secondResult).toMatchObject({ text: "two", stopReason: "natural" });
    expect(secondResult.toolCalls.map((call) => [call.name, call.ok])).toEqual([["mcp__ktx__lookup", true]]);
    expect(secondEvents).toEqual(expect.arrayContaining([expect.objectContaining({ type: "tool_call", name: "mcp__ktx__lookup", input: { term: "grain" } }), expect.objectContaining({ type: "tool_result", name: "mcp__ktx__lookup", ok: true })]));

    // Turn 3: its request carries turns 1 and 2, the tool result included, on the same process.
    expect((await session.send("case=t3 thanks").result).text).toBe("three");
    const third = api.messageRequests.at(-1)!;
    const messages: Array<{ role: string; content?: unknown }> = third.body.messages;
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant", "user"]);
    expect(textOf(messages[0]!)).toContain("case=t1 hello");
    expect(JSON.stringify(messages[1])).toContain("one");
    expect(textOf(messages[2]!)).toContain("case=t2 what is grain?");
    expect(toolResultsIn({ messages: [messages[4]] }).map((result) => result.text)).toEqual(["grain: the level of detail of one row"]);
    expect(JSON.stringify(messages[5])).toContain("two");
    expect(textOf(messages[6]!)).toContain("case=t3 thanks");
    expect(host.reusePids).toEqual([pid]);
    expect(host.poolStats).toMatchObject({ started: 1 });

    // Interrupt mid-stream: the turn fails with AbortError, a second send meanwhile is refused, the next turn goes on without it.
    const before = api.messageRequests.length;
    const slow = session.send("case=slow tell me a long story");
    expect(() => session.send("case=t4 too early")).toThrow(SessionBusyError);
    while (api.messageRequests.length === before) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 200));
    session.interrupt();
    await expect(slow.result).rejects.toBeInstanceOf(AbortError);
    expect((await session.send("case=t4 shorter then").result).text).toBe("four");
    const fourth = api.messageRequests.at(-1)!;
    expect(JSON.stringify(fourth.body.messages)).toContain("case=t3 thanks");
    expect(JSON.stringify(fourth.body.messages)).not.toContain("case=slow");
    expect(host.reusePids).toEqual([pid]);
    expect(session.history.map((record) => [record.input.split(" ")[0], record.result?.text ?? record.error?.name])).toEqual([
      ["case=t1", "one"],
      ["case=t2", "two"],
      ["case=t3", "three"],
      ["case=slow", "AbortError"],
      ["case=t4", "four"],
    ]);

    // close(): the process is rewound to before turn 1 and idle in the pool; a KTX call of the same shape
    // on the same host runs on it and sends exactly what it sends on a fresh process.
    await session.close();
    expect(() => session.send("case=t1 again")).toThrow(SessionClosedError);
    expect(host.poolStats.retired).toEqual({});
    expect(host.reusePids).toEqual([pid]);
    const ktx = new ClaudeCodeRuntime({ host, models: { default: "sonnet" }, includePartialMessages: true });
    const atReuse = api.messageRequests.length;
    const reused = await ktx.generateTextResult({ prompt: "case=t1 hello", system: SYSTEM, tools });
    expect(reused).toMatchObject({ text: "one", warmStart: true });
    expect(host.reusePids).toEqual([pid]);
    const reusedRequests = api.messageRequests.slice(atReuse);
    const fresh = new ClaudeCodeRuntime({ ...options, models: { default: "sonnet" }, includePartialMessages: true, reuse: false });
    const atFresh = api.messageRequests.length;
    await fresh.generateTextResult({ prompt: "case=t1 hello", system: SYSTEM, tools });
    const freshRequests = api.messageRequests.slice(atFresh);
    expect(reusedRequests).toHaveLength(1);
    expect(reusedRequests.map(normalized)).toEqual(freshRequests.map(normalized));

    await fresh.close();
    await host.close();
    expect(await remainingChildren()).toEqual([]);
  });

  it("a process killed mid-turn ends the turn with a typed error at once; the next turn runs on a new process with the earlier turns replayed; nothing is left", { timeout: 180_000 }, async () => {
    const api = await firstPartyApi(script);
    const host = new ClaudeCodeHost({ projectDir: tempDir("project"), env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
    const session = host.createSession({ model: "sonnet", system: SYSTEM, tools });
    expect((await session.send("case=t1 hello").result).text).toBe("one");
    // An API error fails its turn; the process and the conversation go on.
    const failed = await session.send("case=e500 please").result.catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ClaudeCodeApiError);
    const second = await session.send("case=t2 what is grain?").result;
    expect([second.text, second.history]).toEqual(["two", "native"]);
    // The failed turn's prompt stayed in the conversation: the CLI sends the next prompt in the same user message.
    const afterError: Array<{ role: string; content?: unknown }> = api.messageRequests.filter((request) => turnOf(request).name === "t2")[0]!.body.messages;
    expect(afterError.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
    expect(textOf(afterError[2]!)).toMatch(/case=e500 please\s+case=t2 what is grain\?$/);
    const [pid] = host.reusePids;
    const before = api.messageRequests.length;
    const slow = session.send("case=slow tell me a story");
    while (api.messageRequests.length === before) await new Promise((resolve) => setTimeout(resolve, 10));
    const killedAt = performance.now();
    process.kill(pid!, "SIGKILL");
    const crash = await slow.result.catch((error: unknown) => error);
    expect(performance.now() - killedAt).toBeLessThan(1000);
    expect(crash).toBeInstanceOf(CliCrashError);
    expect((crash as CliCrashError).signal).toBe("SIGKILL");
    expect(await remainingChildren()).not.toContain(pid);

    // The next turn: another process, whose one prompt writes out the turns that completed (not the failed or killed ones).
    const next = await session.send("case=t4 still there?").result;
    expect([next.text, next.history]).toEqual(["four", "replayed"]);
    expect(host.reusePids).not.toContain(pid);
    const replayed: Array<{ role: string; content?: unknown }> = api.messageRequests.at(-1)!.body.messages;
    expect(replayed.filter((message) => message.role !== "system")).toHaveLength(1);
    const prompt = textOf(replayed[0]!);
    expect(prompt).toContain("User: case=t1 hello\n\nAssistant: one");
    expect(prompt).toContain('Assistant called tool mcp__ktx__lookup with {"term":"grain"}; it returned: grain: the level of detail of one row');
    expect(prompt).toContain("User: case=t2 what is grain?");
    expect(prompt).not.toContain("case=e500");
    expect(prompt).not.toContain("case=slow");
    expect(prompt).toMatch(/<\/earlier_conversation>\n\ncase=t4 still there\?$/);
    // And the conversation goes on natively on the new process.
    expect((await session.send("case=t3 thanks").result).history).toBe("native");
    await session.close();
    expect(() => session.send("case=t1 again")).toThrow(SessionClosedError);
    await host.close();
    expect(await remainingChildren()).toEqual([]);
  });

  it("holds its process outside the idle budget between turns; host.close({ abortInFlight }) ends a running turn and an idle session's process", { timeout: 180_000 }, async () => {
    const api = await firstPartyApi(script);
    // No idle process may be kept at all, and one CLI may serve a call at a time: a session's process between turns is neither idle nor serving.
    const host = new ClaudeCodeHost({ projectDir: tempDir("project"), env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, ...cliOption(), warm: false, reuse: { maxIdle: 0 }, maxConcurrentRuns: 1, rateLimitGovernor: new RateLimitGovernor() });
    const idle = host.createSession({ model: "sonnet", system: SYSTEM });
    const busy = host.createSession({ model: "sonnet", system: "Another system prompt." });
    expect((await idle.send("case=t1 hello").result).text).toBe("one");
    expect((await idle.send("case=t3 thanks").result).text).toBe("three");
    // The other session's turn gets the one slot while the first session holds its process.
    expect((await busy.send("case=t1 hello").result).text).toBe("one");
    expect(host.poolStats).toMatchObject({ started: 2, retired: {} });
    expect(host.reusePids).toHaveLength(2);
    const before = api.messageRequests.length;
    const slow = busy.send("case=slow tell me a story");
    while (api.messageRequests.length === before) await new Promise((resolve) => setTimeout(resolve, 10));
    await host.close({ abortInFlight: true });
    await expect(slow.result).rejects.toBeInstanceOf(AbortError);
    expect(host.reusePids).toEqual([]);
    expect(host.poolStats.retired).toEqual({ "pool closed": 2 });
    expect(await remainingChildren()).toEqual([]);
  });

  it("runs behind the interceptor by default: every request of every turn passed its check and is in the session's one transcript, each turn between its records", { timeout: 180_000 }, async () => {
    const api = await firstPartyApi(script);
    const transcripts = tempDir("transcripts");
    const host = new ClaudeCodeHost({ projectDir: tempDir("project"), env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, ...cliOption(), warm: false, transcript: { dir: transcripts }, rateLimitGovernor: new RateLimitGovernor() });
    expect(host.interceptor).toBe("on");
    const session = host.createSession({ model: "sonnet", system: SYSTEM, tools });
    const texts: string[] = [];
    for (const input of ["case=t1 hello", "case=t2 what is grain?", "case=t3 thanks"]) texts.push((await session.send(input).result).text);
    expect(texts).toEqual(["one", "two", "three"]);
    // One transcript for the session, each turn's call record in it; the interceptor recorded each request it checked and forwarded, and answered 200.
    expect(readdirSync(transcripts)).toEqual([basename(session.transcriptPath!)]);
    const calls = callRecords(session.transcriptPath!);
    expect(calls.map((call) => call.process.call)).toEqual([1, 2, 3]);
    expect(calls.map((call) => call.requests.length).sort()).toEqual([1, 1, 2]);
    expect(calls.flatMap((call) => call.requests.map((request: { status?: number }) => request.status))).toEqual([200, 200, 200, 200]);
    expect(calls.flatMap((call) => call.refused)).toEqual([]);
    expect(api.messageRequests).toHaveLength(4);
    // The last request carried all three prompts, so the check accepted the conversation's earlier turns.
    expect(JSON.stringify(api.messageRequests.at(-1)!.body.messages)).toMatch(/case=t1 hello[\s\S]*case=t2 what is grain\?[\s\S]*case=t3 thanks/);
    expect(host.poolStats).toMatchObject({ started: 1, retired: {} });
    await session.close();
    // Each turn between its records, on the one process; the session's end last.
    const records = readFileSync(session.transcriptPath!, "utf8").trim().split("\n").map((line) => JSON.parse(line));
    expect(records.filter((record) => record.kind === "header")).toHaveLength(1);
    expect(records.filter((record) => record.kind === "turn").map((record) => [record.turn, record.process.pid])).toEqual([1, 2, 3].map((turn) => [turn, records[0].process.pid]));
    expect(records.filter((record) => record.kind === "turn_end").map((record) => record.outcome)).toEqual(["ok", "ok", "ok"]);
    expect(records.at(-1)).toMatchObject({ kind: "session_end", turns: 3 });
    await host.close();
    expect(await remainingChildren()).toEqual([]);
  });

  it("setModel between turns: the next turn's request has the new model, on the same process, with no extra API request", { timeout: 180_000 }, async () => {
    const api = await firstPartyApi(script);
    const host = new ClaudeCodeHost({ projectDir: tempDir("project"), env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
    const session = host.createSession({ model: "sonnet", system: SYSTEM });
    const first = await session.send("case=t1 hello").result;
    const [pid] = host.reusePids;
    expect(() => session.setModel("gpt-4o")).toThrow(InvalidInputError);
    session.setModel("opus");
    const second = await session.send("case=t3 thanks").result;
    expect(second.text).toBe("three");
    // The switch is a control request: the two turns made exactly two Messages requests, the second on the new model and carrying the first turn.
    expect(api.messageRequests.map((request) => request.body.model)).toEqual([resolveModelValue("sonnet")!.id, resolveModelValue("opus")!.id]);
    expect(JSON.stringify(api.messageRequests[1]!.body.messages)).toContain("case=t1 hello");
    expect(first.model).toBe(resolveModelValue("sonnet")!.id);
    expect(second.model).toBe(resolveModelValue("opus")!.id);
    // And back: the CLI records each switch as a `/model` exchange in the conversation, which the wire check admits for the model switched to.
    session.setModel("sonnet");
    expect((await session.send("case=t4 again").result).model).toBe(resolveModelValue("sonnet")!.id);
    expect(api.messageRequests).toHaveLength(3);
    expect(api.messageRequests[2]!.body.model).toBe(resolveModelValue("sonnet")!.id);
    const carried = JSON.stringify(api.messageRequests[2]!.body.messages);
    expect(carried).toContain(`Set model to \`${resolveModelValue("opus")!.id}\``);
    expect(carried).toContain(`Set model to \`${resolveModelValue("sonnet")!.id}\``);
    expect(host.reusePids).toEqual([pid]);
    expect(host.poolStats).toMatchObject({ started: 1, retired: {} });
    await session.close();
    expect(() => session.setModel("sonnet")).toThrow(SessionClosedError);
    await host.close();
    expect(await remainingChildren()).toEqual([]);
  });
});
