/** A runtime's limits: signals from CLI messages, the retry after a reset, the retry budget, events, a KTX-shaped governor. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ClaudeCodeApiError } from "../../src/errors/index.js";
import { CallLimits, type AttemptHooks } from "../../src/limits/call-limits.js";
import { ApiRetryBudgetError, UsageLimitError } from "../../src/limits/errors.js";
import type { KtxProgressEvent } from "../../src/limits/events.js";
import { RateLimitGovernor, type RateLimitGovernorPort, type RateLimitSignal } from "../../src/limits/governor.js";
import { type CliMessage, parseCliMessage } from "../../src/protocol/messages.js";
import { silentLogger } from "../../src/session/logger.js";

const T0 = Date.UTC(2026, 10, 23, 12, 0, 0);
beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

const message = (value: object) => parseCliMessage(value) as CliMessage;
const rejectedEvent = (resetsAtSeconds: number) => message({ type: "rate_limit_event", rate_limit_info: { status: "rejected", resetsAt: resetsAtSeconds, rateLimitType: "five_hour" } });
const apiRetry = (attempt: number, status: number, delayMs: number) => message({ type: "system", subtype: "api_retry", attempt, max_retries: 10, retry_delay_ms: delayMs, error_status: status, error: "x" });
const toolUse = (id: string) => message({ type: "assistant", message: { id: "m1", content: [{ type: "tool_use", id, name: "mcp__ktx__search", input: { q: 1 } }] }, parent_tool_use_id: null });

/** A governor of KTX's exact shape that records what it is told. */
function ktxShapedGovernor() {
  const reported: RateLimitSignal[] = [];
  const governor: RateLimitGovernorPort = { waitForReady: vi.fn(async () => undefined), report: (signal) => void reported.push(signal), maxRetryAttempts: () => 3 };
  return { governor, reported };
}

function limitsWith(governor: RateLimitGovernorPort, budgetMs = 60_000) {
  const events: KtxProgressEvent[] = [];
  const limits = new CallLimits({ governor, onEvent: (event) => events.push(event), logger: silentLogger, apiRetryBudgetMs: budgetMs });
  return { limits, events };
}

describe("signals", () => {
  it("reports to a KTX-shaped governor what KTX's own backend reports: usage from rate_limit_event, retries from api_retry", async () => {
    const { governor, reported } = ktxShapedGovernor();
    const { limits } = limitsWith(governor);
    await limits.run({}, async (hooks) => {
      await hooks.admit();
      hooks.onCliMessage(message({ type: "rate_limit_event", rate_limit_info: { status: "allowed_warning", resetsAt: 1_800_000_000, rateLimitType: "five_hour", utilization: 0.9 } }));
      hooks.onCliMessage(apiRetry(1, 529, 500));
      hooks.onCliMessage(apiRetry(2, 500, 1_000));
    });
    expect(governor.waitForReady).toHaveBeenCalledTimes(1);
    expect(reported).toEqual([
      { provider: "claude-subscription", status: "warning", resetAtMs: 1_800_000_000_000, rateLimitType: "five_hour", utilization: 0.9 },
      { provider: "claude-subscription", status: "rejected", rateLimitType: "opaque" },
      { provider: "claude-subscription", status: "warning", rateLimitType: "api_retry", retryAfterMs: 1_000 },
    ]);
  });

  it("reports recovery once, after a success of any runtime, when only retry signals were seen (API-key sessions have no usage figures)", async () => {
    const { governor, reported } = ktxShapedGovernor();
    await limitsWith(governor).limits.run({}, async (hooks) => hooks.onCliMessage(apiRetry(1, 429, 500)));
    const other = limitsWith(governor).limits;
    await other.run({}, async () => undefined);
    await other.run({}, async () => undefined);
    expect(reported.map((signal) => signal.status)).toEqual(["rejected", "allowed"]);
  });
});

describe("retry of a rate-limited call", () => {
  it("runs a rejected call again once the governor's pause is over, when no tool had run", async () => {
    const governor = new RateLimitGovernor({ resetMarginMs: 500 });
    const { limits, events } = limitsWith(governor);
    let attempts = 0;
    const call = limits.run({ unitKey: "wu-1" }, async (hooks) => {
      await hooks.admit();
      attempts += 1;
      if (attempts === 1) {
        hooks.onCliMessage(rejectedEvent(T0 / 1000 + 10));
        throw new UsageLimitError(new Date(T0 + 10_000), "five_hour");
      }
      return "done";
    });
    await vi.advanceTimersByTimeAsync(10_499);
    expect(attempts).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await expect(call).resolves.toBe("done");
    expect(attempts).toBe(2);
    const types = events.map((event) => event.type).filter((type) => type !== "wait_tick");
    expect(types).toEqual(["rate_limit_observed", "concurrency_adjusted", "wait_started", "call_retry", "wait_finished", "concurrency_adjusted"]);
    expect(events.find((event) => event.type === "call_retry")).toMatchObject({ callId: 1, unitKey: "wu-1", attempt: 2, maxAttempts: 6 });
    expect(events.filter((event) => event.type === "wait_tick").length).toBeGreaterThanOrEqual(9);
  });

  it("does not run a call again after a tool ran: the UsageLimitError says how many tool calls had run", async () => {
    const { governor } = ktxShapedGovernor();
    const { limits, events } = limitsWith(governor);
    let attempts = 0;
    const error = await limits
      .run({}, async (hooks) => {
        attempts += 1;
        hooks.onCliMessage(toolUse("toolu_1"));
        hooks.onToolSettled({ toolUseId: "toolu_1", name: "mcp__ktx__search", input: {}, ok: true, durationMs: 12 });
        throw new UsageLimitError(new Date(T0 + 10_000), "five_hour");
      })
      .catch((caught: unknown) => caught);
    expect(attempts).toBe(1);
    expect(error).toBeInstanceOf(UsageLimitError);
    expect(error).toMatchObject({ toolCallsBefore: 1, cause: expect.any(UsageLimitError) });
    expect(events.map((event) => event.type)).toEqual(["tool_call_started", "tool_call_finished"]);
    expect(events[1]).toMatchObject({ name: "mcp__ktx__search", ok: true, durationMs: 12 });
  });

  it("gives up after maxRetryAttempts, and never runs other API errors again (the CLI already retried them)", async () => {
    const { governor, reported } = ktxShapedGovernor();
    const { limits } = limitsWith(governor);
    let attempts = 0;
    const rejection = () => new UsageLimitError(new Date(T0 + 1_000), "five_hour");
    await expect(limits.run({}, async () => (attempts++, Promise.reject(rejection())))).rejects.toBeInstanceOf(UsageLimitError);
    expect(attempts).toBe(3);
    // Reported from the result, since no rate_limit_event came first.
    expect(reported).toEqual(Array(3).fill({ provider: "claude-subscription", status: "rejected", resetAtMs: T0 + 1_000, rateLimitType: "five_hour" }));
    for (const status of [429, 529, 500]) {
      attempts = 0;
      await expect(limits.run({}, async () => (attempts++, Promise.reject(new ClaudeCodeApiError(String(status), status, "api_error"))))).rejects.toThrow(String(status));
      expect(attempts).toBe(1);
    }
  });
});

describe("willRetry: what a stopped attempt may keep for its retry", () => {
  it("is true for a usage-limit rejection before any tool ran with attempts left, and agrees with what run() then does", async () => {
    const { governor } = ktxShapedGovernor();
    const { limits } = limitsWith(governor);
    const answers: boolean[] = [];
    const controller = new AbortController();
    await limits
      .run({ signal: controller.signal }, async (hooks) => {
        const rejection = new UsageLimitError(new Date(T0 + 1_000), "five_hour");
        answers.push(hooks.willRetry(rejection), hooks.willRetry(new ClaudeCodeApiError("overloaded", 529, "api_error")));
        throw rejection;
      })
      .catch(() => undefined);
    // Three attempts (maxRetryAttempts 3): the last one has no retry left.
    expect(answers).toEqual([true, false, true, false, false, false]);
    await limits
      .run({ signal: controller.signal }, async (hooks) => {
        controller.abort();
        answers.push(hooks.willRetry(new UsageLimitError(new Date(T0 + 1_000), "five_hour")));
      })
      .catch(() => undefined);
    expect(answers.at(-1)).toBe(false);
  });

  it("is false once a tool ran, and true for an API error after a rejected rate_limit_event (it becomes the UsageLimitError)", async () => {
    const { governor } = ktxShapedGovernor();
    const { limits } = limitsWith(governor);
    await limits.run({}, async (hooks) => {
      hooks.onCliMessage(rejectedEvent(T0 / 1000 + 10));
      expect(hooks.willRetry(new ClaudeCodeApiError("You've hit your limit", 429, "rate_limit_error"))).toBe(true);
      hooks.onCliMessage(toolUse("toolu_1"));
      hooks.onToolSettled({ toolUseId: "toolu_1", name: "mcp__ktx__search", input: {}, ok: true, durationMs: 3 });
      expect(hooks.willRetry(new UsageLimitError(new Date(T0 + 10_000), "five_hour"))).toBe(false);
    });
  });
});

describe("the CLI's retry budget", () => {
  it("stops the run with ApiRetryBudgetError naming the last status once the next retry would pass the budget", async () => {
    const { governor } = ktxShapedGovernor();
    const { limits, events } = limitsWith(governor, 5_000);
    const error = await limits
      .run({}, async (hooks: AttemptHooks) => {
        hooks.onCliMessage(apiRetry(1, 500, 500));
        vi.setSystemTime(Date.now() + 500);
        hooks.onCliMessage(apiRetry(2, 500, 1_000));
        vi.setSystemTime(Date.now() + 1_000);
        hooks.onCliMessage(apiRetry(3, 502, 4_000));
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiRetryBudgetError);
    expect(error).toMatchObject({ status: 502, attempts: 3, elapsedMs: 1_500, budgetMs: 5_000 });
    expect(events.filter((event) => event.type === "cli_retry").map((event) => (event as { status: number }).status)).toEqual([500, 500, 502]);
  });
});

describe("events", () => {
  it("streams text deltas of the top-level model only, and survives a throwing listener", async () => {
    const { governor } = ktxShapedGovernor();
    const warn = vi.fn();
    const texts: string[] = [];
    const limits = new CallLimits({
      governor,
      onEvent: (event) => {
        if (event.type === "text_delta") texts.push(event.text);
        throw new Error("listener bug");
      },
      logger: { ...silentLogger, warn },
      apiRetryBudgetMs: Infinity,
    });
    await limits.run({}, async (hooks) => {
      hooks.onCliMessage(message({ type: "stream_event", event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } }, parent_tool_use_id: null }));
      hooks.onCliMessage(message({ type: "stream_event", event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "sub" } }, parent_tool_use_id: "toolu_x" }));
      hooks.onCliMessage(message({ type: "stream_event", event: { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "{" } }, parent_tool_use_id: null }));
      hooks.onStepFinish(1);
    });
    expect(texts).toEqual(["Hel"]);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("onEvent threw on text_delta"));
  });

  it("forwards the events of an injected governor that has KTX's subscribe", async () => {
    const listeners: Array<(state: unknown) => void> = [];
    const governor = { waitForReady: async () => undefined, report: () => undefined, maxRetryAttempts: () => 1, subscribe: (listener: (state: unknown) => void) => (listeners.push(listener), () => listeners.splice(0)) };
    const { limits, events } = limitsWith(governor);
    await limits.run({}, async () => {
      listeners[0]!({ kind: "wait_tick", provider: "claude-subscription", rateLimitType: "five_hour", resumeAtMs: T0 + 5_000, remainingMs: 5_000 });
    });
    expect(listeners).toHaveLength(0);
    expect(events).toEqual([{ type: "wait_tick", provider: "claude-subscription", window: "five_hour", resumeAt: new Date(T0 + 5_000), remainingMs: 5_000, waiting: 0 }]);
  });
});
