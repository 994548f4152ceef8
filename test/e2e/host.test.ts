/**
 * One host, several callers (real CLI, scripted API, first-party path behind the host's interceptor): two
 * KTX runtimes on one `ClaudeCodeHost` share its pool and idle budget, its `maxConcurrentRuns`, its
 * interceptor; closing one runtime leaves the other working; `host.close()` reaps everything.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AbortError, ClaudeCodeHost, type ClaudeCodeHostOptions, ClaudeCodeRuntime } from "../../src/index.js";
import { RateLimitGovernor } from "../../src/limits/governor.js";
import { type RecordedRequest, type ScriptedMessagesApi, type ScriptedTurn, turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, cleanup, cliOption, firstPartyApi, firstPartyEnv, pidAlive, remainingChildren, tempDir } from "../support.js";

afterEach(async () => {
  await cleanup();
});

/** The call a request belongs to: its prompt is `case=<name>` (the CLI adds its own text around it). */
function promptOf(request: RecordedRequest): string {
  const first = request.body?.messages?.[0];
  const text = typeof first?.content === "string" ? first.content : (first?.content ?? []).map((part: { text?: string }) => part.text ?? "").join("");
  return /case=(\S+)/.exec(text)?.[1] ?? "unknown";
}

function script(request: RecordedRequest): ScriptedTurn {
  const prompt = promptOf(request);
  const step = (request.body?.messages ?? []).filter((m: { role: string }) => m.role === "assistant").length;
  // A loop whose one tool call blocks until the test lets it go (or its call is aborted).
  if (prompt.startsWith("block") && step === 0) return { toolCalls: [{ name: "mcp__ktx__wait", input: {}, id: `toolu_${prompt}` }] };
  return turn.text(`answer to ${prompt}`);
}

/** A host as runtimeFor (test/support.ts) builds a runtime's: the test's env, its own governor, no spares. */
function hostFor(api: ScriptedMessagesApi, options: Partial<ClaudeCodeHostOptions> = {}): ClaudeCodeHost {
  const host = new ClaudeCodeHost({
    projectDir: tempDir("project"),
    env: firstPartyEnv(api),
    passEnv: TEST_PASS_ENV,
    wire: true,
    ...cliOption(),
    idleTimeoutMs: 30_000,
    warm: false,
    rateLimitGovernor: new RateLimitGovernor(),
    ...options,
  });
  return host;
}

/** A tool that waits for `gate` (or its call's abort); the same definition for every call, so calls share a shape. */
function waitTool(gate: { open?: () => void; started?: () => void }) {
  return {
    wait: {
      description: "Waits for the test.",
      inputSchema: z.object({}),
      execute: async (_input: object, { signal }: { signal: AbortSignal }) => {
        gate.started?.();
        await new Promise<void>((resolve) => {
          gate.open = resolve;
          signal.addEventListener("abort", () => resolve(), { once: true });
        });
        return "waited";
      },
    },
  };
}

async function until(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("one host, several callers", () => {
  it("two runtimes share one pool: B's call reuses the process A's call of the same shape left, and one idle budget holds for both", { timeout: 180_000 }, async () => {
    const api = await firstPartyApi(script);
    const host = hostFor(api, { reuse: { maxIdle: 1 } });
    const a = new ClaudeCodeRuntime({ host, models: { default: "sonnet" } });
    const b = new ClaudeCodeRuntime({ host, models: { default: "sonnet" } });

    const first = await a.generateTextResult({ prompt: "case=first", system: "shape one" });
    expect(first.text).toBe("answer to first");
    expect(first.warmStart).toBe(false);
    expect(host.reusePids).toHaveLength(1);
    const pid = host.reusePids[0]!;

    const second = await b.generateTextResult({ prompt: "case=second", system: "shape one" });
    expect(second.text).toBe("answer to second");
    expect(second.warmStart).toBe(true);
    expect(host.reusePids).toEqual([pid]);
    expect(host.reuseStats).toMatchObject({ started: 1, reusedCalls: 1, retired: {} });
    // Both runtimes report the host's one pool and its one interceptor.
    expect(a.reuseStats).toBe(host.reuseStats);
    expect(b.reuseStats).toBe(host.reuseStats);
    expect(host.interceptorPid).toBeDefined();
    expect(a.interceptorPid).toBe(host.interceptorPid);
    expect(b.interceptorPid).toBe(host.interceptorPid);
    expect(second.network?.interceptor).toBe("on");

    // Another shape on B: a new process; with room for one idle process in all, A's shape makes way for it.
    const third = await b.generateTextResult({ prompt: "case=third", system: "shape two" });
    expect(third.warmStart).toBe(false);
    await until(() => host.reusePids.length === 1 && host.reusePids[0] !== pid, "the idle budget to retire the older process");
    expect(host.reuseStats).toMatchObject({ started: 2, reusedCalls: 1, retired: { "idle budget": 1 } });
    await until(() => !pidAlive(pid), "the retired process to exit");

    await host.close();
    expect(host.reusePids).toEqual([]);
    expect(host.reuseStats?.retired).toEqual({ "idle budget": 1, "pool closed": 1 });
    expect(await remainingChildren()).toEqual([]);
  });

  it("maxConcurrentRuns is one limit across the runtimes on a host", { timeout: 180_000 }, async () => {
    const api = await firstPartyApi(script);
    const host = hostFor(api, { maxConcurrentRuns: 1, reuse: {} });
    const a = new ClaudeCodeRuntime({ host, models: { default: "sonnet" } });
    const b = new ClaudeCodeRuntime({ host, models: { default: "sonnet" } });
    const gate: { open?: () => void; started?: () => void } = {};
    let started = false;
    gate.started = () => (started = true);

    const loop = (runtime: ClaudeCodeRuntime, prompt: string) =>
      runtime.runAgentLoop({ modelRole: "default", systemPrompt: "shared", userPrompt: prompt, toolSet: waitTool(gate), stepBudget: 3 });
    const onA = loop(a, "case=block_on_A");
    await until(() => started, "A's tool call to start");
    // B's call waits for the host's one slot while A's CLI runs: it has sent nothing.
    const onB = loop(b, "case=text_on_B");
    await until(() => host.waitingCalls === 1, "B's call to queue for the host's slot");
    expect(api.messageRequests.filter((request) => promptOf(request) === "text_on_B")).toEqual([]);
    gate.open!();

    const [resultA, resultB] = await Promise.all([onA, onB]);
    expect(resultA).toMatchObject({ stopReason: "natural", text: "answer to block_on_A" });
    expect(resultB).toMatchObject({ stopReason: "natural", text: "answer to text_on_B" });
    // B ran after A, on the process A's call left.
    expect(host.reuseStats).toMatchObject({ started: 1, reusedCalls: 1 });
    await host.close();
    expect(await remainingChildren()).toEqual([]);
  });

  it("closing one runtime leaves the other (and the pool) working; a runtime that built its own host still closes it", { timeout: 180_000 }, async () => {
    const api = await firstPartyApi(script);
    const host = hostFor(api, { reuse: {} });
    const a = new ClaudeCodeRuntime({ host, models: { default: "sonnet" } });
    const b = new ClaudeCodeRuntime({ host, models: { default: "sonnet" } });
    await a.generateTextResult({ prompt: "case=before_close" });
    const pid = host.reusePids[0]!;
    await a.close();
    // The host is open: its process is still idle, and B's call reuses it.
    expect(pidAlive(pid)).toBe(true);
    expect(host.reuseStats?.retired).toEqual({});
    expect(await b.generateText({ prompt: "case=after_A_closed" })).toBe("answer to after_A_closed");
    expect(host.reusePids).toEqual([pid]);
    // A closed runtime on an open host still runs its calls there.
    expect(await a.generateText({ prompt: "case=A_again" })).toBe("answer to A_again");
    expect(host.reuseStats).toMatchObject({ started: 1, reusedCalls: 2, retired: {} });
    // With no call in flight, neither runtime is left registered with the host (one dropped unclosed leaves nothing there).
    expect(host["callers"].size).toBe(0);
    await host.close();
    expect(pidAlive(pid)).toBe(false);

    // Without `host`, as before: the runtime's host is its own, and runtime.close() ends its processes.
    const own = new ClaudeCodeRuntime({ projectDir: tempDir("project"), models: { default: "sonnet" }, env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, wire: true, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
    await own.generateText({ prompt: "case=own_host" });
    expect(own.reusePids).toHaveLength(1);
    expect(own.host.reusePids).toEqual(own.reusePids);
    await own.close();
    expect(own.reuseStats?.retired).toEqual({ "pool closed": 1 });
    expect(await remainingChildren()).toEqual([]);
  });

  it("host.close({ abortInFlight }) aborts every runtime's calls and reaps everything", { timeout: 180_000 }, async () => {
    const api = await firstPartyApi(script);
    const host = hostFor(api, { reuse: {}, maxConcurrentRuns: 2 });
    const a = new ClaudeCodeRuntime({ host, models: { default: "sonnet" } });
    const b = new ClaudeCodeRuntime({ host, models: { default: "sonnet" } });
    let running = 0;
    const loop = (runtime: ClaudeCodeRuntime, prompt: string) =>
      runtime
        .runAgentLoop({ modelRole: "default", systemPrompt: "shared", userPrompt: prompt, toolSet: waitTool({ started: () => (running += 1) }), stepBudget: 3 })
        .then(
          () => "finished",
          (error: unknown) => (error instanceof AbortError ? "aborted" : `failed: ${String(error)}`),
        );
    const onA = loop(a, "case=block_on_A");
    const onB = loop(b, "case=block_on_B");
    await until(() => running === 2, "both tool calls to start");
    expect(host["callers"].size).toBe(2);
    const interceptor = host.interceptorPid!;
    await host.close({ abortInFlight: true });
    expect(await Promise.all([onA, onB])).toEqual(["aborted", "aborted"]);
    expect(host.reusePids).toEqual([]);
    expect(pidAlive(interceptor)).toBe(false);
    expect(await remainingChildren()).toEqual([]);
  });
});
