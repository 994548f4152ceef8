/**
 * Subscription usage limits on the real pinned CLI, on the first-party path a subscriber's CLI takes
 * (a claude.ai login, api.anthropic.com through the test front, the runtime's interceptor; the
 * scripted API's usage-limit headers), and once with an explicit OAuth `apiEndpoint` (the scripted
 * API's subscription mode at a base URL): the typed limit error, the process governor's wait across runtimes, a
 * KTX-shaped governor receiving the signals, the CLI's retry budget, and the progress events.
 */
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { renderDoctor, renderStatus } from "../../src/cli/status.js";
import { collectStatus } from "../../src/cli/status-probe.js";
import type { KtxProgressEvent } from "../../src/limits/events.js";
import { ApiRetryBudgetError, UsageLimitError } from "../../src/limits/errors.js";
import { RateLimitGovernor, type RateLimitGovernorPort, type RateLimitSignal, processRateLimitGovernor } from "../../src/limits/governor.js";
import { lookup } from "../../src/testing/scenarios.js";
import { type RecordedRequest, turn } from "../../src/testing/scripted-api.js";
import { baseUrlApi, cleanup, firstPartyApi, firstPartyEnv, remainingChildren, runtimeFor, tempDir } from "../support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

const allowed = (text: string, utilization = 0.3) => turn.withRateLimit(turn.text(text), { status: "allowed", utilization });

/** A governor of KTX's exact shape (waitForReady, report, maxRetryAttempts) that records what it is told. */
function ktxShapedGovernor(maxAttempts = 3) {
  const reported: RateLimitSignal[] = [];
  let waits = 0;
  const governor: RateLimitGovernorPort = {
    waitForReady: async () => void (waits += 1),
    report: (signal) => void reported.push(signal),
    maxRetryAttempts: () => maxAttempts,
  };
  return { governor, reported, waits: () => waits };
}

describe("subscription mode", () => {
  it("runs the real CLI as a subscriber: Bearer OAuth token, the claude-code beta, the isolation check passes", async () => {
    const api = await firstPartyApi([allowed("hello subscriber", 0.2)]);
    const runtime = runtimeFor(api);
    expect(await runtime.generateText({ prompt: "hi" })).toBe("hello subscriber");
    const request = api.messageRequests[0]!;
    expect(request.host).toBe("api.anthropic.com");
    expect(request.headers.authorization).toMatch(/^Bearer sk-ant-oat01-/);
    expect(request.headers["x-api-key"]).toBeUndefined();
    expect(String(request.headers["anthropic-beta"])).toContain("claude-code-20250219");
  });

  // Base URL on purpose: the scripted API's subscription mode itself, an explicit OAuth `apiEndpoint`
  // (`api.endpoint("subscription")`, docs/guides/rate-limits.md), which makes the CLI a subscriber at a base URL.
  it("with an explicit OAuth apiEndpoint, runs the real CLI as a subscriber at that base URL", async () => {
    const api = await baseUrlApi([allowed("hello subscriber", 0.2)]);
    const runtime = runtimeFor(api, { apiEndpoint: api.endpoint("subscription") });
    expect(await runtime.generateText({ prompt: "hi" })).toBe("hello subscriber");
    const request = api.messageRequests[0]!;
    expect(request.host).toBe(`127.0.0.1:${api.port}`);
    expect(request.headers.authorization).toBe("Bearer sk-ant-oat01-scripted-subscription-token");
    expect(request.headers["x-api-key"]).toBeUndefined();
    expect(String(request.headers["anthropic-beta"])).toContain("claude-code-20250219");
  });
});

describe("a reached limit", () => {
  it("ends the call with UsageLimitError carrying the reset time and window when the governor does not wait", async () => {
    const resetsAt = new Date(Date.now() + 3 * 3_600_000);
    const api = await firstPartyApi([turn.limitReached({ window: "seven_day", resetsAt })]);
    const runtime = runtimeFor(api, { rateLimitGovernor: new RateLimitGovernor({ enabled: false }) });
    const error = await runtime.generateText({ prompt: "hi" }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageLimitError);
    expect(error).toMatchObject({ window: "seven_day", reason: "rejected", resetsAt: new Date(Math.ceil(resetsAt.getTime() / 1000) * 1000) });
    expect(api.messageRequests).toHaveLength(1);
  });

  it("with maxWaitMs below the reset, fails at once with UsageLimitError instead of waiting", async () => {
    const api = await firstPartyApi([turn.limitReached({ resetsAt: new Date(Date.now() + 3_600_000) })]);
    const runtime = runtimeFor(api, { rateLimitGovernor: new RateLimitGovernor({ maxWaitMs: 60_000 }) });
    const error = await runtime.generateText({ prompt: "hi" }).catch((caught: unknown) => caught);
    // Refused at the retry's admission (the reset is an hour away), not after waiting: one request only.
    expect(error).toMatchObject({ code: "usage_limit_reached", reason: "wait_exceeds_max", window: "five_hour" });
    expect(api.messageRequests).toHaveLength(1);
  });

  // Generous timeout: seven CLI runs on a shared, loaded machine; the scripted wait itself is 2.5 s.
  it("pauses every runtime of the process until the reset; the ingest finishes with 0 failures and onEvent shows the wait", { timeout: 240_000 }, async () => {
    const resetWaitMs = 2_500;
    let resetAt: number | undefined;
    let rejectedAt: number | undefined;
    const api = await firstPartyApi((_request: RecordedRequest, index: number) => {
      if (index === 2) rejectedAt = Date.now();
      if (index === 2) resetAt = Date.now() + resetWaitMs;
      return resetAt !== undefined && Date.now() < resetAt ? turn.limitReached({ resetsAt: new Date(resetAt) }) : allowed(`answer ${index}`);
    });
    const governor = processRateLimitGovernor();
    const events: KtxProgressEvent[][] = [[], []];
    const runtimes = events.map((sink) => runtimeFor(api, { maxConcurrentRuns: 2, idleTimeoutMs: 120_000, rateLimitGovernor: governor, onEvent: (event) => sink.push(event) }));
    // Without the option, a runtime takes the process's governor too.
    expect(runtimeFor(api, { rateLimitGovernor: undefined })["limits"].governor).toBe(governor);
    const results = await Promise.allSettled(Array.from({ length: 6 }, (_, n) => runtimes[n % 2]!.generateText({ prompt: `unit ${n}` })));
    expect(results.filter((result) => result.status === "rejected")).toEqual([]);
    expect(governor.snapshot()).toMatchObject({ paused: false, active: 0, waiting: 0 });
    // Only calls already in flight met the limit (at most the 4 slots); nothing new started before the reset.
    const rejected = api.messageRequests.filter((request) => request.receivedAt >= rejectedAt! && request.receivedAt < resetAt!);
    expect(rejected.length).toBeGreaterThanOrEqual(1);
    expect(rejected.length).toBeLessThanOrEqual(4);
    const seen = api.messageRequests.map((request) => [request.receivedAt - rejectedAt!, request.turnIndex, JSON.stringify(request.body?.messages ?? []).match(/unit \d/)?.[0]]);
    expect(api.messageRequests, `ms after the limit, turn, unit: ${JSON.stringify(seen)}; reset after ${resetWaitMs} ms`).toHaveLength(6 + rejected.length);
    for (const sink of events) {
      const started = sink.find((event) => event.type === "wait_started");
      expect(started).toMatchObject({ window: "five_hour", provider: "claude-subscription" });
      expect((started as { remainingMs: number }).remainingMs).toBeGreaterThan(1_000);
      expect(sink.some((event) => event.type === "wait_tick" && event.remainingMs < (started as { remainingMs: number }).remainingMs)).toBe(true);
      expect(sink.some((event) => event.type === "wait_finished")).toBe(true);
    }
    expect(events.flat().filter((event) => event.type === "call_retry")).toHaveLength(rejected.length);
  });

  it("hands a KTX-shaped governor the signals KTX's own backend reports, and retries the rejected call after waitForReady", async () => {
    const resetsAt = new Date(Date.now() + 2_000);
    const api = await firstPartyApi([turn.limitReached({ resetsAt }), turn.withRateLimit(turn.text("after the reset"), { status: "allowed_warning", utilization: 0.9 })]);
    const { governor, reported, waits } = ktxShapedGovernor();
    const runtime = runtimeFor(api, { rateLimitGovernor: governor });
    expect(await runtime.generateText({ prompt: "hi" })).toBe("after the reset");
    expect(waits()).toBe(2);
    expect(reported).toEqual([
      { provider: "claude-subscription", status: "rejected", resetAtMs: Math.ceil(resetsAt.getTime() / 1000) * 1000, rateLimitType: "five_hour" },
      { provider: "claude-subscription", status: "warning", resetAtMs: expect.any(Number), rateLimitType: "five_hour", utilization: 0.9 },
    ]);
  });

  it("does not run a loop again once a tool ran: it ends with stopReason error and the UsageLimitError", async () => {
    const api = await firstPartyApi([turn.withRateLimit(turn.tools({ name: "mcp__ktx__lookup", input: { term: "grain" } }), { status: "allowed" }), turn.limitReached({ resetsAt: new Date(Date.now() + 60_000) })]);
    const { governor } = ktxShapedGovernor();
    const runtime = runtimeFor(api, { rateLimitGovernor: governor });
    const result = await runtime.runAgentLoop({ modelRole: "curator", systemPrompt: "curate", userPrompt: "go", toolSet: [lookup], stepBudget: 4, telemetryTags: { unitKey: "wu-7" } });
    expect(result.stopReason).toBe("error");
    expect(result.error).toBeInstanceOf(UsageLimitError);
    expect(result.error).toMatchObject({ toolCallsBefore: 1, cause: expect.any(UsageLimitError) });
    expect(result.error!.message).toContain("had already run 1 tool call(s), so it was not retried");
    expect(api.messageRequests).toHaveLength(2);
  });
});

describe("the retry after the reset", () => {
  const records = (path: string) => readFileSync(path, "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, any>);

  it("with reuse on, runs the stopped call again on its own process, rewound and held through the wait; the transcripts say so", async () => {
    const api = await firstPartyApi([turn.limitReached({ resetsAt: new Date(Date.now() + 2_000) }), allowed("after the reset")]);
    const dir = tempDir("transcripts");
    const runtime = runtimeFor(api, { reuse: {}, warm: false, transcript: { dir } });
    const result = await runtime.generateTextResult({ prompt: "hi" });
    expect(result.text).toBe("after the reset");
    expect(result.warmStart).toBe(true);
    expect(runtime.poolStats).toMatchObject({ started: 1, reusedCalls: 1, heldRetries: 1 });
    const [first, retry] = readdirSync(dir).sort().map((name) => records(join(dir, name)));
    expect(first!.at(-1)).toMatchObject({ kind: "call", ending: "held for the retry", process: { call: 1 }, error: { name: "UsageLimitError" } });
    const launch = first!.at(-1)!.process.launch;
    expect(retry![0]).toMatchObject({ kind: "header", process: { launch, call: 2, source: "held" } });
    expect(retry!.at(-1)).toMatchObject({ kind: "call", ending: "kept for reuse", process: { launch, call: 2 } });
    expect(result.transcriptPath).toBe(join(dir, readdirSync(dir).sort()[1]!));
    expect(api.messageRequests).toHaveLength(2);
    await runtime.close();
  });

  it("keeps the stopped call's place: with one slot, it runs again before the call queued behind it", async () => {
    let resetAt = Infinity;
    const prompts = (request: RecordedRequest) => JSON.stringify(request.body?.messages ?? []).match(/unit [AB]/)?.[0];
    // The limit is reached at the first request, whenever a loaded machine gets the CLI there.
    const api = await firstPartyApi((request, index) => {
      if (index === 0) resetAt = Date.now() + 1_500;
      return Date.now() < resetAt ? turn.limitReached({ resetsAt: new Date(resetAt) }) : allowed(`answer to ${prompts(request)}`);
    });
    const runtime = runtimeFor(api, { maxConcurrentRuns: 1 });
    const answers = await Promise.all([runtime.generateText({ prompt: "unit A" }), runtime.generateText({ prompt: "unit B" })]);
    expect(answers).toEqual(["answer to unit A", "answer to unit B"]);
    // B waited for A's slot: it never met the limit; A went first after the reset.
    expect(api.messageRequests.map(prompts)).toEqual(["unit A", "unit A", "unit B"]);
  });
});

describe("progress and the CLI's retries", () => {
  it("reports tool calls with durations, steps and (asked for) text deltas", async () => {
    const api = await firstPartyApi([turn.tools({ name: "mcp__ktx__lookup", input: { term: "grain" } }), turn.text("The grain table is curated.")]);
    const events: KtxProgressEvent[] = [];
    const runtime = runtimeFor(api, { includePartialMessages: true, onEvent: (event) => events.push(event) });
    const result = await runtime.runAgentLoop({ modelRole: "curator", systemPrompt: "curate", userPrompt: "go", toolSet: [lookup], stepBudget: 4, telemetryTags: { unitKey: "wu-1" } });
    expect(result.stopReason).toBe("natural");
    const ofCall = events.filter((event) => "callId" in event);
    expect(ofCall.every((event) => (event as { unitKey?: string }).unitKey === "wu-1")).toBe(true);
    expect(ofCall.filter((event) => event.type !== "text_delta").map((event) => event.type)).toEqual(["tool_call_started", "tool_call_finished", "step_finished", "step_finished"]);
    expect(events.find((event) => event.type === "tool_call_finished")).toMatchObject({ name: "mcp__ktx__lookup", ok: true, durationMs: expect.any(Number) });
    const text = events.flatMap((event) => (event.type === "text_delta" ? [event.text] : [])).join("");
    expect(text).toBe("The grain table is curated.");
  });

  // Both on the first-party path, behind the interceptor. A 503 is first re-sent once without an api_retry line
  // (2.1.286 on, with an `anthropic-dispatch-id` header that the version's recorded wire shape has from the
  // recorder's re-sent call, so the check passes it): one request more than the announced retries.
  for (const status of [529, 503] as const) {
    it(`reports each CLI retry, and stops a run retrying past apiRetryBudgetMs with the last API status (${status}, first party)`, async () => {
      const api = await firstPartyApi(() => turn.error(status, "scripted outage"));
      const events: KtxProgressEvent[] = [];
      const runtime = runtimeFor(api, { apiRetryBudgetMs: 2_000, rateLimitGovernor: new RateLimitGovernor(), onEvent: (event) => events.push(event) });
      const error = await runtime.generateText({ prompt: "hi" }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ApiRetryBudgetError);
      expect(error).toMatchObject({ status, code: "api_retry_budget_exceeded" });
      const retries = events.filter((event) => event.type === "cli_retry");
      expect(retries.length).toBeGreaterThanOrEqual(2);
      expect(retries[0]).toMatchObject({ attempt: 1, status, delayMs: expect.any(Number) });
      // The silent re-send (the second request, with the header) is the one request more; 2.1.142 and 2.1.200 announce theirs.
      const silent = status === 503 && api.messageRequests[1]?.headers["anthropic-dispatch-id"] !== undefined;
      expect(api.messageRequests.length).toBe(retries.length + (silent ? 1 : 0));
      if (silent) expect(api.messageRequests.slice(1).map((request) => request.headers["anthropic-dispatch-id"])).toEqual(Array(retries.length).fill("v2p"));
    });
  }
});

describe("status and doctor", () => {
  it("show the session's usage windows with utilization and reset, and a reached limit without waiting for it", async () => {
    const fiveHourReset = new Date(Date.now() + 2 * 3_600_000);
    const api = await firstPartyApi([
      turn.withRateLimit(turn.text("OK"), { status: "allowed_warning", utilization: 0.91, resetsAt: fiveHourReset, otherWindows: { seven_day: { utilization: 0.4 } } }),
      turn.limitReached({ window: "seven_day", resetsAt: new Date(Date.now() + 86_400_000) }),
    ]);
    const projectDir = tempDir("status-usage");
    writeFileSync(join(projectDir, "ktx.yaml"), "llm:\n  provider:\n    backend: claude-code\n  models:\n    default: sonnet\n");
    const options = { projectDir, env: firstPartyEnv(api) };
    const healthy = await collectStatus(options);
    expect(healthy.usage).toEqual({
      status: "allowed_warning",
      window: "five_hour",
      windows: [
        { window: "five_hour", status: "allowed_warning", utilization: 0.91, resetsAt: new Date(Math.ceil(fiveHourReset.getTime() / 1000) * 1000).toISOString() },
        { window: "seven_day", status: "allowed", utilization: 0.4, resetsAt: expect.any(String) },
      ],
    });
    expect(renderStatus(healthy)).toMatch(/usage {9}5-hour 91 % used, resets \S+ \(in (1 h 59 min|2 h)\); weekly 40 % used, resets/);
    expect(renderDoctor(healthy)).toMatch(/info usage: 5-hour 91 % used/);
    const limited = await collectStatus(options);
    expect(limited.session).toMatchObject({ ok: false, code: "usage_limit_reached" });
    expect(limited.usage).toMatchObject({ status: "rejected", window: "seven_day" });
    expect(renderStatus(limited)).toMatch(/weekly LIMIT REACHED, resets/);
  });
});
