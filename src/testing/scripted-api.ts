/**
 * A scripted Anthropic Messages API on 127.0.0.1 for tests, demos and fixture recording. Each
 * `POST /v1/messages` takes the next scripted turn (text, tool calls, an error status, a broken
 * stream) and answers in the real wire format: SSE when the request streams, JSON otherwise.
 * Every request is recorded for assertions.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface ScriptedToolCall {
  name: string;
  input: unknown;
  id?: string;
}

interface Pacing {
  /** Wait before answering (headers included). */
  delayMs?: number;
  /** Wait between SSE events. */
  chunkDelayMs?: number;
}

export type ScriptedTurn =
  | ({ text: string } & Pacing)
  | ({ toolCalls: ScriptedToolCall[]; text?: string } & Pacing)
  | ({ error: { status: number; type?: string; message?: string; headers?: Record<string, string> } } & Pacing)
  | ({ brokenStream: true; text?: string } & Pacing);

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  receivedAt: number;
  /** Index of the scripted turn this request consumed (messages requests only). */
  turnIndex?: number;
}

export type Script = ScriptedTurn[] | ((request: RecordedRequest, turnIndex: number) => ScriptedTurn);

export interface ScriptedApiOptions {
  /** Model echoed in responses when the request names none. */
  model?: string;
  /** When an array script runs out: answer 500 (default) or repeat the last turn. */
  onExhausted?: "error" | "repeat-last";
}

export interface ScriptedMessagesApi {
  readonly baseUrl: string;
  readonly port: number;
  /** Every request received, any path. */
  readonly requests: RecordedRequest[];
  /** `POST /v1/messages` requests, each of which consumed a turn. */
  readonly messageRequests: RecordedRequest[];
  close(): Promise<void>;
}

/** Builders for common turns. */
export const turn = {
  text: (text: string): ScriptedTurn => ({ text }),
  tools: (...calls: ScriptedToolCall[]): ScriptedTurn => ({ toolCalls: calls }),
  /** The model answering a structured-output call (the CLI's StructuredOutput tool). */
  object: (value: unknown): ScriptedTurn => ({ toolCalls: [{ name: "StructuredOutput", input: value }] }),
  error: (status: number, message?: string, headers?: Record<string, string>): ScriptedTurn => ({
    error: { status, ...(message ? { message } : {}), ...(headers ? { headers } : {}) },
  }),
};

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

type Block = { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: unknown };

function blocksOf(scripted: ScriptedTurn, turnIndex: number): Block[] {
  if ("toolCalls" in scripted) {
    // Ids depend only on the turn and position, so recordings of the same script are comparable.
    const calls = scripted.toolCalls.map((call, position): Block => ({ type: "tool_use", id: call.id ?? `toolu_scripted_${turnIndex}_${position}`, name: call.name, input: call.input }));
    return scripted.text ? [{ type: "text", text: scripted.text }, ...calls] : calls;
  }
  if ("text" in scripted && scripted.text !== undefined) return [{ type: "text", text: scripted.text }];
  return [];
}

function roughTokens(body: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(body ?? "").length / 4));
}

const sleep = (ms: number | undefined) => (ms ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve());

/** Splits text into a few pieces, as a real stream would deliver it. */
function pieces(text: string, count = 3): string[] {
  if (text.length < count * 2) return [text];
  const size = Math.ceil(text.length / count);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

class TurnWriter {
  constructor(
    private readonly response: ServerResponse,
    private readonly pacing: Pacing,
  ) {}

  async event(type: string, data: object): Promise<void> {
    this.response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    await sleep(this.pacing.chunkDelayMs);
  }

  async block(index: number, block: Block): Promise<void> {
    if (block.type === "text") {
      await this.event("content_block_start", { index, content_block: { type: "text", text: "" } });
      for (const text of pieces(block.text)) await this.event("content_block_delta", { index, delta: { type: "text_delta", text } });
    } else {
      await this.event("content_block_start", { index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } });
      for (const partial_json of pieces(JSON.stringify(block.input ?? {}))) {
        await this.event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } });
      }
    }
    await this.event("content_block_stop", { index });
  }
}

export async function startScriptedMessagesApi(script: Script, options: ScriptedApiOptions = {}): Promise<ScriptedMessagesApi> {
  const requests: RecordedRequest[] = [];
  const messageRequests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let turnIndex = 0;

  const nextTurn = (request: RecordedRequest): ScriptedTurn => {
    const index = turnIndex++;
    request.turnIndex = index;
    if (typeof script === "function") return script(request, index);
    const scripted = script[index] ?? (options.onExhausted === "repeat-last" ? script[script.length - 1] : undefined);
    return scripted ?? { error: { status: 500, message: `scripted Messages API: script exhausted after ${script.length} turns` } };
  };

  const answerMessages = async (request: RecordedRequest, response: ServerResponse) => {
    messageRequests.push(request);
    const scripted = nextTurn(request);
    await sleep(scripted.delayMs);
    if ("error" in scripted) return sendError(response, scripted.error);
    const model = String(request.body?.model ?? options.model ?? "claude-scripted");
    const blocks = blocksOf(scripted, request.turnIndex ?? 0);
    const stopReason = blocks.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn";
    const usage = { input_tokens: roughTokens(request.body?.messages), output_tokens: 0 };
    const id = `msg_scripted_${request.turnIndex}`;
    if (request.body?.stream !== true) {
      response.writeHead(200, { "content-type": "application/json", "request-id": `req_${id}` });
      response.end(JSON.stringify({ id, type: "message", role: "assistant", model, content: blocks, stop_reason: stopReason, stop_sequence: null, usage: { ...usage, output_tokens: 5 } }));
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "request-id": `req_${id}` });
    const writer = new TurnWriter(response, scripted);
    await writer.event("message_start", { message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage } });
    if ("brokenStream" in scripted) {
      await writer.event("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
      await writer.event("content_block_delta", { index: 0, delta: { type: "text_delta", text: scripted.text ?? "partial" } });
      response.socket?.destroy();
      return;
    }
    for (const [index, block] of blocks.entries()) await writer.block(index, block);
    await writer.event("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } });
    await writer.event("message_stop", {});
    response.end();
  };

  const server = createServer((incoming, response) => {
    void readBody(incoming).then(async (raw) => {
      const path = (incoming.url ?? "/").split("?")[0]!;
      const request: RecordedRequest = { method: incoming.method ?? "GET", path, headers: incoming.headers, body: parseJson(raw), receivedAt: Date.now() };
      requests.push(request);
      try {
        if (request.method === "POST" && path === "/v1/messages") return await answerMessages(request, response);
        if (request.method === "POST" && path === "/v1/messages/count_tokens") {
          response.writeHead(200, { "content-type": "application/json" });
          return response.end(JSON.stringify({ input_tokens: roughTokens(request.body) }));
        }
        sendError(response, { status: 404, message: `scripted Messages API does not serve ${request.method} ${path}` });
      } catch (error) {
        if (!response.headersSent) sendError(response, { status: 500, message: `scripted Messages API failed: ${(error as Error).message}` });
        else response.destroy();
      }
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    requests,
    messageRequests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function sendError(response: ServerResponse, error: { status: number; type?: string; message?: string; headers?: Record<string, string> }): void {
  const type = error.type ?? ERROR_TYPES[error.status] ?? "api_error";
  response.writeHead(error.status, { "content-type": "application/json", "request-id": `req_error_${error.status}`, ...error.headers });
  response.end(JSON.stringify({ type: "error", error: { type, message: error.message ?? `scripted ${error.status} ${type}` } }));
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

function parseJson(raw: string): unknown {
  if (!raw) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
