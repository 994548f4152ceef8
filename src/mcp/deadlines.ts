/** Tool timeouts for the running handlers of tool-calls.ts. */
import { InFlight } from "./in-flight.js";

/**
 * Tool timeouts on one timer: each running handler has a deadline and the timer is armed for the earliest
 * (a timer made and cleared per tool call cost more than a quick tool's own work). The timer holds the host
 * open only while a handler runs, as a timer per call did.
 */
export class Deadlines {
  private readonly due = new InFlight<Expiring>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;

  /** Calls `entry.expire()` after `ms` unless `delete(entry)` comes first. */
  add(entry: Expiring, ms: number): void {
    const at = Date.now() + ms;
    entry.deadlineAt = at;
    this.due.add(entry);
    if (this.timer === undefined || at < this.timerAt) this.arm(at);
    else if (this.due.size === 1) this.timer.ref();
  }

  delete(entry: Expiring): void {
    if (this.due.delete(entry) && this.due.size === 0) this.timer?.unref();
  }

  private arm(at: number): void {
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.fire(), Math.max(0, at - Date.now()));
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const entry of this.due.snapshot()) {
      const at = entry.deadlineAt ?? 0;
      if (at > now) next = Math.min(next, at);
      // An earlier entry's expiry may have ended this one already.
      else if (this.due.delete(entry)) entry.expire();
    }
    if (next < Number.POSITIVE_INFINITY && this.due.size > 0) this.arm(next);
  }
}

export interface Expiring {
  expire(): void;
  /** Set by `Deadlines.add`. `| undefined`: implementers declare it unset, also under exactOptionalPropertyTypes. */
  deadlineAt?: number | undefined;
}
