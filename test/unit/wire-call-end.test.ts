/**
 * A call's end on the host's side of the interceptor (src/claude-code/wire/interceptor-process.ts,
 * HostWireSession): the process pushes a call's records when an answer ends the model's turn, so a call
 * whose model responses are all matched by records ends without a round trip; otherwise the process is
 * asked, and its answer is the whole list. And which answers end a turn (records.ts).
 */
import { describe, expect, it } from "vitest";
import { HostWireSession, type InterceptorProcess } from "../../src/claude-code/wire/interceptor-process.js";
import type { FromProcess, ToProcess } from "../../src/claude-code/wire/process-protocol.js";
import { RequestMeter, type RequestRecord } from "../../src/claude-code/wire/records.js";

const record = (total: number): RequestRecord => ({ bytes: { total, system: 0, messages: 0, tools: 0, rest: total }, betas: [] });
const expectation = { model: "claude-sonnet-4-6", system: "s", prompt: "p", tools: [], cwd: ["/tmp/project"] };

/** A stand-in for the process's host side: what the session posts and asks, and the process's answer to an end. */
function fakeOwner(answer: { forwarded: number; records: RequestRecord[] }) {
  const posted: ToProcess[] = [];
  const asked: ToProcess[] = [];
  let call = 0;
  const owner = {
    nextCallId: () => ++call,
    running: () => {},
    post: (message: ToProcess) => posted.push(message),
    ask: async (make: (reply: number) => ToProcess): Promise<FromProcess> => {
      const message = make(7);
      asked.push(message);
      return { type: "ended", reply: 7, ...answer };
    },
  };
  return { owner: owner as unknown as InterceptorProcess, posted, asked };
}

describe("a call's end on the host's side of the interceptor", () => {
  it("needs no round trip when the pushed records match the call's model responses, and notes the end", async () => {
    const { owner, posted, asked } = fakeOwner({ forwarded: 0, records: [] });
    const session = new HostWireSession("s1", {}, owner);
    session.beginCall(expectation, () => {});
    session.recorded(1, [record(100), record(200)]);
    session.refused("POST api.anthropic.com/api/event_logging/v2/batch");
    const ended = await session.endCall(2);
    expect(asked).toEqual([]);
    expect(ended).toEqual({ forwarded: 2, records: [record(100), record(200)], refusals: ["POST api.anthropic.com/api/event_logging/v2/batch"] });
    // The process still hears of the end (its call state goes), without being asked for an answer.
    expect(posted.at(-1)).toEqual({ type: "end", session: "s1", call: 1 });
  });

  it("asks the process when records are missing (still on their way, or a request went around it), and takes its whole list", async () => {
    const { owner, asked } = fakeOwner({ forwarded: 2, records: [record(100), record(200)] });
    const session = new HostWireSession("s1", {}, owner);
    session.beginCall(expectation, () => {});
    session.recorded(1, [record(100)]);
    const ended = await session.endCall(2);
    expect(asked).toEqual([{ type: "end", session: "s1", call: 1, reply: 7 }]);
    expect(ended.forwarded).toBe(2);
    expect(ended.records).toEqual([record(100), record(200)]);
  });

  it("asks at a failed call's end (no count of responses), and keeps a record of another call out", async () => {
    const { owner, asked } = fakeOwner({ forwarded: 0, records: [] });
    const session = new HostWireSession("s1", {}, owner);
    session.beginCall(expectation, () => {});
    await session.endCall();
    expect(asked).toHaveLength(1);
    session.beginCall(expectation, () => {});
    // A late record of call 1 arrives while call 2 runs: it is not call 2's.
    session.recorded(1, [record(100)]);
    const ended = await session.endCall(1);
    expect(asked).toHaveLength(2);
    expect(ended.records).toEqual([]);
  });
});

describe("which answers end the model's turn (the process pushes a call's records then)", () => {
  const sse = (events: object[]) => Buffer.from(events.map((event) => `event: x\ndata: ${JSON.stringify(event)}\n\n`).join(""));
  const meter = (answer: Buffer, contentType: string) => {
    let told: boolean | undefined;
    const made = new RequestMeter(Buffer.from("{}"), {}, {}, performance.now(), false, (endsTurn) => (told = endsTurn));
    made.headers(200, { "content-type": contentType });
    made.chunk(answer);
    made.end();
    return told;
  };
  const start = { type: "message_start", message: { usage: { input_tokens: 3 } } };
  const stop = (reason: string) => ({ type: "message_delta", delta: { stop_reason: reason }, usage: { output_tokens: 5 } });

  it("a streamed answer: end_turn (and any stop reason but tool_use) ends it; a tool call does not, unless it is StructuredOutput", () => {
    expect(meter(sse([start, stop("end_turn")]), "text/event-stream")).toBe(true);
    expect(meter(sse([start, stop("max_tokens")]), "text/event-stream")).toBe(true);
    expect(meter(sse([start, { type: "content_block_start", index: 0, content_block: { type: "tool_use", name: "mcp__ktx__echo" } }, stop("tool_use")]), "text/event-stream")).toBe(false);
    expect(meter(sse([start, { type: "content_block_start", index: 0, content_block: { type: "tool_use", name: "StructuredOutput" } }, stop("tool_use")]), "text/event-stream")).toBe(true);
  });

  it("a whole JSON answer by its stop reason; an error answer, a cut stream and a failed request never", () => {
    expect(meter(Buffer.from(JSON.stringify({ stop_reason: "end_turn", content: [], usage: {} })), "application/json")).toBe(true);
    expect(meter(Buffer.from(JSON.stringify({ type: "error", error: { type: "overloaded_error" } })), "application/json")).toBe(false);
    expect(meter(sse([start]), "text/event-stream")).toBe(false);
    let told: boolean | undefined;
    new RequestMeter(Buffer.from("{}"), {}, {}, performance.now(), false, (endsTurn) => (told = endsTurn)).fail("socket hang up");
    expect(told).toBe(false);
  });
});
