/** CLI messages as governor signals, exactly what KTX's own backend reports (with the reset in ms, as KTX's type says). */
import type { ApiRetryInfo, RateLimitInfo } from "../protocol/messages.js";
import type { RateLimitSignal } from "./governor.js";

export function rateLimitSignal(info: RateLimitInfo): RateLimitSignal {
  return {
    provider: "claude-subscription",
    status: info.status === "rejected" ? "rejected" : info.status === "allowed_warning" ? "warning" : "allowed",
    ...(info.resetsAt ? { resetAtMs: info.resetsAt.getTime() } : {}),
    ...(info.window ? { rateLimitType: info.window } : {}),
    ...(info.utilization !== undefined ? { utilization: info.utilization } : {}),
  };
}

/** Statuses of a rate limit or overload: the CLI's retry of one is a rate-limit signal without a reset time. */
export const RATE_LIMIT_STATUSES: ReadonlySet<number> = new Set([429, 529]);

/**
 * A `system/api_retry` of a 429/529 says "rate-limited, no reset time known": a rejection of type
 * `opaque`, which the governor answers with its `retry.*` backoff (KTX's opaque backoff) so new calls
 * hold back too. Any other retry (5xx, a dropped connection) is reported as KTX's backend does: a
 * warning with the CLI's delay, which throttles new calls.
 */
export function apiRetrySignal(retry: ApiRetryInfo): RateLimitSignal {
  if (retry.status !== undefined && RATE_LIMIT_STATUSES.has(retry.status)) return { provider: "claude-subscription", status: "rejected", rateLimitType: "opaque" };
  return { provider: "claude-subscription", status: "warning", rateLimitType: "api_retry", ...(retry.delayMs !== undefined ? { retryAfterMs: retry.delayMs } : {}) };
}
