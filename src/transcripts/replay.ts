/**
 * Plays the CLI side of a transcript against a live host (see replay-cli.ts). Host lines may arrive
 * in a different order than recorded where the host answers concurrent requests; each host line is
 * matched against the earliest unmatched recorded host line with the same normalised text.
 */
import { NdjsonFramer } from "../transport/ndjson.js";
import type { LoadedTranscript } from "./reader.js";
import { normalizeArgs, normalizeLine } from "./normalize.js";

export const REPLAY_DIVERGENCE_EXIT = 86;

/** The uuid of one of our user lines (`{"type":"user","uuid":…}`). */
const USER_UUID = /^\{"type":"user","uuid":"([0-9a-f-]{36})"/;

/**
 * A session's transcript cut into its CLI processes (each from its header to the next): what each start of
 * the stand-in plays. Any other transcript is one segment, itself.
 */
export function sessionSegments(transcript: LoadedTranscript): LoadedTranscript[] {
  if ((transcript.header as { session?: unknown }).session !== true) return [transcript];
  const segments: LoadedTranscript[] = [];
  for (const record of transcript.records) {
    if (record.kind === "header") segments.push({ path: transcript.path, header: record, records: [] });
    segments.at(-1)?.records.push(record);
  }
  return segments;
}

export interface ReplayIo {
  writeStdout(text: string): void;
  writeStderr(text: string): void;
  /** The replay's cwd; the recorded project dir is rewritten to it in CLI lines. */
  cwd: string;
}

interface HostLine {
  index: number;
  normalized: string;
  raw: string;
  lineNumber: number;
}

export class Replay {
  private readonly input: Array<string | null> = [];
  private wake: (() => void) | undefined;
  private readonly framer = new NdjsonFramer({ line: (text) => this.enqueue(text), oversized: () => this.enqueue("<oversized line>") });
  private readonly idMap = new Map<string, string>();
  private readonly uuidsLiveToRecorded = new Map<string, string>();
  private readonly hostLines: HostLine[];
  private readonly matched = new Set<number>();

  constructor(
    private readonly transcript: LoadedTranscript,
    private readonly io: ReplayIo,
  ) {
    this.hostLines = transcript.records.flatMap((record, index) =>
      record.kind === "out" ? [{ index, normalized: normalizeLine(record.text), raw: record.text, lineNumber: record.lineNumber }] : [],
    );
  }

  pushInput(chunk: Buffer): void {
    this.framer.push(chunk);
  }

  endInput(): void {
    this.framer.end();
    this.enqueue(null);
  }

  async play(args: readonly string[]): Promise<{ exitCode?: number; signal?: string }> {
    const argsProblem = this.checkArgs(args);
    if (argsProblem) return this.diverge(argsProblem);
    for (const [index, record] of this.transcript.records.entries()) {
      if (record.kind === "in") this.io.writeStdout(`${this.rewrite(record.text)}\n`);
      else if (record.kind === "stderr") this.io.writeStderr(record.text);
      else if (record.kind === "exit") return { exitCode: record.exitCode ?? undefined, signal: record.signal ?? undefined };
      else if (record.kind === "out" && !this.matched.has(index)) {
        const problem = await this.awaitHostLine(index);
        if (problem) return this.diverge(problem);
      }
    }
    // A session's process that outlived its recording (kept between turns, then given back): it ends when the host closes its stdin.
    if ((this.transcript.header as { session?: unknown }).session === true) await this.untilInputEnds();
    return { exitCode: 0 };
  }

  private async untilInputEnds(): Promise<void> {
    while ((await this.nextInput()) !== null);
  }

  private checkArgs(args: readonly string[]): string | undefined {
    const want = normalizeArgs(this.transcript.header.args);
    const got = normalizeArgs(args);
    if (JSON.stringify(want) === JSON.stringify(got)) return undefined;
    const missing = want.filter((arg) => !got.includes(arg));
    const extra = got.filter((arg) => !want.includes(arg));
    return `arguments differ from the recording\n  missing: ${JSON.stringify(missing)}\n  unexpected: ${JSON.stringify(extra)}`;
  }

  /** Reads host lines until the recorded host line at `index` has been matched. */
  private async awaitHostLine(index: number): Promise<string | undefined> {
    while (!this.matched.has(index)) {
      const line = await this.nextInput();
      const expected = this.hostLines.find((host) => host.index === index)!;
      if (line === null) {
        return `the host closed stdin, but the recording expects (line ${expected.lineNumber}):\n  ${expected.normalized}`;
      }
      // Our uuids are fresh per run: a later line naming one (a rewind's target) is compared as the recording named it.
      const normalized = normalizeLine(this.recordedUuids(line));
      const match = this.hostLines.find((host) => host.index >= index && !this.matched.has(host.index) && host.normalized === normalized);
      if (!match) {
        return `host line does not match the recording at line ${expected.lineNumber}\n  expected: ${expected.normalized}\n  actual:   ${normalized}`;
      }
      this.matched.add(match.index);
      this.learnIds(match.raw, line);
    }
    return undefined;
  }

  /** Our request ids differ per run; the CLI's replies to them must carry the live ids. */
  private learnIds(recorded: string, live: string): void {
    const recordedId = /"request_id":"(ktx_\d+_r?\d+)"/.exec(recorded)?.[1];
    const liveId = /"request_id":"(ktx_\d+_r?\d+)"/.exec(live)?.[1];
    if (recordedId && liveId) this.idMap.set(recordedId, liveId);
    // So do the uuids of our user lines, which the CLI names back (a turn's status) and we name again (a rewind's target).
    const recordedUuid = USER_UUID.exec(recorded)?.[1];
    const liveUuid = USER_UUID.exec(live)?.[1];
    if (recordedUuid && liveUuid && recordedUuid !== liveUuid) {
      this.idMap.set(recordedUuid, liveUuid);
      this.uuidsLiveToRecorded.set(liveUuid, recordedUuid);
    }
  }

  private recordedUuids(line: string): string {
    let out = line;
    for (const [live, recorded] of this.uuidsLiveToRecorded) out = out.split(`"${live}"`).join(`"${recorded}"`);
    return out;
  }

  private rewrite(text: string): string {
    let out = text;
    for (const [recorded, live] of this.idMap) out = out.split(`"${recorded}"`).join(`"${live}"`);
    const recordedCwd = JSON.stringify(this.transcript.header.cwd).slice(1, -1);
    const liveCwd = JSON.stringify(this.io.cwd).slice(1, -1);
    return recordedCwd === liveCwd ? out : out.split(recordedCwd).join(liveCwd);
  }

  private diverge(problem: string): { exitCode: number } {
    this.io.writeStderr(`ktx-claude-code replay of ${this.transcript.path} diverged: ${problem}\n`);
    return { exitCode: REPLAY_DIVERGENCE_EXIT };
  }

  private enqueue(line: string | null): void {
    this.input.push(line);
    this.wake?.();
  }

  private async nextInput(): Promise<string | null> {
    while (this.input.length === 0) await new Promise<void>((resolve) => (this.wake = resolve));
    this.wake = undefined;
    return this.input.shift()!;
  }
}
