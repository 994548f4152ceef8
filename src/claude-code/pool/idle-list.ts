/**
 * The pool's idle processes under one budget (process-pool.ts): kept processes and spares together, at
 * most `maxIdle` of them and `maxIdleMiB` of resident memory in all. Each ends after its own idle time.
 */
import type { PoolEntry } from "./pool-keys.js";

interface Idle {
  entry: PoolEntry;
  timer: NodeJS.Timeout;
  since: number;
  /** Resident memory read when it went idle after a call; undefined for a spare, which grows while it boots and is read afresh. */
  rssMiB: number | undefined;
}

/** A process that served no call yet. */
const isSpare = (idle: Idle): boolean => idle.entry.shapeKey === undefined;

export class IdleList {
  private readonly items: Idle[] = [];

  constructor(
    private readonly maxIdle: number,
    private readonly maxIdleMiB: number,
    /** Ends a process that left the list for good (its idle time ran out, or the budget pushed it out). */
    private readonly retire: (entry: PoolEntry, reason: string) => void,
  ) {}

  /** Idle processes that served a call. */
  get servedCount(): number {
    return this.items.filter((idle) => !isSpare(idle)).length;
  }

  get spareCount(): number {
    return this.items.filter(isSpare).length;
  }

  get entries(): PoolEntry[] {
    return this.items.map((idle) => idle.entry);
  }

  has(entry: PoolEntry): boolean {
    return this.items.some((idle) => idle.entry === entry);
  }

  hasSpare(launch: string): boolean {
    return this.items.some((idle) => isSpare(idle) && idle.entry.launchKey === launch);
  }

  /** Adds a process for `idleMs`, then keeps the budget (which may push out this one or another). */
  add(entry: PoolEntry, idleMs: number, rssMiB?: number): void {
    const idle: Idle = { entry, since: Date.now(), rssMiB, timer: setTimeout(() => this.evict(idle, "idle"), idleMs) };
    idle.timer.unref();
    this.items.push(idle);
    this.enforceBudget();
  }

  /** Takes the idle process that served a call of `shape`, if one is there. */
  takeShape(shape: string): PoolEntry | undefined {
    return this.take(this.items.findIndex((idle) => idle.entry.shapeKey === shape && !idle.entry.proc.retired));
  }

  /** Takes a spare started for `launch`, if one is there. */
  takeSpare(launch: string): PoolEntry | undefined {
    return this.take(this.items.findIndex((idle) => isSpare(idle) && idle.entry.launchKey === launch && !idle.entry.proc.retired));
  }

  /** Retires the oldest spare (one that makes room for another). */
  evictSpare(reason: string): void {
    const spare = this.items.find(isSpare);
    if (spare) this.evict(spare, reason);
  }

  /** Removes a process without retiring it (it has ended already); false when it was not idle. */
  remove(entry: PoolEntry): boolean {
    return this.take(this.items.findIndex((idle) => idle.entry === entry)) !== undefined;
  }

  /** Empties the list (the pool closes): every process in it, for the caller to retire. */
  drain(): PoolEntry[] {
    return this.items.splice(0).map((idle) => (clearTimeout(idle.timer), idle.entry));
  }

  /**
   * While the count or the memory is over, spares go first (they serve no shape yet), then the least
   * recently used. A process that served a call counts with the memory read when it went idle (an idle
   * CLI does not grow); a spare is read each time.
   */
  enforceBudget(): void {
    const overMemory = () => this.items.reduce((sum, idle) => sum + (idle.rssMiB ?? idle.entry.proc.rssMiB() ?? 0), 0) > this.maxIdleMiB;
    while (this.items.length > 0 && (this.items.length > this.maxIdle || overMemory())) {
      const spare = this.items.find(isSpare);
      this.evict(spare ?? this.items.reduce((a, b) => (b.since < a.since ? b : a)), "idle budget");
    }
  }

  private take(index: number): PoolEntry | undefined {
    if (index < 0) return undefined;
    const [idle] = this.items.splice(index, 1);
    clearTimeout(idle!.timer);
    return idle!.entry;
  }

  private evict(idle: Idle, reason: string): void {
    const index = this.items.indexOf(idle);
    if (index < 0) return;
    this.take(index);
    this.retire(idle.entry, reason);
  }
}
