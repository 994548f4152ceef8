/**
 * The session pool: CLI processes that served a call, rewound and kept for the next call of the same
 * shape (the warm pool, generalised: a warm process is one that has served no call yet). The key is
 * everything a process cannot change after launch; the model is not in it (`set_model` switches it).
 * A process is retired after `maxCalls` calls, above `maxRssMiB`, after `idleMs` unused, when the
 * pool holds more than `maxIdle`, on `close()`, and whenever a call leaves it in doubt.
 */
import type { PreparedTool } from "../mcp/tools.js";
import type { Logger } from "../session/logger.js";
import type { ReusableProcess } from "../session/reusable-process.js";
import type { CliProcessOptions } from "../transport/process.js";
import type { ToolSwitch } from "./tool-switch.js";
import { warmKey } from "./warm-pool.js";

export interface ReuseOptions {
  /** Idle processes kept in all, across call shapes (default 4; each holds 200–350 MiB). */
  maxIdle?: number;
  /** An idle process unused this long is ended (default 60 s). */
  idleMs?: number;
  /** Calls one process serves before it is retired (default 1000). */
  maxCalls?: number;
  /** A process whose resident memory exceeds this after a call is retired (default 450 MiB; Linux only). */
  maxRssMiB?: number;
  /** How long a rewind, `set_model` or an interrupted call's result may take before the process is retired (default 10 s). */
  controlTimeoutMs?: number;
}

export interface PooledSession {
  readonly key: string;
  readonly proc: ReusableProcess;
  readonly tools: ToolSwitch;
  /** Transcript of the process's first call (its launch and initialize), referenced by later calls' transcripts. */
  launchTranscript?: string;
}

interface Idle {
  entry: PooledSession;
  timer: NodeJS.Timeout;
}

export interface SessionPoolStats {
  /** Processes started for reuse. */
  started: number;
  /** Calls served by a process that had served one before. */
  reusedCalls: number;
  /** Retired processes by reason. */
  retired: Record<string, number>;
}

/** Everything fixed in a process: launch (model left out when `set_model` works), system prompt, schema, tool definitions. */
export function sessionKey(
  launch: CliProcessOptions,
  modelFree: boolean,
  shape: { system: string; jsonSchema?: Record<string, unknown>; tools: readonly PreparedTool[]; toolTimeoutMs?: number },
): string {
  const tools = shape.tools.map((tool) => [tool.name, tool.description, tool.inputJsonSchema]);
  return JSON.stringify([warmKey(launch, modelFree), shape.system, shape.jsonSchema ?? null, tools, shape.toolTimeoutMs ?? null]);
}

export class SessionPool {
  readonly maxIdle: number;
  readonly idleMs: number;
  readonly maxCalls: number;
  readonly maxRssMiB: number;
  readonly controlTimeoutMs: number | undefined;
  private readonly idle: Idle[] = [];
  private readonly settling = new Map<PooledSession, Promise<void>>();
  private readonly live = new Set<PooledSession>();
  private closed = false;
  readonly stats: SessionPoolStats = { started: 0, reusedCalls: 0, retired: {} };

  constructor(
    options: ReuseOptions,
    private readonly logger: Logger,
  ) {
    this.maxIdle = options.maxIdle ?? 4;
    this.idleMs = options.idleMs ?? 60_000;
    this.maxCalls = options.maxCalls ?? 1000;
    this.maxRssMiB = options.maxRssMiB ?? 450;
    this.controlTimeoutMs = options.controlTimeoutMs;
  }

  get idleCount(): number {
    return this.idle.length;
  }

  /** Process ids of every live pooled process (idle, settling or serving a call). */
  get pids(): number[] {
    return [...this.live].flatMap((entry) => (entry.proc.pid === undefined || entry.proc.retired ? [] : [entry.proc.pid]));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * An idle process for `key`, removed from the pool. A process of that key still rewinding after its
   * last call (a few ms) is waited for, so back-to-back calls share one process.
   */
  async take(key: string): Promise<PooledSession | undefined> {
    for (;;) {
      const index = this.idle.findIndex((idle) => idle.entry.key === key && !idle.entry.proc.retired);
      if (index >= 0) {
        const [idle] = this.idle.splice(index, 1);
        clearTimeout(idle!.timer);
        this.stats.reusedCalls += 1;
        return idle!.entry;
      }
      const pending = [...this.settling].filter(([entry]) => entry.key === key).map(([, settled]) => settled);
      if (pending.length === 0 || this.closed) return undefined;
      await Promise.race(pending);
    }
  }

  /** Registers a process started for `key`; it is serving its first call. */
  add(entry: PooledSession): void {
    this.stats.started += 1;
    this.live.add(entry);
    void entry.proc.proc.exited.then(() => this.forget(entry, entry.proc.retired ?? "exited"));
  }

  /** After a call (success or failure): back to the pool once rewound (resolves true), else retired (false). */
  release(entry: PooledSession): Promise<boolean> {
    let kept = false;
    const settled = entry.proc.settled.then((reusable) => {
      this.settling.delete(entry);
      const reason = !reusable
        ? (entry.proc.retired ?? "not rewound")
        : entry.proc.callCount >= this.maxCalls
          ? "call limit"
          : (entry.proc.rssMiB() ?? 0) > this.maxRssMiB
            ? "memory limit"
            : this.closed
              ? "pool closed"
              : undefined;
      if (reason) return this.retire(entry, reason);
      kept = true;
      const idle: Idle = { entry, timer: setTimeout(() => this.evict(idle, "idle"), this.idleMs) };
      idle.timer.unref();
      this.idle.push(idle);
      while (this.idle.length > this.maxIdle) this.evict(this.idle[0]!, "pool full");
    });
    this.settling.set(entry, settled);
    return settled.then(() => kept);
  }

  /** Retires idle processes, and those rewinding after a call; a process serving a call is retired when it ends. */
  async close(): Promise<void> {
    this.closed = true;
    const idle = this.idle.splice(0);
    await Promise.all([...idle.map((item) => (clearTimeout(item.timer), this.retire(item.entry, "pool closed"))), ...this.settling.values()]);
  }

  private evict(idle: Idle, reason: string): void {
    const index = this.idle.indexOf(idle);
    if (index < 0) return;
    this.idle.splice(index, 1);
    clearTimeout(idle.timer);
    void this.retire(idle.entry, reason);
  }

  private async retire(entry: PooledSession, reason: string): Promise<void> {
    this.forget(entry, reason);
    await entry.proc.retire(reason);
    await entry.tools.close();
  }

  /** Counts a process's end once, by its first reason. */
  private forget(entry: PooledSession, reason: string): void {
    if (!this.live.delete(entry)) return;
    // Reasons carry details after a colon ("call failed: …"); the stats count the kind.
    const key = reason.split(":")[0]!;
    this.stats.retired[key] = (this.stats.retired[key] ?? 0) + 1;
    const index = this.idle.findIndex((idle) => idle.entry === entry);
    if (index >= 0) {
      clearTimeout(this.idle[index]!.timer);
      this.idle.splice(index, 1);
      this.logger.warn(`an idle reused Claude Code process exited (${entry.proc.retired ?? reason}); the next call starts another`);
    }
  }
}
