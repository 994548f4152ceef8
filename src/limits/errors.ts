/** The typed errors of subscription limits and of the CLI's own API retries. */
import { ClaudeCodeError, type ErrorDetails } from "../errors/index.js";

/** A subscription usage window; the CLI knows more than the two common ones. */
export type UsageLimitWindow = "five_hour" | "seven_day" | "seven_day_opus" | "seven_day_sonnet" | "overage" | (string & {});

const WINDOW_LABELS: Record<string, string> = {
  five_hour: "5-hour",
  seven_day: "weekly",
  seven_day_opus: "weekly Opus",
  seven_day_sonnet: "weekly Sonnet",
  overage: "usage-credit",
  opaque: "API rate",
};

export const windowLabel = (window: string): string => WINDOW_LABELS[window] ?? window;

/** "2 h 5 min", "3 min 20 s", "4 s". */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return seconds % 60 ? `${minutes} min ${seconds % 60} s` : `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

export interface UsageLimitDetails extends ErrorDetails {
  utilization?: number;
  /**
   * Why the call did not go through: the API refused it (`rejected`), or the governor refused to wait
   * because the reset is further away than `maxWaitMs` (`wait_exceeds_max`).
   */
  reason?: "rejected" | "wait_exceeds_max";
  maxWaitMs?: number;
  /** Tool calls that had run in the call before the limit stopped it (it was then not retried). */
  toolCallsBefore?: number;
}

/** The subscription's usage limit stopped a call. `resetsAt` says when calls can go through again. */
export class UsageLimitError extends ClaudeCodeError {
  override readonly code = "usage_limit_reached";
  readonly utilization: number | undefined;
  readonly reason: "rejected" | "wait_exceeds_max";
  readonly toolCallsBefore: number;

  constructor(
    readonly resetsAt: Date,
    readonly window: UsageLimitWindow,
    details: UsageLimitDetails = {},
  ) {
    const reason = details.reason ?? "rejected";
    const inMs = resetsAt.getTime() - Date.now();
    const when = `${resetsAt.toISOString()} (${inMs > 0 ? `in ${formatDuration(inMs)}` : "now"})`;
    const what =
      window === "opaque"
        ? `The Anthropic API is rate-limiting this session; calls resume at ${when}.`
        : `Your Claude subscription's ${windowLabel(window)} usage limit is reached${details.utilization !== undefined ? ` (${Math.round(details.utilization * 100)} % used)` : ""}; it resets at ${when}.`;
    const tools = details.toolCallsBefore ? ` The agent loop had already run ${details.toolCallsBefore} tool call(s), so it was not retried automatically.` : "";
    const todo =
      reason === "wait_exceeds_max"
        ? ` That is beyond ingest.rateLimit.maxWaitMs=${details.maxWaitMs} (${formatDuration(details.maxWaitMs ?? 0)}), so the call was not started. Raise maxWaitMs (or leave it unset to wait until the reset), or rerun after the reset.`
        : ` Calls wait for the reset on their own while ingest.rateLimit is enabled (the default) and maxWaitMs allows it; otherwise rerun after the reset or use another backend until then.`;
    super(`${what}${tools}${todo}`, details);
    this.utilization = details.utilization;
    this.reason = reason;
    this.toolCallsBefore = details.toolCallsBefore ?? 0;
  }
}

/** The CLI kept retrying failed API requests for longer than `apiRetryBudgetMs`. */
export class ApiRetryBudgetError extends ClaudeCodeError {
  override readonly code = "api_retry_budget_exceeded";
  constructor(
    /** HTTP status of the last failed request; undefined for a dropped connection. */
    readonly status: number | undefined,
    readonly attempts: number,
    readonly elapsedMs: number,
    readonly budgetMs: number,
    details: ErrorDetails & { lastError?: string } = {},
  ) {
    const last = status !== undefined ? `status ${status}${details.lastError ? ` (${details.lastError})` : ""}` : `a dropped connection${details.lastError ? ` (${details.lastError})` : ""}`;
    super(
      `The Anthropic API kept failing: the CLI retried ${attempts} time(s) over ${formatDuration(elapsedMs)}, last with ${last}, ` +
        `and its next retry would pass apiRetryBudgetMs=${budgetMs}, so the run was stopped. ` +
        `Check the API status and your network, retry later, or raise apiRetryBudgetMs.`,
      details,
    );
  }
}
