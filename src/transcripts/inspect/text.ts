/** Text helpers shared by the timeline, the summary and the diff: parsing, cutting, message keys, usage. */
import type { AnyRecord } from "../reader.js";

export type Json = Record<string, unknown>;
export type Rec = AnyRecord & { lineNumber?: number };

/** Longest text or JSON value shown in a timeline line; more is cut with a `… [+N chars]` marker. */
export const VALUE_WIDTH = 160;
/** No timeline line is longer than this (plus the marker); values are cut well before it. */
export const LINE_WIDTH = 300;

export function parse(text: string): Json | undefined {
  try {
    const value = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}

export const asJson = (value: unknown): Json => (value && typeof value === "object" && !Array.isArray(value) ? (value as Json) : {});

export function clip(text: string, max = VALUE_WIDTH): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [+${text.length - max} chars]`;
}

/** A string as a one-line JSON literal, cut before quoting so a huge text is never copied whole. */
export function quoted(text: string, max = VALUE_WIDTH): string {
  const shown = JSON.stringify(text.slice(0, max));
  return text.length > max ? `${shown}… [+${text.length - max} chars]` : shown;
}

export function compact(value: unknown, max = VALUE_WIDTH): string {
  return clip(JSON.stringify(value) ?? String(value), max);
}

/** `type/subtype` of a protocol line, e.g. `system/init`, `control_request/mcp_message/tools/call`, `result/success`. */
export function messageKey(message: Json): string {
  const type = String(message.type ?? "(no type)");
  const request = message.request as Json | undefined;
  const response = message.response as Json | undefined;
  const subtype = message.subtype ?? request?.subtype ?? (type === "control_response" ? response?.subtype : undefined);
  if (type === "control_request" && request?.subtype === "mcp_message") {
    return `control_request/mcp_message/${String((request.message as Json | undefined)?.method ?? "?")}`;
  }
  return subtype === undefined ? type : `${type}/${String(subtype)}`;
}

/** `assistant` matches `assistant`; `control_request/mcp_message` matches `control_request/mcp_message/tools/call`. */
export function matchesType(key: string, types: readonly string[] | undefined): boolean {
  return !types || types.length === 0 || types.some((type) => key === type || key.startsWith(`${type}/`));
}

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheCreation: number;
}

export function usageOf(value: unknown): Usage | undefined {
  const usage = asJson(value);
  if (Object.keys(usage).length === 0) return undefined;
  const n = (field: string) => (typeof usage[field] === "number" ? (usage[field] as number) : 0);
  return { input: n("input_tokens"), output: n("output_tokens"), cacheRead: n("cache_read_input_tokens"), cacheCreation: n("cache_creation_input_tokens") };
}

export function tokenText(usage: Usage): string {
  return `in ${usage.input}, out ${usage.output}, cache read ${usage.cacheRead}, cache write ${usage.cacheCreation}`;
}

/** Text of a tool result or MCP result: a string, or the text parts of a content array. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content === undefined ? "" : (JSON.stringify(content) ?? "");
  return content.map((part) => (typeof asJson(part).text === "string" ? String(asJson(part).text) : `[${String(asJson(part).type)}]`)).join("");
}

/** ` name=value` when the value is there, nothing when it is absent: no literal `undefined` or `null`. */
export function opt(name: string, value: unknown): string {
  return value === undefined || value === null || value === "" ? "" : ` ${name}=${typeof value === "string" ? value : JSON.stringify(value)}`;
}

const isZero = (usage: Usage) => usage.input + usage.output + usage.cacheRead + usage.cacheCreation === 0;

/** The per-model usage a result carries (`model_usage_since_last_result`, else `modelUsage`), summed. */
function modelUsageOf(value: unknown): Usage | undefined {
  const models = Object.values(asJson(value)).map(asJson);
  if (models.length === 0) return undefined;
  const n = (model: Json, field: string) => (typeof model[field] === "number" ? (model[field] as number) : 0);
  return models.reduce<Usage>(
    (total, model) => ({
      input: total.input + n(model, "inputTokens"),
      output: total.output + n(model, "outputTokens"),
      cacheRead: total.cacheRead + n(model, "cacheReadInputTokens"),
      cacheCreation: total.cacheCreation + n(model, "cacheCreationInputTokens"),
    }),
    { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 },
  );
}

/**
 * A run's final token figures, from its `result` line: `usage`, unless it is all zeros while the
 * per-model figures are not (an interrupted run reports zero `usage` for tokens it did spend).
 * The assistant lines are no source: they carry the usage of `message_start`, before the output.
 */
export function resultUsage(result: Json): Usage | undefined {
  const usage = usageOf(result.usage);
  const perModel = modelUsageOf(result.model_usage_since_last_result) ?? modelUsageOf(result.modelUsage);
  if (usage && !isZero(usage)) return usage;
  return perModel && !isZero(perModel) ? perModel : usage;
}

export interface RunEnd {
  /** `interrupted`: stopped by an interrupt or cancel (`error_during_execution`, `aborted_*`), whatever `is_error` says. */
  state: "ok" | "interrupted" | "failed";
  /** Why, when not ok: the API status and error, the CLI's `errors`, the result text, the terminal reason. */
  cause?: string;
}

/** How a `result` line ended the run. */
export function runEnd(result: Json): RunEnd {
  const subtype = String(result.subtype ?? "");
  const terminal = typeof result.terminal_reason === "string" ? result.terminal_reason : undefined;
  const interrupted = subtype === "error_during_execution" || terminal?.startsWith("aborted") === true || terminal === "interrupted";
  const failed = result.is_error === true || (subtype !== "success" && subtype !== "");
  if (!interrupted && !failed) return { state: "ok" };
  const parts: string[] = [];
  if (result.api_error_status != null) parts.push(`API status ${String(result.api_error_status)}`);
  if (Array.isArray(result.errors) && result.errors.length > 0) parts.push(result.errors.map(String).join("; "));
  else if (typeof result.result === "string" && result.result && result.is_error === true) parts.push(result.result);
  if (terminal && terminal !== "completed") parts.push(`terminal reason ${terminal}`);
  if (parts.length === 0) parts.push(subtype || "no cause recorded");
  return { state: interrupted ? "interrupted" : "failed", cause: parts.join(", ") };
}

/** Message types the CLI and the host write, and the record kinds the timeline shows; `--type` takes these (and their subtypes). */
export const KNOWN_TYPES = [
  "assistant",
  "user",
  "result",
  "system",
  "stream_event",
  "control_request",
  "control_response",
  "control_cancel_request",
  "keep_alive",
  "tool_progress",
  "auth_status",
  "rate_limit_event",
  "stderr",
  "exit",
  "outcome",
  "non-json",
  "dropped",
  "note",
] as const;

/** The `--type` values that name no known type (the part before the first `/` must be known). */
export function unknownTypes(types: readonly string[]): string[] {
  return types.filter((type) => !(KNOWN_TYPES as readonly string[]).includes(type.split("/")[0]!));
}
