/**
 * What the interceptor takes from each answer it forwards (src/claude-code/wire/records.ts): the message
 * id, which the call's model responses are matched with (run/wire-binding.ts), and the content blocks
 * as the CLI assembles them from the stream, which later requests' assistant turns must be made of
 * (check-turns.ts); and the host's call end, which needs no round trip when every response id is matched.
 */
import { describe, expect, it } from "vitest";
import { HostWireSession, type InterceptorProcess } from "../../src/claude-code/wire/interceptor-process.js";
import type { ResponseContent } from "../../src/claude-code/wire/check.js";
import type { ToProcess } from "../../src/claude-code/wire/process-protocol.js";
import { RequestMeter, type RequestRecord } from "../../src/claude-code/wire/records.js";

const sse = (events: unknown[]) => Buffer.from(events.map((event) => `event: x\ndata: ${JSON.stringify(event)}\n\n`).join(""));

function meter(status: number, answer: Buffer, streamed = true): { record: RequestRecord; response?: ResponseContent } {
  let response: ResponseContent | undefined;
  const made = new RequestMeter(Buffer.from("{}"), {}, {}, performance.now(), false, (_endsTurn, seen) => (response = seen));
  made.headers(status, { "content-type": streamed ? "text/event-stream" : "application/json" });
  // Split mid-event, as a stream arrives.
  made.chunk(answer.subarray(0, 50));
  made.chunk(answer.subarray(50));
  made.end();
  return { record: made.record, ...(response ? { response } : {}) };
}

describe("the answers the interceptor forwards", () => {
  it("assembles a streamed answer's blocks (text, thinking with its signature, a tool call's input) and keeps its message id", () => {
    const { record, response } = meter(
      200,
      sse([
        { type: "message_start", message: { id: "msg_01", usage: { input_tokens: 3 } } },
        { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
        { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Let me " } },
        { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "think." } },
        { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "c2lnbmF0dXJl" } },
        { type: "content_block_stop", index: 0 },
        { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
        { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Hel" } },
        { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "lo" } },
        { type: "content_block_stop", index: 1 },
        { type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "toolu_1", name: "mcp__ktx__echo", input: {} } },
        { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '{"text":' } },
        { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '"a"}' } },
        { type: "content_block_stop", index: 2 },
        { type: "content_block_start", index: 3, content_block: { type: "tool_use", id: "toolu_2", name: "mcp__ktx__none", input: {} } },
        { type: "content_block_stop", index: 3 },
        { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 5 } },
        { type: "message_stop" },
      ]),
    );
    expect(record.messageId).toBe("msg_01");
    expect(response).toEqual({
      id: "msg_01",
      content: [
        { type: "thinking", thinking: "Let me think.", signature: "c2lnbmF0dXJl" },
        { type: "text", text: "Hello" },
        { type: "tool_use", id: "toolu_1", name: "mcp__ktx__echo", input: { text: "a" } },
        { type: "tool_use", id: "toolu_2", name: "mcp__ktx__none", input: {} },
      ],
    });
  });

  it("takes a JSON answer's content, and nothing from an error answer", () => {
    expect(meter(200, Buffer.from(JSON.stringify({ id: "msg_02", content: [{ type: "text", text: "hi" }], stop_reason: "end_turn" })), false).response).toEqual({ id: "msg_02", content: [{ type: "text", text: "hi" }] });
    const failed = meter(529, Buffer.from(JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "x" } })), false);
    expect(failed.response).toBeUndefined();
    expect(failed.record.messageId).toBeUndefined();
  });
});

describe("a call's end matched by message id", () => {
  function session() {
    const posted: ToProcess[] = [];
    const asked: ToProcess[] = [];
    let call = 0;
    const owner = {
      running: () => {},
      nextCallId: () => ++call,
      post: (message: ToProcess) => posted.push(message),
      ask: async (make: (reply: number) => ToProcess) => {
        asked.push(make(9));
        return { type: "ended", reply: 9, forwarded: 1, records: [{ bytes: { total: 1, system: 0, messages: 0, tools: 0, rest: 1 }, betas: [], messageId: "msg_checked" }] };
      },
    };
    const made = new HostWireSession("s1", {}, owner as unknown as InterceptorProcess);
    made.beginCall({ model: "m", system: "", prompt: "p", tools: [], cwd: ["/p"] }, () => {});
    return { made, asked };
  }
  const record = (messageId?: string): RequestRecord => ({ bytes: { total: 1, system: 0, messages: 0, tools: 0, rest: 1 }, betas: [], ...(messageId ? { messageId } : {}) });

  it("ends without a round trip when every response id is among the pushed records", async () => {
    const { made, asked } = session();
    made.recorded(1, [record(), record("msg_1")]);
    expect((await made.endCall(["msg_1"])).records).toHaveLength(2);
    expect(asked).toEqual([]);
  });

  it("asks the process when a response id is not among them, as many records as responses or not (the decoy)", async () => {
    const { made, asked } = session();
    made.recorded(1, [record("msg_checked")]);
    const ended = await made.endCall(["msg_around"]);
    expect(asked).toHaveLength(1);
    expect(ended.records.map((one) => one.messageId)).toEqual(["msg_checked"]);
  });
});

describe("what the call's tools returned, as the interceptor gets it", () => {
  it("a result's texts and a JSON-RPC error's message (2.1.330 hands the model that message alone), under the CLI's tool use id", async () => {
    const { recordToolOutput } = await import("../../src/claude-code/run/wire-binding.js");
    const got: Array<[string, string[]]> = [];
    const session = { toolOutput: async (id: string, texts: string[]) => void got.push([id, texts]) };
    const call = (id: string) => ({ method: "tools/call", params: { name: "echo", _meta: { "claudecode/toolUseId": id } } });
    await recordToolOutput(session, call("toolu_1"), { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "a" }, { type: "image", data: "x" }, { type: "text", text: "b" }] } });
    await recordToolOutput(session, call("toolu_2"), { jsonrpc: "2.0", id: 2, error: { code: -32603, message: "refine boom" } });
    await recordToolOutput(session, { method: "tools/list" }, { jsonrpc: "2.0", id: 3, result: { tools: [] } });
    expect(got).toEqual([
      ["toolu_1", ["a", "b"]],
      ["toolu_2", ["refine boom"]],
    ]);
  });
});

describe("the project dir the environment reminder is bound to", () => {
  it("is absolute (a relative one read from the host's cwd) and also with symlinks resolved", async () => {
    const { mkdtempSync, symlinkSync, realpathSync, rmSync } = await import("node:fs");
    const { join, relative, resolve } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const { expectationOf } = await import("../../src/claude-code/run/wire-binding.js");
    const dir = mkdtempSync(join(tmpdir(), "ktx-cwd-"));
    try {
      const link = join(dir, "link");
      symlinkSync(dir, link);
      const spec = { model: "m", system: "", prompt: "p", tools: [], jsonSchema: undefined };
      expect(expectationOf({ ...spec, projectDir: link }).cwd).toEqual([link, realpathSync(dir)]);
      expect(expectationOf({ ...spec, projectDir: relative(process.cwd(), dir) }).cwd).toEqual([...new Set([resolve(dir), realpathSync(dir)])]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
