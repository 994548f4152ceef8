/** Runtime options of the limits: timeouts (Infinity allowed), ingest.rateLimit, an injected governor, onEvent. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseRuntimeOptions } from "../../src/claude-code/runtime.js";
import { InvalidInputError } from "../../src/errors/index.js";
import { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_RATE_LIMIT, DEFAULT_TOOL_TIMEOUT_MS, armedTimeout, resolveRateLimitOptions } from "../../src/limits/options.js";
import { describeEvent } from "../../src/limits/describe.js";
import type { RateLimitOptions } from "../../src/limits/options.js";
import { parseKtxLlmConfig } from "../../src/config/index.js";

const projectDir = mkdtempSync(join(tmpdir(), "ktx-limits-options-"));
const parse = (extra: object) => parseRuntimeOptions({ projectDir, models: { default: "sonnet" }, ...extra });

describe("timeouts", () => {
  it("default to documented values, and Infinity (or more than a timer holds) means none", () => {
    expect(armedTimeout(undefined, DEFAULT_TOOL_TIMEOUT_MS)).toBe(300_000);
    expect(armedTimeout(undefined, DEFAULT_CALL_TIMEOUT_MS)).toBe(3_600_000);
    expect(armedTimeout(1_500, DEFAULT_CALL_TIMEOUT_MS)).toBe(1_500);
    expect(armedTimeout(Infinity, DEFAULT_CALL_TIMEOUT_MS)).toBeUndefined();
    expect(armedTimeout(2 ** 31, DEFAULT_CALL_TIMEOUT_MS)).toBeUndefined();
  });

  it("accept a positive integer or Infinity, nothing else", () => {
    expect(() => parse({ timeoutMs: Infinity, toolTimeoutMs: Infinity, apiRetryBudgetMs: Infinity })).not.toThrow();
    expect(() => parse({ toolTimeoutMs: 1_000 })).not.toThrow();
    for (const bad of [0, -1, 1.5, NaN, -Infinity]) expect(() => parse({ toolTimeoutMs: bad }), String(bad)).toThrow(InvalidInputError);
  });
});

describe("rate-limit options", () => {
  it("fill in KTX's defaults", () => {
    expect(resolveRateLimitOptions({ maxWaitMs: 1_000, retry: { maxAttempts: 2 } })).toEqual({ ...DEFAULT_RATE_LIMIT, maxWaitMs: 1_000, retry: { ...DEFAULT_RATE_LIMIT.retry, maxAttempts: 2 } });
    expect(DEFAULT_RATE_LIMIT).toMatchObject({ enabled: true, throttleThreshold: 0.8, minConcurrencyUnderPressure: 1, maxWaitMs: undefined, retry: { maxAttempts: 6, baseDelayMs: 1_000, maxDelayMs: 60_000, jitter: true } });
  });

  it("take ktx.yaml's parsed ingest.rateLimit as it is", () => {
    const config = parseKtxLlmConfig("llm:\n  provider:\n    backend: claude-code\n  models:\n    default: sonnet\ningest:\n  rateLimit:\n    maxWaitMs: 900000\n    retry:\n      jitter: false\n");
    const rateLimit: RateLimitOptions = config.ingest.rateLimit;
    expect(() => parse({ rateLimit, rateLimitGovernor: { waitForReady: async () => undefined, report: () => undefined, maxRetryAttempts: () => 1 } })).not.toThrow();
    expect(resolveRateLimitOptions(rateLimit)).toMatchObject({ maxWaitMs: 900_000, throttleThreshold: 0.8, retry: { jitter: false, maxAttempts: 6 } });
  });

  it("refuse a typo or an out-of-range value instead of defaulting it", () => {
    expect(() => parse({ rateLimit: { throttleTreshold: 0.5 } })).toThrow(/throttleTreshold/);
    expect(() => parse({ rateLimit: { throttleThreshold: 1.5 } })).toThrow(InvalidInputError);
    expect(() => parse({ rateLimit: { retry: { maxAttempts: 0 } } })).toThrow(InvalidInputError);
    expect(() => parse({ rateLimit: { enabled: true, maxWaitMs: 0, minConcurrencyUnderPressure: 2, retry: { jitter: false } } })).not.toThrow();
  });

  it("take an injected governor only with KTX's three methods, and onEvent only as a function", () => {
    const governor = { waitForReady: async () => undefined, report: () => undefined, maxRetryAttempts: () => 1 };
    expect(() => parse({ rateLimitGovernor: governor })).not.toThrow();
    expect(() => parse({ rateLimitGovernor: { waitForReady: governor.waitForReady, report: governor.report } })).toThrow(/KTX's governor shape/);
    expect(() => parse({ onEvent: () => undefined, includePartialMessages: true })).not.toThrow();
    expect(() => parse({ onEvent: "log" })).toThrow(InvalidInputError);
  });
});

describe("log lines", () => {
  it("say what happened, with times and figures", () => {
    const resumeAt = new Date(Date.UTC(2026, 10, 23, 17, 0, 0));
    expect(describeEvent({ type: "wait_started", provider: "claude-subscription", window: "five_hour", resumeAt, remainingMs: 7_500_000, waiting: 3 })).toBe(
      "waiting for the 5-hour limit: new calls resume at 2026-11-23T17:00:00.000Z (in 2 h 5 min; 3 waiting)",
    );
    expect(describeEvent({ type: "concurrency_adjusted", provider: "claude-subscription", from: Infinity, to: 1, reason: "usage limit reached" })).toBe("calls started at once: unlimited -> 1 (usage limit reached)");
    expect(describeEvent({ type: "cli_retry", callId: 2, unitKey: "wu-9", attempt: 3, maxRetries: 10, delayMs: 2_000, status: 529, error: "overloaded" })).toBe(
      "call 2 (wu-9): the CLI retries the API request (attempt 3/10) in 2000 ms after status 529 (overloaded)",
    );
    expect(describeEvent({ type: "tool_call_finished", callId: 1, toolUseId: "t", name: "mcp__ktx__search", ok: false, durationMs: 12, error: "boom" })).toBe("call 1: tool mcp__ktx__search FAILED in 12 ms: boom");
  });
});
