/** `transcript diff` and the drift report: two runs compared after normalising, by structure and by value. */
import { isRawCapture, type LoadedTranscript } from "../reader.js";
import { normalizeLine } from "../normalize.js";
import { summarizeTranscript } from "./summary.js";
import { parse, asJson, clip, messageKey, type Json } from "./text.js";

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

/** One value that differs between the n-th messages of the same key in two runs. */
export interface ValueChange {
  direction: "in" | "out";
  key: string;
  /** 1 for the first message of this key in its direction. */
  occurrence: number;
  path: string;
  /** The normalised value as JSON text (cut at 120 characters), or `(absent)`. */
  before: string;
  after: string;
  /** Line numbers in the two files. */
  lines: [number, number];
}

export interface TranscriptDiff {
  addedMessageTypes: string[];
  removedMessageTypes: string[];
  addedFields: Record<string, string[]>;
  removedFields: Record<string, string[]>;
  controlRequests: { before: string[]; after: string[] } | undefined;
  hostLines: { before: string[]; after: string[] } | undefined;
  valueChanges: ValueChange[];
  /** Value changes beyond the cap, not listed. */
  valueChangesOmitted: number;
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

/**
 * Values that differ between two live runs without meaning anything, beyond what the replayer's
 * normaliser masks (it never compares the CLI's lines, which it plays verbatim): the CLI's request
 * ids and message ids, and the temporary project and HOME dirs (also in their `-tmp-…` form).
 */
const RUN_IDS = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b(?:msg|toolu|req|srvtoolu)_[A-Za-z0-9_]+/g;
const TEMP_DIRS = /(ktx-[a-z0-9-]+?-)[A-Za-z0-9]{6}(?![A-Za-z0-9-])/g;
const SOCKETS = /(\/cc-socks\/)\d+/g;
/** Keys whose values change from run to run: the process id, and the jittered API retry back-off. */
const RUN_KEYS = new Set(["pid", "retry_delay_ms"]);

function maskRunKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskRunKeys);
  if (!value || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, RUN_KEYS.has(key) ? `<${key}>` : maskRunKeys(inner)]));
}

function comparable(text: string, cwd: string): unknown {
  const escapedCwd = JSON.stringify(cwd).slice(1, -1);
  const normalized = normalizeLine(text);
  // The project dir as a whole path (not inside a longer name, e.g. `/project` in `/projects`).
  const cwdPattern = escapedCwd ? new RegExp(`${escapedCwd.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![A-Za-z0-9._-])`, "g") : undefined;
  const masked = (cwdPattern ? normalized.replace(cwdPattern, "<cwd>") : normalized)
    .replace(RUN_IDS, "<id>")
    .replace(TEMP_DIRS, "$1<tmp>")
    .replace(SOCKETS, "$1<pid>");
  try {
    return maskRunKeys(JSON.parse(masked));
  } catch {
    return masked;
  }
}

interface Comparable {
  key: string;
  value: unknown;
  lineNumber: number;
}

/**
 * Messages of one direction grouped for pairing: by message key, and a control_response also by the
 * request it answers, so answers still pair up when one run has an extra request (2.1.142's second
 * MCP initialize).
 */
function comparableMessages(transcript: LoadedTranscript, direction: "in" | "out"): Map<string, Comparable[]> {
  const requests = new Map<string, string>();
  const byKey = new Map<string, Comparable[]>();
  for (const record of transcript.records) {
    if (record.kind !== "in" && record.kind !== "out") continue;
    const message = parse(record.text);
    let key = message ? messageKey(message) : "(non-JSON)";
    if (message?.type === "control_request") requests.set(String(message.request_id), key.replace(/^control_request\//, ""));
    if (message?.type === "control_response") key += ` to ${requests.get(String(asJson(message.response).request_id)) ?? "?"}`;
    if (record.kind !== direction) continue;
    const list = byKey.get(key) ?? [];
    list.push({ key, value: comparable(record.text, transcript.header.cwd), lineNumber: record.lineNumber });
    byKey.set(key, list);
  }
  return byKey;
}

/** Caps that keep a report between CLI versions readable (the initialize reply alone differs in dozens of places). */
const MAX_CHANGES_PER_MESSAGE = 6;
const MAX_VALUE_CHANGES = 60;
const ABSENT = "(absent)";

/** Fields a structural report already lists as added or removed (top level, and one level into message/request). */
function structuralPath(path: string[]): boolean {
  return path.length === 1 || (path.length === 2 && (path[0] === "message" || path[0] === "request"));
}

function pathText(path: string[]): string {
  return path.reduce((text, part) => (/^\d+$/.test(part) ? `${text}[${part}]` : text ? `${text}.${part}` : part), "");
}

const isPrimitiveArray = (value: unknown) => Array.isArray(value) && value.every((item) => item === null || typeof item !== "object");

function preview(value: unknown): string {
  return value === undefined ? ABSENT : clip(JSON.stringify(value) ?? String(value), 120);
}

/** Leaf values that differ; a list of plain values is compared whole (a tool list reads better that way). */
function compareValues(a: unknown, b: unknown, path: string[], found: Array<{ path: string; before: string; after: string }>): void {
  if (JSON.stringify(a) === JSON.stringify(b)) return;
  const aObject = a !== null && typeof a === "object" && !isPrimitiveArray(a);
  const bObject = b !== null && typeof b === "object" && !isPrimitiveArray(b);
  if (aObject && bObject && Array.isArray(a) === Array.isArray(b)) {
    const names = new Set([...Object.keys(a as object), ...Object.keys(b as object)]);
    for (const name of names) {
      const x = (a as Json)[name];
      const y = (b as Json)[name];
      if ((x === undefined || y === undefined) && structuralPath([...path, name])) continue;
      compareValues(x, y, [...path, name], found);
    }
    return;
  }
  found.push({ path: pathText(path), before: preview(a), after: preview(b) });
}

/** The n-th message of each key in one run against the n-th of the same key in the other, normalised. */
function valueChanges(before: LoadedTranscript, after: LoadedTranscript): { changes: ValueChange[]; omitted: number } {
  const changes: ValueChange[] = [];
  let omitted = 0;
  for (const direction of ["in", "out"] as const) {
    const a = comparableMessages(before, direction);
    const b = comparableMessages(after, direction);
    for (const [key, list] of a) {
      const other = b.get(key) ?? [];
      list.slice(0, other.length).forEach((message, index) => {
        const found: Array<{ path: string; before: string; after: string }> = [];
        compareValues(message.value, other[index]!.value, [], found);
        for (const [n, change] of found.entries()) {
          if (changes.length >= MAX_VALUE_CHANGES || n >= MAX_CHANGES_PER_MESSAGE) omitted += 1;
          else changes.push({ direction, key, occurrence: index + 1, ...change, lines: [message.lineNumber, other[index]!.lineNumber] });
        }
      });
    }
  }
  return { changes, omitted };
}

/**
 * What changed from `before` to `after`: structure (message types, fields, sequences of control
 * requests and of our lines) and values, each line normalised as the replayer does.
 */
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
  const values = valueChanges(before, after);
  return {
    addedMessageTypes: [...b.keys()].filter((key) => !a.has(key)).sort(),
    removedMessageTypes: [...a.keys()].filter((key) => !b.has(key)).sort(),
    addedFields,
    removedFields,
    controlRequests: changed(controls(before), controls(after)),
    // A raw capture has none of our lines, so there is nothing to compare them with.
    hostLines: isRawCapture(before.header) || isRawCapture(after.header) ? undefined : changed(host(before), host(after)),
    valueChanges: values.changes,
    valueChangesOmitted: values.omitted,
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
    diff.valueChanges.length === 0 &&
    !diff.outcome &&
    !diff.result
  );
}

export function renderDiff(diff: TranscriptDiff): string[] {
  if (isEmptyDiff(diff)) return ["no differences"];
  const lines: string[] = [];
  if (diff.addedMessageTypes.length) lines.push(`new message types: ${diff.addedMessageTypes.join(", ")}`);
  if (diff.removedMessageTypes.length) lines.push(`removed message types: ${diff.removedMessageTypes.join(", ")}`);
  for (const [key, fields] of Object.entries(diff.addedFields)) lines.push(`${key}: new fields ${fields.join(", ")}`);
  for (const [key, fields] of Object.entries(diff.removedFields)) lines.push(`${key}: removed fields ${fields.join(", ")}`);
  if (diff.controlRequests) lines.push(`control requests changed:\n  before ${diff.controlRequests.before.join(" ")}\n  after  ${diff.controlRequests.after.join(" ")}`);
  if (diff.hostLines) lines.push(`our lines changed:\n  before ${diff.hostLines.before.join(" ")}\n  after  ${diff.hostLines.after.join(" ")}`);
  if (diff.valueChanges.length) {
    lines.push("changed values (normalised):");
    for (const change of diff.valueChanges) {
      const where = `${change.direction === "in" ? "<<" : ">>"} ${change.key} #${change.occurrence} (lines ${change.lines[0]}/${change.lines[1]})`;
      lines.push(`  ${where} ${change.path || "(whole line)"}: ${change.before} -> ${change.after}`);
    }
    if (diff.valueChangesOmitted) {
      lines.push(`  … and ${diff.valueChangesOmitted} more, not listed (at most ${MAX_CHANGES_PER_MESSAGE} per message and ${MAX_VALUE_CHANGES} in all)`);
    }
  }
  if (diff.result) lines.push(`result changed: ${JSON.stringify(diff.result.before)} -> ${JSON.stringify(diff.result.after)}`);
  if (diff.outcome) lines.push(`outcome changed: ${JSON.stringify(diff.outcome.before)} -> ${JSON.stringify(diff.outcome.after)}`);
  return lines;
}
