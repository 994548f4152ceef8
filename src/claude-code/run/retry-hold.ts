/**
 * What a call's attempt stopped by a usage limit hands to its retry after the reset (docs/guides/rate-limits.md):
 * its runtime slot, so the call keeps its place in the queue through the wait, and (with reuse on) its
 * process, rewound after the rejection and held by the pool, so the retry runs warm instead of on a new
 * CLI. Whatever the retry does not take goes back when the call ends.
 */
import type { AttemptHooks } from "../../limits/call-limits.js";
import type { RunLimiter } from "../../runtime/limiter.js";
import type { PoolEntry, ProcessPool } from "../pool/process-pool.js";
import type { RetryHandoff } from "./run.js";

export class RetryHold {
  private slot = false;
  private entry: PoolEntry | undefined;

  constructor(
    private readonly pool: ProcessPool,
    private readonly limiter: RunLimiter,
  ) {}

  /** Whether the previous attempt left its slot to this one (then the caller must not take another). */
  takeSlot(): boolean {
    const slot = this.slot;
    this.slot = false;
    return slot;
  }

  /** The attempt's slot stays taken for the retry. */
  keepSlot(): void {
    this.slot = true;
  }

  /** The handoff of one attempt's process (run.ts). */
  forAttempt(hooks: Pick<AttemptHooks, "willRetry">): RetryHandoff {
    return {
      take: () => {
        const entry = this.entry;
        this.entry = undefined;
        return entry;
      },
      willRetry: (error) => hooks.willRetry(error),
      keep: (entry) => void (this.entry = entry),
    };
  }

  /** At the call's end: the slot is freed, an untaken process goes back to the pool. */
  drop(): void {
    if (this.takeSlot()) this.limiter.release();
    if (this.entry) this.pool.letGo(this.entry);
    this.entry = undefined;
  }
}
