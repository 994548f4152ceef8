/**
 * Reads transcripts record by record (streaming: transcripts can be hundreds of MB). Two inputs are
 * accepted, told apart by their first line:
 * - a ktx-claude-code transcript (JSONL records, a header first);
 * - a raw stream-json capture, i.e. what `claude -p --output-format stream-json --verbose` wrote to
 *   stdout (or an app's log of those lines). Its lines become `in` records without `t`: a capture has
 *   one direction (the CLI's) and no timing. The header is made up, marked `source: "stream-json"`.
 * A last line cut short (a capture or recording that ended mid-write) becomes a `note` record, so the
 * rest is still shown.
 */
import { closeSync, createReadStream, fstatSync, readFileSync, readSync } from "node:fs";
import { createInterface } from "node:readline";
import { InvalidInputError, TranscriptFileError } from "../errors/index.js";
import { NotRegularFileError, openRegularFile } from "../transport/files.js";
import { Redactor } from "./redact.js";
import { DeltaRedactor } from "./stream-deltas.js";
import { GITLEAKS_VERSION } from "./secret-rules/index.js";
import type { HeaderRecord, OutcomeRecord, TranscriptRecord } from "./format.js";
import { checkOutcomeRecord, checkRecord, TRANSCRIPT_FORMAT } from "./format-check.js";

/** Something the reader noticed about the file itself (not a recorded line), e.g. a truncated last line. */
export interface NoteRecord {
  kind: "note";
  text: string;
}

export type AnyRecord = TranscriptRecord | OutcomeRecord | NoteRecord;
export type ReadRecord = AnyRecord & { lineNumber: number };
export type SourceFormat = "transcript" | "stream-json";

/** The header standing in for a raw capture's missing one; cliVersion and cwd come from its `system/init` when known. */
export function rawCaptureHeader(init?: Record<string, unknown>): HeaderRecord {
  return {
    kind: "header",
    format: TRANSCRIPT_FORMAT,
    library: "(none: raw stream-json capture)",
    cliPath: "(unknown)",
    cliVersion: typeof init?.claude_code_version === "string" ? init.claude_code_version : "unknown",
    args: [],
    envNames: [],
    cwd: typeof init?.cwd === "string" ? init.cwd : "",
    startedAt: "",
    source: "stream-json",
  };
}

/**
 * How long the recording's project dir was. A shipped fixture names no machine path: its `cwd` is
 * `<cwd>` and `cwdLength` keeps the length, which the token counts follow (the CLI names the dir in
 * every API request), so a drift report runs the scenario in a dir as long.
 */
export function projectDirLength(header: HeaderRecord): number {
  const kept = (header as { cwdLength?: unknown }).cwdLength;
  return typeof kept === "number" && Number.isInteger(kept) && kept >= 0 ? kept : header.cwd.length;
}

export function isRawCapture(header: HeaderRecord): boolean {
  return (header as { source?: unknown }).source === "stream-json";
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/**
 * The top-level `type`s the CLI writes on stdout: a capture's first line has one of them. Any other
 * JSON with a `type` (a package.json on one line, `{"type":"module"}`) is not taken for a capture.
 */
const CLI_MESSAGE_TYPES = new Set(["system", "assistant", "user", "result", "stream_event", "control_request", "control_response", "control_cancel_request", "rate_limit_event", "keep_alive"]);

/** Which format a file is in, from its first non-empty line. */
export function detectFormat(firstLine: string, path: string): SourceFormat {
  const value = parseJson(firstLine) as Record<string, unknown> | undefined;
  if (value && typeof value === "object" && value.kind === "header") return "transcript";
  if (value && typeof value === "object" && CLI_MESSAGE_TYPES.has(value.type as string)) return "stream-json";
  throw new InvalidInputError(
    `${path}:1 is neither a ktx-claude-code transcript (its first line is a "header" record) nor a stream-json capture (one CLI message per line, the first of type ${[...CLI_MESSAGE_TYPES].join(", ")}, as written by \`claude -p --output-format stream-json --verbose\`).`,
  );
}

function parseRecord(line: string, path: string, lineNumber: number): AnyRecord {
  const value = parseJson(line);
  if (value === undefined) throw new InvalidInputError(`${path}:${lineNumber} is not JSON; is this a ktx-claude-code transcript?`);
  const kind = (value as { kind?: unknown })?.kind;
  const parsed = kind === "outcome" ? checkOutcomeRecord(value) : checkRecord(value);
  if (!parsed.success) throw new InvalidInputError(`${path}:${lineNumber} is not a transcript record: ${parsed.message}`);
  return parsed.data;
}

function truncationNote(line: string, lineNumber: number): ReadRecord {
  return { kind: "note", text: `line ${lineNumber} is cut short (the file ends mid-line, ${line.length} chars); it is not shown, the rest is`, lineNumber };
}

/** Turns lines into records; `last` is true for the file's last line when the file does not end with a newline. */
class LineReader {
  format: SourceFormat | undefined;
  private shift = 0;

  constructor(private readonly path: string) {}

  read(line: string, lineNumber: number, cutShort: boolean): ReadRecord[] {
    if (!line.trim()) return [];
    if (cutShort && parseJson(line) === undefined) return [truncationNote(line, lineNumber)];
    if (!this.format) {
      this.format = detectFormat(line, this.path);
      if (this.format === "stream-json") return [{ ...rawCaptureHeader(), lineNumber: 0 }, { kind: "in", text: line, lineNumber }];
    }
    if (this.format === "stream-json") return [{ kind: "in", text: line, lineNumber }];
    const record = parseRecord(line, this.path, lineNumber);
    // An imported capture's lines keep the capture's numbers: its header is the one line it gained.
    if (lineNumber === 1 && record.kind === "header" && typeof (record as { importedFrom?: unknown }).importedFrom === "string") this.shift = 1;
    return [{ ...record, lineNumber: lineNumber - this.shift }];
  }
}

function endsWithNewline(fd: number): boolean {
  const size = fstatSync(fd).size;
  if (size === 0) return true;
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  return last[0] === 0x0a;
}

/**
 * Opens a transcript or capture to read, only if it is a regular file: a FIFO would hang `transcript
 * show` (and block the event loop), a device would never end (issue 32).
 */
function openTranscript(path: string): number {
  try {
    return openRegularFile(path);
  } catch (error) {
    if (error instanceof NotRegularFileError) throw new TranscriptFileError(path, "not a file", `${path} is ${error.kind}, not a transcript file: only a regular file is read.`);
    const code = (error as NodeJS.ErrnoException)?.code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      throw new TranscriptFileError(path, "missing", `No transcript at ${path}: there is no such file. Check the path (a call's transcript is \`<transcript.dir>/<name>.jsonl\`; \`result.transcriptPath\` names it).`, { cause: error });
    }
    if (code === "EISDIR") throw new TranscriptFileError(path, "not a file", `${path} is a directory, not a transcript file: pass one of the .jsonl files in it.`, { cause: error });
    if (code === "EACCES" || code === "EPERM") throw new TranscriptFileError(path, "not readable", `${path} cannot be read (${code}): check its permissions.`, { cause: error });
    throw error;
  }
}

/** Every record of a transcript or raw capture, one line in memory at a time. */
export async function* readTranscriptRecords(path: string): AsyncGenerator<ReadRecord> {
  const reader = new LineReader(path);
  const fd = openTranscript(path);
  let complete: boolean;
  try {
    complete = endsWithNewline(fd);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  // The stream reads the descriptor already checked (and closes it), not the path again.
  const lines = createInterface({ input: createReadStream("", { fd }), crlfDelay: Infinity });
  let lineNumber = 0;
  // One line is held back: only the last one can be cut short.
  let held: string | undefined;
  for await (const line of lines) {
    if (held !== undefined) yield* reader.read(held, lineNumber, false);
    held = line;
    lineNumber += 1;
  }
  if (held !== undefined) yield* reader.read(held, lineNumber, !complete);
}

function noHeader(path: string, empty = false): InvalidInputError {
  if (empty) return new InvalidInputError(`${path} is empty: there is nothing to show (a capture of a CLI that wrote nothing to stdout looks like this).`);
  return new InvalidInputError(`${path} does not start with a transcript header (and is not a stream-json capture).`);
}

/**
 * Streams a transcript or raw capture and checks that a transcript starts with a header, as
 * `loadTranscript` does.
 */
export async function* streamTranscript(path: string): AsyncGenerator<ReadRecord> {
  let first = true;
  for await (const record of readTranscriptRecords(path)) {
    if (first && record.kind !== "header") throw noHeader(path);
    first = false;
    yield record;
  }
  if (first) throw noHeader(path, true);
}

export interface LoadedTranscript {
  path: string;
  header: HeaderRecord;
  records: ReadRecord[];
}

/** Loads a whole (fixture-sized) transcript or raw capture into memory. */
export function loadTranscript(path: string): LoadedTranscript {
  const fd = openTranscript(path);
  let text: string;
  try {
    text = readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
  const lines = text.split("\n");
  const reader = new LineReader(path);
  const records = lines.flatMap((line, index) => reader.read(line, index + 1, index === lines.length - 1 && line !== ""));
  const header = records[0];
  if (!header || header.kind !== "header") throw noHeader(path, !header);
  if (isRawCapture(header)) {
    // A capture's version and project dir are in its init line.
    const init = records.map((record) => (record.kind === "in" ? (parseJson(record.text) as Record<string, unknown> | undefined) : undefined)).find((m) => m?.type === "system" && m.subtype === "init");
    Object.assign(header, rawCaptureHeader(init));
  }
  return { path, header, records };
}

/**
 * A raw stream-json capture as a transcript file's lines (JSONL): a header marked
 * `source: "stream-json"` with the capture's path, and one `in` record per line, without `t`. A
 * truncated last line is left out and named in the header.
 */
export function importCapture(path: string): { lines: string[]; records: number; truncatedLine?: number; redactedLines: number } {
  const loaded = loadTranscript(path);
  if (!isRawCapture(loaded.header)) throw new InvalidInputError(`${path} is already a ktx-claude-code transcript; there is nothing to import.`);
  const truncated = loaded.records.find((record) => record.kind === "note");
  // A capture was never redacted: the same shapes as a recording are (no variable values are known here).
  const redactor = new Redactor([]);
  const deltas = new DeltaRedactor(redactor);
  let redactedLines = 0;
  const body = loaded.records.flatMap((record) => {
    if (record.kind !== "in") return [];
    const text = redactor.redact(deltas.line(record.text));
    if (text !== record.text) redactedLines += 1;
    return [JSON.stringify({ kind: "in", text })];
  });
  const header = {
    ...loaded.header,
    importedFrom: path,
    redacted: { rules: `ktx-claude-code's credential shapes and gitleaks ${GITLEAKS_VERSION}'s rules (docs/transcript-format.md, "Redaction")`, linesChanged: redactedLines },
    ...(truncated ? { truncatedLine: truncated.lineNumber } : {}),
  };
  return { lines: [JSON.stringify(header), ...body], records: body.length, redactedLines, ...(truncated ? { truncatedLine: truncated.lineNumber } : {}) };
}
