/** The scripted Messages API driven with plain fetch: wire format, errors, exhaustion, close. */
import { request as httpRequest, Agent } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { type Script, type ScriptedMessagesApi, startScriptedMessagesApi, turn } from "../../src/testing/scripted-api.js";

const open: ScriptedMessagesApi[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((api) => api.close()));
});

async function start(script: Script, options?: Parameters<typeof startScriptedMessagesApi>[1]): Promise<ScriptedMessagesApi> {
  const api = await startScriptedMessagesApi(script, options);
  open.push(api);
  return api;
}

const body = (extra: object = {}) => ({ model: "claude-test-model", max_tokens: 100, messages: [{ role: "user", content: "hi" }], ...extra });

function post(api: ScriptedMessagesApi, payload: unknown, path = "/v1/messages?beta=true"): Promise<Response> {
  return fetch(`${api.baseUrl}${path}`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": "sk-test" }, body: JSON.stringify(payload) });
}

interface SseEvent {
  event: string;
  data: any;
}

async function sse(response: Response): Promise<SseEvent[]> {
  const text = await response.text();
  expect(text.endsWith("\n\n")).toBe(true);
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((chunk) => {
      const [eventLine, dataLine, ...rest] = chunk.split("\n");
      expect(rest).toEqual([]);
      expect(eventLine).toMatch(/^event: /);
      expect(dataLine).toMatch(/^data: /);
      const event = eventLine!.slice("event: ".length);
      const data = JSON.parse(dataLine!.slice("data: ".length));
      expect(data.type).toBe(event);
      return { event, data };
    });
}

describe("scripted Messages API", () => {
  it("listens on 127.0.0.1 on an ephemeral port", async () => {
    const api = await start([]);
    expect(api.baseUrl).toBe(`http://127.0.0.1:${api.port}`);
    expect(api.port).toBeGreaterThan(0);
  });

  it("streams a text turn as the real event sequence, in a few chunks", async () => {
    const api = await start([turn.text("hello from the scripted model")]);
    const response = await post(api, body({ stream: true }));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(response.headers.get("request-id")).toBeTruthy();
    const events = await sse(response);
    expect(events.map((e) => e.event)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const start0 = events[0]!.data.message;
    expect(start0).toMatchObject({ type: "message", role: "assistant", model: "claude-test-model", content: [], stop_reason: null });
    expect(start0.id).toMatch(/^msg_/);
    expect(start0.usage).toEqual({ input_tokens: expect.any(Number), output_tokens: 0 });
    expect(events[1]!.data).toEqual({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    const text = events.filter((e) => e.event === "content_block_delta").map((e) => e.data.delta.text).join("");
    expect(text).toBe("hello from the scripted model");
    expect(events.at(-2)!.data).toMatchObject({ delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: expect.any(Number) } });
    expect(api.messageRequests).toHaveLength(1);
    expect(api.messageRequests[0]).toMatchObject({ method: "POST", path: "/v1/messages", turnIndex: 0, body: { stream: true } });
    expect(api.messageRequests[0]!.headers["x-api-key"]).toBe("sk-test");
  });

  it("streams text then tool calls with input_json_delta chunks and stop_reason tool_use", async () => {
    const input = { query: "grain", nested: { list: [1, 2, 3], emoji: "😀😀😀" } };
    const api = await start([{ text: "let me look", toolCalls: [{ name: "lookup", input }, { name: "other", input: {}, id: "toolu_given" }] }]);
    const events = await sse(await post(api, body({ stream: true })));
    const starts = events.filter((e) => e.event === "content_block_start").map((e) => e.data.content_block);
    expect(starts).toEqual([
      { type: "text", text: "" },
      { type: "tool_use", id: expect.stringMatching(/^toolu_/), name: "lookup", input: {} },
      { type: "tool_use", id: "toolu_given", name: "other", input: {} },
    ]);
    const json = events.filter((e) => e.event === "content_block_delta" && e.data.index === 1).map((e) => e.data.delta);
    expect(json.length).toBeGreaterThan(1);
    expect(json.every((delta) => delta.type === "input_json_delta")).toBe(true);
    expect(JSON.parse(json.map((delta) => delta.partial_json).join(""))).toEqual(input);
    expect(events.filter((e) => e.event === "content_block_stop").map((e) => e.data.index)).toEqual([0, 1, 2]);
    expect(events.find((e) => e.event === "message_delta")!.data.delta.stop_reason).toBe("tool_use");
  });

  it("gives tool calls unique ids across turns", async () => {
    const api = await start([turn.tools({ name: "a", input: {} }, { name: "b", input: {} }), turn.tools({ name: "a", input: {} })]);
    const first = await (await post(api, body())).json() as any;
    const second = await (await post(api, body())).json() as any;
    const ids = [...first.content, ...second.content].map((block: { id: string }) => block.id);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^toolu_/);
  });

  it("answers a non-streaming request with the whole message", async () => {
    const api = await start([turn.object({ answer: 42 })], { model: "claude-fallback" });
    const response = await post(api, { messages: [] });
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json() as any).toEqual({
      id: expect.stringMatching(/^msg_/),
      type: "message",
      role: "assistant",
      model: "claude-fallback",
      content: [{ type: "tool_use", id: expect.stringMatching(/^toolu_/), name: "StructuredOutput", input: { answer: 42 } }],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
    });
  });

  it("answers error turns with the Anthropic error body, a request-id and the given headers", async () => {
    const api = await start([
      turn.error(400, "bad request here"),
      turn.error(429, undefined, { "retry-after": "7" }),
      turn.error(529),
      { error: { status: 418, type: "teapot_error", message: "short and stout" } },
      turn.text("after the errors"),
    ]);
    const bad = await post(api, body({ stream: true }));
    expect(bad.status).toBe(400);
    expect(bad.headers.get("request-id")).toBeTruthy();
    expect(await bad.json() as any).toEqual({ type: "error", error: { type: "invalid_request_error", message: "bad request here" } });
    const limited = await post(api, body());
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("7");
    expect((await limited.json() as any).error.type).toBe("rate_limit_error");
    const overloaded = await post(api, body());
    expect(overloaded.status).toBe(529);
    expect((await overloaded.json() as any).error).toEqual({ type: "overloaded_error", message: expect.any(String) });
    const teapot = await post(api, body());
    expect(teapot.status).toBe(418);
    expect((await teapot.json() as any).error).toEqual({ type: "teapot_error", message: "short and stout" });
    // Each request took one turn, errors included.
    expect((await (await post(api, body())).json() as any).content[0].text).toBe("after the errors");
    expect(api.messageRequests.map((r) => r.turnIndex)).toEqual([0, 1, 2, 3, 4]);
  });

  it("maps statuses to default error types", async () => {
    const statuses = [400, 401, 403, 404, 429, 500, 529];
    const api = await start(statuses.map((status) => turn.error(status)));
    const types: string[] = [];
    for (const _ of statuses) types.push((await (await post(api, body())).json() as any).error.type);
    expect(types).toEqual(["invalid_request_error", "authentication_error", "permission_error", "not_found_error", "rate_limit_error", "api_error", "overloaded_error"]);
  });

  it("answers 500 once an array script is exhausted, without consuming a turn", async () => {
    const api = await start([turn.text("only one")]);
    await (await post(api, body())).json() as any;
    const exhausted = await post(api, body({ stream: true }));
    expect(exhausted.status).toBe(500);
    expect(exhausted.headers.get("x-should-retry")).toBe("false");
    expect(await exhausted.json() as any).toEqual({ type: "error", error: { type: "api_error", message: "scripted Messages API: script exhausted after 1 turns" } });
    expect(api.messageRequests).toHaveLength(1);
    expect(api.requests).toHaveLength(2);
  });

  it("repeats the last turn when asked to", async () => {
    const api = await start([turn.text("first"), turn.text("again")], { onExhausted: "repeat-last" });
    const texts: string[] = [];
    for (let i = 0; i < 4; i++) texts.push((await (await post(api, body())).json() as any).content[0].text);
    expect(texts).toEqual(["first", "again", "again", "again"]);
    expect(api.messageRequests.map((r) => r.turnIndex)).toEqual([0, 1, 2, 3]);
  });

  it("calls a function script with the recorded request and the turn index", async () => {
    const seen: Array<[string, number]> = [];
    const api = await start((request, index) => {
      seen.push([request.body.messages[0].content, index]);
      return turn.text(`turn ${index}`);
    });
    expect((await (await post(api, body())).json() as any).content[0].text).toBe("turn 0");
    expect((await (await post(api, body({ messages: [{ role: "user", content: "second" }] }))).json() as any).content[0].text).toBe("turn 1");
    expect(seen).toEqual([["hi", 0], ["second", 1]]);
  });

  it("answers 500 when the function script throws", async () => {
    const api = await start(() => {
      throw new Error("boom");
    });
    const response = await post(api, body());
    expect(response.status).toBe(500);
    expect((await response.json() as any).error.message).toMatch(/boom/);
  });

  it("serves count_tokens without consuming a turn, and 404 elsewhere; records everything", async () => {
    const api = await start([turn.text("the only turn")]);
    const counted = await post(api, body(), "/v1/messages/count_tokens?beta=true");
    expect(counted.status).toBe(200);
    expect(await counted.json() as any).toEqual({ input_tokens: expect.any(Number) });
    const missing = await fetch(`${api.baseUrl}/v1/models`);
    expect(missing.status).toBe(404);
    expect(await missing.json() as any).toEqual({ type: "error", error: { type: "not_found_error", message: expect.stringContaining("GET /v1/models") } });
    const notJson = await fetch(`${api.baseUrl}/somewhere`, { method: "PUT", body: "plain text" });
    expect(notJson.status).toBe(404);
    expect((await (await post(api, body())).json() as any).content[0].text).toBe("the only turn");
    expect(api.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/messages/count_tokens", "GET /v1/models", "PUT /somewhere", "POST /v1/messages"]);
    expect(api.requests[0]!.body).toEqual(body());
    expect(api.requests[1]!.body).toBeUndefined();
    expect(api.requests[2]!.body).toBe("plain text");
    expect(api.messageRequests).toHaveLength(1);
  });

  it("honours delayMs before the headers and chunkDelayMs between events", async () => {
    const api = await start([
      { text: "slow", delayMs: 300 },
      { text: "dripping text", chunkDelayMs: 40 },
      { error: { status: 500 }, delayMs: 200 },
    ]);
    let t = Date.now();
    const slow = await post(api, body({ stream: true }));
    expect(Date.now() - t).toBeGreaterThanOrEqual(280);
    await slow.text();
    t = Date.now();
    const events = await sse(await post(api, body({ stream: true })));
    // 8 events, 7 gaps.
    expect(events).toHaveLength(8);
    expect(Date.now() - t).toBeGreaterThanOrEqual(7 * 40 - 20);
    t = Date.now();
    expect((await post(api, body())).status).toBe(500);
    expect(Date.now() - t).toBeGreaterThanOrEqual(180);
  });

  it("writes an unpaced answer in one write, a paced one event by event", async () => {
    // The CLI's output-token total depends on how its reads split the stream (docs/guides/testing.md), so
    // an unpaced answer must reach it the same way under any load: whole.
    const api = await start([turn.object({ wrong: true }), { toolCalls: [{ name: "StructuredOutput", input: { wrong: true } }], chunkDelayMs: 20 }]);
    const chunksOf = () =>
      new Promise<string[]>((resolve, reject) => {
        const payload = JSON.stringify(body({ stream: true }));
        const request = httpRequest(`${api.baseUrl}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } }, (response) => {
          const chunks: string[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk.toString()));
          response.on("end", () => resolve(chunks));
        });
        request.on("error", reject);
        request.end(payload);
      });
    const whole = await chunksOf();
    expect(whole).toHaveLength(1);
    expect(whole[0]!.match(/^event: /gm)).toHaveLength(8);
    expect(whole[0]).toMatch(/event: message_stop\n/);
    const paced = await chunksOf();
    expect(paced.length).toBeGreaterThan(1);
    expect(paced.join("")).toBe(whole.join("").replaceAll("msg_scripted_0", "msg_scripted_1").replaceAll("toolu_scripted_0_0", "toolu_scripted_1_0"));
  });

  it("breaks a stream after message_start and part of a block", async () => {
    const api = await start([{ brokenStream: true, text: "half a" }, { brokenStream: true }]);
    const response = await post(api, body({ stream: true }));
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let received = "";
    const failure = await (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return undefined;
          received += new TextDecoder().decode(value);
        }
      } catch (error) {
        return error;
      }
    })();
    expect(failure).toBeInstanceOf(Error);
    expect(received).toContain("event: message_start");
    expect(received).toContain('"text":"half a"');
    expect(received).not.toContain("content_block_stop");
    // Non-streaming: part of the JSON body, then the connection drops.
    const plain = await post(api, body());
    await expect(plain.text()).rejects.toThrow();
  });

  it("closes promptly with an idle keep-alive connection and a pending delayed answer", async () => {
    const api = await startScriptedMessagesApi([turn.text("kept alive"), { text: "never", delayMs: 60_000 }]);
    const agent = new Agent({ keepAlive: true });
    const first = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(`${api.baseUrl}/v1/messages`, { method: "POST", agent, headers: { "content-type": "application/json" } }, (res) => {
        let data = "";
        res.on("data", (chunk) => (data += chunk));
        res.on("end", () => resolve(data));
      });
      req.on("error", reject);
      req.end(JSON.stringify(body()));
    });
    expect(JSON.parse(first).content[0].text).toBe("kept alive");
    const pending = post(api, body()).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const t = Date.now();
    await api.close();
    expect(Date.now() - t).toBeLessThan(1000);
    expect(await pending).toBeInstanceOf(Error);
    await api.close(); // idempotent
    agent.destroy();
    await expect(fetch(`${api.baseUrl}/v1/messages`, { method: "POST", body: "{}" })).rejects.toThrow();
  });
});
