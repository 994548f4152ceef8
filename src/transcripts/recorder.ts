/**
 * Records one CLI run as a JSONL transcript. Each record is written to the file before the line it
 * records is handled (a synchronous append), in the order they happen: a host that dies — a signal,
 * process.exit, a crash — loses no record written before, and recording never reorders the protocol.
 */
import { closeSync, mkdirSync, writeSync } from "node:fs";
import { join } from "node:path";
import { InvalidInputError, TranscriptWriteError } from "../errors/index.js";
import type { CallLogin, NetworkRoute } from "../runtime/types.js";
import { randomUUID } from "node:crypto";
import type { RunObserver } from "../claude-code/run/run.js";
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

export async function openRunTranscript(dir: string, options: TranscriptOptions): Promise<RunTranscript> {
  if (options.name !== undefined) checkTranscriptName(options.name);
  fsStep("create the transcript directory", dir, () => mkdirSync(dir, { recursive: true }));
  const name = options.name ?? `${new Date().toISOString().replace(/[:.]/g, "-")}-${randomUUID().slice(0, 8)}`;
  const path = join(dir, `${name}.jsonl`);
  // Never through a symlink planted in dir (O_NOFOLLOW); a generated name is created exclusively, a chosen one
  // may replace its own earlier regular file but never a FIFO, a device or a hard-linked file (files.ts).
  let fd: number | undefined = fsStep("open the transcript file", path, () => openForWrite(path, { exclusive: options.name === undefined }));
  const redactor = new Redactor(options.secrets);
  // The CLI's streamed deltas are redacted against their block's earlier text too (a key split in two).
  const deltas = new DeltaRedactor(redactor);
  const started = performance.now();
  const offset = () => Math.round((performance.now() - started) * 1000) / 1000;
  const write = (record: object) => {
    if (fd !== undefined) writeSync(fd, `${JSON.stringify(record)}\n`);
  };

  const observer: RunObserver = {
    start: (info) => {
      write({
        kind: "header",
        format: TRANSCRIPT_FORMAT,
        library: `ktx-claude-code@${LIBRARY_VERSION}`,
        cliPath: info.cliPath,
        cliVersion: info.cliVersion,
        args: info.args.map((arg) => redactor.redact(arg)),
        envNames: Object.keys(info.env).sort(),
        cwd: info.cwd,
        startedAt: new Date().toISOString(),
        // The process launch; on a reused process its launch and initialize are in its first call's transcript.
        ...(info.process ? { process: info.process } : {}),
        ...(options.scenario ? { scenario: options.scenario } : {}),
        ...(options.login ? { login: options.login } : {}),
        ...(options.network ? { network: options.network } : {}),
      });
    },
    wire: (direction, text) => write({ kind: direction, t: offset(), text: redactor.redact(direction === "in" ? deltas.line(text) : text) }),
    exit: (exit) => write({ kind: "exit", t: offset(), exitCode: exit.exitCode ?? null, signal: exit.signal ?? null }),
    // Last: this call's own cost and usage, and how its process ended (format.ts, callRecordSchema).
    call: (record) =>
      write({
        kind: "call",
        t: offset(),
        ...record,
        ...(record.error ? { error: { ...record.error, message: redactor.redact(record.error.message) } } : {}),
        // Request bodies (wire: { bodies: true }) are redacted like every line.
        ...(record.requests?.some((request) => request.body !== undefined) ? { requests: record.requests.map((request) => (request.body === undefined ? request : { ...request, body: redactor.redact(JSON.stringify(request.body)) })) } : {}),
      }),
  };
  const close = async () => {
    if (fd === undefined) return;
    const open = fd;
    fd = undefined;
    closeSync(open);
  };
  return { path, observer, close };
}
