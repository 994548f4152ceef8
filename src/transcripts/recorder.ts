/**
 * Records one CLI run as a JSONL transcript. Each record is written to the file before the line it
 * records is handled (a synchronous append), in the order they happen: a host that dies — a signal,
 * process.exit, a crash — loses no record written before, and recording never reorders the protocol.
 */
import { closeSync, mkdirSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { InvalidInputError, TranscriptWriteError } from "../errors/index.js";
import type { CallLogin, NetworkRoute } from "../runtime/types.js";
import { randomUUID } from "node:crypto";
import type { CallRecord as RunCallRecord, RunObserver } from "../claude-code/run/run.js";
import type { WireDirection } from "../session/control.js";
import { LIBRARY_VERSION } from "../version.js";
import { openForWrite } from "../transport/files.js";
import { TRANSCRIPT_FORMAT } from "./format.js";
import { Redactor } from "./redact.js";
import { DeltaRedactor } from "./stream-deltas.js";

export { secretValues } from "./redact.js";

export interface RunTranscript {
  path: string;
  observer: RunObserver;
  close(): Promise<void>;
}

export interface TranscriptOptions {
  secrets: readonly string[];
  /** File name without extension; default: timestamp + random suffix. */
  name?: string;
  scenario?: string;
  /** The login the CLI will bill to, read ahead (the initialize reply in the wire lines has the last word). */
  login?: CallLogin;
  /** Proxies, CAs and client certificates the CLI was given. */
  network?: NetworkRoute;
}

/** A transcript name is a file name inside `dir`: no separator, no `..`, no NUL, not empty. */
export function checkTranscriptName(name: string): void {
  if (name.length === 0 || name === "." || name.includes("..") || /[\\/\0]/.test(name)) {
    throw new InvalidInputError(`transcript.name ${JSON.stringify(name)} must be a plain file name (no "/", "\\" or ".."), so the transcript stays inside transcript.dir.`);
  }
}

/** Runs a file-system step of the recorder, turning its failure into a typed error naming the path. */
function fsStep<T>(action: string, path: string, step: () => T): T {
  try {
    return step();
  } catch (error) {
    throw new TranscriptWriteError(action, path, error);
  }
}

/** The open file and what every record of it goes through: the redactor, the delta redactor, the file's clock. */
class TranscriptFile {
  readonly redactor: Redactor;
  /** The CLI's streamed deltas are redacted against their block's earlier text too (a key split in two). */
  private readonly deltas: DeltaRedactor;
  private readonly started = performance.now();
  private fd: number | undefined;

  constructor(
    readonly path: string,
    secrets: readonly string[],
    exclusive: boolean,
  ) {
    // Never through a symlink planted in dir (O_NOFOLLOW); a generated name is created exclusively, a chosen one
    // may replace its own earlier regular file but never a FIFO, a device or a hard-linked file (files.ts).
    this.fd = fsStep("open the transcript file", path, () => openForWrite(path, { exclusive }));
    this.redactor = new Redactor(secrets);
    this.deltas = new DeltaRedactor(this.redactor);
  }

  /** Milliseconds since the file was opened (monotonic). */
  offset(): number {
    return Math.round((performance.now() - this.started) * 1000) / 1000;
  }

  write(record: object): void {
    if (this.fd !== undefined) writeSync(this.fd, `${JSON.stringify(record)}\n`);
  }

  get open(): boolean {
    return this.fd !== undefined;
  }

  header(info: Parameters<NonNullable<RunObserver["start"]>>[0], options: TranscriptOptions, extra: object = {}): object {
    return {
      kind: "header",
      format: TRANSCRIPT_FORMAT,
      library: `ktx-claude-code@${LIBRARY_VERSION}`,
      cliPath: info.cliPath,
      cliVersion: info.cliVersion,
      args: info.args.map((arg) => this.redactor.redact(arg)),
      envNames: Object.keys(info.env).sort(),
      cwd: info.cwd,
      startedAt: new Date().toISOString(),
      // The process launch; on a reused process its launch and initialize are in its first call's transcript.
      ...(info.process ? { process: info.process } : {}),
      ...(options.scenario ? { scenario: options.scenario } : {}),
      ...(options.login ? { login: options.login } : {}),
      ...(options.network ? { network: options.network } : {}),
      ...extra,
    };
  }

  wire(direction: WireDirection, text: string): object {
    return { kind: direction, t: this.offset(), text: this.redactor.redact(direction === "in" ? this.deltas.line(text) : text) };
  }

  /** Last of a call: its own cost and usage, and how its process ended (format.ts, callRecordSchema). */
  call(record: RunCallRecord): object {
    return {
      kind: "call",
      t: this.offset(),
      ...record,
      ...(record.error ? { error: { ...record.error, message: this.redactor.redact(record.error.message) } } : {}),
      // Request bodies (wire: { bodies: true }) are redacted like every line.
      ...(record.requests?.some((request) => request.body !== undefined) ? { requests: record.requests.map((request) => (request.body === undefined ? request : { ...request, body: this.redactor.redact(JSON.stringify(request.body)) })) } : {}),
    };
  }

  close(): void {
    if (this.fd === undefined) return;
    const open = this.fd;
    this.fd = undefined;
    closeSync(open);
  }
}

function createFile(dir: string, options: TranscriptOptions): TranscriptFile {
  if (options.name !== undefined) checkTranscriptName(options.name);
  fsStep("create the transcript directory", dir, () => mkdirSync(dir, { recursive: true }));
  const name = options.name ?? `${new Date().toISOString().replace(/[:.]/g, "-")}-${randomUUID().slice(0, 8)}`;
  return new TranscriptFile(join(dir, `${name}.jsonl`), options.secrets, options.name === undefined);
}

export async function openRunTranscript(dir: string, options: TranscriptOptions): Promise<RunTranscript> {
  const file = createFile(dir, options);
  const observer: RunObserver = {
    start: (info) => file.write(file.header(info, options)),
    wire: (direction, text) => file.write(file.wire(direction, text)),
    exit: (exit) => file.write({ kind: "exit", t: file.offset(), exitCode: exit.exitCode ?? null, signal: exit.signal ?? null }),
    call: (record) => file.write(file.call(record)),
  };
  return { path: file.path, observer, close: async () => file.close() };
}

/** How a session's turn ended, as its `turn_end` record says (docs/transcript-format.md, "Sessions"). */
export interface TurnEnd {
  outcome: "ok" | "interrupted" | "failed";
  durationMs: number;
  stopReason?: string;
  usage?: { inputTokens: number; outputTokens: number; cacheCreationInputTokens: number; cacheReadInputTokens: number };
  costUsd?: number;
  model?: string;
  toolCalls?: Array<{ name: string; ok: boolean }>;
  error?: { name: string; code: string; message: string };
}

/**
 * One transcript for a whole session (sessions/session.ts): each turn's lines between a `turn` record
 * and a `turn_end` record, a `header` each time a turn runs on another process than the last (the first
 * turn, and the first turn after the process was lost), an `interrupt` record where the caller
 * interrupted, and a `session_end` at close. One clock for the file.
 */
export interface SessionTranscript {
  readonly path: string;
  /** The observer of turn `turn`'s run (pass it as the run's observer). */
  observerFor(turn: number): RunObserver;
  /** Before a turn's run: its number, its input (redacted) and how the earlier turns reach the model. */
  beginTurn(turn: number, input: string, history: "native" | "replayed"): void;
  interrupt(turn: number): void;
  endTurn(turn: number, end: TurnEnd): void;
  close(turns: number): Promise<void>;
}

export async function openSessionTranscript(dir: string, options: TranscriptOptions): Promise<SessionTranscript> {
  const file = createFile(dir, options);
  /** The launch the last header was written for: a turn on another process gets a header of its own. */
  let launch: string | undefined;
  /** Records before the first header (a turn that failed before any process started) wait for it: the file starts with a header. */
  const pending: object[] = [];
  const write = (record: object) => (launch === undefined ? pending.push(record) : file.write(record));
  /** Turn records not yet written, by turn: written with their process once the run starts, else before their end. */
  const turns = new Map<number, object>();
  const flushTurn = (turn: number, process?: object) => {
    const record = turns.get(turn);
    if (!record) return;
    turns.delete(turn);
    write({ ...record, ...(process ? { process } : {}) });
  };
  return {
    path: file.path,
    observerFor: (turn) => ({
      start: (info) => {
        const process = info.process ? { pid: info.process.pid, launch: info.process.launch, call: info.process.call, source: info.process.source } : undefined;
        if (info.process?.launch !== launch || launch === undefined) {
          // A new process for the session: its launch (the args, the environment's names) is in its own header.
          const first = launch === undefined;
          // A process that served calls before the session names the transcript of its launch; this file is never that.
          const process = info.process?.launchTranscript === file.path ? { ...info.process, launchTranscript: undefined } : info.process;
          file.write(file.header({ ...info, process }, options, { session: true, t: file.offset() }));
          launch = info.process?.launch ?? "(unknown)";
          if (first) for (const record of pending.splice(0)) file.write(record);
        }
        flushTurn(turn, process);
      },
      wire: (direction, text) => write(file.wire(direction, text)),
      exit: (exit) => write({ kind: "exit", t: file.offset(), exitCode: exit.exitCode ?? null, signal: exit.signal ?? null }),
      call: (record) => write(file.call(record)),
    }),
    beginTurn: (turn, input, history) => void turns.set(turn, { kind: "turn", t: file.offset(), turn, input: file.redactor.redact(input), history }),
    interrupt: (turn) => write({ kind: "interrupt", t: file.offset(), turn }),
    endTurn: (turn, end) => {
      flushTurn(turn);
      write({ kind: "turn_end", t: file.offset(), turn, ...end, ...(end.error ? { error: { ...end.error, message: file.redactor.redact(end.error.message) } } : {}) });
    },
    close: async (count) => {
      if (!file.open) return;
      // A session none of whose turns reached a process leaves no file: there is no launch to head it.
      if (launch === undefined) {
        file.close();
        rmSync(file.path, { force: true });
        return;
      }
      file.write({ kind: "session_end", t: file.offset(), turns: count });
      file.close();
    },
  };
}
