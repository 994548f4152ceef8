/** Text helpers shared by the timeline, the summary and the diff: parsing, cutting, message keys, usage. */
import { resultCauses } from "../../protocol/result-causes.js";
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
  // Parts are kept apart: two text blocks read as two, not as one run-on word.
  return content.map((part) => (typeof asJson(part).text === "string" ? String(asJson(part).text) : `[${String(asJson(part).type)}]`)).join("\n");
}

/** ` name=value` when the value is there, nothing when it is absent: no literal `undefined` or `null`. */
export function opt(name: string, value: unknown): string {
  return value === undefined || value === null || value === "" ? "" : ` ${name}=${typeof value === "string" ? value : JSON.stringify(value)}`;
}

const isZero = (usage: Usage) => usage.input + usage.output + usage.cacheRead + usage.cacheCreation === 0;

export const ZERO_USAGE: Usage = Object.freeze({ input: 0, output: 0, cacheRead: 0, cacheCreation: 0 });

export function addUsage(a: Usage, b: Usage): Usage {
  return { input: a.input + b.input, output: a.output + b.output, cacheRead: a.cacheRead + b.cacheRead, cacheCreation: a.cacheCreation + b.cacheCreation };
}

/** Dollars without float noise (`0.054201000000000006` is `0.054201`): sums of costs are rounded to 1e-9. */
export function dollars(value: number): number {
  return Math.round(value * 1e9) / 1e9;
}

/** Billed figures per model, as a result's `modelUsage` / `model_usage_since_last_result` carry them. */
export interface BilledUsage extends Usage {
  /** Sum of the models' `costUSD`, when every model reports one. */
  costUsd?: number;
  models: string[];
}

/**
 * The per-model usage of a result (`model_usage_since_last_result`: this result's own; `modelUsage`:
 * the process's running total). It covers every model the run billed, subagents included, which is
 * what `total_cost_usd` is computed from; the result's `usage` is the main thread's only.
 */
export function billedUsageOf(value: unknown): BilledUsage | undefined {
  const entries = Object.entries(asJson(value)).map(([model, figures]) => [model, asJson(figures)] as const);
  if (entries.length === 0) return undefined;
  const n = (model: Json, field: string) => (typeof model[field] === "number" ? (model[field] as number) : 0);
  const costs = entries.map(([, model]) => model.costUSD);
  return {
    input: entries.reduce((sum, [, model]) => sum + n(model, "inputTokens"), 0),
    output: entries.reduce((sum, [, model]) => sum + n(model, "outputTokens"), 0),
    cacheRead: entries.reduce((sum, [, model]) => sum + n(model, "cacheReadInputTokens"), 0),
    cacheCreation: entries.reduce((sum, [, model]) => sum + n(model, "cacheCreationInputTokens"), 0),
    ...(costs.every((cost) => typeof cost === "number") ? { costUsd: dollars((costs as number[]).reduce((a, b) => a + b, 0)) } : {}),
    models: entries.map(([model]) => model),
  };
}

/**
 * A result's token figures over the scope its cost covers: the per-model figures (every model,
 * subagents included; this result's own when the CLI says so, else the process's total), else
 * `usage` (the main thread: all a CLI without per-model figures reports).
 */
export function resultUsage(result: Json): Usage | undefined {
  const billed = billedUsageOf(result.model_usage_since_last_result) ?? billedUsageOf(result.modelUsage);
  if (billed && !isZero(billed)) return { input: billed.input, output: billed.output, cacheRead: billed.cacheRead, cacheCreation: billed.cacheCreation };
  return usageOf(result.usage) ?? billed;
}

/** The HTTP status of an API failure: the CLI's field, else the `API Error: NNN` text older versions write. */
export function apiStatusOf(status: unknown, ...texts: unknown[]): number | undefined {
  if (typeof status === "number") return status;
  for (const text of texts) {
    // `API Error: 404 {…}` (2.0.x, 2.1.100) and `API Error: Request rejected (429) · …`.
    const match = typeof text === "string" ? /\bAPI Error: (?:(\d{3})\b|[^(\n]{0,80}\((\d{3})\))/.exec(text) : null;
    if (match) return Number(match[1] ?? match[2]);
  }
  return undefined;
}

/**
 * How a run ended, named as the runtime names its stop reasons: `ok` (natural), `budget` (the turn
 * limit, which a loop reports as its budget: not a failure), `interrupted` (an interrupt or cancel) or
 * `failed`, with the cause.
 */
export interface RunEnd {
  state: "ok" | "budget" | "interrupted" | "failed";
  /** Why, when not ok: the CLI's error text first, then the API status, the terminal reason, and non-fatal errors. */
  cause?: string;
}


/** How a `result` line ended the run (the same precedence as the runtime's `mapStopReason`). */
export function runEnd(result: Json): RunEnd {
  const subtype = String(result.subtype ?? "");
  const terminal = typeof result.terminal_reason === "string" ? result.terminal_reason : undefined;
  const budget = subtype === "error_max_turns" || terminal === "max_turns" || result.stop_reason === "max_turns";
  const interrupted = subtype === "error_during_execution" || terminal?.startsWith("aborted") === true || terminal === "interrupted";
  const failed = result.is_error === true || (subtype !== "success" && subtype !== "");
  if (!budget && !interrupted && !failed) return { state: "ok" };
  const errors = Array.isArray(result.errors) ? result.errors.map((error) => (typeof error === "string" ? error : JSON.stringify(error))) : [];
  const { causes, traces } = resultCauses(errors);
  const parts: string[] = [...causes];
  if (causes.length === 0 && typeof result.result === "string" && result.result && result.is_error === true) parts.push(result.result);
  const status = apiStatusOf(result.api_error_status, result.result, ...errors);
  if (status !== undefined && !parts.some((part) => part.includes(String(status)))) parts.push(`API status ${status}`);
  if (terminal && terminal !== "completed") parts.push(`terminal reason ${terminal}`);
  if (traces.length > 0) parts.push(`${traces.length} non-fatal error${traces.length === 1 ? "" : "s"} with stack traces, first: ${traces[0]!.split("\n")[0]}`);
  if (parts.length === 0) parts.push(subtype || "no cause recorded");
  return { state: budget ? "budget" : interrupted ? "interrupted" : "failed", cause: parts.join("; ") };
}

/** The label of a run end in `show` and `summary`. */
export function endLabel(end: RunEnd): string {
  if (end.state === "ok") return "completed";
  const label = end.state === "budget" ? "BUDGET STOP (turn limit reached)" : end.state === "interrupted" ? "INTERRUPTED" : "FAILED";
  return `${label}: ${end.cause}`;
}

/** A synthetic assistant line: the CLI's report of an API failure, not a model turn. */
export function isSyntheticAssistant(message: Json): boolean {
  const inner = asJson(message.message);
  return message.is_api_error_message === true || inner.model === "<synthetic>" || (message.error !== undefined && message.error !== null);
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
  "call",
  "outcome",
  "non-json",
  "dropped",
  "note",
  "turn",
  "turn_end",
  "interrupt",
  "session_end",
] as const;

/** The `--type` values that name no known type (the part before the first `/` must be known). */
export function unknownTypes(types: readonly string[]): string[] {
  return types.filter((type) => !(KNOWN_TYPES as readonly string[]).includes(type.split("/")[0]!));
}
