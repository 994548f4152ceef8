/**
 * Reading aids for transcripts: a one-line rendering of each record, a summary of a run, and a
 * structural diff of two runs (used for debugging and for the CLI-version drift report).
 */
import type { LoadedTranscript } from "./reader.js";

type Json = Record<string, unknown>;

function parse(text: string): Json | undefined {
  try {
    const value = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}

/** `type/subtype` of a protocol line, e.g. `system/init`, `control_request/mcp_message`, `result/success`. */
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

function brief(message: Json): string {
  const key = messageKey(message);
  const content = ((message.message as Json | undefined)?.content ?? []) as Json[];
  if (message.type === "assistant" && Array.isArray(content)) {
    return content
      .map((block) => (block.type === "text" ? `text ${JSON.stringify(String(block.text).slice(0, 80))}` : block.type === "tool_use" ? `tool_use ${String(block.name)} ${JSON.stringify(block.input).slice(0, 80)}` : String(block.type)))
      .join(", ");
  }
  if (message.type === "user" && Array.isArray(content)) {
    return content.map((block) => (block.type === "tool_result" ? `tool_result${block.is_error ? " (error)" : ""}` : String(block.type))).join(", ");
  }
  if (message.type === "result") {
    return `${String(message.subtype)} is_error=${String(message.is_error)} turns=${String(message.num_turns)} terminal=${String(message.terminal_reason)}`;
  }
  if (message.type === "system" && message.subtype === "init") {
    return `model=${String(message.model)} tools=${JSON.stringify(message.tools)} mcp=${JSON.stringify((message.mcp_servers as Json[] | undefined)?.map((s) => s.name))}`;
  }
  if (message.type === "control_request") {
    const request = message.request as Json;
    if (request.subtype === "can_use_tool") return `can_use_tool ${String(request.tool_name)}`;
  }
  return key;
}

const ARROWS: Record<string, string> = { in: "<<", out: ">>", stderr: "!!", dropped: "xx" };

/** One line per record: offset, direction, what it is. */
export function renderTranscript(transcript: LoadedTranscript, options: { raw?: boolean } = {}): string[] {
  const { header } = transcript;
  const lines = [`# ${transcript.path}`, `# CLI ${header.cliVersion} at ${header.cliPath}, cwd ${header.cwd}, started ${header.startedAt}`, `# args ${JSON.stringify(header.args)}`];
  for (const record of transcript.records) {
    if (record.kind === "header") continue;
    if (record.kind === "exit") lines.push(`${record.t.toFixed(1).padStart(9)} ms  exit code=${record.exitCode} signal=${record.signal}`);
    else if (record.kind === "outcome") lines.push(`            outcome ${JSON.stringify(record.outcome)}`);
    else {
      const message = record.kind === "in" || record.kind === "out" ? parse(record.text) : undefined;
      const body = options.raw || !message ? record.text.trimEnd().slice(0, options.raw ? undefined : 300) : `${messageKey(message).padEnd(40)} ${brief(message)}`;
      lines.push(`${record.t.toFixed(1).padStart(9)} ms  ${ARROWS[record.kind]} ${body}`);
    }
  }
  return lines;
}

export interface TranscriptSummary {
  path: string;
  cliVersion: string;
  durationMs: number;
  messages: { fromCli: Record<string, number>; toCli: Record<string, number> };
  toolCalls: Array<{ name: string; isError: boolean }>;
  deniedPermissions: string[];
  result?: { subtype: string; isError: boolean; numTurns?: number; terminalReason?: string; stopReason?: string; costUsd?: number; apiErrorStatus?: number };
  exit?: { exitCode: number | null; signal: string | null };
  stderrBytes: number;
  nonJsonLines: number;
  outcome?: Json;
}

function count(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

export function summarizeTranscript(transcript: LoadedTranscript): TranscriptSummary {
  const summary: TranscriptSummary = {
    path: transcript.path,
    cliVersion: transcript.header.cliVersion,
    durationMs: 0,
    messages: { fromCli: {}, toCli: {} },
    toolCalls: [],
    deniedPermissions: [],
    stderrBytes: 0,
    nonJsonLines: 0,
  };
  const toolNames = new Map<string, string>();
  for (const record of transcript.records) {
    if ("t" in record) summary.durationMs = Math.max(summary.durationMs, Number(record.t));
    if (record.kind === "stderr") summary.stderrBytes += record.text.length;
    if (record.kind === "exit") summary.exit = { exitCode: record.exitCode, signal: record.signal };
    if (record.kind === "outcome") summary.outcome = record.outcome;
    if (record.kind !== "in" && record.kind !== "out") continue;
    const message = parse(record.text);
    if (!message) {
      summary.nonJsonLines += 1;
      continue;
    }
    count(record.kind === "in" ? summary.messages.fromCli : summary.messages.toCli, messageKey(message));
    if (record.kind === "out") {
      const response = (message.response as Json | undefined)?.response as Json | undefined;
      if (response?.behavior === "deny") summary.deniedPermissions.push(String(response.message ?? ""));
      continue;
    }
    collectTools(message, toolNames, summary);
  }
  return summary;
}

function collectTools(message: Json, toolNames: Map<string, string>, summary: TranscriptSummary): void {
  const content = ((message.message as Json | undefined)?.content ?? []) as Json[];
  if (message.type === "assistant" && message.parent_tool_use_id == null && Array.isArray(content)) {
    for (const block of content) if (block.type === "tool_use") toolNames.set(String(block.id), String(block.name));
  }
  if (message.type === "user" && Array.isArray(content)) {
    for (const block of content) {
      if (block.type === "tool_result") summary.toolCalls.push({ name: toolNames.get(String(block.tool_use_id)) ?? "?", isError: block.is_error === true });
    }
  }
  if (message.type === "result") {
    summary.result = {
      subtype: String(message.subtype),
      isError: message.is_error === true,
      numTurns: message.num_turns as number | undefined,
      terminalReason: message.terminal_reason as string | undefined,
      stopReason: message.stop_reason as string | undefined,
      costUsd: message.total_cost_usd as number | undefined,
      apiErrorStatus: (message.api_error_status as number | null | undefined) ?? undefined,
    };
  }
}

/** Field paths present per message key (top level and one level into `message`/`request`). */
function fieldsByKey(transcript: LoadedTranscript, direction: "in" | "out"): Map<string, Set<string>> {
  const fields = new Map<string, Set<string>>();
  for (const record of transcript.records) {
    if (record.kind !== direction) continue;
    const message = parse(record.text);
    if (!message) continue;
    const key = messageKey(message);
    const set = fields.get(key) ?? new Set<string>();
    for (const [name, value] of Object.entries(message)) {
      set.add(name);
      if ((name === "message" || name === "request") && value && typeof value === "object" && !Array.isArray(value)) {
        for (const inner of Object.keys(value)) set.add(`${name}.${inner}`);
      }
    }
    fields.set(key, set);
  }
  return fields;
}

export interface TranscriptDiff {
  addedMessageTypes: string[];
  removedMessageTypes: string[];
  addedFields: Record<string, string[]>;
  removedFields: Record<string, string[]>;
  controlRequests: { before: string[]; after: string[] } | undefined;
  hostLines: { before: string[]; after: string[] } | undefined;
  outcome: { before: unknown; after: unknown } | undefined;
  result: { before: unknown; after: unknown } | undefined;
}

function sequence(transcript: LoadedTranscript, direction: "in" | "out", filter: (key: string) => boolean): string[] {
  return transcript.records.flatMap((record) => {
    if (record.kind !== direction) return [];
    const message = parse(record.text);
    const key = message ? messageKey(message) : "(non-JSON)";
    return filter(key) ? [key] : [];
  });
}

/** What changed from `before` to `after`, structurally (values such as text and ids are ignored). */
export function diffTranscripts(before: LoadedTranscript, after: LoadedTranscript): TranscriptDiff {
  const a = fieldsByKey(before, "in");
  const b = fieldsByKey(after, "in");
  const addedFields: Record<string, string[]> = {};
  const removedFields: Record<string, string[]> = {};
  for (const [key, fields] of b) {
    const old = a.get(key);
    if (!old) continue;
    const added = [...fields].filter((field) => !old.has(field)).sort();
    const removed = [...old].filter((field) => !fields.has(field)).sort();
    if (added.length) addedFields[key] = added;
    if (removed.length) removedFields[key] = removed;
  }
  const controls = (t: LoadedTranscript) => sequence(t, "in", (key) => key.startsWith("control_request"));
  const host = (t: LoadedTranscript) => sequence(t, "out", () => true);
  const changed = <T>(x: T, y: T) => (JSON.stringify(x) === JSON.stringify(y) ? undefined : { before: x, after: y });
  const resultOf = (t: LoadedTranscript) => {
    const { result } = summarizeTranscript(t);
    return result && { subtype: result.subtype, isError: result.isError, numTurns: result.numTurns, terminalReason: result.terminalReason };
  };
  return {
    addedMessageTypes: [...b.keys()].filter((key) => !a.has(key)).sort(),
    removedMessageTypes: [...a.keys()].filter((key) => !b.has(key)).sort(),
    addedFields,
    removedFields,
    controlRequests: changed(controls(before), controls(after)),
    hostLines: changed(host(before), host(after)),
    outcome: changed(summarizeTranscript(before).outcome, summarizeTranscript(after).outcome),
    result: changed(resultOf(before), resultOf(after)),
  };
}

export function isEmptyDiff(diff: TranscriptDiff): boolean {
  return (
    diff.addedMessageTypes.length === 0 &&
    diff.removedMessageTypes.length === 0 &&
    Object.keys(diff.addedFields).length === 0 &&
    Object.keys(diff.removedFields).length === 0 &&
    !diff.controlRequests &&
    !diff.hostLines &&
    !diff.outcome &&
    !diff.result
  );
}

export function renderDiff(diff: TranscriptDiff): string[] {
  if (isEmptyDiff(diff)) return ["no structural differences"];
  const lines: string[] = [];
  if (diff.addedMessageTypes.length) lines.push(`new message types: ${diff.addedMessageTypes.join(", ")}`);
  if (diff.removedMessageTypes.length) lines.push(`removed message types: ${diff.removedMessageTypes.join(", ")}`);
  for (const [key, fields] of Object.entries(diff.addedFields)) lines.push(`${key}: new fields ${fields.join(", ")}`);
  for (const [key, fields] of Object.entries(diff.removedFields)) lines.push(`${key}: removed fields ${fields.join(", ")}`);
  if (diff.controlRequests) lines.push(`control requests changed:\n  before ${diff.controlRequests.before.join(" ")}\n  after  ${diff.controlRequests.after.join(" ")}`);
  if (diff.hostLines) lines.push(`our lines changed:\n  before ${diff.hostLines.before.join(" ")}\n  after  ${diff.hostLines.after.join(" ")}`);
  if (diff.result) lines.push(`result changed: ${JSON.stringify(diff.result.before)} -> ${JSON.stringify(diff.result.after)}`);
  if (diff.outcome) lines.push(`outcome changed: ${JSON.stringify(diff.outcome.before)} -> ${JSON.stringify(diff.outcome.after)}`);
  return lines;
}
