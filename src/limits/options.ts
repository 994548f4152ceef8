/**
 * ktx.yaml `ingest.rateLimit` as KTX reads it (same names and defaults as KTX's own governor), plus the
 * few knobs this library adds, and the default timeouts that keep a call from hanging.
 */
import { z } from "zod";

export interface RateLimitRetryOptions {
  /** Attempts of one rate-limited call, the first included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Spread each backoff over 75–125 % of its value. */
  jitter: boolean;
}

export interface RateLimitOptions {
  /** Default true. false: no pacing, no waiting, no retry after a reset (a rejection fails at once). */
  enabled?: boolean;
  /** Utilization (0..1) from which new calls are throttled. Default 0.8. */
  throttleThreshold?: number;
  /** Calls started at once, process-wide, while under pressure. Default 1. */
  minConcurrencyUnderPressure?: number;
  /** Longest wait for a reset a call accepts; beyond it the call fails with UsageLimitError at once. Default: none (wait until the reset). */
  maxWaitMs?: number;
  /** Backoff for rate limits without a reset time (the CLI's `api_retry` on 429/529), and attempts per call. */
  retry?: Partial<RateLimitRetryOptions>;
  /** Added to a reported reset time (resets are whole seconds; clocks differ). Default 0: resume at the reset, as KTX's governor does. */
  resetMarginMs?: number;
  /** Interval of `wait_tick` progress events while waiting. Default 1000 ms. */
  tickMs?: number;
  /** Process-wide cap on calls in flight when not under pressure. Default: none (each runtime's maxConcurrentRuns applies). */
  maxConcurrency?: number;
}

export interface ResolvedRateLimitOptions extends Required<Omit<RateLimitOptions, "maxWaitMs" | "retry">> {
  maxWaitMs: number | undefined;
  retry: RateLimitRetryOptions;
}

export const DEFAULT_RATE_LIMIT: ResolvedRateLimitOptions = {
  enabled: true,
  throttleThreshold: 0.8,
  minConcurrencyUnderPressure: 1,
  maxWaitMs: undefined,
  retry: { maxAttempts: 6, baseDelayMs: 1_000, maxDelayMs: 60_000, jitter: true },
  // KTX's own governor resumes at the reported reset; a rejection after it backs off (governor.ts).
  resetMarginMs: 0,
  tickMs: 1_000,
  maxConcurrency: Number.POSITIVE_INFINITY,
};

export function resolveRateLimitOptions(options: RateLimitOptions = {}): ResolvedRateLimitOptions {
  const defined = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as RateLimitOptions;
  return {
    ...DEFAULT_RATE_LIMIT,
    ...defined,
    maxWaitMs: options.maxWaitMs,
    retry: { ...DEFAULT_RATE_LIMIT.retry, ...Object.fromEntries(Object.entries(options.retry ?? {}).filter(([, value]) => value !== undefined)) },
  };
}

const count = z.number().int().positive();
const millis = z.number().int().nonnegative();

/** Strict: a typo in ktx.yaml or the runtime options is an error, not a silent default. */
export const rateLimitOptionsSchema = z.strictObject({
  enabled: z.boolean().optional(),
  throttleThreshold: z.number().min(0).max(1).optional(),
  minConcurrencyUnderPressure: count.optional(),
  maxWaitMs: millis.optional(),
  retry: z
    .strictObject({ maxAttempts: count.optional(), baseDelayMs: millis.optional(), maxDelayMs: millis.optional(), jitter: z.boolean().optional() })
    .optional(),
  resetMarginMs: millis.optional(),
  tickMs: count.optional(),
  maxConcurrency: count.or(z.literal(Number.POSITIVE_INFINITY)).optional(),
});

/** A tool handler that has not returned after 5 minutes is stopped; the model sees a timeout error. */
export const DEFAULT_TOOL_TIMEOUT_MS = 300_000;
/** A whole call (every turn and tool of it) is stopped after 60 minutes; waits for a usage reset are not counted. */
export const DEFAULT_CALL_TIMEOUT_MS = 3_600_000;
/** The CLI's own retries of failed API requests may take 60 seconds before the run is stopped. */
export const DEFAULT_API_RETRY_BUDGET_MS = 60_000;

/** Longest delay a Node timer honours; larger values would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A timeout option: a positive integer of milliseconds, or `Infinity` for none (shared with the call inputs). */
export { timeoutMsSchema as timeoutSchema } from "../runtime/validation.js";

/** The value to arm a timer with: undefined means "no timeout" (Infinity, or beyond what a timer can hold). */
export function armedTimeout(value: number | undefined, fallback: number): number | undefined {
  const ms = value ?? fallback;
  return Number.isFinite(ms) && ms <= MAX_TIMER_MS ? ms : undefined;
}
