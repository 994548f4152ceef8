/** Subscription limits and progress: the governor, the typed errors, the events, the default timeouts. */
import type { Logger } from "../session/logger.js";
import { CallLimits } from "./call-limits.js";
import type { ProgressListener } from "./events.js";
import { type RateLimitGovernorPort, processRateLimitGovernor } from "./governor.js";
import { DEFAULT_API_RETRY_BUDGET_MS, type RateLimitOptions } from "./options.js";

export { CallLimits, type AttemptHooks } from "./call-limits.js";
export * from "./errors.js";
export type * from "./events.js";
export { RateLimitGovernor, processRateLimitGovernor, type RateLimitGovernorPort, type RateLimitSignal, type GovernorSnapshot, type Release } from "./governor.js";
export * from "./options.js";
export { describeEvent } from "./describe.js";
export { rateLimitSignal, apiRetrySignal } from "./signals.js";

export interface LimitsRuntimeOptions {
  rateLimit?: RateLimitOptions;
  rateLimitGovernor?: RateLimitGovernorPort;
  onEvent?: ProgressListener;
  apiRetryBudgetMs?: number;
}

/** A runtime's limits: the injected governor, or the process's own (configured by `rateLimit` when given). */
export function createCallLimits(options: LimitsRuntimeOptions, logger: Logger): CallLimits {
  return new CallLimits({
    governor: options.rateLimitGovernor ?? processRateLimitGovernor(options.rateLimit),
    onEvent: options.onEvent,
    logger,
    apiRetryBudgetMs: options.apiRetryBudgetMs ?? DEFAULT_API_RETRY_BUDGET_MS,
  });
}
