/**
 * The `anthropic-ratelimit-unified-*` response headers a subscriber's Messages API sends, as the
 * pinned CLI (2.1.330) reads them: an overall status, reset and representative claim, plus per-window
 * `-<5h|7d>-utilization`, `-reset` and `-status`. Resets are unix seconds.
 */

/** The windows a scripted turn can report; the CLI knows more (overage, 7d_oi, …). */
export type RateLimitWindowName = "five_hour" | "seven_day";
export type ScriptedRateLimitStatus = "allowed" | "allowed_warning" | "rejected";

export interface ScriptedRateLimitWindow {
  /** 0..1 */
  utilization?: number;
  resetsAt?: Date;
  status?: ScriptedRateLimitStatus;
}

export interface ScriptedRateLimit {
  /** `allowed`, `allowed_warning` (near the limit) or `rejected` (the answer becomes a 429). */
  status: ScriptedRateLimitStatus;
  /** The window the status is about (the representative claim). Default `five_hour`. */
  window?: RateLimitWindowName;
  /** That window's utilization, 0..1. */
  utilization?: number;
  /** That window's reset; default: the window's length from now. A rejection needs one to be retryable. */
  resetsAt?: Date;
  /** Figures for the other window, e.g. the 7-day window next to the 5-hour one. */
  otherWindows?: Partial<Record<RateLimitWindowName, ScriptedRateLimitWindow>>;
}

const HEADER_KEY: Record<RateLimitWindowName, string> = { five_hour: "5h", seven_day: "7d" };
const WINDOW_MS: Record<RateLimitWindowName, number> = { five_hour: 5 * 3_600_000, seven_day: 7 * 86_400_000 };
const LABEL: Record<RateLimitWindowName, string> = { five_hour: "5-hour", seven_day: "weekly" };

/** Rounded up, so the CLI never sees a reset earlier than the one scripted. */
const unixSeconds = (date: Date): string => String(Math.ceil(date.getTime() / 1000));

export function rateLimitHeaders(limit: ScriptedRateLimit, now = Date.now()): Record<string, string> {
  const window = limit.window ?? "five_hour";
  const resetsAt = limit.resetsAt ?? new Date(now + WINDOW_MS[window]);
  const headers: Record<string, string> = {
    "anthropic-ratelimit-unified-status": limit.status,
    "anthropic-ratelimit-unified-reset": unixSeconds(resetsAt),
    "anthropic-ratelimit-unified-representative-claim": window,
  };
  const windows: Partial<Record<RateLimitWindowName, ScriptedRateLimitWindow>> = {
    ...limit.otherWindows,
    [window]: { utilization: limit.utilization, resetsAt, status: limit.status },
  };
  for (const [name, figures] of Object.entries(windows) as Array<[RateLimitWindowName, ScriptedRateLimitWindow]>) {
    const key = HEADER_KEY[name];
    if (figures.utilization !== undefined) headers[`anthropic-ratelimit-unified-${key}-utilization`] = String(figures.utilization);
    headers[`anthropic-ratelimit-unified-${key}-reset`] = unixSeconds(figures.resetsAt ?? new Date(now + WINDOW_MS[name]));
    headers[`anthropic-ratelimit-unified-${key}-status`] = figures.status ?? "allowed";
  }
  return headers;
}

/** The 429 body's message for a reached limit (the CLI writes its own text from the headers). */
export function rejectionMessage(window: RateLimitWindowName): string {
  return `scripted: ${LABEL[window]} usage limit reached`;
}
