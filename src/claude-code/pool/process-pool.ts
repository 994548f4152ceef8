/**
 * The one pool of CLI processes (session/pooled-process.ts). Which process a call gets is decided
 * here, in `acquire`: an idle process that served a call of the same shape (reuse), else a warm
 * spare started for the same launch, else a new one (cold). After the call, `release` keeps it or
 * retires it, and one idle budget — a count and resident memory together — holds for all of them.
 * A call a usage limit stopped is the exception: `hold` keeps its process, outside that budget, for
 * the call's own retry after the reset. The keys are in pool-keys.ts, the idle list and its budget in idle-list.ts.
 */
import type { Logger } from "../../session/logger.js";
import type { PooledProcess } from "../../session/pooled-process.js";
import type { CliProcessOptions } from "../../transport/process.js";
import { IdleList } from "./idle-list.js";
import { LaunchKeys, type PoolEntry, type PoolStats, type ReuseOptions, ShapeKeys, type ShapeParts, type Source, type WarmOptions } from "./pool-keys.js";

export {
  LaunchKeys,
  type PoolEntry,
  type PoolStats,
  type ReuseOptions,
  type SessionPoolStats,
  type ShapeParts,
  type Source,
  type WarmOptions,
  launchKey,
  shapeKey,
} from "./pool-keys.js";

/** A spare that dies this soon after starting counts as a failed start; after 3 in a row its launch gets no more. */
const QUICK_DEATH_MS = 2_000;
const MAX_FAILED_STARTS = 3;

export class ProcessPool {
  readonly reuse: boolean;
  readonly maxIdle: number;
  readonly maxIdleMiB: number;
  readonly idleMs: number;
  readonly maxCalls: number;
  readonly maxRssMiB: number;
  readonly controlTimeoutMs: number | undefined;
  readonly spares: number;
  readonly spareIdleMs: number;
  readonly stats: PoolStats = { started: 0, reusedCalls: 0, spareCalls: 0, retired: {}, heldRetries: 0 };
  private readonly idle: IdleList;
  /** Processes held for a call's retry after a usage-limit rejection, each with the timer that ends it unused. */
  private readonly held = new Map<PoolEntry, NodeJS.Timeout>();
  /** Processes a conversation keeps between its turns (sessions), outside the idle list and its budget. */
  private readonly pinned = new Set<PoolEntry>();
  private readonly settling = new Map<PoolEntry, Promise<void>>();
  private readonly live = new Set<PoolEntry>();
  /** Every process not yet exited, whatever it is doing. */
  private readonly running = new Set<PooledProcess>();
  private readonly failedStarts = new Map<string, number>();
  private readonly launchKeys = new LaunchKeys();
  private readonly shapeKeys = new ShapeKeys();
  private closed = false;

  /** `busy()` says calls are queued for a slot: a spare booting then would take CPU from the calls in flight. */
  constructor(
    reuse: ReuseOptions | false,
    warm: WarmOptions | false,
    private readonly logger: Logger,
    private readonly busy: () => boolean = () => false,
  ) {
    const options = reuse === false ? {} : reuse;
    this.reuse = reuse !== false;
    this.maxIdle = options.maxIdle ?? 2;
    this.maxIdleMiB = options.maxIdleMiB ?? 640;
    this.idleMs = options.idleMs ?? 60_000;
    this.maxCalls = options.maxCalls ?? 1000;
    this.maxRssMiB = options.maxRssMiB ?? 450;
    this.controlTimeoutMs = options.controlTimeoutMs;
    this.spares = warm === false ? 0 : (warm.size ?? 1);
    this.spareIdleMs = warm === false ? 0 : (warm.idleMs ?? 30_000);
    this.idle = new IdleList(this.maxIdle, this.maxIdleMiB, (entry, reason) => void this.retire(entry, reason));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** The launch key (what a spare must match) and the shape key (what a kept process must match) of a call. */
  keysFor(launch: CliProcessOptions, modelFree: boolean, shape: ShapeParts): { launch: string; shape: string } {
    const key = this.launchKeys.get(launch, modelFree);
    return { launch: key, shape: this.shapeKeys.get(key, shape) };
  }

  /** Whether a live process has served a call (so the project dir existed when it started). */
  get servesCalls(): boolean {
    for (const entry of this.live) if (entry.shapeKey !== undefined && !entry.proc.retired) return true;
    return false;
  }

  /** Pids of live processes that served a call (idle, settling or serving). */
  get pids(): number[] {
    return [...this.live].flatMap((entry) => (entry.shapeKey === undefined || entry.proc.pid === undefined || entry.proc.retired ? [] : [entry.proc.pid]));
  }

  /** Pids of idle spares. */
  get sparePids(): number[] {
    return this.idle.entries.flatMap((entry) => (entry.shapeKey === undefined && entry.proc.pid !== undefined ? [entry.proc.pid] : []));
  }

  /** Pids and resident memory of every idle process (diagnostics, the bench). */
  idleMemory(): Array<{ pid: number | undefined; rssMiB: number }> {
    return this.idle.entries.map((entry) => ({ pid: entry.proc.pid, rssMiB: entry.proc.rssMiB() ?? 0 }));
  }

  /**
   * The process a call runs on, removed from the idle list. A process of the call's shape still
   * rewinding after its last call (a few ms) is waited for, so back-to-back calls share one process.
   */
  async acquire(launch: string, shape: string, start: () => PooledProcess): Promise<{ entry: PoolEntry; source: Source }> {
    const used = this.reuse ? await this.takeIdle(shape) : undefined;
    if (used) {
      this.stats.reusedCalls += 1;
      return { entry: used, source: "reused" };
    }
    const spare = this.idle.takeSpare(launch);
    const entry: PoolEntry = spare ?? { launchKey: launch, shapeKey: undefined, proc: start(), tools: undefined };
    if (!spare) this.track(entry);
    entry.shapeKey = shape;
    this.stats.started += 1;
    if (spare) this.stats.spareCalls += 1;
    return { entry, source: spare ? "warm" : "cold" };
  }

  /** A new process for a call whose given process failed before the call started. */
  adopt(launch: string, shape: string, proc: PooledProcess): PoolEntry {
    const entry: PoolEntry = { launchKey: launch, shapeKey: shape, proc, tools: undefined };
    this.track(entry);
    this.stats.started += 1;
    return entry;
  }

  /**
   * Whether the call about to run on `entry` should leave it rewound for another (a conversation's turn:
   * ready for its next turn, whatever `reuse` says); else the reason it ends.
   */
  keepAfterCall(entry: PoolEntry, conversation = false): true | string {
    if (conversation) return this.closed ? "pool closed" : true;
    if (!this.reuse) return "single use";
    if (this.closed) return "pool closed";
    return entry.proc.callCount + 1 >= this.maxCalls ? "call limit" : true;
  }

  /** After a conversation's turn: its process waits for the next turn (true), unless it was lost or the pool closed. */
  async keepForConversation(entry: PoolEntry): Promise<boolean> {
    const ok = await entry.proc.settled;
    if (ok && !this.closed && !entry.proc.retired) {
      this.pinned.add(entry);
      return true;
    }
    this.pinned.delete(entry);
    if (!entry.proc.retired) await this.retire(entry, "pool closed");
    return false;
  }

  /**
   * A conversation gives its process back: rewound to before its first turn, it goes to the idle list
   * like any process after a call (resolves true), or is retired (false). `firstUuid` undefined: nothing
   * of the conversation is left on it.
   */
  giveBack(entry: PoolEntry, firstUuid: string | undefined, lastUuid: string | undefined): Promise<boolean> {
    this.pinned.delete(entry);
    const ended = entry.proc.retired ?? (this.closed ? "pool closed" : this.reuse ? undefined : "single use");
    if (ended) return this.retire(entry, ended).then(() => false);
    if (firstUuid !== undefined) void entry.proc.rewindConversation(firstUuid, lastUuid ?? firstUuid);
    return this.release(entry);
  }

  /** After a call (success or failure): back to the idle list once rewound (resolves true), else retired (false). */
  release(entry: PoolEntry): Promise<boolean> {
    let kept = false;
    const settled = entry.proc.settled.then((reusable) => {
      this.settling.delete(entry);
      // Read once per call: the memory limit and, while it is idle, the idle budget use this figure.
      const rssMiB = reusable ? entry.proc.rssMiB() : undefined;
      const reason = this.endReason(entry, reusable, rssMiB);
      if (reason) return this.retire(entry, reason);
      kept = true;
      this.idle.add(entry, this.idleMs, rssMiB);
    });
    this.settling.set(entry, settled);
    return settled.then(() => kept);
  }

  /**
   * After a call a usage limit stopped, which will run again after the reset: once rewound, the process
   * waits for that retry outside the idle list and its budget (resolves true), so the retry runs warm
   * instead of on a new CLI. At most one per waiting call, so no more than the calls that ran; a wait
   * longer than `idleMs` ends it, as it would end an idle process.
   */
  hold(entry: PoolEntry): Promise<boolean> {
    return entry.proc.settled.then(async (reusable) => {
      const reason = this.endReason(entry, reusable, reusable ? entry.proc.rssMiB() : undefined);
      if (reason) {
        await this.retire(entry, reason);
        return false;
      }
      const timer = setTimeout(() => {
        this.held.delete(entry);
        void this.retire(entry, "idle");
      }, this.idleMs);
      timer.unref();
      this.held.set(entry, timer);
      return true;
    });
  }

  /** The process held for this call's retry, taken; undefined when it has ended meanwhile. */
  takeHeld(entry: PoolEntry, shape: string): PoolEntry | undefined {
    if (!this.unhold(entry)) return undefined;
    if (entry.proc.retired || entry.shapeKey !== shape || this.closed) {
      void this.retire(entry, entry.proc.retired ?? (this.closed ? "pool closed" : "not the call's shape"));
      return undefined;
    }
    this.stats.reusedCalls += 1;
    this.stats.heldRetries += 1;
    return entry;
  }

  /** A held process its call did not run again (the call ended otherwise): idle like any other. */
  letGo(entry: PoolEntry): void {
    if (!this.unhold(entry)) return;
    if (this.closed || entry.proc.retired) void this.retire(entry, entry.proc.retired ?? "pool closed");
    else this.idle.add(entry, this.idleMs);
  }

  private unhold(entry: PoolEntry): boolean {
    const timer = this.held.get(entry);
    if (!timer) return false;
    clearTimeout(timer);
    this.held.delete(entry);
    return true;
  }

  /** Why a process that served a call may not serve another, or undefined. */
  private endReason(entry: PoolEntry, reusable: boolean, rssMiB: number | undefined): string | undefined {
    if (!reusable) return entry.proc.retired ?? "not rewound";
    if ((rssMiB ?? 0) > this.maxRssMiB) return "memory limit";
    return this.closed ? "pool closed" : undefined;
  }

  /**
   * Starts a spare for `launch` (after a call that found no process of its shape), unless one waits
   * already or the idle budget is taken: a spare never pushes out a process that served a call.
   */
  addSpare(launch: string, start: () => PooledProcess): void {
    if (this.closed || this.spares <= 0 || this.busy()) return;
    if (this.idle.hasSpare(launch)) return;
    // Processes rewinding after a call are about to be idle too.
    if (this.idle.servedCount + (this.reuse ? this.settling.size : 0) >= this.maxIdle) return;
    if ((this.failedStarts.get(launch) ?? 0) >= MAX_FAILED_STARTS) return;
    while (this.idle.spareCount >= this.spares) this.idle.evictSpare("spare replaced");
    const entry: PoolEntry = { launchKey: launch, shapeKey: undefined, proc: start(), tools: undefined };
    this.track(entry, start);
    this.idle.add(entry, this.spareIdleMs);
    // A booting CLI grows for about a second; the memory budget is checked again once it has.
    const recheck = setTimeout(() => this.idle.enforceBudget(), 1_500);
    recheck.unref();
  }

  /**
   * Retires every idle process at once and every other one when its call ends; resolves once all the
   * processes started before it have exited (a call in flight is awaited, or aborted by the caller).
   */
  async close(): Promise<void> {
    this.closed = true;
    const running = [...this.running];
    const idle = this.idle.drain();
    const held = [...this.held.keys()].filter((entry) => this.unhold(entry));
    // A conversation's process between turns ends now; one serving a turn, when the turn ends (keepForConversation).
    const pinned = [...this.pinned].filter((entry) => !entry.proc.busy);
    for (const entry of pinned) this.pinned.delete(entry);
    await Promise.all([...idle, ...held, ...pinned].map((entry) => this.retire(entry, "pool closed")));
    await Promise.all(running.map((proc) => proc.proc.exited));
  }

  private async takeIdle(shape: string): Promise<PoolEntry | undefined> {
    for (;;) {
      const idle = this.idle.takeShape(shape);
      if (idle) return idle;
      const pending = [...this.settling].filter(([entry]) => entry.shapeKey === shape).map(([, settled]) => settled);
      if (pending.length === 0 || this.closed) return undefined;
      await Promise.race(pending);
    }
  }

  private track(entry: PoolEntry, restart?: () => PooledProcess): void {
    this.live.add(entry);
    this.running.add(entry.proc);
    const startedAt = Date.now();
    void entry.proc.proc.exited.then(() => {
      this.running.delete(entry.proc);
      // A spare that died by itself while idle (not retired by us) is replaced, unless its launch keeps failing at once.
      const diedIdle = restart !== undefined && entry.shapeKey === undefined && entry.proc.retired === "exited" && this.idle.has(entry);
      this.forget(entry, entry.proc.retired ?? "exited");
      if (!diedIdle) return;
      const failures = Date.now() - startedAt < QUICK_DEATH_MS ? (this.failedStarts.get(entry.launchKey) ?? 0) + 1 : 0;
      this.failedStarts.set(entry.launchKey, failures);
      this.logger.warn(`an idle warm Claude Code process exited; ${failures >= MAX_FAILED_STARTS ? "not replacing it" : "replacing it"}`);
      this.addSpare(entry.launchKey, restart);
    });
  }

  private async retire(entry: PoolEntry, reason: string): Promise<void> {
    this.forget(entry, reason);
    await entry.proc.retire(reason);
    await entry.tools?.close();
  }

  /** Counts a process's end once, by its first reason (spares that never served are not counted). */
  private forget(entry: PoolEntry, reason: string): void {
    if (!this.live.delete(entry)) return;
    this.unhold(entry);
    if (this.idle.remove(entry) && entry.shapeKey !== undefined) this.logger.warn(`an idle reused Claude Code process exited (${entry.proc.retired ?? reason}); the next call starts another`);
    if (entry.shapeKey === undefined) return;
    // Reasons carry details after a colon ("call failed: …"); the stats count the kind.
    const kind = reason.split(":")[0]!;
    this.stats.retired[kind] = (this.stats.retired[kind] ?? 0) + 1;
  }
}
