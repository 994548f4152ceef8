/**
 * KTX's own backend tests of rate limits (claude-code-runtime.test.ts, behaviours 2–6 of
 * ../shared/ktx/README.md), restated on this runtime through KTX's hook and the scripted stand-in CLI.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { UsageLimitError, isAbortError } from "../../src/index.js";
import { cliMessage, createScriptedCli } from "../../src/testing/index.js";
import { cleanup, remainingChildren } from "../support.js";
import { ktxRuntime, recordingGovernor } from "./backend-support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

const inAnHour = Math.floor(Date.now() / 1000) + 3_600;

describe("KTX behaviour 2: an allowed_warning rate_limit_event before a text call", () => {
  it("awaits waitForReady once and reports a claude-subscription warning with the reset, window and utilization", async () => {
    const cli = createScriptedCli([
      cliMessage.init(),
      cliMessage.rateLimit({ status: "allowed_warning", resetsAt: inAnHour, rateLimitType: "five_hour", utilization: 0.91 }),
      cliMessage.text("answer"),
      cliMessage.result({ result: "answer" }),
    ]);
    const { governor, waits, reports } = recordingGovernor();
    const runtime = ktxRuntime(cli, { rateLimitGovernor: governor });
    expect(await runtime.generateText({ role: "triage", prompt: "p" })).toBe("answer");
    expect(waits).toHaveLength(1);
    expect(reports).toEqual([{ provider: "claude-subscription", status: "warning", resetAtMs: inAnHour * 1000, rateLimitType: "five_hour", utilization: 0.91 }]);
  });
});

describe("KTX behaviour 3: resetsAt as an ISO string or a number", () => {
  it("unix seconds, unix milliseconds (told apart by magnitude) and an ISO string become the same resetAtMs", async () => {
    const iso = new Date(inAnHour * 1000).toISOString();
    const event = (resetsAt: number | string) => [cliMessage.rateLimit({ status: "allowed_warning", resetsAt, rateLimitType: "seven_day", utilization: 0.8 }), cliMessage.result()];
    const cli = createScriptedCli([event(inAnHour), event(inAnHour * 1000), event(iso), event(String(inAnHour))]);
    const { governor, reports } = recordingGovernor();
    const runtime = ktxRuntime(cli, { rateLimitGovernor: governor, reuse: {} });
    for (let call = 0; call < 4; call += 1) await runtime.generateText({ role: "default", prompt: "p" });
    await runtime.close();
    expect(reports.map((report) => report.resetAtMs)).toEqual([inAnHour * 1000, inAnHour * 1000, inAnHour * 1000, inAnHour * 1000]);
  });
});

describe("KTX behaviour 4: a rejected event followed by an error result", () => {
  it("waits for the governor again, runs the call again and returns the second run's answer; report got status rejected", async () => {
    const limitText = "You've hit your 5-hour limit · resets 3:13pm (UTC)";
    const cli = createScriptedCli([
      [
        cliMessage.rateLimit({ status: "rejected", resetsAt: inAnHour, rateLimitType: "five_hour" }),
        cliMessage.text(limitText, { error: "rate_limit" }),
        cliMessage.result({ is_error: true, result: limitText, terminal_reason: "api_error", api_error_status: 429 }),
      ],
      [cliMessage.text("second run"), cliMessage.result({ result: "second run" })],
    ]);
    const { governor, waits, reports } = recordingGovernor();
    const runtime = ktxRuntime(cli, { rateLimitGovernor: governor });
    expect(await runtime.generateText({ role: "default", prompt: "p" })).toBe("second run");
    expect(waits).toHaveLength(2);
    expect(reports[0]).toEqual({ provider: "claude-subscription", status: "rejected", resetAtMs: inAnHour * 1000, rateLimitType: "five_hour" });
    expect(cli.invocations().flatMap((invocation) => invocation.runs)).toEqual([0, 1]);
  });

  it("an error_during_execution result after the rejected event is retried the same way (KTX's backend retries any error result)", async () => {
    const cli = createScriptedCli([
      [cliMessage.rateLimit({ status: "rejected", resetsAt: inAnHour, rateLimitType: "five_hour" }), cliMessage.result({ subtype: "error_during_execution", is_error: true, result: undefined })],
      [cliMessage.text("second run"), cliMessage.result({ result: "second run" })],
    ]);
    const { governor, waits, reports } = recordingGovernor();
    const runtime = ktxRuntime(cli, { rateLimitGovernor: governor });
    expect(await runtime.generateText({ role: "default", prompt: "p" })).toBe("second run");
    expect(waits).toHaveLength(2);
    expect(reports[0]).toEqual({ provider: "claude-subscription", status: "rejected", resetAtMs: inAnHour * 1000, rateLimitType: "five_hour" });
    expect(cli.invocations().flatMap((invocation) => invocation.runs)).toEqual([0, 1]);
  });

  it("with no retry left, the call rejects with UsageLimitError carrying the event's reset and window", async () => {
    const cli = createScriptedCli([
      cliMessage.rateLimit({ status: "rejected", resetsAt: inAnHour, rateLimitType: "seven_day" }),
      cliMessage.result({ is_error: true, result: "limit", terminal_reason: "api_error", api_error_status: 429 }),
    ]);
    const { governor } = recordingGovernor();
    governor.maxRetryAttempts = () => 1;
    const error = await ktxRuntime(cli, { rateLimitGovernor: governor }).generateText({ role: "default", prompt: "p" }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageLimitError);
    expect(error).toMatchObject({ window: "seven_day", resetsAt: new Date(inAnHour * 1000) });
  });
});

describe("KTX behaviour 5: system/api_retry", () => {
  it("a retry with retry_delay_ms is reported as a warning with retryAfterMs, type api_retry", async () => {
    const cli = createScriptedCli([cliMessage.apiRetry({ retry_delay_ms: 1_500, error_status: 500, error: "server_error" }), cliMessage.result()]);
    const { governor, reports } = recordingGovernor();
    await ktxRuntime(cli, { rateLimitGovernor: governor }).generateText({ role: "default", prompt: "p" });
    expect(reports[0]).toEqual({ provider: "claude-subscription", status: "warning", retryAfterMs: 1_500, rateLimitType: "api_retry" });
  });

  it("deliberate difference: a retry of a 429/529 is a rejection without a reset (type opaque), so the governor backs off (docs/parity.md)", async () => {
    const cli = createScriptedCli([cliMessage.apiRetry({ retry_delay_ms: 1_500, error_status: 429, error: "rate_limit" }), cliMessage.result()]);
    const { governor, reports } = recordingGovernor();
    await ktxRuntime(cli, { rateLimitGovernor: governor }).generateText({ role: "default", prompt: "p" });
    expect(reports[0]).toEqual({ provider: "claude-subscription", status: "rejected", rateLimitType: "opaque" });
  });
});

describe("KTX behaviour 6: the caller's abortSignal reaches waitForReady", () => {
  it("waitForReady gets a signal that aborts with the caller's; the call rejects as aborted and no CLI starts", async () => {
    const cli = createScriptedCli([cliMessage.result()]);
    const { governor, waits } = recordingGovernor({ hold: true });
    const runtime = ktxRuntime(cli, { rateLimitGovernor: governor });
    const controller = new AbortController();
    const call = runtime.generateText({ role: "default", prompt: "p", abortSignal: controller.signal }).catch((error: unknown) => error);
    // The CLI's --version is read first (once per runtime); then the call waits for the governor.
    await vi.waitFor(() => expect(waits).toHaveLength(1), { timeout: 10_000 });
    expect(waits[0]!.aborted).toBe(false);
    controller.abort();
    // Not the caller's object itself: a signal that also follows runtime.close({ abortInFlight }) (docs/parity.md).
    expect(waits[0]!.aborted).toBe(true);
    // The governor's own rejection (here the signal's reason, a DOMException AbortError) is what the call rejects with.
    const error = await call;
    expect(isAbortError(error)).toBe(true);
    expect(cli.invocations()).toEqual([]);
  });
});
