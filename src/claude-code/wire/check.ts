/**
 * The check of one decrypted request before it is forwarded: what the CLI sends must be what the
 * library built for the call (tools whole, system prompt, model, prompt, the values of every body
 * field) inside the recorded shape of the version (shape.ts), with its turns bound to what this call
 * saw (check-turns.ts). Every difference is named; any difference keeps the request from leaving.
 */
import { isDeepStrictEqual } from "node:util";
import { checkMessages, type ResponseContent } from "./check-turns.js";
import { COMPACTION_TRIGGERS, compactedBilling, isCompactionRequest } from "./compaction.js";
import type { WireShape } from "./shape.js";
import { credentialDifferences, isCredentialHeader } from "./account-variants.js";
import type { InstructionFile } from "../capabilities/project.js";
import { isServerTool } from "../capabilities/mcp-tool-names.js";
import { shapeForCall } from "./shape-variants.js";
import { checkWebSearchRequest, isWebSearchRequest } from "./check-web-search.js";
import { subagentExpectation } from "./check-subagents.js";
import type { SubagentsLaunch } from "../capabilities-subagents.js";

export { REMINDER_TAG, type ResponseContent } from "./check-turns.js";

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
  /** The call's tools as the CLI lists them (`mcp__ktx__<name>`), with their descriptions and input schemas. */
  tools: ReadonlyArray<{ name: string; description?: string; inputSchema: unknown }>;
  /** The output schema of an object call (the CLI's `StructuredOutput` tool). */
  jsonSchema?: unknown;
  /** The project dir, absolute and with symlinks resolved: the CLI's working directory, which its environment reminder names. */
  cwd: readonly string[];
  /**
   * What the call's tools returned so far, by tool use id: the texts the runtime's MCP server handed
   * the CLI (results and errors alike). A tool result must be exactly this, then only reminders of a
   * recorded kind the CLI appends.
   */
  toolOutputs?: ReadonlyMap<string, readonly string[]>;
  /**
   * The call is a later turn of a conversation on its process (a session's, sessions/session.ts): its
   * request may carry the turns of the calls before it on the process, as they were sent and received.
   */
  continues?: boolean;
  /** Built-in tools opted into (`capabilities.builtinTools`): their definitions must be the version's recorded ones. */
  builtinTools?: readonly string[];
  /** `capabilities.projectInstructions`: the project's instruction files, whose reminder (the version's recorded format) may carry exactly their text. */
  projectInstructions?: readonly InstructionFile[];
  /** `capabilities.mcpServers` names: their tools (`mcp__<name>__<tool>`) are accepted with the server's own description and schema. */
  mcpServers?: readonly string[];
  /** The servers' tools the call's init listed (set when init reaches the host): a request may carry only these of them. */
  mcpTools?: readonly string[];
  /** The project dir is in a linked git worktree (run/wire-binding.ts): the environment reminder recorded for one is admitted. */
  worktree?: boolean;
  /** `capabilities.webSearch`: the CLI's own web search requests are admitted, in their recorded shape (check-web-search.ts). */
  webSearch?: boolean;
  /** `capabilities.subagents`: the agents' own requests are admitted in their recorded shape, and the parent's requests may list them (check-subagents.ts). */
  subagents?: SubagentsLaunch;
  /** The process runs with the CLI's auto-compaction (a session's `compaction`): its turns may send summary requests (compaction.ts). */
  compaction?: boolean;
}

/** What the interceptor saw of the call so far: the model responses it forwarded, in order. */
export interface CallSeen {
  responses: readonly ResponseContent[];
  /** A conversation's earlier turns on the process, oldest first (only for a call that `continues`). */
  earlier?: readonly EarlierTurn[];
  /** What the conversation's compactions on the process were answered with (compaction.ts), which a continuation text may hold. */
  summaries?: readonly string[];
}

/** An earlier call of a conversation as the interceptor saw it: its prompt, the responses it forwarded, what its tools returned. */
export interface EarlierTurn {
  prompt: string;
  /** The model the call ran on: a switch between turns puts the CLI's `/model` exchange before the next prompt. */
  model: string;
  responses: readonly ResponseContent[];
  toolOutputs: ReadonlyMap<string, readonly string[]>;
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

/**
 * The description the CLI gives its `StructuredOutput` tool, the only text of a request's tools the
 * library does not build, for a shape recorded before the recorder kept it (`cliTools`): 2.1.330's,
 * as recorded.
 */
export const STRUCTURED_OUTPUT_DESCRIPTIONS: readonly string[] = [
  "Use this tool to return your final response in the requested structured format. You MUST call this tool exactly once at the end of your response to provide the structured output.",
];
/** What the CLI puts in place of a tool description's end past its limit (measured on 2.1.330: 4,096 characters kept). */
const TRUNCATED = "… [truncated]";

const quote = (text: string, max = 120) => JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** Differences between a Messages request and the call's expectation; empty when it may be forwarded. */
export function checkMessagesRequest(request: WireRequest, call: CallExpectation, baseShape: WireShape, seen: CallSeen = { responses: [] }): string[] {
  const differences: string[] = [];
  // The base shape, plus what was recorded for this role's model, a [1m] id or a worktree, if that is this call's case (shape-variants.ts).
  const { shape } = shapeForCall(baseShape, call.model, call.worktree);
  if (request.method !== "POST" || request.path !== "/v1/messages" || request.host !== "api.anthropic.com") {
    differences.push(`the request was ${request.method} ${request.host}${request.path}, not POST api.anthropic.com/v1/messages`);
  }
  if (request.query && request.query !== "beta=true") differences.push(`the query was ${quote(request.query)}, not "beta=true"`);
  // A summary request of a session with compaction (compaction.ts) names its trigger in headers of its own.
  const compaction = call.compaction === true && isCompactionRequest(isObject(request.body) ? request.body.messages : undefined, shape);
  for (const name of Object.keys(request.headers)) {
    const compacted = (seen.summaries?.length ?? 0) > 0 && (shape.compaction?.compactedHeaders.includes(name.toLowerCase()) ?? false);
    if ((compaction && shape.compaction!.requestHeaders.includes(name.toLowerCase())) || compacted) {
      if (!COMPACTION_TRIGGERS.includes(String(request.headers[name]))) differences.push(`header ${quote(name)} named a compaction trigger the CLI does not: ${quote(String(request.headers[name]))}`);
      continue;
    }
    if (!shape.headers.has(name.toLowerCase()) && !isCredentialHeader(name.toLowerCase(), shape)) differences.push(`header ${quote(name)} is not one the CLI version sends`);
  }
  differences.push(...credentialDifferences(request.headers));
  const betaHeader = request.headers["anthropic-beta"];
  const betas = (Array.isArray(betaHeader) ? betaHeader.join(",") : (betaHeader ?? "")).split(",").map((beta) => beta.trim()).filter(Boolean);
  for (const beta of betas) if (!shape.betas.has(beta)) differences.push(`beta ${quote(beta)} is not one the CLI version sends`);

  const body = request.body;
  if (!isObject(body)) return [...differences, "the body is not a JSON object"];
  // The CLI's own web search request (capabilities.webSearch) has a shape of its own, recorded apart.
  if (isWebSearchRequest(body)) return [...differences, ...checkWebSearchRequest(body, call, shape, seen.responses)];
  // A subagent's own request (capabilities.subagents) is checked as a call of its own: its prompt, its task, its tools.
  const subagent = subagentExpectation(body, call, shape, seen.responses);
  if (typeof subagent === "string") return [...differences, subagent];
  const expected = subagent ?? call;
  // A subagent may run on a model of its own: the body's model is that model's as the CLI sends it (a [1m] suffix stripped).
  const { bodyModel } = shapeForCall(baseShape, expected.model, call.worktree);
  for (const name of Object.keys(body)) if (!shape.bodyFields.has(name)) differences.push(`body field ${quote(name)} is not one the CLI version sends`);
  if (body.model !== bodyModel) differences.push(`model was ${quote(String(body.model))}, not the role's ${quote(expected.model)}${bodyModel === expected.model ? "" : ` (sent as ${quote(bodyModel)})`}`);
  differences.push(...checkSystem(body.system, expected, shape, seen));
  differences.push(...checkTools(body.tools, expected, shape));
  differences.push(...checkMessages(body.messages, expected, shape, seen.responses, seen.earlier, seen.summaries));
  differences.push(...checkFieldValues(body, expected));
  return differences;
}

/** A `cache_control` the CLI writes: `{type: "ephemeral", ttl: "1h"}`; keys and values are short words, never text. */
export function cacheControlProblem(value: unknown): string | undefined {
  if (!isObject(value)) return `a cache_control that is not an object: ${quote(JSON.stringify(value) ?? String(value))}`;
  for (const [key, setting] of Object.entries(value)) {
    if (!["type", "ttl", "scope"].includes(key) || typeof setting !== "string" || !/^[a-z0-9_]{1,16}$/.test(setting)) return `a cache_control with ${quote(`${key}: ${JSON.stringify(setting)}`)}`;
  }
  return undefined;
}

/** Keys of an object outside `allowed`, named; cache_control checked for its values. */
export function keyProblems(block: Record<string, unknown>, allowed: readonly string[], where: string): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(block)) {
    if (key === "cache_control" && allowed.includes(key)) {
      const problem = cacheControlProblem(block[key]);
      if (problem) problems.push(`${where} held ${problem}`);
    } else if (!allowed.includes(key)) problems.push(`${where} held a key ${quote(key)} the CLI does not write there`);
  }
  return problems;
}

function checkSystem(system: unknown, expected: CallExpectation, shape: WireShape, seen: CallSeen = { responses: [] }): string[] {
  if (!Array.isArray(system)) return ["the system field is not a list of blocks"];
  const differences: string[] = [];
  for (const [index, block] of system.entries()) {
    if (!isObject(block) || block.type !== "text" || typeof block.text !== "string") differences.push(`system block ${index} is not a text block`);
    else differences.push(...keyProblems(block, index === 0 ? ["type", "text"] : ["type", "text", "cache_control"], `system block ${index}`));
  }
  const texts = system.map((block) => (isObject(block) && block.type === "text" && typeof block.text === "string" ? block.text : undefined));
  const [line, ...rest] = texts;
  // After a compaction the line names the conversation's last response before it (compaction.ts).
  const billing = line !== undefined && (seen.summaries?.length ?? 0) > 0 ? compactedBilling(line, [...(seen.earlier ?? []).flatMap((turn) => turn.responses), ...seen.responses], shape.compaction) : line;
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

function checkTools(tools: unknown, expected: CallExpectation, shape: WireShape): string[] {
  if (tools !== undefined && !Array.isArray(tools)) return ["the tools field is not a list"];
  const list = (tools ?? []) as unknown[];
  const want = new Map<string, { descriptions: readonly string[]; inputSchema: unknown }>(expected.tools.map((tool) => [tool.name, { descriptions: [tool.description ?? ""], inputSchema: tool.inputSchema }]));
  const recorded = shape.cliTools.get("StructuredOutput");
  if (expected.jsonSchema !== undefined) want.set("StructuredOutput", { descriptions: recorded !== undefined ? [recorded] : STRUCTURED_OUTPUT_DESCRIPTIONS, inputSchema: expected.jsonSchema });
  const differences: string[] = [];
  for (const name of expected.builtinTools ?? []) {
    const builtin = shape.builtinTools.get(name);
    if (builtin) want.set(name, { descriptions: [builtin.description], inputSchema: builtin.inputSchema });
    else differences.push(`built-in tool ${quote(name)} has no recorded definition for this CLI version`);
  }
  const seen = new Set<string>();
  for (const tool of list) {
    if (!isObject(tool) || typeof tool.name !== "string") {
      differences.push(`a tool that is not an object with a name: ${quote(JSON.stringify(tool) ?? "")}`);
      continue;
    }
    const name = tool.name;
    const added = shape.addedTools?.get(name);
    if (added && !want.has(name)) {
      // A tool the CLI adds for this model (recorded whole): nothing of it may differ.
      if (seen.has(name)) differences.push(`tool ${quote(name)} was listed twice`);
      seen.add(name);
      if (!isDeepStrictEqual(tool, added)) differences.push(`tool ${quote(name)} was not the one the CLI version adds: ${quote(JSON.stringify(tool))}`);
      continue;
    }
    const built = want.get(name);
    // A tool of an opted-in MCP server the CLI runs: its name is the server's prefix and a word; its text is the server's own (not recorded, not compared).
    if (!built && expected.mcpServers && isServerTool(name, expected.mcpServers) && /^[A-Za-z0-9_.-]{1,128}$/.test(name)) {
      // Bound to what init listed: a tool the server did not report there is not one the call opted into.
      if (expected.mcpTools === undefined) differences.push(`tool ${quote(name)} came before the call's init listed its server's tools`);
      else if (!expected.mcpTools.includes(name)) differences.push(`tool ${quote(name)} is not one init listed for its server`);
      if (seen.has(name)) differences.push(`tool ${quote(name)} was listed twice`);
      seen.add(name);
      differences.push(...keyProblems(tool, ["name", "description", "input_schema", "cache_control"], `tool ${quote(name)}`));
      continue;
    }
    if (!built) {
      differences.push(`tool ${quote(name)} is not one of the call's tools`);
      continue;
    }
    if (seen.has(name)) differences.push(`tool ${quote(name)} was listed twice`);
    seen.add(name);
    differences.push(...keyProblems(tool, ["name", "description", "input_schema", "cache_control"], `tool ${quote(name)}`));
    if (!isDeepStrictEqual(withoutSchemaKey(tool.input_schema), withoutSchemaKey(built.inputSchema))) differences.push(`tool ${quote(name)} had another input schema than the call's`);
    if (!descriptionMatches(tool.description, built.descriptions)) differences.push(`tool ${quote(name)} had another description than the call's: ${quote(String(tool.description))}`);
  }
  for (const name of want.keys()) if (!seen.has(name)) differences.push(`tool ${quote(name)} of the call was missing`);
  return differences;
}

/** The description as built, or its start with the CLI's truncation mark. */
function descriptionMatches(description: unknown, built: readonly string[]): boolean {
  if (typeof description !== "string") return description === undefined && built.includes("");
  if (built.includes(description)) return true;
  if (!description.endsWith(TRUNCATED)) return false;
  const kept = description.slice(0, -TRUNCATED.length);
  return kept.length > 0 && built.some((text) => text.length > kept.length && text.startsWith(kept));
}

/** The CLI drops a JSON Schema's `$schema` key; nothing else may differ. */
function withoutSchemaKey(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

/** A word-like string: what the CLI writes in the settings fields (`adaptive`, `clear_thinking_20251015`, a message id, a uuid). */
const WORD = /^[A-Za-z0-9_.:-]{0,100}$/;

/**
 * The values of the body fields besides model, system, tools and messages. None carries text the call
 * gave, so every string in them must be a word (no sentence fits), except `output_config.format`, which
 * must be the call's own schema when there is one, and `metadata.user_id`, a JSON object of words.
 */
export function checkFieldValues(body: Record<string, unknown>, expected: CallExpectation): string[] {
  const differences: string[] = [];
  for (const [name, value] of Object.entries(body)) {
    if (["model", "system", "tools", "messages"].includes(name)) continue;
    if (name === "max_tokens" && !(Number.isInteger(value) && (value as number) > 0)) differences.push(`max_tokens was ${quote(JSON.stringify(value) ?? "")}, not a count`);
    else if (name === "stream" && typeof value !== "boolean") differences.push(`stream was ${quote(JSON.stringify(value) ?? "")}, not true or false`);
    else if (name === "metadata") differences.push(...checkMetadata(value));
    else if (name === "output_config" && isObject(value) && Object.hasOwn(value, "format")) {
      const { format, ...rest } = value;
      const want = expected.jsonSchema === undefined ? undefined : { type: "json_schema", schema: expected.jsonSchema };
      if (!want || !isObject(format) || format.type !== want.type || !isDeepStrictEqual(withoutSchemaKey(format.schema), withoutSchemaKey(want.schema)) || Object.keys(format).some((key) => !["type", "schema"].includes(key))) {
        differences.push(`output_config.format was not the call's output schema: ${quote(JSON.stringify(format) ?? "")}`);
      }
      const problem = wordsOnly(rest);
      if (problem) differences.push(`body field "output_config" held ${problem}`);
    } else {
      const problem = wordsOnly(value);
      if (problem) differences.push(`body field ${quote(name)} held ${problem}`);
    }
  }
  return differences;
}

function checkMetadata(value: unknown): string[] {
  if (!isObject(value)) return [`metadata was ${quote(JSON.stringify(value) ?? "")}, not an object`];
  const differences: string[] = [];
  for (const [key, item] of Object.entries(value)) {
    if (key !== "user_id" || typeof item !== "string") {
      differences.push(`metadata held ${quote(`${key}: ${JSON.stringify(item)}`)}`);
      continue;
    }
    let parsed: unknown = item;
    try {
      parsed = item.startsWith("{") ? JSON.parse(item) : item;
    } catch {
      // Not JSON: checked as a word below.
    }
    const problem = wordsOnly(parsed);
    if (problem) differences.push(`metadata.user_id held ${problem}`);
  }
  return differences;
}

/** Why a value holds more than words, numbers, booleans and nulls (nested a little), or undefined. */
export function wordsOnly(value: unknown, depth = 0): string | undefined {
  if (value === null || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))) return undefined;
  if (typeof value === "string") return WORD.test(value) ? undefined : `the text ${quote(value)}`;
  if (depth >= 4) return "values nested deeper than the CLI writes";
  if (Array.isArray(value)) {
    if (value.length > 16) return "a list longer than the CLI writes";
    for (const item of value) {
      const problem = wordsOnly(item, depth + 1);
      if (problem) return problem;
    }
    return undefined;
  }
  if (isObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (!WORD.test(key)) return `the key ${quote(key)}`;
      const problem = wordsOnly(item, depth + 1);
      if (problem) return problem;
    }
    return undefined;
  }
  return `a value of type ${typeof value}`;
}
