/**
 * One Claude Code CLI child process: spawns it with execa, frames stdout as NDJSON, drains stderr into
 * a bounded tail, writes our lines to stdin, and always reaps the child. It moves lines; it knows
 * nothing of what they mean.
 */
import { execa, type Options, type ResultPromise } from "execa";
import { endWithHostDeath } from "./host-death.js";
import { endWithHost } from "./host-exit.js";
import { NdjsonFramer, DEFAULT_MAX_LINE_BYTES } from "./ndjson.js";

export interface ExitInfo {
  exitCode: number | undefined;
  signal: string | undefined;
  /** Set when the process could not be started at all (ENOENT, EACCES, …). */
  spawnError?: Error & { code?: string };
}

export interface ProcessHandlers {
  /** One stdout line (raw text). */
  line(text: string): void;
  oversizedLine(bytes: number, limit: number): void;
  stderr(text: string): void;
  /** Our write was dropped because the CLI's stdin is gone (EPIPE or already closed). */
  writeDropped?(text: string, reason: string): void;
  /** stdout ended; `truncatedBytes` > 0 when it ended mid-line. */
  stdoutEnd?(truncatedBytes: number): void;
}

export interface CliProcessOptions {
  path: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  maxLineBytes?: number;
  stderrTailBytes?: number;
  /** Grace between stdin EOF / SIGTERM and the next escalation step. */
  killGraceMs?: number;
}

const DEFAULT_STDERR_TAIL = 16 * 1024;

export class CliProcess {
  readonly exited: Promise<ExitInfo>;
  private readonly child: ResultPromise<Options>;
  private stdinOpen = true;
  private stderrTailText = "";
  private stopping: Promise<ExitInfo> | undefined;
  private hasExited = false;

  private readonly handlers: ProcessHandlers;

  /** The argv this process was started with. */
  get launchArgs(): readonly string[] {
    return this.options.args;
  }

  constructor(
    private readonly options: CliProcessOptions,
    handlers: ProcessHandlers,
  ) {
    this.handlers = handlers;
    this.child = execa(options.path, options.args, {
      cwd: options.cwd,
      env: options.env,
      extendEnv: false,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      buffer: false,
      reject: false,
      // Ended with the host by endWithHost (execa's signal-exit cleanup killed apps that handle SIGINT
      // with process.once); a host killed outright (SIGKILL) by endWithHostDeath's watcher.
      cleanup: false,
      windowsHide: true,
    });
    const release = endWithHost(this.child);
    const unwatch = endWithHostDeath(this.child.pid);
    this.wireStdout();
    this.wireStderr();
    this.wireStdin();
    this.exited = this.child.then(
      (result) => this.toExitInfo(result),
      (error: unknown) => ({ exitCode: undefined, signal: undefined, spawnError: error as Error }),
    );
    void this.exited.then(() => {
      release();
      unwatch();
      this.hasExited = true;
      this.stdinOpen = false;
    });
  }

  /**
   * Whether this process keeps the host's event loop alive. Idle processes do not, so a host that is
   * done exits at once (host-exit.ts then ends them); one serving a call or being retired does.
   */
  keepHostAlive(keep: boolean): void {
    const method = keep ? "ref" : "unref";
    this.child[method]();
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) {
      (stream as unknown as { [key: string]: (() => void) | undefined } | null)?.[method]?.();
    }
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get isRunning(): boolean {
    return !this.hasExited;
  }

  stderrTail(): string {
    return this.stderrTailText;
  }

  /** Writes one line already serialised as JSON (no newline in it). Returns false (and reports it) when stdin is already gone. */
  sendText(text: string): boolean {
    if (!this.stdinOpen || !this.child.stdin || this.child.stdin.destroyed) {
      this.handlers.writeDropped?.(text, "stdin already closed");
      return false;
    }
    this.child.stdin.write(`${text}\n`);
    return true;
  }

  /** Closes our end of stdin: the CLI finishes and exits. */
  endInput(): void {
    if (!this.stdinOpen) return;
    this.stdinOpen = false;
    this.child.stdin?.end();
  }

  /**
   * Ends the child and resolves once it is reaped: stdin EOF, then SIGTERM, then SIGKILL, each after
   * `killGraceMs`. Idempotent. `graceful: false` skips the EOF step (abort, timeout, protocol failure).
   */
  stop(graceful = true): Promise<ExitInfo> {
    if (this.hasExited) return this.exited;
    this.stopping ??= this.escalate(graceful);
    return this.stopping;
  }

  private async escalate(graceful: boolean): Promise<ExitInfo> {
    const grace = this.options.killGraceMs ?? 2_000;
    if (graceful) {
      this.endInput();
      if (await this.exitsWithin(grace)) return this.exited;
    }
    this.endInput();
    this.child.kill("SIGTERM");
    if (await this.exitsWithin(grace)) return this.exited;
    this.child.kill("SIGKILL");
    return this.exited;
  }

  private exitsWithin(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      timer.unref();
      void this.exited.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  private wireStdout(): void {
    const framer = new NdjsonFramer(
      { line: (text) => this.handlers.line(text), oversized: (bytes, limit) => this.handlers.oversizedLine(bytes, limit) },
      this.options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
    );
    const stdout = this.child.stdout!;
    stdout.on("data", (chunk: Buffer | string) => framer.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk));
    stdout.on("end", () => this.handlers.stdoutEnd?.(framer.end().truncatedBytes));
    stdout.on("error", () => undefined);
  }

  private wireStderr(): void {
    const limit = this.options.stderrTailBytes ?? DEFAULT_STDERR_TAIL;
    const stderr = this.child.stderr!;
    // Always drained: a full stderr pipe would block the child.
    stderr.on("data", (chunk: Buffer | string) => {
      const text = chunk.toString();
      this.stderrTailText = (this.stderrTailText + text).slice(-limit);
      this.handlers.stderr(text);
    });
    stderr.on("error", () => undefined);
  }

  private wireStdin(): void {
    // EPIPE when the CLI closes its stdin while we write: not a crash of ours, just a dropped write.
    this.child.stdin?.on("error", (error: Error) => {
      this.stdinOpen = false;
      this.handlers.writeDropped?.("", `stdin error: ${(error as { code?: string }).code ?? error.message}`);
    });
  }

  private toExitInfo(result: { exitCode?: number; signal?: string; failed?: boolean; cause?: unknown; code?: string }): ExitInfo {
    const spawnFailed = result.failed && result.exitCode === undefined && result.signal === undefined;
    return {
      exitCode: result.exitCode,
      signal: result.signal,
      ...(spawnFailed ? { spawnError: (result.cause ?? result) as Error } : {}),
    };
  }
}
