/**
 * The subscription's usage windows as `status` and `doctor` show them: read from the probe call's
 * transcript (its `rate_limit_event` line). An API-key session reports none.
 */
import { type RateLimitInfo, parseCliMessage, rateLimitInfo } from "../protocol/messages.js";
import { loadTranscript } from "../transcripts/reader.js";
import { formatDuration, windowLabel } from "./errors.js";

export interface UsageWindowStatus {
  window: string;
  status: string | null;
  utilization: number | null;
  /** ISO time. */
  resetsAt: string | null;
}

export interface UsageStatus {
  /** `allowed`, `allowed_warning` or `rejected`, for the representative window. */
  status: string;
  window: string | null;
  windows: UsageWindowStatus[];
}

export function usageStatus(info: RateLimitInfo): UsageStatus {
  const windows = new Map<string, UsageWindowStatus>();
  for (const [name, figures] of Object.entries(info.windows)) {
    windows.set(name, { window: name, status: figures.status ?? null, utilization: figures.utilization ?? null, resetsAt: figures.resetsAt?.toISOString() ?? null });
  }
  // A rejected window is often missing from unifiedWindows; the event's own fields describe it.
  if (info.window && !windows.has(info.window)) {
    windows.set(info.window, { window: info.window, status: info.status, utilization: info.utilization ?? null, resetsAt: info.resetsAt?.toISOString() ?? null });
  }
  return { status: info.status, window: info.window ?? null, windows: [...windows.values()] };
}

/** The last usage report of a recorded run, or null (no transcript, an API-key session). */
export function usageFromTranscript(transcriptPath: string | undefined): UsageStatus | null {
  if (!transcriptPath) return null;
  let found: RateLimitInfo | undefined;
  try {
    for (const record of loadTranscript(transcriptPath).records) {
      if (record.kind !== "in") continue;
      let value: unknown;
      try {
        value = JSON.parse(String((record as { text?: unknown }).text));
      } catch {
        continue;
      }
      const parsed = parseCliMessage(value);
      if (parsed.kind === "rate_limit") found = rateLimitInfo(parsed.message) ?? found;
    }
  } catch {
    return null;
  }
  return found ? usageStatus(found) : null;
}

/** "5-hour 91 % used, resets 2026-11-23T17:00:00.000Z (in 2 h 5 min); weekly 40 % used, …" */
export function usageText(usage: UsageStatus | null, now = Date.now()): string {
  if (!usage) return "not reported (only a subscription login reports usage windows)";
  const parts = usage.windows.map((entry) => {
    const used = entry.status === "rejected" ? "LIMIT REACHED" : entry.utilization !== null ? `${Math.round(entry.utilization * 100)} % used` : entry.status ?? "reported";
    const reset = entry.resetsAt ? `, resets ${entry.resetsAt} (in ${formatDuration(Date.parse(entry.resetsAt) - now)})` : "";
    return `${windowLabel(entry.window)} ${used}${reset}`;
  });
  return parts.length > 0 ? parts.join("; ") : usage.status;
}
