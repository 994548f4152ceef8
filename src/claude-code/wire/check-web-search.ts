/**
 * The CLI's own web search request (`capabilities.webSearch`): when the model calls WebSearch, 2.1.330 sends a
 * request of its own to the Messages endpoint with the API's server tool (`web_search_20250305`). It is admitted
 * only with the capability, and only in its recorded shape (shape-file.ts, `webSearch`): the version's billing line
 * and preamble, the recorded system text, server tool and tool choice, and one user message asking to search for
 * a query the model itself gave in a WebSearch call this call's interceptor forwarded.
 */
import { isDeepStrictEqual } from "node:util";
import type { CallExpectation, ResponseContent } from "./check.js";
import { checkFieldValues, keyProblems } from "./check.js";
import type { WireShape } from "./shape.js";

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const quote = (text: string, max = 120) => JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);

/** Whether a Messages request body carries the API's web search server tool (a `type` of `web_search_…`). */
export function isWebSearchRequest(body: Record<string, unknown>): boolean {
  return Array.isArray(body.tools) && body.tools.some((tool) => isObject(tool) && typeof tool.type === "string" && tool.type.startsWith("web_search_"));
}

/** The queries of the WebSearch calls in the model responses the interceptor forwarded for this call. */
function askedQueries(responses: readonly ResponseContent[]): Set<string> {
  const queries = new Set<string>();
  for (const response of responses) {
    for (const block of response.content) {
      if (isObject(block) && block.type === "tool_use" && block.name === "WebSearch" && isObject(block.input) && typeof block.input.query === "string") queries.add(block.input.query);
    }
  }
  return queries;
}

/** Differences between a web search request and what the capability admits; empty when it may be forwarded. */
export function checkWebSearchRequest(body: Record<string, unknown>, expected: CallExpectation, shape: WireShape, responses: readonly ResponseContent[]): string[] {
  if (!expected.webSearch) return ["the request carries the API's web search tool, and the call did not opt into capabilities.webSearch"];
  const recorded = shape.webSearch;
  if (!recorded) return [`no web search request is recorded for Claude Code ${shape.version}`];
  const differences: string[] = [];
  for (const name of Object.keys(body)) if (!recorded.bodyFields.includes(name)) differences.push(`body field ${quote(name)} is not one the CLI's web search request carries`);
  if (body.model !== expected.model) differences.push(`the web search request's model was ${quote(String(body.model))}, not the call's ${quote(expected.model)}`);
  // system: the billing line, the preamble, the recorded web search text; nothing of the caller's.
  const system = Array.isArray(body.system) ? body.system : [];
  const texts = system.map((block) => (isObject(block) && block.type === "text" && typeof block.text === "string" ? block.text : undefined));
  for (const [index, block] of system.entries()) if (isObject(block)) differences.push(...keyProblems(block, index === 0 ? ["type", "text"] : ["type", "text", "cache_control"], `web search system block ${index}`));
  if (texts.length !== 3 || texts[0] === undefined || !shape.billingLine.test(texts[0]) || texts[1] !== shape.preamble || texts[2] !== recorded.system) {
    differences.push(`the web search request's system blocks were not the version's billing line, preamble and recorded web search text: ${texts.map((text) => quote(text ?? "(not text)", 60)).join(", ")}`);
  }
  if (!isDeepStrictEqual(body.tools, recorded.tools)) differences.push(`the web search request's tools were ${quote(JSON.stringify(body.tools) ?? "")}, not the recorded server tool`);
  if (!isDeepStrictEqual(body.tool_choice, recorded.toolChoice)) differences.push(`the web search request's tool_choice was ${quote(JSON.stringify(body.tool_choice) ?? "")}, not the recorded one`);
  // messages: one user turn asking for a query the model gave in a WebSearch call of this call.
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const only = messages.length === 1 && isObject(messages[0]) && messages[0].role === "user" ? messages[0] : undefined;
  const content = only === undefined ? undefined : typeof only.content === "string" ? [{ type: "text", text: only.content }] : only.content;
  const block = Array.isArray(content) && content.length === 1 && isObject(content[0]) && content[0].type === "text" && typeof content[0].text === "string" ? content[0] : undefined;
  if (!only || !block) differences.push("the web search request's messages were not one user turn with one text");
  else {
    differences.push(...keyProblems(only, ["role", "content"], "the web search request's user turn"), ...keyProblems(block, ["type", "text", "cache_control"], "the web search request's text"));
    const text = String(block.text);
    const query = text.startsWith(recorded.promptPrefix) ? text.slice(recorded.promptPrefix.length) : undefined;
    if (query === undefined) differences.push(`the web search request asked ${quote(text)}, not the recorded ${quote(recorded.promptPrefix)}<query>`);
    else if (!askedQueries(responses).has(query)) differences.push(`the web search request's query ${quote(query)} is no query the model gave in a WebSearch call of this call`);
  }
  const { model: _model, system: _system, tools: _tools, tool_choice: _choice, messages: _messages, ...rest } = body;
  differences.push(...checkFieldValues(rest, expected));
  return differences;
}
