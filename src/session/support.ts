/** Pieces of a process's bookkeeping (pooled-process.ts): per-call cost, call timers, memory. */
import { readFileSync } from "node:fs";
import { TimeoutError } from "../errors/index.js";
import type { ResultMessage } from "../protocol/messages.js";
/** A call that gets no output from the CLI this long (while it owes us some) fails with TimeoutError. */
export const DEFAULT_IDLE_TIMEOUT_MS = 300_000;

/** Limits (context window, max output) are not counters. */
const LIMIT = /window|max/i;

/** `total_cost_usd` and `modelUsage` accumulate over a process: a call's own share is the difference. */
export class ProcessCost {
  private cost = 0;
  private usage: Record<string, Record<string, number>> = {};

  perCall(result: ResultMessage): ResultMessage {
    const out = { ...result } as ResultMessage & { modelUsage?: Record<string, Record<string, unknown>> };
    if (typeof result.total_cost_usd === "number") {
      out.total_cost_usd = Math.max(0, Math.round((result.total_cost_usd - this.cost) * 1e9) / 1e9);
      this.cost = result.total_cost_usd;
    }
    const modelUsage = out.modelUsage;
    if (modelUsage && typeof modelUsage === "object") {
      // Plain loops: this runs once per call, and entries/fromEntries/map made it a share of a reused loop's allocation.
      const perCall: Record<string, Record<string, unknown>> = {};
      for (const model in modelUsage) {
        if (!Object.hasOwn(modelUsage, model)) continue;
        const usage = modelUsage[model] ?? {};
        const before = this.usage[model] ?? {};
        const now: Record<string, number> = {};
        const own: Record<string, unknown> = {};
        for (const name in usage) {
          if (!Object.hasOwn(usage, name)) continue;
          const value = usage[name];
          if (typeof value !== "number") {
            own[name] = value;
            continue;
          }
          now[name] = value;
          own[name] = LIMIT.test(name) ? value : Math.max(0, value - (before[name] ?? 0));
        }
        perCall[model] = own;
        this.usage[model] = now;
      }
      out.modelUsage = perCall;
    }
    return out;
  }
}

/**
 * One call's overall and idle timeouts. The idle clock runs only while the CLI owes us output, not
 * while we answer it or once the call has its outcome (`quiet()`: a slow tool, a result in).
 *
 * Output restarts the idle clock on every line, so `touch` only notes the time: one timer is armed
 * and, when it fires early (output came since), armed again for what is left. A clear and a new
 * timer per line were a measurable share of a reused loop's host CPU (docs/performance.md).
 */
export class CallTimers {
  private idle: NodeJS.Timeout | undefined;
  private overall: NodeJS.Timeout | undefined;
  /** When the idle clock last restarted (Date.now()). */
  private since = 0;
  private cleared = false;

  constructor(
    private readonly limits: { timeoutMs?: number; idleTimeoutMs?: number },
    private readonly fail: (error: TimeoutError, reason: string) => void,
    private readonly quiet: () => boolean,
  ) {}

  start(): void {
    const { timeoutMs } = this.limits;
    if (timeoutMs !== undefined && timeoutMs > 0) {
      this.overall = setTimeout(() => this.fail(new TimeoutError("overall", timeoutMs), "overall timeout"), timeoutMs);
      this.overall.unref();
    }
    this.touch();
  }

  /** Output arrived or a handler finished: the idle clock restarts (it stands still while quiet). */
  touch(): void {
    this.since = Date.now();
    if (this.idle === undefined && !this.cleared && this.idleMs > 0 && !this.quiet()) this.arm(this.idleMs);
  }

  clear(): void {
    this.cleared = true;
    clearTimeout(this.idle);
    this.idle = undefined;
    clearTimeout(this.overall);
  }

  private get idleMs(): number {
    return this.limits.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  }

  private arm(ms: number): void {
    this.idle = setTimeout(() => this.expire(), ms);
    this.idle.unref();
  }

  private expire(): void {
    this.idle = undefined;
    // Quiet: the next touch (the handler's end) starts the clock again.
    if (this.quiet()) return;
    const left = this.since + this.idleMs - Date.now();
    if (left > 0) this.arm(left);
    else this.fail(new TimeoutError("idle", this.idleMs), "idle timeout");
  }
}

/** Resident memory of a process in MiB (Linux /proc); undefined elsewhere or once it is gone. */
export function residentMiB(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}
