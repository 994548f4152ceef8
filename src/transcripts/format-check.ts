/**
 * The transcript record schemas of format.ts, checked without zod: the transcript reader (the replay
 * stand-in, every `transcript` command) loads this instead of zod, whose import alone is most of such a
 * process's start (0.23 s of CPU against 0.15 s for Node itself). format.ts keeps the zod schemas as
 * the reference; test/replay/transcripts.test.ts checks that both accept the same records and give the
 * same data (defaults filled in, unknown fields kept).
 */
import type { OutcomeRecord, TranscriptRecord } from "./format.js";

export const TRANSCRIPT_FORMAT = "ktx-claude-code-transcript/1";

export type RecordCheck<T> = { success: true; data: T } | { success: false; message: string };

type Value = Record<string, unknown>;

const isObject = (value: unknown): value is Value => typeof value === "object" && value !== null && !Array.isArray(value);
const describe = (value: unknown) => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value);

class Invalid extends Error {}

function need(ok: boolean, path: string, expected: string, value: unknown): void {
  if (!ok) throw new Invalid(`Invalid input: expected ${expected}, received ${describe(value)} at ${path}`);
}

const isNumber = (value: unknown) => typeof value === "number" && Number.isFinite(value);
const string = (record: Value, key: string) => need(typeof record[key] === "string", key, "string", record[key]);
const optional = (record: Value, key: string, ok: (value: unknown) => boolean, expected: string) => need(record[key] === undefined || ok(record[key]), key, expected, record[key]);
const strings = (record: Value, key: string) => need(Array.isArray(record[key]) && (record[key] as unknown[]).every((item) => typeof item === "string"), key, "array of strings", record[key]);

const TOKEN_KEYS = ["inputTokens", "outputTokens", "cacheCreationInputTokens", "cacheReadInputTokens"] as const;

/**
 * The record as zod's looseObject gives it back: the schema's keys first, in the schema's order (those
 * present, or given a default in `fill`), then every other key in the record's own order.
 */
function ordered(record: Value, shape: readonly string[], fill: Value = {}): Value {
  const out: Value = {};
  for (const key of shape) {
    if (key in fill) out[key] = fill[key];
    else if (key in record) out[key] = record[key];
  }
  for (const key of Object.keys(record)) if (!shape.includes(key)) out[key] = record[key];
  return out;
}

function checkTranscriptRecord(record: Value): TranscriptRecord {
  switch (record.kind) {
    case "header": {
      need(record.format === TRANSCRIPT_FORMAT, "format", JSON.stringify(TRANSCRIPT_FORMAT), record.format);
      for (const key of ["library", "cliPath", "cliVersion", "cwd", "startedAt"]) string(record, key);
      strings(record, "args");
      strings(record, "envNames");
      optional(record, "scenario", (value) => typeof value === "string", "string");
      return ordered(record, ["kind", "format", "library", "cliPath", "cliVersion", "args", "envNames", "cwd", "startedAt", "scenario"], { args: [...(record.args as string[])], envNames: [...(record.envNames as string[])] }) as TranscriptRecord;
    }
    case "out":
    case "in":
    case "stderr":
    case "dropped":
      optional(record, "t", isNumber, "number");
      string(record, "text");
      return ordered(record, ["kind", "t", "text"]) as TranscriptRecord;
    case "exit":
      need(isNumber(record.t), "t", "number", record.t);
      need(record.exitCode === null || isNumber(record.exitCode), "exitCode", "number or null", record.exitCode);
      need(record.signal === null || typeof record.signal === "string", "signal", "string or null", record.signal);
      return ordered(record, ["kind", "t", "exitCode", "signal"]) as TranscriptRecord;
    case "call": {
      need(isNumber(record.t), "t", "number", record.t);
      optional(record, "costUsd", (value) => value === null || isNumber(value), "number or null");
      const usage = record.usage;
      need(usage === undefined || usage === null || isObject(usage), "usage", "object or null", usage);
      let checkedUsage: Value | null = null;
      if (isObject(usage)) {
        for (const key of TOKEN_KEYS) optional(usage, key, isNumber, "number");
        checkedUsage = ordered(usage, TOKEN_KEYS, Object.fromEntries(TOKEN_KEYS.map((key) => [key, usage[key] ?? 0])));
      }
      string(record, "ending");
      const process = record.process;
      need(process === undefined || isObject(process), "process", "object", process);
      if (isObject(process)) {
        need(typeof process.launch === "string", "process.launch", "string", process.launch);
        need(isNumber(process.call), "process.call", "number", process.call);
      }
      const fill: Value = { costUsd: record.costUsd ?? null, usage: checkedUsage };
      if (isObject(process)) fill.process = ordered(process, ["launch", "call"]);
      return ordered(record, ["kind", "t", "costUsd", "usage", "ending", "process"], fill) as TranscriptRecord;
    }
    case "turn": {
      need(isNumber(record.t), "t", "number", record.t);
      need(isNumber(record.turn), "turn", "number", record.turn);
      string(record, "input");
      need(record.history === "native" || record.history === "replayed", "history", '"native" or "replayed"', record.history);
      const process = record.process;
      need(process === undefined || isObject(process), "process", "object", process);
      const fill: Value = {};
      if (isObject(process)) {
        optional(process, "pid", isNumber, "number");
        need(typeof process.launch === "string", "process.launch", "string", process.launch);
        need(isNumber(process.call), "process.call", "number", process.call);
        fill.process = ordered(process, ["pid", "launch", "call"]);
      }
      return ordered(record, ["kind", "t", "turn", "input", "history", "process"], fill) as TranscriptRecord;
    }
    case "turn_end": {
      need(isNumber(record.t), "t", "number", record.t);
      need(isNumber(record.turn), "turn", "number", record.turn);
      need(["ok", "interrupted", "failed"].includes(record.outcome as string), "outcome", '"ok", "interrupted" or "failed"', record.outcome);
      need(isNumber(record.durationMs), "durationMs", "number", record.durationMs);
      const usage = record.usage;
      need(usage === undefined || isObject(usage), "usage", "object", usage);
      const fill: Value = {};
      if (isObject(usage)) {
        for (const key of TOKEN_KEYS) optional(usage, key, isNumber, "number");
        fill.usage = ordered(usage, TOKEN_KEYS, Object.fromEntries(TOKEN_KEYS.map((key) => [key, usage[key] ?? 0])));
      }
      optional(record, "costUsd", isNumber, "number");
      const error = record.error;
      need(error === undefined || isObject(error), "error", "object", error);
      if (isObject(error)) {
        for (const key of ["name", "code", "message"]) need(typeof error[key] === "string", `error.${key}`, "string", error[key]);
        fill.error = ordered(error, ["name", "code", "message"]);
      }
      return ordered(record, ["kind", "t", "turn", "outcome", "durationMs", "usage", "costUsd", "error"], fill) as TranscriptRecord;
    }
    case "interrupt":
      need(isNumber(record.t), "t", "number", record.t);
      need(isNumber(record.turn), "turn", "number", record.turn);
      return ordered(record, ["kind", "t", "turn"]) as TranscriptRecord;
    case "session_end":
      need(isNumber(record.t), "t", "number", record.t);
      need(isNumber(record.turns), "turns", "number", record.turns);
      return ordered(record, ["kind", "t", "turns"]) as TranscriptRecord;
    default:
      throw new Invalid(`Invalid input: expected kind header, out, in, stderr, dropped, exit, call, turn, turn_end, interrupt or session_end, received ${JSON.stringify(record.kind) ?? "none"}`);
  }
}

/** A parsed line as a transcript record (`header`, `out`/`in`/`stderr`/`dropped`, `exit`, `call`; a session's `turn`, `turn_end`, `interrupt`, `session_end`), or what is wrong with it. */
export function checkRecord(value: unknown): RecordCheck<TranscriptRecord> {
  return check(value, checkTranscriptRecord);
}

/** A parsed line as the fixture recorder's `outcome` record, or what is wrong with it. */
export function checkOutcomeRecord(value: unknown): RecordCheck<OutcomeRecord> {
  return check(value, (record) => {
    need(record.kind === "outcome", "kind", '"outcome"', record.kind);
    string(record, "scenario");
    need(isObject(record.outcome), "outcome", "record", record.outcome);
    return ordered(record, ["kind", "scenario", "outcome"], { outcome: { ...(record.outcome as Value) } }) as OutcomeRecord;
  });
}

function check<T>(value: unknown, body: (record: Value) => T): RecordCheck<T> {
  if (!isObject(value)) return { success: false, message: `Invalid input: expected object, received ${describe(value)}` };
  try {
    return { success: true, data: body(value) };
  } catch (error) {
    if (error instanceof Invalid) return { success: false, message: error.message };
    throw error;
  }
}
