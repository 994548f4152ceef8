/**
 * The turns of a Messages request (check.ts): user turns hold only the call's prompt, the reminders of
 * the version's recorded kinds (their slots bound to the call's project dir and this machine), the
 * CLI's own later texts, and tool results that are exactly what the call's tools returned; system
 * turns only a recorded reminder's text; assistant turns only blocks of the model responses this call
 * received through the interceptor, in order. A later turn of a conversation may also carry the
 * conversation's earlier turns: their prompts and the blocks of the responses they received, each once
 * and in the order they were sent and received, and their tools' results.
 */
import { release, type } from "node:os";
import { isDeepStrictEqual } from "node:util";
import type { CallExpectation, EarlierTurn } from "./check.js";
import { cacheControlProblem, keyProblems, wordsOnly } from "./check.js";
import { BOUND_PLACEHOLDERS, templateSource } from "./shape-file.js";
import { isInstructionsReminder } from "../capabilities/project.js";
import { isServerTool } from "../capabilities/mcp-tool-names.js";
import { agentLines } from "./check-subagents.js";
import { COMPACTION_TRUNCATED, CONTEXT_REREAD_HEAD, continuationProblem, isCompactionRequest } from "./compaction.js";
import type { WireShape } from "./shape.js";

/** One model response the interceptor forwarded: its message id and its content blocks, as the API sent them. */
export interface ResponseContent {
  id?: string;
  content: readonly unknown[];
}

// 2.1.142 ends its context reminder with two newlines, 2.1.330 its date reminder with one.
const REMINDER = /^<system-reminder>\n([\s\S]*)\n<\/system-reminder>\n*$/;
/** A whole reminder at the start of a text, as the CLI appends one. */
const LEADING_REMINDER = /^<system-reminder>\n([\s\S]*?)\n<\/system-reminder>\n*/;
/** Anything that would read as a reminder tag to the model, well-formed or not (`<system-reminder id="…">`, `</ system-reminder>`). */
export const REMINDER_TAG = /<\s*\/?\s*system-reminder\b/i;

const quote = (text: string, max = 120) => JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
const firstLine = (text: string) => text.split("\n").find((line) => line.trim().length > 0) ?? "";
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The machine's own values of the environment reminder's slots: the interceptor runs on the CLI's machine. */
const MACHINE = { platform: [process.platform], osVersion: [`${type()} ${release()}`] };

/**
 * What the request's turns may be made of, in order: for each earlier turn of a conversation its prompt
 * and the blocks of the responses it got, then this call's prompt and its responses' blocks.
 */
type Allowed = { prompt: string; current: boolean } | { block: unknown };

/**
 * What 2.1.330 puts before a conversation's next prompt when the model was switched between turns
 * (`apply_flag_settings`, session.setModel): a `/model` local-command exchange naming the new model
 * (measured; on a process with no conversation yet it puts none). Only the model the turn runs on fits.
 */
const modelSwitchTexts = (model: string): string[] => [
  "<local-command-caveat>The command below was run directly in Claude Code, not sent to you as a request, and its output goes straight to the user. It's recorded here as context for later messages.</local-command-caveat>",
  `<command-name>/model</command-name>\n            <command-message>model</command-message>\n            <command-args>${model}</command-args>`,
  `<local-command-stdout>Set model to \`${model}\`</local-command-stdout>`,
];

export function checkMessages(
  messages: unknown,
  expected: CallExpectation,
  shape: WireShape,
  responses: readonly ResponseContent[],
  earlier: readonly EarlierTurn[] = [],
  summaries: readonly string[] = [],
): string[] {
  if (!Array.isArray(messages) || messages.length === 0) return ["the request carried no messages"];
  // A session's summary request (compaction.ts): what precedes the instructions is checked as any request's, the prompt need not be in it.
  const compaction = expected.compaction === true && isCompactionRequest(messages, shape);
  const toolNames = [...expected.tools.map((tool) => tool.name), ...(expected.builtinTools ?? [])];
  const differences: string[] = [];
  const bound = { ...MACHINE, cwd: expected.cwd, agents: agentLines(expected.subagents) };
  const conversation = earlier.length > 0;
  // Each prompt and response block may be used once, in the order they were sent and received: a turn
  // of the conversation cannot be repeated, moved, or appear before the turn that produced it.
  const switched = (model: string, at: number): Allowed[] => (at > 0 && earlier[at - 1]!.model !== model ? modelSwitchTexts(model).map((text) => ({ prompt: text, current: false })) : []);
  const allowed: Allowed[] = [
    ...earlier.flatMap((turn, at): Allowed[] => [...switched(turn.model, at), { prompt: turn.prompt, current: false }, ...turn.responses.flatMap((response) => response.content.map((block) => ({ block })))]),
    ...switched(expected.model, earlier.length),
    { prompt: expected.prompt, current: true },
    ...responses.flatMap((response) => response.content.map((block) => ({ block }))),
  ];
  // The conversation's tools answered in its earlier turns too; their results are in the request again.
  const toolOutputs = conversation ? new Map([...earlier.flatMap((turn) => [...turn.toolOutputs]), ...(expected.toolOutputs ?? [])]) : expected.toolOutputs;
  const outputs = conversation ? { ...expected, toolOutputs } : expected;
  let next = 0;
  const toolUses = new Map<string, string>();
  let promptSeen = false;
  let continued = false;
  const whose = conversation ? "this conversation" : "this call";
  for (const [index, message] of (messages as unknown[]).entries()) {
    if (!isObject(message) || !["user", "assistant", "system"].includes(message.role as string)) {
      differences.push(`turn ${index} is not a user, assistant or system turn`);
      continue;
    }
    // A model's per-turn settings (shape-variants.ts: recorded for it, e.g. `output_config`), words only.
    const turnKeys = [...(shape.turnKeys ?? [])].filter((key) => Object.hasOwn(message, key));
    differences.push(...keyProblems(message, ["role", "content", ...turnKeys], `turn ${index}`));
    for (const key of turnKeys) {
      const problem = wordsOnly(message[key]);
      if (problem) differences.push(`turn ${index}'s ${quote(key)} held ${problem}`);
    }
    const content: unknown[] = typeof message.content === "string" ? [{ type: "text", text: message.content }] : Array.isArray(message.content) ? message.content : [];
    // A summary request's instructions end its last turn (compaction.ts); the rest of that turn is checked as any (a copy: the body is the request's).
    const blocks = compaction && index === messages.length - 1 ? content.slice(0, -1) : content;
    if (!Array.isArray(message.content) && typeof message.content !== "string") differences.push(`turn ${index} has no content list`);
    for (const block of blocks) {
      if (!isObject(block)) {
        differences.push(`turn ${index} held a block that is not an object`);
        continue;
      }
      if (message.role === "system") {
        // A system turn in the conversation (2.1.330, on a model it does not know: the environment text, untagged): only a recorded reminder's text, whole.
        if (block.type !== "text" || typeof block.text !== "string") differences.push(`system turn ${index} held a ${quote(String(block.type))} block`);
        else {
          differences.push(...keyProblems(block, ["type", "text", "cache_control"], `a text block in system turn ${index}`));
          differences.push(...checkReminder(block.text, shape, bound).map((difference) => `system turn ${index}: ${difference}`));
        }
        continue;
      }
      if (message.role === "assistant") {
        const at = allowed.findIndex((candidate, position) => position >= next && "block" in candidate && sameBlock(block, candidate.block));
        if (at < 0) {
          differences.push(`assistant turn ${index} held a ${quote(String(block.type))} block no model response of ${whose} had${conversation ? " at that place" : ""}: ${quote(JSON.stringify(block))}`);
          continue;
        }
        next = at + 1;
        if (block.type === "tool_use" && typeof block.id === "string") toolUses.set(block.id, String(block.name));
        continue;
      }
      if (block.type === "tool_result") {
        differences.push(...keyProblems(block, ["type", "tool_use_id", "content", "is_error", "cache_control"], `a tool result in user turn ${index}`));
        differences.push(...checkToolResult(block, index, outputs, shape, bound, toolUses));
        continue;
      }
      if (block.type !== "text" || typeof block.text !== "string") {
        differences.push(`user turn ${index} held a ${quote(String(block.type))} block, which the call did not give`);
        continue;
      }
      differences.push(...keyProblems(block, ["type", "text", "cache_control"], `a text block in user turn ${index}`));
      const text = block.text;
      const reminder = REMINDER.exec(text);
      if (reminder) {
        // projectInstructions: the reminder of the project's instruction files, bound to their text now (capabilities/project.ts).
        if (expected.projectInstructions && shape.projectInstructions && isInstructionsReminder(reminder[1]!, shape.projectInstructions, expected.projectInstructions)) continue;
        differences.push(...checkReminder(reminder[1]!, shape, bound, summaries.length > 0));
        continue;
      }
      // A single call's prompt opens its first user turn; a conversation's prompts come each once, in their turns' order
      // (after a failed turn the CLI sends the next prompt in the same user turn as the failed one's, whose text then ends with a newline: 2.1.330).
      const at = conversation || index === 0 ? allowed.findIndex((candidate, position) => position >= next && "prompt" in candidate && (candidate.prompt === text || (!candidate.current && `${candidate.prompt}\n` === text))) : -1;
      if (at >= 0) {
        next = at + 1;
        if ((allowed[at] as { current: boolean }).current) promptSeen = true;
        continue;
      }
      if (index > 0 && shape.syntheticUserTexts.includes(text)) continue;
      if (compaction && index === 0 && text === COMPACTION_TRUNCATED) continue;
      const continuation = conversation || summaries.length > 0 ? continuationProblem(text, summaries, toolNames, shape.compaction) : null;
      if (continuation === undefined) {
        continued = true;
        continue;
      }
      if (continuation !== null) {
        differences.push(`user turn ${index} held ${continuation}`);
        continue;
      }
      differences.push(`user turn ${index} held text the ${conversation ? "conversation" : "call"} did not give${conversation ? " there" : ""}: ${quote(text)}`);
    }
  }
  // After a compaction inside the turn the summary stands for its prompt too.
  if (!promptSeen && !compaction && !continued) differences.push(conversation ? "the call's prompt was not in the request after the conversation's earlier turns" : "the call's prompt was not the first user turn's text");
  return differences;
}

/**
 * A block of an assistant turn against one a response had: the same type, and every key it holds the
 * response's value (a text may lose trailing whitespace); `cache_control` is the CLI's own.
 */
function sameBlock(block: Record<string, unknown>, produced: unknown): boolean {
  if (!isObject(produced) || block.type !== produced.type) return false;
  for (const [key, value] of Object.entries(block)) {
    if (key === "cache_control") {
      if (cacheControlProblem(value)) return false;
      continue;
    }
    if (!Object.hasOwn(produced, key)) return false;
    const had = produced[key];
    if (key === "text" && typeof value === "string" && typeof had === "string" && (value === had || value === had.trimEnd())) continue;
    if (!isDeepStrictEqual(value, had)) return false;
  }
  return true;
}

/**
 * A tool result: the tool use it answers must be in an assistant turn (so in a response of this call).
 * When the call's tool returned an output, the result is that output, whole, then only whole reminders
 * of a recorded kind the CLI appends (measured on 2.1.330 with the token budget on: the last text gets a
 * newline, the reminder comes as a text block of its own). A KTX tool may itself return the text
 * `<system-reminder>`: its output is taken off the front first. Without an output (the CLI answered
 * itself), it must be one of the CLI's own answers for that tool use.
 */
function checkToolResult(block: Record<string, unknown>, index: number, expected: CallExpectation, shape: WireShape, bound: Record<string, readonly string[]>, toolUses: ReadonlyMap<string, string>): string[] {
  const id = typeof block.tool_use_id === "string" ? block.tool_use_id : "";
  const where = `the result of tool call ${quote(id)} in user turn ${index}`;
  const differences: string[] = [];
  if (block.is_error !== undefined && typeof block.is_error !== "boolean") differences.push(`${where} had is_error ${quote(JSON.stringify(block.is_error) ?? "")}`);
  const parts: string[] = [];
  if (typeof block.content === "string") parts.push(block.content);
  else if (Array.isArray(block.content)) {
    for (const part of block.content as unknown[]) {
      if (isObject(part) && part.type === "text" && typeof part.text === "string") {
        differences.push(...keyProblems(part, ["type", "text", "cache_control"], where));
        parts.push(part.text);
      } else differences.push(`${where} held a ${quote(String(isObject(part) ? part.type : typeof part))} part, which no tool of the call returns`);
    }
  } else if (block.content !== undefined) differences.push(`${where} has content that is neither text nor a list`);
  const name = toolUses.get(id);
  if (name === undefined) return [...differences, `${where} answers no tool call of a model response of this call`];
  const text = parts.join("");
  const own = expected.toolOutputs?.get(id);
  if (own) {
    // An output with no text reaches the model as the CLI's note of it (2.1.330: "(mcp__ktx__x completed with no output)").
    const candidates = own.join("").trim() === "" ? [`(${name} completed with no output)`, own.join("")] : [own.join(""), own.join("\n")];
    const ownText = candidates.find((candidate) => text.startsWith(candidate));
    if (ownText === undefined) return [...differences, `${where} is not the output the call's tool returned: ${quote(text)}`];
    // A permission denial's message is followed by a blank line before the CLI's reminder (2.1.330), a tool's output by one newline.
    let rest = text.slice(ownText.length).replace(/^\n{1,2}/, "");
    for (let reminder = LEADING_REMINDER.exec(rest); rest !== "" && reminder; reminder = LEADING_REMINDER.exec(rest)) {
      differences.push(...checkReminder(reminder[1]!, shape, bound).map((difference) => `${where} (after the output the call's tool returned): ${difference}`));
      rest = rest.slice(reminder[0].length);
    }
    if (rest !== "") {
      differences.push(
        REMINDER_TAG.test(rest)
          ? `${where} (after the output the call's tool returned) held a <system-reminder> tag that is no whole reminder: ${quote(rest.slice(rest.search(REMINDER_TAG)))}`
          : `${where} held text after the output the call's tool returned: ${quote(rest)}`,
      );
    }
    return differences;
  }
  if (expected.builtinTools?.includes(name)) return [...differences, ...builtinResultProblems(text, shape, bound, where)];
  // A tool of an opted-in MCP server the CLI runs: its output is the server's own; the CLI's reminders after it are checked.
  if (expected.mcpServers && isServerTool(name, expected.mcpServers)) return [...differences, ...builtinResultProblems(text, shape, bound, where)];
  if (expected.tools.some((tool) => tool.name === name)) return [...differences, `${where} is not what the call's tool ${quote(name)} returned (no output of it reached the interceptor): ${quote(text)}`];
  if (!cliAnswer(name, text, expected)) differences.push(`${where} is none of the CLI's own answers for a ${quote(name)} call: ${quote(text)}`);
  return differences;
}

/** Whole reminders at the end of a built-in tool's result (the CLI's own text after the tool's output). */
const TRAILING_REMINDER = /\n*<system-reminder>\n((?:(?!<system-reminder>)[\s\S])*?)\n<\/system-reminder>\s*$/;

/**
 * An opted-in built-in tool's result (`capabilities.builtinTools`): what the tool read or did under the project
 * dir, the user's own files, which no recording can hold; the reminders the CLI appends must each be of a recorded kind.
 */
function builtinResultProblems(text: string, shape: WireShape, bound: Record<string, readonly string[]>, where: string): string[] {
  const differences: string[] = [];
  let rest = text;
  for (let reminder = TRAILING_REMINDER.exec(rest); reminder; reminder = TRAILING_REMINDER.exec(rest)) {
    differences.push(...checkReminder(reminder[1]!, shape, bound).map((difference) => `${where} (after the built-in tool's output): ${difference}`));
    rest = rest.slice(0, reminder.index);
  }
  return differences;
}

/** Answers the CLI writes itself (2.1.330): a tool that is not there, and the structured output's verdict. */
function cliAnswer(name: string, text: string, expected: CallExpectation): boolean {
  const tool = escapeRegExp(name);
  if (new RegExp(`^<tool_use_error>Error: No such tool available: ${tool}(?:\\. ${tool} is disabled for this session, in subagents as well as here\\.)?</tool_use_error>$`).test(text)) return true;
  if (name !== "StructuredOutput" || expected.jsonSchema === undefined) return false;
  if (text === "Structured output provided successfully") return true;
  const prefix = "Output does not match required schema: ";
  return text.startsWith(prefix) && text.slice(prefix.length).split(/, (?=root\b|\/)/).every((item) => schemaError(item, JSON.stringify(expected.jsonSchema)));
}

/**
 * One of ajv's messages as the CLI writes them (`root/a/0: must be string`, `/a/0: must be string`): every name or pattern it
 * quotes must be in the call's schema, and the path's segments are names or indexes; nothing else fits.
 */
function schemaError(item: string, schema: string): boolean {
  // 2.1.330 names the root `root`, and a property's path without it (`/population: must be number`).
  const match = /^root((?:\/[\w$-]{1,64})*): must (.*)$/.exec(item) ?? /^((?:\/[\w$-]{1,64})+): must (.*)$/.exec(item);
  if (!match) return false;
  const inSchema = (text: string) => schema.includes(JSON.stringify(text));
  const segments = match[1]!.split("/").filter(Boolean);
  if (!segments.every((segment) => /^\d+$/.test(segment) || inSchema(segment))) return false;
  const stem = match[2]!;
  const named = /^have required property '([^']*)'$/.exec(stem) ?? /^match (?:pattern|format) "([^"]*)"$/.exec(stem);
  if (named) return inSchema(named[1]!) || (stem.startsWith("match format") && /^[\w-]{1,32}$/.test(named[1]!));
  return /^(?:NOT have additional properties|be (?:string|number|integer|boolean|object|array|null)(?:,(?:string|number|integer|boolean|object|array|null))*|be equal to (?:one of the allowed values|constant)|NOT have (?:more|fewer) than \d+ (?:items|properties|characters)|be [<>]=? -?[\d.e+]+|be multiple of [\d.e+-]+|match (?:exactly one schema in oneOf|a schema in anyOf|"(?:then|else)" schema)|NOT be valid|NOT have duplicate items \(items ## \d+ and \d+ are identical\))$/.test(stem);
}

const boundPatterns = new Map<string, RegExp>();

/** A reminder template's regex with the call's and the machine's values in its bound slots (cached: few templates, few project dirs). */
function boundPattern(template: string, pattern: RegExp, bound: Record<string, readonly string[]>): RegExp {
  if (!BOUND_PLACEHOLDERS.some((name) => template.includes(`{${name}}`))) return pattern;
  const key = `${JSON.stringify(bound)}\n${template}`;
  let regex = boundPatterns.get(key);
  if (!regex) {
    if (boundPatterns.size > 64) boundPatterns.clear();
    regex = new RegExp(`^${templateSource(template, bound)}$`);
    boundPatterns.set(key, regex);
  }
  return regex;
}

function checkReminder(text: string, shape: WireShape, bound: Record<string, readonly string[]>, compacted = false): string[] {
  // After a compaction 2.1.330 announces the account context again under a head of its own (compaction.ts).
  if (compacted && shape.context.head && text.startsWith(CONTEXT_REREAD_HEAD)) return checkReminder(shape.context.head + text.slice(CONTEXT_REREAD_HEAD.length), shape, bound);
  if (shape.reminders.some((reminder) => boundPattern(reminder.template, reminder.pattern, bound).test(text))) return [];
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
      if (shape.contextSections.some((candidate) => candidate.name === name && boundPattern(candidate.template, candidate.pattern, bound).test(body))) continue;
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
