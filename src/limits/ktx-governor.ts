/** KTX's governor events (`RateLimitWaitState`, from its `subscribe`) as this library's progress events. */
import type { GovernorEvent, RateLimitProvider } from "./events.js";

interface KtxWaitState {
  kind?: unknown;
  provider?: unknown;
  status?: unknown;
  rateLimitType?: unknown;
  resetAtMs?: unknown;
  retryAfterMs?: unknown;
  utilization?: unknown;
  from?: unknown;
  to?: unknown;
  reason?: unknown;
  resumeAtMs?: unknown;
  remainingMs?: unknown;
}

const num = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) ? value : undefined);

/** Undefined for a state this library does not know. */
export function fromKtxWaitState(value: unknown): GovernorEvent | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const state = value as KtxWaitState;
  const provider = (typeof state.provider === "string" ? state.provider : "claude-subscription") as RateLimitProvider;
  const window = typeof state.rateLimitType === "string" ? { window: state.rateLimitType } : {};
  const utilization = num(state.utilization) !== undefined ? { utilization: num(state.utilization)! } : {};
  switch (state.kind) {
    case "rate_limit_observed": {
      const status = state.status === "rejected" || state.status === "warning" ? state.status : "allowed";
      const resetAtMs = num(state.resetAtMs);
      const retryAfterMs = num(state.retryAfterMs);
      return {
        type: "rate_limit_observed",
        provider,
        status,
        ...window,
        ...(resetAtMs !== undefined ? { resetsAt: new Date(resetAtMs) } : {}),
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        ...utilization,
      };
    }
    case "concurrency_adjusted":
      return { type: "concurrency_adjusted", provider, from: num(state.from) ?? 0, to: num(state.to) ?? 0, reason: String(state.reason ?? ""), ...window, ...utilization };
    case "wait_started":
    case "wait_tick":
    case "wait_finished":
      return { type: state.kind, provider, ...window, resumeAt: new Date(num(state.resumeAtMs) ?? Date.now()), remainingMs: num(state.remainingMs) ?? 0, waiting: 0 };
    default:
      return undefined;
  }
}
