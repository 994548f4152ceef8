/** Reads a transcript file record by record (streaming: transcripts can be hundreds of MB). */
import { createReadStream, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { InvalidInputError } from "../errors/index.js";
import { type HeaderRecord, type TranscriptRecord, transcriptRecordSchema, outcomeRecordSchema, type OutcomeRecord } from "./format.js";

export type AnyRecord = TranscriptRecord | OutcomeRecord;

function parseRecord(line: string, path: string, lineNumber: number): AnyRecord {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new InvalidInputError(`${path}:${lineNumber} is not JSON; is this a ktx-claude-code transcript?`);
  }
  const kind = (value as { kind?: unknown })?.kind;
  const parsed = (kind === "outcome" ? outcomeRecordSchema : transcriptRecordSchema).safeParse(value);
  if (!parsed.success) throw new InvalidInputError(`${path}:${lineNumber} is not a transcript record: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

export async function* readTranscriptRecords(path: string): AsyncGenerator<AnyRecord & { lineNumber: number }> {
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  let lineNumber = 0;
  for await (const line of lines) {
    lineNumber += 1;
    if (line.trim()) yield { ...parseRecord(line, path, lineNumber), lineNumber };
  }
}

/**
 * Streams a transcript (readline over a file stream: only one line is in memory at a time) and checks
 * that it starts with a header, as `loadTranscript` does.
 */
export async function* streamTranscript(path: string): AsyncGenerator<AnyRecord & { lineNumber: number }> {
  let first = true;
  for await (const record of readTranscriptRecords(path)) {
    if (first && record.kind !== "header") throw new InvalidInputError(`${path} does not start with a transcript header.`);
    first = false;
    yield record;
  }
  if (first) throw new InvalidInputError(`${path} does not start with a transcript header.`);
}

export interface LoadedTranscript {
  path: string;
  header: HeaderRecord;
  records: Array<AnyRecord & { lineNumber: number }>;
}

/** Loads a whole (fixture-sized) transcript into memory. */
export function loadTranscript(path: string): LoadedTranscript {
  const records = readFileSync(path, "utf8")
    .split("\n")
    .map((line, index) => ({ line, lineNumber: index + 1 }))
    .filter(({ line }) => line.trim())
    .map(({ line, lineNumber }) => ({ ...parseRecord(line, path, lineNumber), lineNumber }));
  const header = records[0];
  if (!header || header.kind !== "header") throw new InvalidInputError(`${path} does not start with a transcript header.`);
  return { path, header, records };
}
