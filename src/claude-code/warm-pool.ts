/**
 * Warm CLI processes: the CLI boots (about 0.25 s of CPU) while it waits for its first stdin line,
 * so a process started ahead of need answers a call several times sooner. Everything fixed at
 * launch (binary, argv — model, turn limit, tool surface —, cwd, environment) is the pool key; the
 * call's system prompt, schema and MCP server travel later in `initialize`, as on a cold run.
 * Idle processes end after `idleMs`, on `close()`, and with the host (execa's cleanup on exit and
 * signals; stdin EOF when the host is killed outright).
 */
import type { Logger } from "../session/logger.js";
import { CliProcess, type CliProcessOptions } from "../transport/process.js";

export interface WarmOptions {
  /** Idle processes kept in all (default 2). */
  size?: number;
  /** An idle process older than this is ended (default 30 s). */
  idleMs?: number;
}

interface Idle {
  key: string;
  proc: CliProcess;
  timer: NodeJS.Timeout;
  startedAt: number;
}

/** A process that dies this soon after starting counts as a failed start. */
const QUICK_DEATH_MS = 2_000;
/** Consecutive failed starts after which a key is no longer refilled. */
const MAX_FAILED_STARTS = 3;

/**
 * What must match for a started process to serve a call. With `modelFree` (the CLI takes `set_model`
 * after launch) `--model` is left out, so calls of every role share the same processes.
 */
export function warmKey(spec: CliProcessOptions, modelFree = false): string {
  const env = Object.entries(spec.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const args = modelFree ? spec.args.filter((arg) => !arg.startsWith("--model=")) : spec.args;
  return JSON.stringify([spec.path, args, spec.cwd, env]);
}

export class WarmPool {
  private readonly idle: Idle[] = [];
  private readonly failedStarts = new Map<string, number>();
  private closed = false;
  readonly size: number;
  readonly idleMs: number;

  /**
   * `busy()` says the host is saturated (calls are queued for a slot): booting a spare CLI then
   * would take CPU from the runs in flight, so refills wait until the queue is empty.
   */
  constructor(
    options: WarmOptions,
    private readonly logger: Logger,
    private readonly busy: () => boolean = () => false,
  ) {
    this.size = options.size ?? 2;
    this.idleMs = options.idleMs ?? 30_000;
  }

  get idleCount(): number {
    return this.idle.length;
  }

  get idlePids(): number[] {
    return this.idle.flatMap((entry) => (entry.proc.pid === undefined ? [] : [entry.proc.pid]));
  }

  /** A live idle process started under `key` (see warmKey), removed from the pool; undefined when none. */
  take(key: string): CliProcess | undefined {
    for (;;) {
      const index = this.idle.findIndex((entry) => entry.key === key);
      if (index < 0) return undefined;
      const [entry] = this.idle.splice(index, 1);
      clearTimeout(entry!.timer);
      if (entry!.proc.isRunning) return entry!.proc;
    }
  }

  /** Starts one idle process for `spec` under `key` unless one is already waiting (called after each call). */
  replenish(key: string, spec: CliProcessOptions): void {
    if (this.closed || this.size <= 0 || this.busy() || this.idle.some((entry) => entry.key === key)) return;
    if ((this.failedStarts.get(key) ?? 0) >= MAX_FAILED_STARTS) return;
    while (this.idle.length >= this.size) this.evict(this.idle[0]!);
    const proc = new CliProcess(spec);
    proc.keepHostAlive(false);
    const entry: Idle = { key, proc, startedAt: Date.now(), timer: setTimeout(() => this.evict(entry), this.idleMs) };
    entry.timer.unref();
    this.idle.push(entry);
    void proc.exited.then((exit) => this.onIdleExit(entry, spec, exit.exitCode, exit.signal));
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.idle.splice(0).map((entry) => this.stop(entry)));
  }

  private onIdleExit(entry: Idle, spec: CliProcessOptions, exitCode: number | undefined, signal: string | undefined): void {
    const index = this.idle.indexOf(entry);
    if (index < 0) return; // taken or evicted: not ours any more
    this.idle.splice(index, 1);
    clearTimeout(entry.timer);
    const quick = Date.now() - entry.startedAt < QUICK_DEATH_MS;
    const failures = quick ? (this.failedStarts.get(entry.key) ?? 0) + 1 : 0;
    this.failedStarts.set(entry.key, failures);
    this.logger.warn(`an idle warm Claude Code process exited (code ${exitCode}, signal ${signal}); ${failures >= MAX_FAILED_STARTS ? "not replacing it" : "replacing it"}`);
    this.replenish(entry.key, spec);
  }

  private evict(entry: Idle): void {
    const index = this.idle.indexOf(entry);
    if (index >= 0) this.idle.splice(index, 1);
    void this.stop(entry);
  }

  private async stop(entry: Idle): Promise<void> {
    clearTimeout(entry.timer);
    // An idle CLI that gets stdin EOF exits by itself; stop() escalates if it does not.
    await entry.proc.stop(true);
  }
}
