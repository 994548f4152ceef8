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
