/** Recognises a usage-limit rejection in a failed `result` and the CLI's synthetic error line. */
import type { ErrorDetails } from "../errors/index.js";
import { type AssistantMessage, type ResultMessage, resetAtMs } from "../protocol/messages.js";
import { UsageLimitError } from "./errors.js";

interface RejectionInfo {
  status?: unknown;
  resetsAt?: unknown;
  rateLimitType?: unknown;
  utilization?: unknown;
}

function rejectionInfo(line: Record<string, unknown>): RejectionInfo | undefined {
  const params = line.api_error_params as { rate_limit_info?: RejectionInfo } | undefined;
  return params && typeof params === "object" ? params.rate_limit_info : undefined;
}

/**
 * The CLI (2.1.330) marks a reached limit with `api_error: "usage_limit_reached"` on the result and on
 * its synthetic assistant line, which also carries the `rate_limit_info` (reset in unix seconds, window; read as `resetAtMs` reads a `rate_limit_event`'s).
 * Undefined when the failure is not a usage limit or no reset time is known (then it is a plain API error).
 */
export function usageLimitFromResult(result: ResultMessage, errorLines: readonly AssistantMessage[], details: ErrorDetails = {}): UsageLimitError | undefined {
  const lines = errorLines as unknown as Array<Record<string, unknown>>;
  const marked = (result as Record<string, unknown>).api_error === "usage_limit_reached" || lines.some((line) => line.api_error === "usage_limit_reached");
  const info = lines.map(rejectionInfo).find((candidate) => candidate?.status === "rejected");
  if (!marked && !info) return undefined;
  const resetMs = resetAtMs(info?.resetsAt);
  if (resetMs === undefined) return undefined;
  const resetsAt = new Date(resetMs);
  return new UsageLimitError(resetsAt, typeof info?.rateLimitType === "string" ? info.rateLimitType : "five_hour", {
    ...details,
    ...(typeof info?.utilization === "number" ? { utilization: info.utilization } : {}),
  });
}
