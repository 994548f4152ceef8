/** `transcript diff` and the drift report: two runs compared after normalising, by structure and by value (its text: diff-text.ts). */
import { isRawCapture, projectDirLength, type LoadedTranscript } from "../reader.js";
import { summarizeTranscript } from "./summary.js";
import { RunNoise } from "./run-noise.js";
import { parse, asJson, messageKey, type Json } from "./text.js";

/** Paths one level into these objects count as fields (the initialize reply's are in `response.response`). */
const FIELD_PARENTS = new Set(["message", "request", "response.response"]);

/** Field paths present per message key (top level, and one level into `message`, `request` and a reply's `response.response`). */
function fieldsByKey(transcript: LoadedTranscript, direction: "in" | "out"): Map<string, Set<string>> {
  const fields = new Map<string, Set<string>>();
  for (const { key, message } of keyedMessages(transcript, direction)) {
    const set = fields.get(key) ?? new Set<string>();
    for (const name of Object.keys(message)) set.add(name);
    for (const parent of FIELD_PARENTS) {
      const value = parent.split(".").reduce<unknown>((inner, part) => asJson(inner)[part], message);
      if (value && typeof value === "object" && !Array.isArray(value)) for (const inner of Object.keys(value)) set.add(`${parent}.${inner}`);
    }
    fields.set(key, set);
  }
  return fields;
}

/**
 * The messages of one direction with their pairing key: the message key, and for a control_response
 * also the request it answers (`control_response/success to initialize`), so answers pair up even
 * when one run has an extra request (2.1.142's second MCP initialize).
 */
function keyedMessages(transcript: LoadedTranscript, direction: "in" | "out"): Array<{ key: string; message: Json; text: string; lineNumber: number }> {
  const requests = new Map<string, string>();
  const out: Array<{ key: string; message: Json; text: string; lineNumber: number }> = [];
  for (const record of transcript.records) {
    if (record.kind !== "in" && record.kind !== "out") continue;
    const message = parse(record.text);
    if (!message) continue;
    let key = messageKey(message);
    if (message.type === "control_request") requests.set(String(message.request_id), key.replace(/^control_request\//, ""));
    if (message.type === "control_response") key += ` to ${requests.get(String(asJson(message.response).request_id)) ?? "?"}`;
    if (record.kind === direction) out.push({ key, message, text: record.text, lineNumber: record.lineNumber });
  }
  return out;
}

/** One value that differs between the n-th messages of the same key in two runs. */
export interface ValueChange {
  direction: "in" | "out";
  key: string;
  /** 1 for the first message of this key in its direction. */
  occurrence: number;
  path: string;
  /** The normalised value as JSON text, whole, or `(absent)`. */
  before: string;
  after: string;
  /** For a list of plain values (tools, capabilities, …): the items only one side has. */
  added?: unknown[];
  removed?: unknown[];
  /** Line numbers in the two files. */
  lines: [number, number];
}

export interface TranscriptDiff {
  addedMessageTypes: string[];
  removedMessageTypes: string[];
  addedFields: Record<string, string[]>;
  removedFields: Record<string, string[]>;
  /** The values an added field has in the after run, a removed one in the before run (normalised, distinct): `sandbox_enabled: [false]`. */
  addedFieldValues: Record<string, Record<string, unknown[]>>;
  removedFieldValues: Record<string, Record<string, unknown[]>>;
  controlRequests: { before: string[]; after: string[] } | undefined;
  hostLines: { before: string[]; after: string[] } | undefined;
  /** Every value change (the text report lists a few per message; `--json` has them all). */
  valueChanges: ValueChange[];
  outcome: { before: unknown; after: unknown } | undefined;
  result: { before: unknown; after: unknown } | undefined;
  /** The call records (this call's cost, usage, ending; the process launch id masked). */
  call: { before: unknown; after: unknown } | undefined;
  /** A session's turns (number, input, history, how each ended, its tools, which call on its process), when they differ; absent when neither file is a session's. */
  sessionTurns?: { before: unknown[]; after: unknown[] };
  /** The CLI versions, when they differ: named here once, masked in every line. */
  cliVersions: { before: string; after: string } | undefined;
  /**
   * The project dirs' lengths, when they differ: the CLI names the dir in every API request (its
   * environment reminder), so input tokens and costs differ with it. Said, never masked.
   */
  projectDirLengths?: { before: number; after: number };
}

function sequence(transcript: LoadedTranscript, direction: "in" | "out", filter: (key: string) => boolean): string[] {
  return transcript.records.flatMap((record) => {
    if (record.kind !== direction) return [];
    const message = parse(record.text);
    const key = message ? messageKey(message) : "(non-JSON)";
    return filter(key) ? [key] : [];
  });
}

interface Comparable {
  key: string;
  value: unknown;
  lineNumber: number;
}

const noises = new WeakMap<LoadedTranscript, RunNoise>();

/** One run's masks, its ids numbered over all its lines in record order (both directions share the numbering). */
function noiseOf(transcript: LoadedTranscript): RunNoise {
  let noise = noises.get(transcript);
  if (!noise) {
    noise = new RunNoise(transcript.header.cwd, transcript.header.cliVersion);
    const occurrences = new Map<string, number>();
    const lines = (["in", "out"] as const).flatMap((direction) =>
      keyedMessages(transcript, direction).map(({ key, text }) => {
        const occurrence = (occurrences.get(`${direction} ${key}`) ?? 0) + 1;
        occurrences.set(`${direction} ${key}`, occurrence);
        return { text, place: `${key}\u0000${direction}\u0000${String(occurrence).padStart(8, "0")}` };
      }),
    );
    noise.learn(lines);
    noises.set(transcript, noise);
  }
  return noise;
}

/** Messages of one direction grouped for pairing, each masked of run-to-run noise. */
function comparableMessages(transcript: LoadedTranscript, direction: "in" | "out"): Map<string, Comparable[]> {
  const noise = noiseOf(transcript);
  const byKey = new Map<string, Comparable[]>();
  for (const { key, text, lineNumber } of keyedMessages(transcript, direction)) {
    const list = byKey.get(key) ?? [];
    list.push({ key, value: noise.comparable(text), lineNumber });
    byKey.set(key, list);
  }
  return byKey;
}

/** How a value one side lacks reads in a change. */
const ABSENT = "(absent)";

/** Fields a structural report already lists as added or removed (top level, and one level into message/request). */
function structuralPath(path: string[]): boolean {
  return path.length === 1 || FIELD_PARENTS.has(path.slice(0, -1).join("."));
}

function pathText(path: string[]): string {
  return path.reduce((text, part) => (/^\d+$/.test(part) ? `${text}[${part}]` : text ? `${text}.${part}` : part), "");
}

const isPrimitiveArray = (value: unknown) => Array.isArray(value) && value.every((item) => item === null || typeof item !== "object");

function whole(value: unknown): string {
  return value === undefined ? ABSENT : (JSON.stringify(value) ?? String(value));
}

type Found = Pick<ValueChange, "path" | "before" | "after" | "added" | "removed">;

/** Leaf values that differ; a list of plain values is compared as a set (a tool list reads better that way). */
function compareValues(a: unknown, b: unknown, path: string[], found: Found[]): void {
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
  const change: Found = { path: pathText(path), before: whole(a), after: whole(b) };
  if (Array.isArray(a) && Array.isArray(b)) {
    const key = (item: unknown) => JSON.stringify(item);
    const inA = new Set(a.map(key));
    const inB = new Set(b.map(key));
    change.added = b.filter((item) => !inA.has(key(item)));
    change.removed = a.filter((item) => !inB.has(key(item)));
  }
  found.push(change);
}

/** The n-th message of each key in one run against the n-th of the same key in the other, normalised. */
function valueChanges(before: LoadedTranscript, after: LoadedTranscript): ValueChange[] {
  const changes: ValueChange[] = [];
  for (const direction of ["in", "out"] as const) {
    const a = comparableMessages(before, direction);
    const b = comparableMessages(after, direction);
    for (const [key, list] of a) {
      const other = b.get(key) ?? [];
      list.slice(0, other.length).forEach((message, index) => {
        const found: Found[] = [];
        compareValues(message.value, other[index]!.value, [], found);
        for (const change of found) changes.push({ direction, key, occurrence: index + 1, ...change, lines: [message.lineNumber, other[index]!.lineNumber] });
      });
    }
  }
  return changes;
}

/** A field path as `fieldsByKey` names it, read from a message (`response.response.x` is three steps). */
function fieldValue(message: unknown, field: string): unknown {
  return field.split(".").reduce<unknown>((inner, part) => (inner && typeof inner === "object" ? (inner as Json)[part] : undefined), message);
}

/** The distinct values each listed field has in one run's messages of that key, normalised. */
function valuesOf(transcript: LoadedTranscript, fields: Record<string, string[]>): Record<string, Record<string, unknown[]>> {
  const messages = comparableMessages(transcript, "in");
  const out: Record<string, Record<string, unknown[]>> = {};
  for (const [key, names] of Object.entries(fields)) {
    out[key] = {};
    for (const name of names) {
      const seen = new Map<string, unknown>();
      for (const { value } of messages.get(key) ?? []) {
        const found = fieldValue(value, name);
        if (found !== undefined) seen.set(JSON.stringify(found), found);
      }
      out[key][name] = [...seen.values()];
    }
  }
  return out;
}

/** The call records, as compared: the process launch id differs between any two runs. */
function callRecords(transcript: LoadedTranscript): unknown[] {
  return transcript.records.flatMap((record) => (record.kind === "call" ? [{ costUsd: record.costUsd, usage: record.usage, ending: record.ending, callOnProcess: record.process?.call ?? null }] : []));
}

/** A session's turns as compared: what the caller sees of each (pids, launch ids and timings differ between any two runs). */
function sessionTurns(transcript: LoadedTranscript): unknown[] {
  const turns: Json[] = [];
  for (const record of transcript.records) {
    if (record.kind === "turn") turns.push({ turn: record.turn, input: record.input, history: record.history, callOnProcess: record.process?.call ?? null });
    if (record.kind === "interrupt") {
      const turn = turns.find((candidate) => candidate.turn === record.turn);
      if (turn) turn.interrupted = true;
    }
    if (record.kind === "turn_end") {
      const turn = turns.find((candidate) => candidate.turn === record.turn);
      if (!turn) continue;
      turn.outcome = record.outcome;
      if (typeof record.stopReason === "string") turn.stopReason = record.stopReason;
      if (Array.isArray(record.toolCalls)) turn.toolCalls = record.toolCalls;
      if (record.error) turn.error = record.error.code;
    }
  }
  return turns;
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
  // Our own lines in order; our replies (each with the request it answers) as a set after them: when
  // a reply goes out races our prompt (the CLI's MCP handshake runs while we wait for the initialize
  // reply), so two runs of one program order them differently.
  const host = (t: LoadedTranscript) => {
    const keys = keyedMessages(t, "out").map(({ key }) => key);
    return [...keys.filter((key) => !key.startsWith("control_response")), ...keys.filter((key) => key.startsWith("control_response")).sort()];
  };
  const changed = <T>(x: T, y: T) => (JSON.stringify(x) === JSON.stringify(y) ? undefined : { before: x, after: y });
  const resultOf = (t: LoadedTranscript) => {
    const { result } = summarizeTranscript(t);
    return result && { subtype: result.subtype, isError: result.isError, numTurns: result.numTurns, terminalReason: result.terminalReason };
  };
  const calls = [callRecords(before), callRecords(after)];
  return {
    addedMessageTypes: [...b.keys()].filter((key) => !a.has(key)).sort(),
    removedMessageTypes: [...a.keys()].filter((key) => !b.has(key)).sort(),
    addedFields,
    removedFields,
    addedFieldValues: valuesOf(after, addedFields),
    removedFieldValues: valuesOf(before, removedFields),
    controlRequests: changed(controls(before), controls(after)),
    // A raw capture has none of our lines, so there is nothing to compare them with.
    hostLines: isRawCapture(before.header) || isRawCapture(after.header) ? undefined : changed(host(before), host(after)),
    valueChanges: valueChanges(before, after),
    outcome: changed(summarizeTranscript(before).outcome, summarizeTranscript(after).outcome),
    result: changed(resultOf(before), resultOf(after)),
    // Old transcripts have no call record: compared only when both sides have them.
    call: calls[0]!.length > 0 && calls[1]!.length > 0 ? changed(calls[0], calls[1]) : undefined,
    ...(() => {
      const turns = [sessionTurns(before), sessionTurns(after)] as const;
      const diff = turns[0].length > 0 || turns[1].length > 0 ? changed(turns[0], turns[1]) : undefined;
      return diff ? { sessionTurns: diff } : {};
    })(),
    cliVersions: before.header.cliVersion === after.header.cliVersion ? undefined : { before: before.header.cliVersion, after: after.header.cliVersion },
    ...(before.header.cwd && after.header.cwd && projectDirLength(before.header) !== projectDirLength(after.header) ? { projectDirLengths: { before: projectDirLength(before.header), after: projectDirLength(after.header) } } : {}),
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
    !diff.result &&
    !diff.call &&
    !diff.sessionTurns
  );
}
