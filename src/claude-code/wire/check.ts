/**
 * The check of one decrypted request before it is forwarded: what the CLI sends must be what the
 * library built for the call (tools, system prompt, model, prompt) inside the recorded shape of the
 * version (shape.ts). Every difference is named; any difference keeps the request from leaving.
 */
import { isDeepStrictEqual } from "node:util";
import type { WireShape } from "./shape.js";
import { credentialDifferences, isCredentialHeader } from "./account-variants.js";

/** Advice for a request the check stopped. */
export const WIRE_ADVICE =
  "The CLI sent something the library did not build for this call, so the request was not forwarded and the CLI was retired. Look for what the named text comes from (a managed CLAUDE.md, a policy file, a wrapper); `wire: false` turns the check off (docs/isolation.md).";

/** What the library built for the call now running on a process. */
export interface CallExpectation {
  /** The model id the role resolves to. */
  model: string;
  /** The caller's system prompt ("" for none). */
  system: string;
  prompt: string;
  /** The call's tools as the CLI lists them (`mcp__ktx__<name>`), with their input schemas. */
  tools: ReadonlyArray<{ name: string; inputSchema: unknown }>;
  /** The output schema of an object call (the CLI's `StructuredOutput` tool). */
  jsonSchema?: unknown;
  /**
   * What the call's tools returned so far, by tool use id: the texts the runtime's MCP server handed
   * the CLI (results and errors alike). A `<system-reminder>` inside them is the tool's own output;
   * any other inside a tool result must be of a kind recorded for the version.
   */
  toolOutputs?: ReadonlyMap<string, readonly string[]>;
}

export interface WireRequest {
  method: string;
  host: string;
  /** Without the query string. */
  path: string;
  query: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

// 2.1.142 ends its context reminder with two newlines, 2.1.330 its date reminder with one.
const REMINDER = /^<system-reminder>\n([\s\S]*)\n<\/system-reminder>\n*$/;
const quote = (text: string, max = 120) => JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
const firstLine = (text: string) => text.split("\n").find((line) => line.trim().length > 0) ?? "";

/** Differences between a Messages request and the call's expectation; empty when it may be forwarded. */
export function checkMessagesRequest(request: WireRequest, expected: CallExpectation, shape: WireShape): string[] {
  const differences: string[] = [];
  if (request.method !== "POST" || request.path !== "/v1/messages" || request.host !== "api.anthropic.com") {
    differences.push(`the request was ${request.method} ${request.host}${request.path}, not POST api.anthropic.com/v1/messages`);
  }
  if (request.query && request.query !== "beta=true") differences.push(`the query was ${quote(request.query)}, not "beta=true"`);
  for (const name of Object.keys(request.headers)) {
    if (!shape.headers.has(name.toLowerCase()) && !isCredentialHeader(name.toLowerCase(), shape)) differences.push(`header ${quote(name)} is not one the CLI version sends`);
  }
  differences.push(...credentialDifferences(request.headers));
  const betaHeader = request.headers["anthropic-beta"];
  const betas = (Array.isArray(betaHeader) ? betaHeader.join(",") : (betaHeader ?? "")).split(",").map((beta) => beta.trim()).filter(Boolean);
  for (const beta of betas) if (!shape.betas.has(beta)) differences.push(`beta ${quote(beta)} is not one the CLI version sends`);

  const body = request.body;
  if (!body || typeof body !== "object" || Array.isArray(body)) return [...differences, "the body is not a JSON object"];
  const fields = body as Record<string, unknown>;
  for (const name of Object.keys(fields)) if (!shape.bodyFields.has(name)) differences.push(`body field ${quote(name)} is not one the CLI version sends`);
  if (fields.model !== expected.model) differences.push(`model was ${quote(String(fields.model))}, not the role's ${quote(expected.model)}`);
  differences.push(...checkSystem(fields.system, expected, shape));
  differences.push(...checkTools(fields.tools, expected));
  differences.push(...checkMessages(fields.messages, expected, shape));
  return differences;
}

function checkSystem(system: unknown, expected: CallExpectation, shape: WireShape): string[] {
  if (!Array.isArray(system)) return ["the system field is not a list of blocks"];
  const texts = system.map((block) => (block && typeof block === "object" && (block as { type?: unknown }).type === "text" ? String((block as { text?: unknown }).text) : undefined));
  const [billing, ...rest] = texts;
  const differences: string[] = [];
  if (billing === undefined || !shape.billingLine.test(billing)) differences.push(`the first system block was ${quote(billing ?? "(missing)")}, not the version's billing line`);
  const want = [shape.preamble, ...(expected.system ? [expected.system] : [])];
  if (!isDeepStrictEqual(rest, want)) {
    const extra = rest.filter((text) => !want.includes(text as string));
    differences.push(
      extra.length > 0
        ? `the system prompt held text the call did not give: ${extra.map((text) => quote(text ?? "(not text)")).join(", ")}`
        : `the system blocks were ${rest.length} (${rest.map((text) => quote(text ?? "", 40)).join(", ")}), not the version's preamble and the call's system prompt`,
    );
  }
  return differences;
}

function checkTools(tools: unknown, expected: CallExpectation): string[] {
  const list = Array.isArray(tools) ? (tools as Array<Record<string, unknown>>) : [];
  const want = new Map<string, unknown>(expected.tools.map((tool) => [tool.name, tool.inputSchema]));
  if (expected.jsonSchema !== undefined) want.set("StructuredOutput", expected.jsonSchema);
  const differences: string[] = [];
  const seen = new Set<string>();
  for (const tool of list) {
    const name = String(tool.name);
    seen.add(name);
    if (!want.has(name)) {
      differences.push(`tool ${quote(name)} is not one of the call's tools`);
      continue;
    }
    if (!isDeepStrictEqual(withoutSchemaKey(tool.input_schema), withoutSchemaKey(want.get(name)))) differences.push(`tool ${quote(name)} had another input schema than the call's`);
  }
  for (const name of want.keys()) if (!seen.has(name)) differences.push(`tool ${quote(name)} of the call was missing`);
  return differences;
}

/** The CLI drops a JSON Schema's `$schema` key; nothing else may differ. */
function withoutSchemaKey(schema: unknown): unknown {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return schema;
  const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
  return rest;
}

function checkMessages(messages: unknown, expected: CallExpectation, shape: WireShape): string[] {
  if (!Array.isArray(messages) || messages.length === 0) return ["the request carried no messages"];
  const differences: string[] = [];
  let promptSeen = false;
  for (const [index, message] of (messages as Array<{ role?: unknown; content?: unknown }>).entries()) {
    if (message.role !== "user") continue;
    const blocks = typeof message.content === "string" ? [{ type: "text", text: message.content }] : Array.isArray(message.content) ? (message.content as Array<{ type?: unknown; text?: unknown }>) : [];
    for (const block of blocks) {
      if (block.type === "tool_result") {
        differences.push(...checkToolResult(block as ToolResultBlock, index, expected, shape));
        continue;
      }
      if (block.type !== "text") continue;
      const text = String(block.text);
      const reminder = REMINDER.exec(text);
      if (reminder) {
        differences.push(...checkReminder(reminder[1]!, shape));
        continue;
      }
      if (index === 0 && text === expected.prompt && !promptSeen) {
        promptSeen = true;
        continue;
      }
      if (index > 0 && shape.syntheticUserTexts.includes(text)) continue;
      differences.push(`user turn ${index} held text the call did not give: ${quote(text)}`);
    }
  }
  if (!promptSeen) differences.push("the call's prompt was not the first user turn's text");
  return differences;
}

interface ToolResultBlock {
  tool_use_id?: unknown;
  content?: unknown;
}

/** A whole reminder as the CLI writes one: the tag on its own line, then the text, then the closing tag on its own line. */
const REMINDER_IN_TEXT = /<system-reminder>\n([\s\S]*?)\n<\/system-reminder>/g;
/** Anything that would read as a reminder tag to the model, well-formed or not (`<system-reminder id="…">`, `</ system-reminder>`). */
export const REMINDER_TAG = /<\s*\/?\s*system-reminder\b/i;

/**
 * Reminders inside a tool result. The CLI appends its own to a tool's output as whole text blocks
 * after it (measured on 2.1.330: with the token-budget reminder on, the last tool result of a turn
 * became `[{text: "<output>\n"}, {text: "<system-reminder>\n<total_tokens>… tokens left</total_tokens>\n</system-reminder>"}]`).
 * The tool's own output, as the runtime's MCP server returned it, is taken off the front first: a
 * KTX tool may itself return the text `<system-reminder>`. What is left (all of it for a result the
 * CLI wrote itself: a refused tool, a schema error) may hold only reminders of a recorded kind.
 */
function checkToolResult(block: ToolResultBlock, index: number, expected: CallExpectation, shape: WireShape): string[] {
  const id = typeof block.tool_use_id === "string" ? block.tool_use_id : "";
  const parts = typeof block.content === "string" ? [block.content] : Array.isArray(block.content) ? (block.content as Array<{ type?: unknown; text?: unknown }>).filter((part) => part.type === "text").map((part) => String(part.text)) : [];
  const text = parts.join("");
  if (!REMINDER_TAG.test(text)) return [];
  const own = expected.toolOutputs?.get(id)?.join("") ?? "";
  const ownFirst = own !== "" && text.startsWith(own);
  const added = ownFirst ? text.slice(own.length) : text;
  // Says what was checked: what followed the tool's own output, or all of a result the tool's output does not begin.
  const why = ownFirst
    ? " (after the output the call's tool returned)"
    : own
      ? " (the result does not begin with the output the call's tool returned, so all of it was checked)"
      : expected.toolOutputs?.has(id)
        ? ""
        : " (no output of the call's tools with a <system-reminder> tag for this tool call, so all of it was checked)";
  const where = `the result of tool call ${quote(id)} in user turn ${index}`;
  const differences: string[] = [];
  for (const reminder of added.matchAll(REMINDER_IN_TEXT)) differences.push(...checkReminder(reminder[1]!, shape).map((difference) => `${where}${why}: ${difference}`));
  const rest = added.replace(REMINDER_IN_TEXT, "");
  if (REMINDER_TAG.test(rest)) differences.push(`${where}${why} held a <system-reminder> tag that is no whole reminder: ${quote(rest.slice(rest.search(REMINDER_TAG)))}`);
  return differences;
}

function checkReminder(text: string, shape: WireShape): string[] {
  if (shape.reminders.some((reminder) => reminder.pattern.test(text))) return [];
  const { head, tail } = shape.context;
  if (head && text.startsWith(head) && text.endsWith(tail) && text.length >= head.length + tail.length) {
    const differences: string[] = [];
    const sections = text.slice(head.length, text.length - tail.length).split(/^# (?=\S+\n)/m);
    if (sections[0] !== "") differences.push(`a context reminder held text before its first section: ${quote(sections[0]!)}`);
    for (const section of sections.slice(1)) {
      const newline = section.indexOf("\n");
      const name = section.slice(0, newline);
      const body = section.slice(newline + 1).replace(/\n+$/, "");
      // A section may have several recorded wordings (2.1.330's userEmail has two).
      if (shape.contextSections.some((candidate) => candidate.name === name && candidate.pattern.test(body))) continue;
      differences.push(describeSection(name, body));
    }
    return differences;
  }
  if (/^Contents of /m.test(text)) return [describeSection("memory", text)];
  return [`a <system-reminder> of no kind recorded for this CLI version: ${quote(text)}`];
}

/** Names where injected instructions came from: a CLAUDE.md's path and first line. */
function describeSection(name: string, body: string): string {
  const files = [...body.matchAll(/^Contents of (.+?)(?: \(([^)]*)\))?:\n\n?([\s\S]*?)(?=\n\nContents of |$)/gm)];
  if (files.length > 0) {
    return files.map((file) => `instructions from ${file[1]}${file[2] ? ` (${file[2]})` : ""} reached the request (context section "${name}"), first line ${quote(firstLine(file[3] ?? ""))}`).join("; ");
  }
  return `a context reminder section "${name}" not recorded for this CLI version: ${quote(body)}`;
}
