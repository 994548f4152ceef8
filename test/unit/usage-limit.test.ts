/** rate_limit_event and api_retry parsing, and a rejected result becoming UsageLimitError (lines from CLI 2.1.330). */
import { describe, expect, it } from "vitest";
import { resultError } from "../../src/claude-code/run/result-errors.js";
import { ClaudeCodeApiError } from "../../src/errors/index.js";
import { ApiRetryBudgetError, UsageLimitError, formatDuration } from "../../src/limits/errors.js";
import { type AssistantMessage, type ResultMessage, apiRetryInfo, parseCliMessage, rateLimitInfo } from "../../src/protocol/messages.js";

const WARNING = {
  type: "rate_limit_event",
  rate_limit_info: {
    status: "allowed_warning",
    resetsAt: 1795470695,
    rateLimitType: "five_hour",
    utilization: 0.91,
    isUsingOverage: false,
    unifiedWindows: { five_hour: { utilization: 0.91, resetsAt: 1795470695, status: "allowed_warning" }, seven_day: { utilization: 0.4, resetsAt: 1796057495, status: "allowed" } },
  },
  uuid: "e31dc198",
  session_id: "9fb94a82",
};
const REJECTED_LINE = {
  type: "assistant",
  message: { id: "9da3ab53", model: "<synthetic>", role: "assistant", type: "message", stop_reason: "stop_sequence", content: [{ type: "text", text: "You've hit your 5-hour limit · resets 4:52pm (UTC)" }] },
  parent_tool_use_id: null,
  session_id: "282d9b1d",
  error: "rate_limit",
  is_api_error_message: true,
  api_error_status: 429,
  api_error: "usage_limit_reached",
  api_error_params: { rate_limit_info: { status: "rejected", resetsAt: 1795452731, rateLimitType: "five_hour", isUsingOverage: false } },
  api_error_type: "rate_limit_error",
};
const REJECTED_RESULT = {
  type: "result",
  subtype: "success",
  is_error: true,
  num_turns: 1,
  terminal_reason: "api_error",
  api_error_status: 429,
  api_error_type: "rate_limit_error",
  api_error: "usage_limit_reached",
  result: "You've hit your 5-hour limit · resets 4:52pm (UTC)",
};

describe("rate_limit_event", () => {
  it("parses the representative window and every window, resets as Dates", () => {
    const parsed = parseCliMessage(WARNING);
    expect(parsed.kind).toBe("rate_limit");
    const info = rateLimitInfo((parsed as { message: any }).message)!;
    expect(info).toEqual({
      status: "allowed_warning",
      window: "five_hour",
      resetsAt: new Date(1795470695_000),
      utilization: 0.91,
      isUsingOverage: false,
      windows: {
        five_hour: { utilization: 0.91, resetsAt: new Date(1795470695_000), status: "allowed_warning" },
        seven_day: { utilization: 0.4, resetsAt: new Date(1796057495_000), status: "allowed" },
      },
    });
  });

  it("takes the utilization from the window when the top level has none", () => {
    const parsed = parseCliMessage({ type: "rate_limit_event", rate_limit_info: { status: "allowed", rateLimitType: "five_hour", unifiedWindows: { five_hour: { utilization: 0.2 } } } });
    expect(rateLimitInfo((parsed as { message: any }).message)?.utilization).toBe(0.2);
  });

  it("never fails the run on a malformed informational field", () => {
    const parsed = parseCliMessage({ type: "rate_limit_event", rate_limit_info: { status: 7, resetsAt: "soon", unifiedWindows: "x" } });
    expect(parsed.kind).toBe("rate_limit");
    expect(rateLimitInfo((parsed as { message: any }).message)).toMatchObject({ status: "allowed", resetsAt: undefined, windows: {} });
    expect(rateLimitInfo((parseCliMessage({ type: "rate_limit_event", rate_limit_info: 3 }) as { message: any }).message)).toBeUndefined();
  });
});

describe("api_retry", () => {
  it("normalises attempt, delay, status and error label", () => {
    const parsed = parseCliMessage({ type: "system", subtype: "api_retry", attempt: 2, max_retries: 10, retry_delay_ms: 1054, error_status: 529, error: "overloaded" });
    expect(parsed.kind).toBe("api_retry");
    expect(apiRetryInfo((parsed as { message: any }).message)).toEqual({ attempt: 2, maxRetries: 10, delayMs: 1054, status: 529, error: "overloaded" });
  });
});

describe("a rejected result", () => {
  it("becomes UsageLimitError with the reset and window, never a generic API error", () => {
    const error = resultError(REJECTED_RESULT as ResultMessage, [REJECTED_LINE as unknown as AssistantMessage], { stderrTail: "tail" });
    expect(error).toBeInstanceOf(UsageLimitError);
    const limit = error as UsageLimitError;
    expect(limit.code).toBe("usage_limit_reached");
    expect(limit.resetsAt).toEqual(new Date(1795452731_000));
    expect(limit.window).toBe("five_hour");
    expect(limit.stderrTail).toBe("tail");
    expect(limit.message).toContain("5-hour usage limit is reached; it resets at 2026-11-23T16:52:11.000Z");
    expect(limit.message).toContain("rerun after the reset");
  });

  it("stays a plain API error for a 429 without a reset time (no unified headers)", () => {
    const result = { ...REJECTED_RESULT, api_error: "rate_limit" };
    const line = { ...REJECTED_LINE, api_error: "rate_limit", api_error_params: undefined };
    expect(resultError(result as ResultMessage, [line as unknown as AssistantMessage])).toBeInstanceOf(ClaudeCodeApiError);
  });
});

describe("error messages", () => {
  it("say how long until the reset, what was used, and what to do", () => {
    const soon = new Date(Date.now() + 2 * 3_600_000 + 5 * 60_000 + 10_000);
    const rejected = new UsageLimitError(soon, "seven_day", { utilization: 1, toolCallsBefore: 3 });
    expect(rejected.message).toMatch(/weekly usage limit is reached \(100 % used\); it resets at .* \(in 2 h 5 min\)\. The agent loop had already run 3 tool call\(s\)/);
    const tooLong = new UsageLimitError(soon, "five_hour", { reason: "wait_exceeds_max", maxWaitMs: 600_000 });
    expect(tooLong.reason).toBe("wait_exceeds_max");
    expect(tooLong.message).toContain("beyond ingest.rateLimit.maxWaitMs=600000 (10 min)");
    const budget = new ApiRetryBudgetError(500, 6, 125_000, 120_000, { lastError: "server_error" });
    expect(budget.code).toBe("api_retry_budget_exceeded");
    expect(budget.message).toContain("last with status 500 (server_error)");
    expect(formatDuration(3_000)).toBe("3 s");
    expect(formatDuration(3 * 86_400_000 + 3_600_000)).toBe("3 d 1 h");
  });
});
