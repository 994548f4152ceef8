/**
 * A version's shape file made from what the recorder (wire-recorder.ts) captured: each text the CLI
 * varies by machine, call or day made a placeholder (shape-file.ts), everything else kept literal, and
 * anything the recorder cannot explain refused, so the shape lets through only what was seen.
 */
import { realpathSync } from "node:fs";
import { hostname, release, tmpdir } from "node:os";
import { isDeepStrictEqual } from "node:util";
import { checkMessagesRequest } from "../claude-code/wire/check.js";
import { isWebSearchRequest } from "../claude-code/wire/check-web-search.js";
import { type CompactionShape, literalTemplate, loadWireShape, MESSAGES_REQUEST, templateRegExp, WIRE_SHAPE_FORMAT, type WebSearchShape, type WireShapeFile } from "../claude-code/wire/shape-file.js";
import { FILE_TOOLS } from "../claude-code/capabilities.js";
import { CHATTY, COMPACTION_CALL, COMPACTION_CALLS, COMPACTION_SUMMARY, isVariantCall, PROJECT_INSTRUCTIONS_CALL, RECORDER_AGENT, RECORDER_AGENT_TASK, type RecordedWireRequest, RESENT, RESENT_STATUS, SUBAGENTS_CALL, WEB_SEARCH_CALL, WEB_SEARCH_QUERY, type WireRecording } from "./wire-recorder.js";
import { type InstructionsFormat, type InstructionFile, isInstructionsReminder } from "../claude-code/capabilities/project.js";
import { deriveWithVariants } from "./wire-variants-derive.js";

/** A recording that cannot become a shape: names what the recorder could not explain. */
export class WireRecordingError extends Error {
  override readonly name = "WireRecordingError";
}

const REMINDER = /^<system-reminder>\n([\s\S]*)\n<\/system-reminder>\n*$/;

/** Known requests besides Messages, with why the version needs them. */
const KNOWN_OTHER_REQUESTS: Record<string, string> = {
  "GET api.anthropic.com/api/oauth/profile": "the OAuth profile, asked once per process",
  "POST platform.claude.com/v1/oauth/token": "the OAuth token refresh",
};

/**
 * Headers a Messages request carries only when the CLI sends it again after a failed answer (the
 * recorder's RESENT call), with why and the values recorded. The check compares header names only
 * (check.ts), as for every other header; the values are pinned here, so a recording with another
 * value is refused until someone has looked at it.
 */
export const KNOWN_RESEND_HEADERS: Record<string, { why: string; values: readonly string[] }> = {
  "anthropic-dispatch-id": { why: "first party, a request re-sent after a 503 (2.1.286 on: once silently, then on each announced retry)", values: ["v2p"] },
};

/** Reminder kinds by how their text starts (a name for people reading the file and the check's messages). */
const REMINDER_KINDS: ReadonlyArray<[RegExp, string]> = [
  [/^# Environment\n/, "environment"],
  [/^You are powered by the model/, "model identity"],
  [/^Today's date is/, "date"],
  [/^<total_tokens>/, "token budget"],
  // 2.1.330's bundle: `silent_turn_reminder` (its model table gives it to claude-sonnet-5-5; measured on others too), after 5 turns without text, a system turn.
  [/^The user hasn't heard from you/, "silent turns"],
  // 2.1.330's bundle: the `batching_reminder` attachment (measured on claude-fable-5-1's loops, a system turn with `clear_at`).
  [/^First privately list what you need next;/, "batching"],
  // 2.1.330's bundle: the `date_change` attachment of a call that runs across midnight.
  [/^The date has changed\./, "date change"],
  // With Bash (capabilities.bash), 2.1.330 tells the model how to attribute git commits and pull requests.
  [/^Attribution for git commits and pull requests /, "git attribution"],
  // With subagents (capabilities.subagents), the agents the model may hand tasks to.
  [/^Available agent types for the Agent tool:\n/, "agent types"],
];

/** Parts whose text varies by machine, call or model: the label (group 1) stays, the rest (group 2) becomes the placeholder. */
const LABELLED: ReadonlyArray<[RegExp, string]> = [
  [/^( - Is a git repository: )(true|false)$/gm, "bool"],
  [/^( - Platform: )(.+)$/gm, "platform"],
  [/^( - Shell: )(.+)$/gm, "shell"],
  [/^( - OS Version: )(.+)$/gm, "osVersion"],
  [/(You are powered by the model named )(.+?)(?=\. The exact model ID is )/g, "modelName"],
  [/(knowledge cutoff is )([A-Z][a-z]+ \d{4})(?=\.)/g, "monthYear"],
  [/(<total_tokens>)(\d+)(?= tokens left<\/total_tokens>)/g, "count"],
  // The date-change reminder's new date (the recorder's MIDNIGHT_CALL runs on a shifted clock: not today's date).
  [/(Today's date is now )(\d{4}-\d{2}-\d{2})(?=\.)/g, "date"],
  // The git attribution reminder (with Bash) names the model the call runs on.
  [/(Co-Authored-By: )(Claude [^<\n]+?)(?= <noreply@anthropic\.com>)/g, "modelName"],
  // The agent types reminder lists the call's own agents: a slot bound to them when checked.
  [/(Available agent types for the Agent tool:\n)(- [^\n]*(?:\n- [^\n]*)*)/g, "agents"],
];

/** A text the CLI wrote as a template: machine, call and day values made placeholders (on the text itself, so a value never hits a placeholder's name). */
export function templateOf(text: string, values: { cwd: string; email: string; date: string; modelId: string }): string {
  const spans: Array<{ start: number; end: number; name: string }> = [];
  const free = (start: number, end: number) => spans.every((span) => end <= span.start || start >= span.end);
  for (const [pattern, name] of LABELLED) {
    for (const match of text.matchAll(pattern)) {
      const start = match.index + match[1]!.length;
      const end = start + match[2]!.length;
      if (free(start, end)) spans.push({ start, end, name });
    }
  }
  for (const [name, value] of Object.entries(values)) {
    if (!value) continue;
    for (let at = text.indexOf(value); at >= 0; at = text.indexOf(value, at + value.length)) if (free(at, at + value.length)) spans.push({ start: at, end: at + value.length, name });
  }
  spans.sort((a, b) => a.start - b.start);
  let template = "";
  let at = 0;
  for (const span of spans) {
    template += `${literalTemplate(text.slice(at, span.start))}{${span.name}}`;
    at = span.end;
  }
  template += literalTemplate(text.slice(at));
  // A [1m] id's identity names the id with its suffix, which the body's model lacks; {modelId} holds the suffix.
  template = template.replaceAll("{modelId}[1m]", "{modelId}");
  if (!templateRegExp(template).test(text)) throw new WireRecordingError(`the template made of ${JSON.stringify(text.slice(0, 80))} does not match it`);
  return template;
}

/** Values of this machine that must never stay literal in a template (it would not match elsewhere). */
function machineValues(recording: WireRecording): string[] {
  const values = [release(), recording.values.date, recording.values.email, "ktx-wire-", tmpdir()];
  const host = hostname();
  if (host.length >= 4) values.push(host);
  return values.filter((value) => value.length >= 3);
}

const sorted = (values: Iterable<string>) => [...new Set(values)].sort();

/**
 * The shape file of a recording; throws `WireRecordingError` for anything it cannot explain. The variant
 * call kinds (other models, `[1m]` ids, a worktree) become the file's variant keys (wire-variants-derive.ts),
 * never part of the base shape.
 */
export function deriveWireShape(recording: WireRecording, now = new Date()): WireShapeFile {
  return recording.calls.some((call) => isVariantCall(call.name)) ? deriveWithVariants(recording, now) : deriveBaseWireShape(recording, now);
}

/** The shape file of a recording without variant calls. */
export function deriveBaseWireShape(recording: WireRecording, now = new Date()): WireShapeFile {
  const callOf = new Map(recording.calls.map((call) => [call.name, call]));
  const messages = recording.requests.filter((request) => request.method === "POST" && request.path === "/v1/messages");
  if (messages.length === 0) throw new WireRecordingError("the CLI sent no Messages request");
  const problems: string[] = [];
  const headers = new Set<string>();
  const betas = new Set<string>();
  const bodyFields = new Set<string>();
  const billingFields = new Set<string>();
  const billingTemplates = new Set<string>();
  const preambles = new Set<string>();
  const reminders = new Map<string, { kind: string; template: string }>();
  const heads = new Set<string>();
  const tails = new Set<string>();
  const sections = new Map<string, { name: string; template: string }>();
  const synthetic = new Set<string>();
  /** The CLI's own tools in the requests (StructuredOutput), with their descriptions. */
  const cliTools = new Map<string, string>();
  /** The built-in file tools a capability opts into, with their whole definitions. */
  const builtinTools = new Map<string, { name: string; description: string; inputSchema: unknown }>();
  const queries = new Set<string>();
  /** How the CLI wrote the project's instruction files (the project instructions call kind), as JSON (one format expected). */
  const instructionFormats = new Set<string>();
  /** The CLI's own web search request, recorded whole (each one must be the same). */
  const webSearch: { shape?: WebSearchShape } = {};
  /** The text after the recorder's agent prompt in a subagent's system block. */
  const subagentSuffix: { value?: string } = {};

  const addReminder = (text: string, values: Parameters<typeof templateOf>[1], where: string) => {
    const head = /^[^\n]*:\n(?=# \S+\n)/.exec(text)?.[0];
    if (head) {
      // The context reminder: its head line, "# name" sections, and a tail after the last section's first blank line.
      const lastHeader = [...text.matchAll(/^# \S+\n/gm)].at(-1)!;
      const tailAt = text.indexOf("\n\n", lastHeader.index);
      const tail = tailAt < 0 ? "" : text.slice(tailAt);
      heads.add(head);
      tails.add(tail);
      for (const section of text.slice(head.length, text.length - tail.length).split(/^# (?=\S+\n)/m).slice(1)) {
        const newline = section.indexOf("\n");
        const name = section.slice(0, newline);
        const template = templateOf(section.slice(newline + 1).replace(/\n+$/, ""), values);
        sections.set(`${name}\0${template}`, { name, template });
      }
      return;
    }
    // A system turn's text may come in the reminder tags (2.1.330 on claude-sonnet-5): its kind is its inner text's, its template the whole text.
    const inner = REMINDER.exec(text)?.[1] ?? text;
    const kind = REMINDER_KINDS.find(([pattern]) => pattern.test(inner))?.[1];
    if (!kind) problems.push(`a <system-reminder> of a kind the recorder does not know (${where}): ${JSON.stringify(text.slice(0, 160))}; name it in REMINDER_KINDS if the CLI sends it on its own`);
    const template = templateOf(text, values);
    reminders.set(template, { kind: kind ?? "unnamed", template });
  };

  for (const request of messages) {
    const call = callOf.get(request.call);
    const where = `call "${request.call}"`;
    if (!call) throw new WireRecordingError(`a Messages request outside any call (${where})`);
    // A compaction's requests become the shape's `compaction` (below), not parts every request may have.
    if (COMPACTION_CALLS.includes(request.call)) continue;
    queries.add(request.query);
    for (const name of Object.keys(request.headers)) headers.add(name.toLowerCase());
    const beta = request.headers["anthropic-beta"];
    for (const value of (Array.isArray(beta) ? beta.join(",") : (beta ?? "")).split(",")) if (value.trim()) betas.add(value.trim());
    const body = request.body as Record<string, any> | undefined;
    if (!body || typeof body !== "object") {
      problems.push(`a Messages request whose body is not JSON (${where})`);
      continue;
    }
    // The CLI's own web search request (capabilities.webSearch) is recorded apart: its fields, tools and texts are its own.
    const search = isWebSearchRequest(body);
    if (!search) for (const field of Object.keys(body)) bodyFields.add(field);
    for (const tool of search ? [] : Array.isArray(body.tools) ? body.tools : []) {
      if (typeof tool?.name !== "string" || tool.name.startsWith("mcp__")) continue;
      const description = typeof tool.description === "string" ? tool.description : "";
      if (isCapabilityTool(tool.name)) {
        const seen = builtinTools.get(tool.name);
        if (seen && !isDeepStrictEqual(seen, { name: tool.name, description, inputSchema: tool.input_schema })) problems.push(`the built-in tool ${tool.name} had two definitions (${where})`);
        builtinTools.set(tool.name, { name: tool.name, description, inputSchema: tool.input_schema });
        continue;
      }
      if (cliTools.has(tool.name) && cliTools.get(tool.name) !== description) problems.push(`the CLI's tool ${tool.name} had two descriptions (${where})`);
      cliTools.set(tool.name, description);
    }
    const values = { cwd: call.projectDir, email: recording.values.email, date: recording.values.date, modelId: String(body.model) };
    // system: the billing line, the preamble, the call's own system prompt.
    const system: string[] = Array.isArray(body.system) ? body.system.map((block: any) => String(block?.text)) : [];
    const billing = /^(x-anthropic-billing-header: cc_version=)([^;]+)(; cc_entrypoint=[^;]+;)((?: [A-Za-z0-9_]+=[^;]*;)*)$/.exec(system[0] ?? "");
    if (!billing) problems.push(`the first system block is not a billing line the recorder knows (${where}): ${JSON.stringify(system[0]?.slice(0, 120))}`);
    else {
      const suffix = billing[2]!.startsWith(`${recording.version}.`) ? billing[2]!.slice(recording.version.length + 1) : undefined;
      if (suffix === undefined || !/^[0-9a-f]+$/.test(suffix)) problems.push(`cc_version ${billing[2]} is not ${recording.version}.<hex> (${where})`);
      billingTemplates.add(`${billing[1]}${literalTemplate(recording.version)}.{hex}${literalTemplate(billing[3]!)}`);
      for (const pair of billing[4]!.matchAll(/ ([A-Za-z0-9_]+)=/g)) billingFields.add(pair[1]!);
    }
    if (system[1] !== undefined) preambles.add(system[1]);
    if (search) {
      const problem = addWebSearch(webSearch, body, system);
      if (problem) problems.push(`${problem} (${where})`);
      continue;
    }
    // A subagent's request: its prompt, then the CLI's notes (recorded), then its task as the first user text.
    const subagent = system[2]?.startsWith(RECORDER_AGENT.prompt) === true;
    if (subagent) {
      const suffix = system[2]!.slice(RECORDER_AGENT.prompt.length);
      if (subagentSuffix.value !== undefined && subagentSuffix.value !== suffix) problems.push(`two subagent requests with different system notes (${where})`);
      subagentSuffix.value = suffix;
    }
    const own = subagent ? [] : system.slice(2);
    if (!subagent && JSON.stringify(own) !== JSON.stringify(call.system ? [call.system] : [])) problems.push(`the system blocks after the preamble were ${JSON.stringify(own)}, not the call's system prompt (${where})`);
    // user turns: reminders, the prompt, texts the CLI adds; reminders inside tool results too.
    for (const [index, message] of (Array.isArray(body.messages) ? body.messages : []).entries()) {
      // A system turn (2.1.330 on a model it does not know): its texts are reminders without the tags.
      if (message?.role === "system") {
        // (2.1.330 on newer models writes some as a string: the batching reminder of claude-fable-5-1.)
        for (const block of typeof message.content === "string" ? [{ text: message.content }] : Array.isArray(message.content) ? message.content : []) addReminder(String(block?.text), values, `${where}, a system turn`);
        continue;
      }
      if (message?.role !== "user") continue;
      const blocks = typeof message.content === "string" ? [{ type: "text", text: message.content }] : Array.isArray(message.content) ? message.content : [];
      for (const block of blocks) {
        if (block?.type === "tool_result") {
          const texts = typeof block.content === "string" ? [block.content] : Array.isArray(block.content) ? block.content.filter((part: any) => part?.type === "text").map((part: any) => String(part.text)) : [];
          for (const text of texts) for (const found of text.matchAll(/<system-reminder>\n([\s\S]*?)\n<\/system-reminder>/g)) addReminder(found[1]!, values, `${where}, a tool result`);
          continue;
        }
        if (block?.type !== "text") continue;
        const text = String(block.text);
        const reminder = REMINDER.exec(text);
        const format = reminder && call.instructions ? instructionsFormatOf(reminder[1]!, call.instructions) : undefined;
        if (format) instructionFormats.add(JSON.stringify(format));
        else if (reminder) addReminder(reminder[1]!, values, where);
        else if (index === 0 && text === (subagent ? RECORDER_AGENT_TASK : call.prompt)) continue;
        else if (index > 0) synthetic.add(text);
        else problems.push(`user turn ${index} held text that is neither the prompt nor a reminder (${where}): ${JSON.stringify(text.slice(0, 160))}`);
      }
    }
  }
  if (preambles.size !== 1) problems.push(`the preamble (second system block) was not one text: ${JSON.stringify([...preambles])}`);
  if (billingTemplates.size > 1) problems.push(`billing lines of ${billingTemplates.size} forms: ${JSON.stringify([...billingTemplates])}`);
  if (heads.size > 1 || tails.size > 1) problems.push(`context reminders with ${heads.size} heads and ${tails.size} tails: ${JSON.stringify([...heads, ...tails])}`);
  if ([...queries].some((query) => query !== "beta=true")) problems.push(`Messages requests with the query ${JSON.stringify([...queries])}, not "beta=true"`);

  problems.push(...explainResends(recording.calls, messages));

  const others = new Map<string, { method: string; host: string; path: string; why: string }>();
  for (const request of recording.requests) {
    if (request.method === "POST" && request.path === "/v1/messages") continue;
    if (request.call === CHATTY) continue;
    const key = `${request.method} ${request.host}${request.path}`;
    const why = KNOWN_OTHER_REQUESTS[key];
    if (!why) problems.push(`${key} (call "${request.call}") is a request the recorder does not know; if the version needs it for a call, name it in KNOWN_OTHER_REQUESTS with why`);
    else others.set(key, { method: request.method, host: request.host, path: request.path, why });
  }
  for (const refused of recording.refused) if (refused.call !== CHATTY) problems.push(`the CLI tried ${refused.what} (call "${refused.call}"), which the recording could not serve`);

  const file: WireShapeFile = {
    format: WIRE_SHAPE_FORMAT,
    version: recording.version,
    recorded: {
      date: now.toISOString().slice(0, 10),
      by: "ktx-claude-code fixtures record-wire (src/testing/wire-recorder.ts)",
      calls: recording.calls.map(
        (call) =>
          `${call.name}: ${describeRequests(recording.requests.filter((request) => request.call === call.name), call.name === CHATTY)}${call.ok ? "" : ` (the call failed: ${call.error})`}`,
      ),
    },
    hosts: sorted(recording.requests.map((request) => request.host)),
    messagesRequest: MESSAGES_REQUEST,
    headers: sorted(headers),
    betas: sorted(betas),
    bodyFields: sorted(bodyFields),
    billingLine: { template: [...billingTemplates][0] ?? "", fields: sorted(billingFields) },
    preamble: [...preambles][0] ?? "",
    reminders: [...reminders.values()].sort((a, b) => a.kind.localeCompare(b.kind) || a.template.localeCompare(b.template)),
    context: { head: [...heads][0] ?? "", tail: [...tails][0] ?? "", sections: [...sections.values()].sort((a, b) => a.name.localeCompare(b.name) || a.template.localeCompare(b.template)) },
    syntheticUserTexts: sorted(synthetic),
    cliTools: [...cliTools].sort(([a], [b]) => a.localeCompare(b)).map(([name, description]) => ({ name, description })),
    ...(builtinTools.size > 0 ? { builtinTools: [...builtinTools.values()].sort((a, b) => a.name.localeCompare(b.name)) } : {}),
    ...(instructionFormats.size > 0 ? { projectInstructions: JSON.parse([...instructionFormats][0]!) as InstructionsFormat } : {}),
    ...(webSearch.shape ? { webSearch: webSearch.shape } : {}),
    ...(subagentSuffix.value !== undefined ? { subagents: { systemSuffix: subagentSuffix.value } } : {}),
    ...(callOf.has(COMPACTION_CALL) ? { compaction: deriveCompaction(COMPACTION_CALLS.filter((name) => callOf.has(name)).map((name) => messages.filter((request) => request.call === name)), headers, billingFields, billingTemplates, problems) } : {}),
    otherRequests: [...others.values()].sort((a, b) => `${a.host}${a.path}`.localeCompare(`${b.host}${b.path}`)),
  };
  // Nothing of this machine may stay literal: the shape must match any user's requests.
  const text = JSON.stringify({ ...file, recorded: undefined });
  for (const value of machineValues(recording)) if (text.includes(JSON.stringify(value).slice(1, -1))) problems.push(`a value of this machine stayed literal in the shape: ${JSON.stringify(value)}`);
  if (recording.calls.some((call) => call.name === PROJECT_INSTRUCTIONS_CALL && call.ok) && instructionFormats.size !== 1) problems.push(`the project instructions call showed ${instructionFormats.size} formats of its instructions reminder, not one`);
  if (problems.length > 0) throw new WireRecordingError(`the recording of ${recording.version} cannot become a shape:\n- ${[...new Set(problems)].join("\n- ")}`);
  // The shape must pass every request it was made of.
  problems.push(...ownRequestProblems(file, recording, messages));
  if (problems.length > 0) throw new WireRecordingError(`the shape made of the recording of ${recording.version} refuses its own requests:\n- ${[...new Set(problems)].join("\n- ")}`);
  return file;
}

/**
 * The differences the check finds between a shape file and the recorded Messages requests it was made of
 * (what each call gave taken from the request itself: only the shape is under test), one per request
 * that fails. `caseOf` gives a call's role model (a `[1m]` id the body names without its suffix) and
 * whether its project dir is a worktree.
 */
export function ownRequestProblems(file: WireShapeFile, recording: WireRecording, messages: readonly RecordedWireRequest[], caseOf: (call: RecordedCallOf, body: Record<string, any>) => { model: string; worktree?: boolean } = (_call, body) => ({ model: String(body.model) })): string[] {
  const problems: string[] = [];
  const callOf = new Map(recording.calls.map((call) => [call.name, call]));
  const shape = loadWireShape(file, recording.version);
  for (const request of messages) {
    if (COMPACTION_CALLS.includes(request.call)) continue;
    const call = callOf.get(request.call)!;
    const body = request.body as Record<string, any>;
    const tools: Array<{ name: string; description?: string; input_schema: unknown }> = Array.isArray(body.tools) ? body.tools : [];
    const structured = tools.find((tool) => tool.name === "StructuredOutput");
    // What the call itself gave (its tools, their outputs, the model's responses) is taken from the request: only the shape is under test here.
    const differences = checkMessagesRequest(
      { method: request.method, host: request.host, path: request.path, query: request.query, headers: request.headers, body },
      {
        ...((which) => ({ model: which.model, ...(which.worktree ? { worktree: true } : {}) }))(caseOf(call, body)),
        system: call.system,
        prompt: call.prompt,
        // The call's own tools are the runtime's (mcp__…); any other the CLI adds must be in the shape.
        tools: tools.filter((tool) => tool !== structured && !isCapabilityTool(tool.name) && tool.name.startsWith("mcp__")).map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.input_schema })),
        ...(structured ? { jsonSchema: structured.input_schema } : {}),
        // The built-in tools are checked against the shape's own record of them, as a capability's call is.
        ...(tools.some((tool) => isCapabilityTool(tool.name)) ? { builtinTools: tools.filter((tool) => isCapabilityTool(tool.name)).map((tool) => tool.name) } : {}),
        ...(call.name === WEB_SEARCH_CALL ? { webSearch: true } : {}),
        ...(call.name === SUBAGENTS_CALL ? { subagents: [{ name: RECORDER_AGENT.name, description: RECORDER_AGENT.description, prompt: RECORDER_AGENT.prompt, tools: [], model: "inherit" }] } : {}),
        cwd: [call.projectDir, realpathOr(call.projectDir)],
        toolOutputs: toolOutputsOf(body),
        ...(call.instructions ? { projectInstructions: call.instructions } : {}),
      },
      shape,
      { responses: (isWebSearchRequest(body) || call.name === SUBAGENTS_CALL ? callAssistantTurns(messages, request.call) : Array.isArray(body.messages) ? body.messages : []).filter((message: any) => message?.role === "assistant").map((message: any) => ({ content: Array.isArray(message.content) ? message.content : [] })) },
    );
    if (differences.length > 0) problems.push(`call "${request.call}": ${differences.join("; ")}`);
  }
  return problems;
}

type RecordedCallOf = WireRecording["calls"][number];
/** A built-in tool a capability opts into: the file tools (`builtinTools`), Bash (`bash`, recorded unsandboxed) and WebSearch (`webSearch`). */
const isCapabilityTool = (name: string) => Object.hasOwn(FILE_TOOLS, name) || name === "Bash" || name === "WebSearch" || name === "Agent";

/** The assistant turns of a call's requests (what the model answered in it): a web search request's query comes from one. */
function callAssistantTurns(messages: ReadonlyArray<{ call: string; body: unknown }>, call: string): any[] {
  return messages.filter((request) => request.call === call).flatMap((request) => {
    const body = request.body as Record<string, any> | undefined;
    return Array.isArray(body?.messages) ? body.messages : [];
  });
}

/**
 * Records the CLI's web search request: the text after the preamble, the server tools and tool choice whole, the
 * body fields, and the text before the recorder's query in its one user message. Returns a problem, if any.
 */
function addWebSearch(into: { shape?: WebSearchShape }, body: Record<string, any>, system: readonly string[]): string | undefined {
  const content = body.messages?.[0]?.content;
  const text = typeof content === "string" ? content : Array.isArray(content) && content.length === 1 ? String(content[0]?.text) : undefined;
  if (body.messages?.length !== 1 || text === undefined || !text.endsWith(WEB_SEARCH_QUERY)) return `a web search request whose one user message does not end with the recorder's query: ${JSON.stringify(body.messages)?.slice(0, 200)}`;
  if (system.length !== 3) return `a web search request with ${system.length} system blocks, not the billing line, the preamble and its own text`;
  const shape: WebSearchShape = { system: system[2]!, tools: body.tools, toolChoice: body.tool_choice, bodyFields: Object.keys(body).sort(), promptPrefix: text.slice(0, text.length - WEB_SEARCH_QUERY.length) };
  if (into.shape && !isDeepStrictEqual(into.shape, shape)) return "two web search requests of different shapes";
  into.shape = shape;
  return undefined;
}

/**
 * The compaction calls' requests (wire-recorder.ts, COMPACTION_CALLS): each summary request (the one the CLI
 * classes `compaction`) gives the instructions (the calls' differ when the version words them by the conversation)
 * and its own header names; the request after it the header names and billing-line fields the CLI adds from then
 * on, and the continuation text around the recorder's summary (the same in each call).
 */
function deriveCompaction(
  calls: ReadonlyArray<readonly RecordedWireRequest[]>,
  headers: ReadonlySet<string>,
  billingFields: ReadonlySet<string>,
  billingTemplates: ReadonlySet<string>,
  problems: string[],
): CompactionShape | undefined {
  const prompts = new Set<string>();
  const requestHeaders = new Set<string>();
  const compactedHeaders = new Set<string>();
  const fields = new Set<string>();
  const continuations = new Map<string, { beforeTools: string; afterTools: string }>();
  /** What follows the summary: with the note on the messages kept after it, or (nothing kept, inside a turn) without. */
  const endings = new Set<string>();
  const names = (request: RecordedWireRequest) => Object.keys(request.headers).map((name) => name.toLowerCase()).filter((name) => !headers.has(name));
  for (const requests of calls) {
    const name = requests[0]?.call ?? COMPACTION_CALL;
    const at = requests.findIndex((request) => request.headers["x-claude-code-request-class"] === "compaction");
    const summary = requests[at];
    const after = requests[at + 1];
    if (!summary || !after) {
      problems.push(`call "${name}": no summary request and a request after it (the CLI did not compact)`);
      continue;
    }
    const last = (summary.body as any)?.messages?.at(-1);
    // The instructions end the last user turn (after a tool's result, in the same turn).
    const block = Array.isArray(last?.content) ? last.content.at(-1) : undefined;
    const prompt = typeof last?.content === "string" ? last.content : block?.type === "text" ? String(block.text ?? "") : "";
    if (last?.role !== "user" || prompt === "") problems.push(`call "${name}": the summary request did not end with the instructions as a user text`);
    else prompts.add(prompt);
    for (const header of names(summary)) requestHeaders.add(header);
    for (const header of names(after)) compactedHeaders.add(header);
    // Fields the line adds after a compaction: not the recorded ones, nor those of the template itself (cc_version, cc_entrypoint).
    const line = String((after.body as any)?.system?.[0]?.text ?? "");
    for (const pair of line.matchAll(/ ([A-Za-z0-9_]+)=/g)) if (!billingFields.has(pair[1]!) && ![...billingTemplates].some((template) => template.includes(` ${pair[1]}=`) || template.includes(`: ${pair[1]}=`))) fields.add(pair[1]!);
    const texts: string[] = ((after.body as any)?.messages?.[0]?.content ?? []).filter((block: any) => block?.type === "text").map((block: any) => String(block.text));
    const text = texts.find((candidate) => candidate.includes(COMPACTION_SUMMARY)) ?? "";
    const toolsAt = text.indexOf("<tools-used-before-summary>");
    const toolsEnd = text.indexOf("</tools-used-before-summary>");
    const summaryEnd = text.indexOf(COMPACTION_SUMMARY) + COMPACTION_SUMMARY.length;
    // The summary as the CLI wrote it into the continuation: from the end of the tools' reminder to the recorder's summary's end.
    const reminderEnd = text.indexOf("\n", text.indexOf("</system-reminder>", toolsEnd)) + 1;
    if (toolsAt < 0 || toolsEnd < toolsAt || reminderEnd <= 0 || summaryEnd <= reminderEnd) {
      problems.push(`call "${name}": the request after the summary request held no continuation text around the recorder's summary`);
      continue;
    }
    // Whether a newline ends it depends on what follows it in its turn (the check admits both).
    const continuation = { beforeTools: text.slice(0, toolsAt + "<tools-used-before-summary>".length), afterTools: text.slice(toolsEnd, reminderEnd) };
    continuations.set(JSON.stringify(continuation), continuation);
    endings.add(text.slice(summaryEnd).replace(/\n$/, ""));
  }
  if (continuations.size !== 1) {
    if (continuations.size > 1) problems.push(`the compaction calls' continuation texts differ before the summary: ${JSON.stringify([...continuations.keys()])}`);
    return undefined;
  }
  return { prompts: sorted(prompts), requestHeaders: sorted(requestHeaders), compactedHeaders: sorted(compactedHeaders), billingFields: sorted(fields), continuation: { ...[...continuations.values()][0]!, afterSummary: sorted(endings) } };
}

const realpathOr = (path: string) => {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
};

/** A recorded request's tool results as their tools' outputs: each text up to the first reminder the CLI appended. */
function toolOutputsOf(body: Record<string, any>): Map<string, string[]> {
  const outputs = new Map<string, string[]>();
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    for (const block of Array.isArray(message?.content) ? message.content : []) {
      if (block?.type !== "tool_result" || typeof block.tool_use_id !== "string") continue;
      const text = typeof block.content === "string" ? block.content : Array.isArray(block.content) ? block.content.map((part: any) => String(part?.text ?? "")).join("") : "";
      outputs.set(block.tool_use_id, [text.split(/\n?<system-reminder>\n/)[0]!]);
    }
  }
  return outputs;
}

const isMessages = (request: RecordedWireRequest) => request.method === "POST" && request.path === "/v1/messages";
const headerNames = (request: RecordedWireRequest) => new Set(Object.keys(request.headers).map((name) => name.toLowerCase()));
const headerValue = (request: RecordedWireRequest, name: string) => {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(", ") : (value ?? "");
};

/**
 * The RESENT call: its first Messages request was answered with the outage, and the CLI must have sent
 * the same request again (the same body; each header it adds known to the recorder, with a known value).
 * Its headers enter the shape as any request's do; this names what the recorder cannot explain.
 */
export function explainResends(calls: ReadonlyArray<{ name: string }>, messages: readonly RecordedWireRequest[]): string[] {
  const problems: string[] = [];
  const failed = messages.filter((request) => request.answeredWith !== undefined);
  if (calls.some((call) => call.name === RESENT) && failed.length !== 1) problems.push(`call "${RESENT}": ${failed.length} Messages requests were answered ${RESENT_STATUS}, not one`);
  // Header names every request sends that was not sent again: a re-send's other headers are not explained by them.
  const usual = new Set(messages.filter((request) => !failed.some((answered) => answered !== request && answered.call === request.call)).flatMap((request) => [...headerNames(request)]));
  for (const answered of failed) {
    const where = `call "${answered.call}"`;
    const again = messages.filter((request) => request.call === answered.call && request !== answered);
    const resend = again[0];
    if (!resend) {
      problems.push(`the CLI did not send the request again after the ${answered.answeredWith} (${where})`);
      continue;
    }
    if (!isDeepStrictEqual(resend.body, answered.body)) {
      const a = (answered.body ?? {}) as Record<string, unknown>;
      const b = (resend.body ?? {}) as Record<string, unknown>;
      const fields = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((field) => !isDeepStrictEqual(a[field], b[field]));
      problems.push(`the request sent again after the ${answered.answeredWith} had another body than the one answered ${answered.answeredWith} (fields ${fields.join(", ")}) (${where})`);
    }
    for (const request of again) {
      const before = headerNames(answered);
      for (const name of headerNames(request)) {
        if (before.has(name) || usual.has(name)) continue;
        const known = KNOWN_RESEND_HEADERS[name];
        if (!known) problems.push(`header ${JSON.stringify(name)} came only on a request sent again after the ${answered.answeredWith} (${where}); if the version sends it on its own, name it in KNOWN_RESEND_HEADERS with why`);
        else if (!known.values.includes(headerValue(request, name))) problems.push(`header ${name}: ${JSON.stringify(headerValue(request, name))} on a request sent again after the ${answered.answeredWith} (${where}) is not a value KNOWN_RESEND_HEADERS records (${known.values.join(", ")})`);
      }
      for (const name of before) if (!headerNames(request).has(name)) problems.push(`header ${JSON.stringify(name)} was missing from a request sent again after the ${answered.answeredWith} (${where})`);
    }
  }
  return problems;
}

/** A call's requests in order; a chatty call's non-essential ones (ids in their paths) only counted; the outage and what a re-send added named. */
export function describeRequests(requests: readonly RecordedWireRequest[], chatty: boolean): string {
  const needed = requests.filter((request) => !chatty || isMessages(request) || KNOWN_OTHER_REQUESTS[`${request.method} ${request.host}${request.path}`]);
  const answered = needed.find((request) => request.answeredWith !== undefined);
  const describe = (request: RecordedWireRequest) => {
    const line = `${request.method} ${request.host}${request.path}`;
    if (request === answered) return `${line} (answered ${request.answeredWith})`;
    if (!answered || !isMessages(request) || needed.indexOf(request) < needed.indexOf(answered)) return line;
    const before = headerNames(answered);
    const added = [...headerNames(request)].filter((name) => !before.has(name)).map((name) => `${name}: ${headerValue(request, name)}`);
    return `${line} (sent again${added.length > 0 ? `, with ${added.join(", ")}` : ", no header added"})`;
  };
  const listed = needed.map(describe).join(", ") || "no request";
  return chatty ? `${listed}; and ${requests.length - needed.length} non-essential request(s), which the interceptor refuses in use` : listed;
}

/** The file's text: stable key order, two-space JSON, a final newline (diffable). */
export function wireShapeText(file: WireShapeFile): string {
  return `${JSON.stringify(file, null, 2)}\n`;
}

/**
 * The format of the project instructions reminder, from one the recorder's call made of known files (`files`, in the
 * CLI's order of reading them): the text before the first file's section, one section with `{path}` and `{text}`
 * in place of the first file's, and what stands between two sections. Undefined when `text` is not that reminder
 * (or does not fit its own format exactly).
 */
export function instructionsFormatOf(text: string, files: readonly InstructionFile[]): InstructionsFormat | undefined {
  const [first, second] = files;
  if (!first || !second) return undefined;
  const at = text.indexOf(first.path);
  if (at < 0) return undefined;
  const start = text.lastIndexOf("\n", at) + 1;
  const textAt = text.indexOf(first.text, at + first.path.length);
  if (textAt < 0) return undefined;
  const end = textAt + first.text.length;
  const file = `${text.slice(start, at)}{path}${text.slice(at + first.path.length, textAt)}{text}`;
  const secondAt = text.indexOf(second.path, end);
  if (secondAt < 0) return undefined;
  const secondStart = text.lastIndexOf("\n", secondAt) + 1;
  const before = text.slice(0, at);
  const format = { head: before.slice(0, start), file, separator: text.slice(end, secondStart) };
  // Only a format that reproduces the reminder whole is one.
  if (/[{}]/.test(text.slice(start, at) + text.slice(at + first.path.length, textAt))) return undefined;
  return isInstructionsReminder(text, format, files) ? format : undefined;
}
