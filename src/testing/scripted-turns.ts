/**
 * The turns a scripted Messages API answers with: their types, the `turn` builders, and how a turn
 * becomes content blocks and stream pieces. The server is scripted-api.ts.
 */
import { type ScriptedRateLimit, rejectionMessage } from "./rate-limit-headers.js";

export interface ScriptedToolCall {
  name: string;
  input: unknown;
  id?: string;
}

export interface Pacing {
  /** Wait before answering (headers included). */
  delayMs?: number;
  /** Wait between SSE events. */
  chunkDelayMs?: number;
  /**
   * Subscription usage headers for this answer (overrides the server-wide `rateLimit` option).
   * `status: "rejected"` turns any turn into a 429 usage-limit answer.
   */
  rateLimit?: ScriptedRateLimit;
  /**
   * Usage figures the answer reports instead of the server's rough count (`input_tokens` etc., the API's
   * names): large ones bring the CLI near its context limit, which is what triggers its auto-compaction.
   */
  usage?: Record<string, number>;
}

export interface ScriptedError {
  status: number;
  /** Anthropic error type; defaults by status (429 rate_limit_error, 529 overloaded_error, ...). */
  type?: string;
  message?: string;
  /** Extra response headers, e.g. `retry-after` or `x-should-retry`. */
  headers?: Record<string, string>;
}

/**
 * The API's server-side web search as a response carries it: a `server_tool_use` block (`web_search`), then a
 * `web_search_tool_result` block with these results, before the turn's text (the CLI's WebSearch tool asks for it).
 */
export interface ScriptedWebSearch {
  query: string;
  results: ReadonlyArray<{ url: string; title: string }>;
  id?: string;
}

export type ScriptedTurn =
  | ({ text: string; webSearch?: ScriptedWebSearch } & Pacing)
  /** Text (if any) first, then one tool_use block per call; stop_reason "tool_use". */
  | ({ toolCalls: ScriptedToolCall[]; text?: string } & Pacing)
  | { error: ScriptedError; delayMs?: number; rateLimit?: ScriptedRateLimit }
  /** 200, message_start and part of a text block, then the socket is destroyed. */
  | ({ brokenStream: true; text?: string } & Pacing);

/** Builders for common turns. */
export const turn = {
  text: (text: string): ScriptedTurn => ({ text }),
  /** The API ran its web search for `query` (server side) and answers with `text` after the results. */
  webSearch: (query: string, results: ScriptedWebSearch["results"], text: string): ScriptedTurn => ({ text, webSearch: { query, results } }),
  tools: (...calls: ScriptedToolCall[]): ScriptedTurn => ({ toolCalls: calls }),
  /** The model answering a structured-output call (the CLI's StructuredOutput tool). */
  object: (value: unknown): ScriptedTurn => ({ toolCalls: [{ name: "StructuredOutput", input: value }] }),
  error: (status: number, message?: string, headers?: Record<string, string>): ScriptedTurn => ({
    error: { status, ...(message ? { message } : {}), ...(headers ? { headers } : {}) },
  }),
  /**
   * A subscriber's usage limit reached: 429 with `anthropic-ratelimit-unified-status: rejected` and
   * the window's reset time (a subscriber CLI does not retry it).
   */
  limitReached: (limit: Omit<ScriptedRateLimit, "status"> & { resetsAt: Date }): ScriptedTurn => ({
    error: { status: 429, type: "rate_limit_error", message: rejectionMessage(limit.window ?? "five_hour") },
    rateLimit: { ...limit, status: "rejected" },
  }),
  /** Adds usage headers to a turn. */
  withRateLimit: (scripted: ScriptedTurn, rateLimit: ScriptedRateLimit): ScriptedTurn => ({ ...scripted, rateLimit }),
};

export const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

export type Block =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "server_tool_use"; id: string; name: "web_search"; input: { query: string } }
  | { type: "web_search_tool_result"; tool_use_id: string; content: Array<{ type: "web_search_result"; url: string; title: string; encrypted_content: string; page_age: null }> };

export function blocksOf(scripted: ScriptedTurn, turnIndex: number): Block[] {
  if ("toolCalls" in scripted) {
    // Ids depend only on the turn and position, so recordings of the same script are comparable.
    const calls = scripted.toolCalls.map((call, position): Block => ({ type: "tool_use", id: call.id ?? `toolu_scripted_${turnIndex}_${position}`, name: call.name, input: call.input ?? {} }));
    return scripted.text ? [{ type: "text", text: scripted.text }, ...calls] : calls;
  }
  if ("webSearch" in scripted && scripted.webSearch) {
    const search = scripted.webSearch;
    const id = search.id ?? `srvtoolu_scripted_${turnIndex}`;
    return [
      { type: "server_tool_use", id, name: "web_search", input: { query: search.query } },
      // The real API's encrypted_content is opaque; a fixed word stands in.
      { type: "web_search_tool_result", tool_use_id: id, content: search.results.map((result) => ({ type: "web_search_result", url: result.url, title: result.title, encrypted_content: "scripted", page_age: null })) },
      { type: "text", text: scripted.text },
    ];
  }
  if ("text" in scripted && scripted.text !== undefined) return [{ type: "text", text: scripted.text }];
  return [];
}

export function roughTokens(body: unknown): number {
  const text = (JSON.stringify(body ?? "") ?? "").replace(MACHINE_VALUES, "$1<machine>");
  return Math.max(1, Math.ceil(text.length / 4));
}

/**
 * The environment reminder's values that come from the machine the CLI runs on (its kernel, shell and
 * platform), counted at one fixed length: a scripted run's token counts, and the fixtures recorded with
 * them, are then the same on every machine (a kernel of another length changed them, and `fixtures
 * compare` reported drift that was only the machine's).
 */
const MACHINE_VALUES = /( - (?:OS Version|Shell|Platform): )[^\n"\\]*/g;

/** Splits text into a few pieces on code-point boundaries, as a real stream delivers it. */
export function pieces(text: string, count = 3): string[] {
  const chars = Array.from(text);
  if (chars.length < count * 2) return [text];
  const size = Math.ceil(chars.length / count);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}
