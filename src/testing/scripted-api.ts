/**
 * A scripted Anthropic Messages API on 127.0.0.1 for tests, demos and fixture recording. Each
 * `POST /v1/messages` takes the next scripted turn (text, tool calls, an error status, a broken
 * stream) and answers in the real wire format: SSE when the request streams, JSON otherwise.
 * Every request is recorded for assertions.
 *
 * How turns are consumed: every `POST /v1/messages` takes exactly one turn, retries included.
 * The CLI does its own retrying, so a failure turn is followed by the CLI's retry, which takes
 * the next turn: `[turn.error(500), turn.text("ok")]` is "one failure, then recovery". To make
 * the CLI give up, answer every attempt with the error (a function script, or
 * `onExhausted: "repeat-last"`) or send `x-should-retry: false`. What CLI 2.1.330 does
 * (measured against this server):
 * - 429, 500, 529, 401 and dropped connections (including `brokenStream`): up to 10 retries
 *   (`CLAUDE_CODE_MAX_RETRIES` overrides; 0 disables), each announced by a `system/api_retry`
 *   line, backing off 0.5 s, 1 s, 2 s, ... capped near 32 s, plus up to 25 % jitter: ~3 minutes
 *   in all. `retry-after: 3` made the delay 3.1 s, but `0` does not shorten it;
 *   `retry-after-ms` is ignored. `x-should-retry: false` stops retrying at once.
 * - 400: two more immediate attempts with fewer `anthropic-beta` features (ignores
 *   `CLAUDE_CODE_MAX_RETRIES`), then the error: three requests, three turns.
 * - A stream that ends cleanly without `message_start` or without a completed content block,
 *   or a 404 on the streaming request: one immediate non-streaming retry (`stream: false`).
 *   A connection dropped mid-stream is retried streaming, with backoff.
 * On the first-party path (the `firstParty` option: a claude.ai login, no base URL) two things differ:
 * a 400 is not retried (one request); a 503 is first re-sent once 0.04–1 s later without an
 * `api_retry` line, with an `anthropic-dispatch-id: v2p` header (2.1.286 on; 2.1.142 and 2.1.200
 * announce it as at a base URL), and only a further failure enters the announced retry loop
 * (test/e2e/scripted-api.test.ts runs every case on both paths). The recorded wire shapes have that
 * re-send (wire-recorder.ts answers one call's first request 503), so the interceptor passes it.
 *
 * Subscription mode: give the runtime `apiEndpoint: api.endpoint("subscription")` (an OAuth token
 * instead of an API key) and the real CLI behaves as a logged-in subscriber: it reads the
 * `anthropic-ratelimit-unified-*` headers a turn carries (`rateLimit`, or the server-wide
 * `rateLimit` option) and reports them as `rate_limit_event` lines. A turn whose limit is
 * `rejected` is answered 429 (see rate-limit-headers.ts and docs/guides/rate-limits.md).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { ApiEndpoint } from "../transport/env.js";
import { type FirstPartyFront, loginAnswer, startFirstPartyFront } from "./first-party.js";
import { type ScriptedRateLimit, rateLimitHeaders, rejectionMessage } from "./rate-limit-headers.js";
import { ERROR_TYPES, type Pacing, type ScriptedError, type ScriptedTurn, blocksOf, pieces, roughTokens } from "./scripted-turns.js";

export { turn, type ScriptedError, type ScriptedToolCall, type ScriptedTurn } from "./scripted-turns.js";

export type { ScriptedRateLimit, ScriptedRateLimitWindow, RateLimitWindowName } from "./rate-limit-headers.js";

export interface RecordedRequest {
  method: string;
  /** Without the query string (the CLI appends `?beta=true`). */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON when the body is JSON, else the raw text; undefined when empty. */
  body: any;
  receivedAt: number;
  /** Index of the scripted turn this request consumed (messages requests only). */
  turnIndex?: number;
  /** The host the client addressed (the `Host` header): `api.anthropic.com` in first-party mode. */
  host?: string;
  /** The body exactly as received. */
  rawBody: string;
  /** Header lines exactly as received, in order (names with their case). */
  rawHeaders: string[];
}

export type Script = ScriptedTurn[] | ((request: RecordedRequest, turnIndex: number) => ScriptedTurn);

export interface ScriptedApiOptions {
  /** Model echoed in responses when the request names none. */
  model?: string;
  /** When an array script runs out: answer 500 (default) or repeat the last turn. */
  onExhausted?: "error" | "repeat-last";
  /**
   * Usage headers for every answer whose turn carries none: a fixed value, or a function of the
   * request and turn index (e.g. "rejected until a reset time"). Only a subscriber CLI reads them.
   */
  rateLimit?: ScriptedRateLimit | ((request: RecordedRequest, turnIndex: number) => ScriptedRateLimit | undefined);
  /**
   * First-party mode: the CLI talks to `api.anthropic.com` as in real use (no base URL), through an
   * HTTPS proxy on 127.0.0.1 that terminates its TLS with a test CA and hands the requests to this
   * server (first-party.ts). The result's `firstParty` gives the proxy, the CA and the login to use.
   */
  firstParty?: boolean;
  /**
   * How the answers' ids are numbered: `msg_<prefix>_<turn + offset>`, its `req_…` request id, and
   * `toolu_<prefix>_<turn + offset>_<position>` for a scripted tool call without its own id (default
   * prefix `scripted`, offset 0). Another prefix or offset stands in for a real API, whose ids differ
   * in every run (`transcript diff` numbers them by appearance).
   */
  ids?: { prefix?: string; offset?: number };
}

/** The OAuth token `endpoint("subscription")` hands the CLI; the scripted API accepts any credential. */
export const SCRIPTED_OAUTH_TOKEN = "sk-ant-oat01-scripted-subscription-token";
export const SCRIPTED_API_KEY = "sk-test-scripted";

export interface ScriptedMessagesApi {
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  readonly port: number;
  /** Every request received, any path. */
  readonly requests: RecordedRequest[];
  /** `POST /v1/messages` requests that consumed a turn (not those answered "script exhausted"). */
  readonly messageRequests: RecordedRequest[];
  /**
   * The runtime's `apiEndpoint` for this server: `"api-key"` (default) makes the CLI an API-key
   * client; `"subscription"` passes an OAuth token, so the CLI acts as a subscriber and reports
   * usage limits (`rate_limit_event`).
   */
  endpoint(kind?: "api-key" | "subscription"): ApiEndpoint;
  /** First-party mode only (the `firstParty` option): the intercepting proxy, its CA and a login. */
  readonly firstParty?: FirstPartyFront;
  /** Frees the port and destroys open (keep-alive or mid-answer) connections. */
  close(): Promise<void>;
}

export async function startScriptedMessagesApi(script: Script, options: ScriptedApiOptions = {}): Promise<ScriptedMessagesApi> {
  const requests: RecordedRequest[] = [];
  const messageRequests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  // Ends pending delays on close, so no handler outlives the server.
  const closing = new AbortController();
  let turnIndex = 0;

  const sleep = (ms: number | undefined): Promise<void> =>
    !ms || closing.signal.aborted
      ? Promise.resolve()
      : new Promise((resolve) => {
          const done = () => {
            clearTimeout(timer);
            closing.signal.removeEventListener("abort", done);
            resolve();
          };
          const timer = setTimeout(done, ms);
          closing.signal.addEventListener("abort", done);
        });

  /** Writes and waits until the bytes are handed to the socket; false once the peer is gone. */
  const write = (response: ServerResponse, chunk: string): Promise<boolean> =>
    response.destroyed || response.writableEnded ? Promise.resolve(false) : new Promise((resolve) => response.write(chunk, (error) => resolve(!error)));

  const nextTurn = (request: RecordedRequest): ScriptedTurn | undefined => {
    if (typeof script === "function") {
      const scripted = script(request, turnIndex);
      if (scripted) request.turnIndex = turnIndex++;
      return scripted;
    }
    const scripted = script[turnIndex] ?? (options.onExhausted === "repeat-last" ? script[script.length - 1] : undefined);
    if (scripted) request.turnIndex = turnIndex++;
    return scripted;
  };

  const answerMessages = async (request: RecordedRequest, response: ServerResponse) => {
    const scripted = nextTurn(request);
    if (!scripted) {
      const message = typeof script === "function" ? "the script function returned no turn" : `script exhausted after ${script.length} turns`;
      // `x-should-retry: false`: the CLI fails at once instead of retrying for minutes.
      return sendError(response, { status: 500, message: `scripted Messages API: ${message}`, headers: { "x-should-retry": "false" } });
    }
    messageRequests.push(request);
    await sleep(scripted.delayMs);
    if (response.destroyed || closing.signal.aborted) return;
    const index = request.turnIndex ?? 0;
    const limit = scripted.rateLimit ?? (typeof options.rateLimit === "function" ? options.rateLimit(request, index) : options.rateLimit);
    const limitHeaders = limit ? rateLimitHeaders(limit) : {};
    if ("error" in scripted) return sendError(response, { ...scripted.error, headers: { ...limitHeaders, ...scripted.error.headers } });
    if (limit?.status === "rejected") {
      return sendError(response, { status: 429, type: "rate_limit_error", message: rejectionMessage(limit.window ?? "five_hour"), headers: limitHeaders });
    }

    const model = String(request.body?.model ?? options.model ?? "claude-scripted");
    const [idPrefix, idNumber] = [options.ids?.prefix ?? "scripted", index + (options.ids?.offset ?? 0)];
    const id = `msg_${idPrefix}_${idNumber}`;
    const headers = { "request-id": `req_${id}`, ...limitHeaders };
    const pacing: Pacing = scripted;
    const blocks = blocksOf(scripted, index).map((block) =>
      block.type === "tool_use" && options.ids ? { ...block, id: block.id.replace(new RegExp(`^toolu_scripted_${index}_`), `toolu_${idPrefix}_${idNumber}_`) } : block,
    );
    const stopReason = blocks.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn";
    const searches = blocks.filter((block) => block.type === "server_tool_use").length;
    const usage = { input_tokens: roughTokens(request.body?.messages), output_tokens: 0, ...(searches > 0 ? { server_tool_use: { web_search_requests: searches } } : {}), ...("usage" in scripted ? scripted.usage : {}) };

    if (request.body?.stream !== true) {
      const message = JSON.stringify({ id, type: "message", role: "assistant", model, content: blocks, stop_reason: stopReason, stop_sequence: null, usage: { ...usage, output_tokens: 5 } });
      if ("brokenStream" in scripted) {
        response.writeHead(200, { "content-type": "application/json", ...headers });
        await write(response, message.slice(0, Math.floor(message.length / 2)));
        response.destroy();
        return;
      }
      response.writeHead(200, { "content-type": "application/json", ...headers });
      response.end(message);
      return;
    }

    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers });
    // Without a chunk delay the events go out in one write. The CLI's output-token total depends on
    // how its reads split the stream (5 turns read event by event count 28 output tokens, read whole
    // 25), so one write per event made recorded figures depend on the machine's load.
    const batched = !pacing.chunkDelayMs;
    let pending = "";
    let first = true;
    const event = async (type: string, data: object): Promise<boolean> => {
      if (!first) await sleep(pacing.chunkDelayMs);
      first = false;
      const text = `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
      if (!batched) return !closing.signal.aborted && write(response, text);
      pending += text;
      return !closing.signal.aborted && !response.destroyed;
    };
    const flush = async (): Promise<boolean> => {
      const text = pending;
      pending = "";
      return !closing.signal.aborted && (text === "" || write(response, text));
    };
    if (!(await event("message_start", { message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage } }))) return;
    if ("brokenStream" in scripted) {
      await event("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
      await event("content_block_delta", { index: 0, delta: { type: "text_delta", text: scripted.text ?? "partial" } });
      await flush();
      response.destroy();
      return;
    }
    for (const [position, block] of blocks.entries()) {
      if (block.type === "text") {
        if (!(await event("content_block_start", { index: position, content_block: { type: "text", text: "" } }))) return;
        for (const text of pieces(block.text)) if (!(await event("content_block_delta", { index: position, delta: { type: "text_delta", text } }))) return;
      } else if (block.type === "web_search_tool_result") {
        if (!(await event("content_block_start", { index: position, content_block: block }))) return;
      } else {
        if (!(await event("content_block_start", { index: position, content_block: { type: block.type, id: block.id, name: block.name, input: {} } }))) return;
        for (const partial_json of pieces(JSON.stringify(block.input))) {
          if (!(await event("content_block_delta", { index: position, delta: { type: "input_json_delta", partial_json } }))) return;
        }
      }
      if (!(await event("content_block_stop", { index: position }))) return;
    }
    if (!(await event("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5, ...("usage" in scripted ? scripted.usage : {}) } }))) return;
    if (!(await event("message_stop", {})) || !(await flush())) return;
    response.end();
  };

  const handle = (incoming: IncomingMessage, response: ServerResponse) => {
    void readBody(incoming).then(async (raw) => {
      const path = (incoming.url ?? "/").split("?")[0]!;
      const request: RecordedRequest = {
        method: incoming.method ?? "GET",
        path,
        headers: incoming.headers,
        body: parseJson(raw),
        receivedAt: Date.now(),
        host: incoming.headers.host,
        rawBody: raw,
        rawHeaders: incoming.rawHeaders,
      };
      requests.push(request);
      try {
        if (request.method === "POST" && path === "/v1/messages") return await answerMessages(request, response);
        const login = loginAnswer(request);
        if (login) {
          response.writeHead(200, { "content-type": "application/json" });
          return response.end(JSON.stringify(login));
        }
        if (request.method === "POST" && path === "/v1/messages/count_tokens") {
          response.writeHead(200, { "content-type": "application/json" });
          return response.end(JSON.stringify({ input_tokens: roughTokens(request.body) }));
        }
        sendError(response, { status: 404, message: `scripted Messages API does not serve ${request.method} ${path}` });
      } catch (error) {
        if (!response.headersSent) sendError(response, { status: 500, message: `scripted Messages API failed: ${(error as Error).message}`, headers: { "x-should-retry": "false" } });
        else response.destroy();
      }
    });
  };
  const server = createServer(handle);
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const firstParty = options.firstParty ? await startFirstPartyFront(handle) : undefined;

  let closed: Promise<void> | undefined;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    port,
    requests,
    messageRequests,
    firstParty,
    endpoint: (kind = "api-key") => (kind === "subscription" ? { baseUrl, oauthToken: SCRIPTED_OAUTH_TOKEN } : { baseUrl, apiKey: SCRIPTED_API_KEY }),
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        closing.abort();
        void firstParty?.close();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        server.closeAllConnections();
      })),
  };
}

function sendError(response: ServerResponse, error: ScriptedError): void {
  const type = error.type ?? ERROR_TYPES[error.status] ?? (error.status >= 500 ? "api_error" : "invalid_request_error");
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
