/**
 * Progress events: what `onEvent` receives (and the logger writes at info), so nothing long is silent.
 * Governor events are process-wide (no `callId`); the others belong to one call of one runtime.
 */

export type RateLimitProvider = "claude-subscription" | "anthropic-api" | "vertex" | "codex";

/** A usage signal as seen on the stream: the subscription's representative window. */
export interface RateLimitObservedEvent {
  type: "rate_limit_observed";
  provider: RateLimitProvider;
  /** KTX's three states: `allowed_warning` is `warning`. */
  status: "allowed" | "warning" | "rejected";
  /** `five_hour`, `seven_day`, …; `api_retry` for the CLI's retries of a 429/529 without a reset time. */
  window?: string;
  resetsAt?: Date;
  retryAfterMs?: number;
  utilization?: number;
}

export interface ConcurrencyAdjustedEvent {
  type: "concurrency_adjusted";
  provider: RateLimitProvider;
  /** Calls allowed in flight process-wide; Infinity = no process-wide cap (each runtime's maxConcurrentRuns). */
  from: number;
  to: number;
  reason: string;
  window?: string;
  utilization?: number;
}

export interface WaitEvent {
  type: "wait_started" | "wait_tick" | "wait_finished";
  provider: RateLimitProvider;
  window?: string;
  /** When new calls may start again (the reset plus the margin). */
  resumeAt: Date;
  remainingMs: number;
  /** Calls of this process waiting for it (governors that do not count them report 0). */
  waiting: number;
}

export type GovernorEvent = RateLimitObservedEvent | ConcurrencyAdjustedEvent | WaitEvent;

interface CallEventBase {
  /** Numbers the calls of one runtime, from 1. */
  callId: number;
  /** `telemetryTags.unitKey` of a loop, when given. */
  unitKey?: string;
}

export type CallEvent = CallEventBase &
  (
    | {
        /** The CLI retries a failed API request itself (`system/api_retry`). */
        type: "cli_retry";
        attempt: number | undefined;
        maxRetries: number | undefined;
        delayMs: number | undefined;
        /** HTTP status of the failed request; undefined for a dropped connection. */
        status: number | undefined;
        error: string | undefined;
      }
    | {
        /** The call runs again after a rate limit (nothing in it had acted); it first waits for the governor. */
        type: "call_retry";
        attempt: number;
        maxAttempts: number;
        reason: string;
      }
    | { type: "step_finished"; stepIndex: number }
    | { type: "tool_call_started"; toolUseId: string; name: string; input: unknown }
    | { type: "tool_call_finished"; toolUseId: string; name: string; ok: boolean; durationMs: number; error?: string }
    /** Model text as it streams (only with `includePartialMessages`). */
    | { type: "text_delta"; text: string }
    /** The CLI compacted the conversation (`system/compact_boundary`; sessions with `compaction` only): the context's tokens before and after. */
    | { type: "compacted"; trigger: "auto" | "manual"; preTokens: number | undefined; postTokens: number | undefined }
  );

export type KtxProgressEvent = GovernorEvent | CallEvent;
export type ProgressListener = (event: KtxProgressEvent) => void;
