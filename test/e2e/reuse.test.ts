/**
 * Session reuse on the real CLI: a call on a reused process sends the API exactly what the same call
 * on a fresh process sends (bodies and headers, request by request), after text, structured output,
 * tool loops, API errors, max-turns, an interrupt and an abort.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { ClaudeCodeRuntime } from "../../src/index.js";
import { type RecordedRequest, type ScriptedTurn, turn } from "../../src/testing/scripted-api.js";
import { baseUrlApi, cleanup, remainingChildren, runtimeFor, tempDir, testEnv } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const SYSTEM = "You are KTX's test agent.";
const BLOCK_MS = 400;

/** The case a request belongs to (its prompt) and its step (assistant messages so far): the script is stateless. */
function caseOf(request: RecordedRequest): { name: string; step: number } {
  const first = request.body?.messages?.[0];
  const text = typeof first?.content === "string" ? first.content : (first?.content ?? []).map((part: { text?: string }) => part.text ?? "").join("");
  const name = /case=(\w+)/.exec(text)?.[1] ?? "unknown";
  return { name, step: (request.body?.messages ?? []).filter((m: { role: string }) => m.role === "assistant").length };
}

const noRetry = { "x-should-retry": "false" };

function script(request: RecordedRequest): ScriptedTurn {
  const { name, step } = caseOf(request);
  const tool = (toolName: string, n: number) => ({ toolCalls: [{ name: `mcp__ktx__${toolName}`, input: { n }, id: `toolu_${name}_${step}` }] });
  switch (name) {
    case "loop2":
      return step === 0 ? tool("alpha", 1) : step === 1 ? tool("beta", 2) : turn.text("loop done");
    case "text":
      return turn.text("plain answer");
    case "object":
      return turn.object({ rows: 3, label: "ok" });
    case "e500":
      return turn.error(500, "scripted failure", noRetry);
    case "e429":
      return turn.error(429, "scripted rate limit", noRetry);
    case "maxturns":
      return tool("alpha", step);
    case "interrupt":
      // Streams slowly, so the abort lands mid-stream.
      return { text: "a long answer that is still streaming when the caller gives up on it", chunkDelayMs: BLOCK_MS };
    case "abort":
      return step === 0 ? tool("beta", 99) : turn.text("never reached");
    default:
      return turn.text(`unexpected case ${name}`);
  }
}

/** Tool definitions shared by every call (so they share a process); the handlers are each call's own. */
function tools(onBlock?: () => void) {
  const input = z.object({ n: z.number() });
  return {
    alpha: { description: "First tool.", inputSchema: input, execute: async ({ n }: { n: number }) => `alpha ${n}` },
    beta: {
      description: "Second tool.",
      inputSchema: input,
      execute: async ({ n }: { n: number }, { signal }: { signal: AbortSignal }) => {
        if (n !== 99) return `beta ${n}`;
        onBlock?.();
        // Blocks until the call is aborted: the handler must see its signal fire.
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        aborted.push(n);
        return "too late";
      },
    },
  };
}
const aborted: number[] = [];

type Case = "loop2" | "text" | "e500" | "e429" | "maxturns" | "interrupt" | "abort";

async function runCase(runtime: ClaudeCodeRuntime, name: Case, api: { messageRequests: RecordedRequest[] }): Promise<{ requests: RecordedRequest[]; outcome: string }> {
  const before = api.messageRequests.length;
  const controller = new AbortController();
  let outcome: string;
  const stopSoon = () => setTimeout(() => controller.abort(new Error("caller gave up")), name === "interrupt" ? BLOCK_MS / 2 : 20);
  if (name === "interrupt") {
    // Abort once the streaming request has reached the API.
    const poll = setInterval(() => {
      if (api.messageRequests.length > before) {
        clearInterval(poll);
        stopSoon();
      }
    }, 5);
  }
  try {
    const result = await runtime.runAgentLoop({
      modelRole: "default",
      systemPrompt: SYSTEM,
      userPrompt: `case=${name} please`,
      toolSet: tools(name === "abort" ? stopSoon : undefined),
      stepBudget: 4,
      signal: controller.signal,
    } as Parameters<ClaudeCodeRuntime["runAgentLoop"]>[0]);
    outcome = `${result.stopReason}:${(result.error as { code?: string } | undefined)?.code ?? ""}:${result.text ?? ""}`;
  } catch (error) {
    outcome = `threw:${(error as { code?: string }).code ?? (error as { name: string }).name}`;
  }
  // Requests of an aborted call may still be arriving; the CLI sends none after the interrupt.
  await new Promise((resolve) => setTimeout(resolve, name === "interrupt" || name === "abort" ? 300 : 0));
  return { requests: api.messageRequests.slice(before), outcome };
}

/** What may differ between two processes: the session id and per-request random ids. */
function normalized(request: RecordedRequest): unknown {
  const headers = { ...request.headers };
  const session = String(headers["x-claude-code-session-id"] ?? "");
  delete headers["x-client-request-id"];
  const text = JSON.stringify({ headers, body: request.body });
  return JSON.parse(session ? text.split(session).join("<session>") : text);
}

function differences(fresh: RecordedRequest[], reused: RecordedRequest[]): string[] {
  const out: string[] = [];
  if (fresh.length !== reused.length) out.push(`request count ${fresh.length} (fresh) vs ${reused.length} (reused)`);
  for (let i = 0; i < Math.min(fresh.length, reused.length); i += 1) {
    const a = JSON.stringify(normalized(fresh[i]!));
    const b = JSON.stringify(normalized(reused[i]!));
    if (a !== b) {
      let at = 0;
      while (a[at] === b[at]) at += 1;
      out.push(`request ${i}: fresh …${a.slice(Math.max(0, at - 80), at + 120)}… reused …${b.slice(Math.max(0, at - 80), at + 120)}…`);
    }
  }
  return out;
}

describe("session reuse", () => {
  // About 20 CLI calls (7 of them cold): generous limits, so a loaded machine only makes it slower.
  it("sends request-for-request what a fresh process sends, after every kind of call", { timeout: 300_000 }, async () => {
    // Base URL: the request-for-request comparison with a fresh process (the first-party path adds a per-request
    // hash and treats a 429 as the subscription's; its reuse equivalence is in test/e2e/wire.test.ts).
    const api = await baseUrlApi(script);
    const shared = { projectDir: tempDir("project"), env: testEnv() };
    const fresh = runtimeFor(api, { ...shared, reuse: false });
    const reused = runtimeFor(api, { ...shared, reuse: {} });
    const sequence: Case[] = ["loop2", "e500", "text", "e429", "loop2", "maxturns", "text", "interrupt", "loop2", "abort", "text", "loop2"];
    const baseline = new Map<Case, { requests: RecordedRequest[]; outcome: string }>();
    for (const name of new Set(sequence)) baseline.set(name, await runCase(fresh, name, api));

    const report: string[] = [];
    for (const [index, name] of sequence.entries()) {
      const got = await runCase(reused, name, api);
      const want = baseline.get(name)!;
      expect(got.outcome, `${name} (#${index})`).toBe(want.outcome);
      for (const difference of differences(want.requests, got.requests)) report.push(`${name} (#${index}): ${difference}`);
    }
    expect(report).toEqual([]);
    // One process served the whole sequence; both aborted calls' handlers saw their signal.
    expect(reused.reuseStats).toMatchObject({ started: 1, reusedCalls: sequence.length - 1, retired: {} });
    expect(aborted).toEqual([99, 99]);
    expect(baseline.get("abort")!.outcome).toMatch(/aborted/);
    // No API request follows an abort, on either side.
    expect(baseline.get("abort")!.requests).toHaveLength(1);
    expect(baseline.get("interrupt")!.outcome).toMatch(/aborted/);
    await reused.close();
    expect(reused.reuseStats?.retired).toEqual({ "pool closed": 1 });
    expect(await remainingChildren()).toEqual([]);
  });

  it("does the same for structured output, and reports each call's own cost", { timeout: 180_000 }, async () => {
    // Base URL: the request-for-request comparison with a fresh process (the first-party path adds a per-request
    // hash and treats a 429 as the subscription's; its reuse equivalence is in test/e2e/wire.test.ts).
    const api = await baseUrlApi(script);
    const shared = { projectDir: tempDir("project"), env: testEnv() };
    const schema = z.object({ rows: z.number(), label: z.string() });
    const call = async (runtime: ClaudeCodeRuntime, name: "object" | "e500") => {
      const before = api.messageRequests.length;
      const outcome = await runtime.generateObjectResult({ prompt: `case=${name}`, system: SYSTEM, schema }).then(
        (result) => `ok:${JSON.stringify(result.object)}:${result.costUsd}:${result.usage.inputTokens}`,
        (error: { code?: string }) => `threw:${error.code}`,
      );
      return { outcome, requests: api.messageRequests.slice(before) };
    };
    const fresh = runtimeFor(api, { ...shared, reuse: false });
    const reused = runtimeFor(api, { ...shared, reuse: {} });
    const baseline = { object: await call(fresh, "object"), e500: await call(fresh, "e500") };
    const report: string[] = [];
    for (const name of ["object", "e500", "object", "object"] as const) {
      const got = await call(reused, name);
      expect(got.outcome).toBe(baseline[name].outcome);
      report.push(...differences(baseline[name].requests, got.requests));
    }
    expect(report).toEqual([]);
    expect(reused.reuseStats).toMatchObject({ started: 1, reusedCalls: 3 });
    await reused.close();
    expect(await remainingChildren()).toEqual([]);
  });
});
