/** Pieces of a process's bookkeeping (pooled-process.ts): per-call cost, call timers, memory. */
import { readFileSync } from "node:fs";
import { TimeoutError } from "../errors/index.js";
import type { ResultMessage } from "../protocol/messages.js";
/** A call that gets no output from the CLI this long (while it owes us some) fails with TimeoutError. */
export const DEFAULT_IDLE_TIMEOUT_MS = 300_000;

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
    if (out.modelUsage && typeof out.modelUsage === "object") {
      const perCall: Record<string, Record<string, unknown>> = {};
      for (const [model, usage] of Object.entries(out.modelUsage)) {
        const before = this.usage[model] ?? {};
        const now: Record<string, number> = {};
        perCall[model] = Object.fromEntries(
          Object.entries(usage ?? {}).map(([name, value]) => {
            if (typeof value !== "number") return [name, value];
            now[name] = value;
            // Limits (context window, max output) are not counters.
            return [name, /window|max/i.test(name) ? value : Math.max(0, value - (before[name] ?? 0))];
          }),
        );
        this.usage[model] = now;
      }
      out.modelUsage = perCall;
    }
    return out;
  }
}

/**
 * One call's overall and idle timeouts. The idle clock runs only while the CLI owes us output, not
 * while we answer it (`answering()`: a slow tool).
 */
export class CallTimers {
  private idle: NodeJS.Timeout | undefined;
  private overall: NodeJS.Timeout | undefined;

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

  /** Output arrived or a handler finished: the idle clock restarts (unless we are answering, or done). */
  touch(): void {
    this.pause();
    const idleMs = this.limits.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    if (idleMs <= 0 || this.quiet()) return;
    this.idle = setTimeout(() => this.fail(new TimeoutError("idle", idleMs), "idle timeout"), idleMs);
    this.idle.unref();
  }

  pause(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = undefined;
  }

  clear(): void {
    this.pause();
    if (this.overall) clearTimeout(this.overall);
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
