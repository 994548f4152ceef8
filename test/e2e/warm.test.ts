/** Warm CLI processes: faster repeated calls, same isolation and errors, and never an orphan. */
import { readFileSync } from "node:fs";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { IsolationError } from "../../src/index.js";
import { turn } from "../../src/testing/scripted-api.js";
import { baseUrlApi, childPids, cleanup, firstPartyApi, realCli, remainingChildren, runtimeFor, script, tempDir, pidAlive } from "../support.js";

afterEach(async () => {
  await cleanup();
});


async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

describe("warm pool", () => {
  it("serves the second call of the same shape from a pre-started process, and close() ends the idle one", async () => {
    const api = await firstPartyApi(() => turn.text("hi"));
    const runtime = runtimeFor(api, { warm: { size: 1, idleMs: 60_000 } });
    const first = await runtime.generateTextResult({ prompt: "one" });
    expect(first.warmStart).toBe(false);
    expect(runtime.warmIdlePids).toHaveLength(1);
    const second = await runtime.generateTextResult({ prompt: "two", system: "a different system prompt travels in initialize" });
    expect(second.warmStart).toBe(true);
    expect(second.text).toBe("hi");
    expect(api.messageRequests[1]!.body.system.map((part: { text: string }) => part.text).join("\n")).toContain("a different system prompt travels in initialize");
    // A different launch shape (object calls have another turn limit) does not take it.
    await runtime.close();
    expect(runtime.warmIdlePids).toEqual([]);
    expect(await remainingChildren()).toEqual([]);
  });

  it("still checks isolation on a warm process and falls back to a fresh one, reporting the same error", async () => {
    // Base URL: the init check on a warm process; on the first-party path the wire check stops the request first.
    const api = await baseUrlApi(() => turn.text("hi"));
    const widened = script("claude-widened", `for a; do shift; case "$a" in --tools=*|--disallowedTools=*) ;; *) set -- "$@" "$a";; esac; done\nexec '${realCli()}' "$@"`);
    const runtime = runtimeFor(api, { cliPath: widened, warm: { size: 1, idleMs: 60_000 } });
    await expect(runtime.generateTextResult({ prompt: "one" })).rejects.toBeInstanceOf(IsolationError);
    const warnings: string[] = [];
    const watched = runtimeFor(api, { cliPath: widened, warm: { size: 1, idleMs: 60_000 }, logger: { debug() {}, info() {}, warn: (m) => warnings.push(m), error() {} } });
    await watched.generateTextResult({ prompt: "one" }).catch(() => undefined);
    await expect(watched.generateTextResult({ prompt: "two" })).rejects.toBeInstanceOf(IsolationError);
    expect(warnings.some((w) => w.includes("retrying on a fresh process"))).toBe(true);
    await runtime.close();
    await watched.close();
    expect(await remainingChildren()).toEqual([]);
  });

  it("ends idle processes after idleMs", async () => {
    const api = await firstPartyApi(() => turn.text("hi"));
    const runtime = runtimeFor(api, { warm: { size: 1, idleMs: 500 } });
    await runtime.generateTextResult({ prompt: "one" });
    const [pid] = runtime.warmIdlePids;
    expect(pid).toBeDefined();
    expect(await waitFor(() => !pidAlive(pid!))).toBe(true);
    expect(runtime.warmIdlePids).toEqual([]);
    expect(await remainingChildren()).toEqual([]);
  });

  it("notices an idle process that crashed and replaces it", async () => {
    const api = await firstPartyApi(() => turn.text("hi"));
    const runtime = runtimeFor(api, { warm: { size: 1, idleMs: 60_000 } });
    await runtime.generateTextResult({ prompt: "one" });
    const [crashed] = runtime.warmIdlePids;
    await new Promise((resolve) => setTimeout(resolve, 2_500)); // older than a failed start
    process.kill(crashed!, "SIGKILL");
    expect(await waitFor(() => runtime.warmIdlePids.length === 1 && runtime.warmIdlePids[0] !== crashed)).toBe(true);
    const next = await runtime.generateTextResult({ prompt: "two" });
    expect(next.text).toBe("hi");
    await runtime.close();
    expect(await remainingChildren()).toEqual([]);
  });

  it("serves another role's model from the same warm process, switched before the prompt with no extra request", async () => {
    const api = await firstPartyApi(() => turn.text("hi"));
    const dir = tempDir("transcripts");
    const runtime = runtimeFor(api, { models: { default: "sonnet", triage: "haiku" }, warm: { size: 1, idleMs: 60_000 }, transcript: { dir } });
    const first = await runtime.generateTextResult({ prompt: "one" });
    expect(first.warmStart).toBe(false);
    const triage = await runtime.generateTextResult({ role: "triage", prompt: "two" });
    expect(triage.warmStart).toBe(true);
    expect(triage.model).toBe("claude-haiku-4-5");
    // apply_flag_settings switches without asking the API (set_model would first send a 1-token "Hi" request).
    expect(api.messageRequests.map((request) => request.body.model)).toEqual(["claude-sonnet-4-6", "claude-haiku-4-5"]);
    expect(JSON.stringify(api.messageRequests[1]!.body.messages)).toContain("two");
    // The transcript shows the process as launched (for sonnet) and the switch, answered before the prompt went out.
    const records = readFileSync(triage.transcriptPath!, "utf8").trim().split("\n").map((line) => JSON.parse(line));
    expect(records[0].args).toContain("--model=claude-sonnet-4-6");
    const out = records.filter((r) => r.kind === "out").map((r) => JSON.parse(r.text));
    expect(out.map((m) => m.request?.subtype ?? m.type)).toEqual(["initialize", "apply_flag_settings", "user"]);
    expect(out[1].request.settings).toEqual({ model: "claude-haiku-4-5" });
    await runtime.close();
    expect(await remainingChildren()).toEqual([]);
  });

  it("serves a call with tools from a spare: the MCP request the CLI sends at boot is answered by that call", async () => {
    const api = await firstPartyApi((request) =>
      JSON.stringify(request.body.messages).includes("tool_result") ? turn.text("looked it up") : turn.tools({ name: "mcp__ktx__look", input: { q: "grain" } }),
    );
    const runtime = runtimeFor(api, { warm: { size: 1, idleMs: 60_000 } });
    const look = { name: "look", description: "Looks a term up", inputSchema: z.object({ q: z.string() }), execute: async ({ q }: { q: string }) => ({ markdown: `${q}: found` }) };
    const first = await runtime.generateTextResult({ system: "Look things up.", prompt: "one", tools: { look } });
    expect(first.warmStart).toBe(false);
    // The spare boots with the ktx server on argv and opens it before any initialize; it must still be there.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(runtime.warmIdlePids).toHaveLength(1);
    const second = await runtime.generateTextResult({ system: "Look things up.", prompt: "two", tools: { look } });
    expect(second.warmStart).toBe(true);
    expect(second.text).toBe("looked it up");
    expect(second.toolCalls).toEqual([expect.objectContaining({ name: "mcp__ktx__look", ok: true })]);
    await runtime.close();
    expect(await remainingChildren()).toEqual([]);
  });

  it("starts no spare process while calls are queued, so a saturated host runs only maxConcurrentRuns CLIs", async () => {
    const api = await firstPartyApi((request) => turn.text(`answer to ${String(request.body.messages[0].content.at(-1).text)}`));
    const runtime = runtimeFor(api, { maxConcurrentRuns: 2, warm: { size: 2, idleMs: 60_000 } });
    let finished = 0;
    let peakWhileQueued = 0;
    // A slot is freed only after its call resolved, so with 8 calls and 2 slots someone is queued until 6 have finished.
    const sampler = setInterval(() => {
      if (finished < 6) peakWhileQueued = Math.max(peakWhileQueued, childPids().length);
    }, 20);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, index) => runtime.generateTextResult({ prompt: `call-${index}` }).finally(() => (finished += 1))),
    );
    clearInterval(sampler);
    results.forEach((result, index) => expect(result.text).toBe(`answer to call-${index}`));
    expect(peakWhileQueued).toBeGreaterThan(0);
    expect(peakWhileQueued).toBeLessThanOrEqual(2);
    // Once the queue drained, the pool refilled for the next call of this shape.
    expect(await waitFor(() => runtime.warmIdlePids.length === 1)).toBe(true);
    await runtime.close();
    expect(await remainingChildren()).toEqual([]);
  });

  for (const mode of ["exit", "kill"] as const) {
    it(`leaves no orphan when the host ${mode === "exit" ? "ends without close()" : "is killed with SIGKILL"}`, async () => {
      const api = await firstPartyApi(() => turn.text("hi"));
      const host = execa(process.execPath, ["test/fixtures/warm-host.mjs", api.baseUrl, mode === "kill" ? "wait" : "exit"], { reject: false });
      let idle: number[] = [];
      host.stdout!.on("data", (chunk: Buffer) => {
        idle = (JSON.parse(chunk.toString().trim()) as { idle: number[] }).idle;
      });
      expect(await waitFor(() => idle.length === 2, 30_000)).toBe(true);
      if (mode === "kill") host.kill("SIGKILL");
      const result = await host;
      expect(mode === "kill" ? result.signal : result.exitCode).toBe(mode === "kill" ? "SIGKILL" : 0);
      expect(await waitFor(() => idle.every((pid) => !pidAlive(pid)))).toBe(true);
    });
  }
});
