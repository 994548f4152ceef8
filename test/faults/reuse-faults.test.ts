/**
 * The session pool's rules, against a stand-in CLI that serves many calls (test/fixtures/reuse-cli.mjs):
 * a process serves again only after `rewound: true`, and is retired on every doubt or limit.
 */
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AbortError, ClaudeCodeRuntime, type ClaudeCodeRuntimeOptions, CliCrashError, TimeoutError } from "../../src/index.js";
import { cleanup, failure, remainingChildren, tempDir, TEST_PASS_ENV, testEnv } from "../support.js";

const REUSE_CLI = join(import.meta.dirname, "../fixtures/reuse-cli.mjs");
const runtimes: ClaudeCodeRuntime[] = [];

afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

function reuseCli(mode: string, options: Partial<ClaudeCodeRuntimeOptions> = {}) {
  const warnings: string[] = [];
  const runtime = new ClaudeCodeRuntime({
    projectDir: tempDir("project"),
    models: { default: "sonnet", triage: "haiku" },
    cliPath: REUSE_CLI,
    wire: false, // a fixture stand-in (not the testing helpers'): no request to check
    env: testEnv({ REUSE_MODE: mode }),
    passEnv: [...TEST_PASS_ENV, "REUSE_MODE"],
    warm: false,
    reuse: { controlTimeoutMs: 400 },
    logger: { debug() {}, info() {}, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) },
    ...options,
  });
  runtimes.push(runtime);
  return { runtime, warnings };
}


describe("session pool", () => {
  it("serves calls from one process, switches the model, and reports each call's own cost", async () => {
    const { runtime } = reuseCli("ok");
    const texts: string[] = [];
    const costs: number[] = [];
    for (const role of ["default", "default", "triage", "triage", "default"] as const) {
      const out = await runtime.generateTextResult({ prompt: "hello", role });
      texts.push(out.text);
      costs.push(out.costUsd);
    }
    // The model persists across rewinds: it is switched only when the call's model differs.
    expect(texts).toEqual(["answer 1 from claude-sonnet-4-6", "answer 2 from claude-sonnet-4-6", "answer 3 from claude-haiku-4-5", "answer 4 from claude-haiku-4-5", "answer 5 from claude-sonnet-4-6"]);
    expect(costs).toEqual([0.01, 0.01, 0.01, 0.01, 0.01]);
    expect(runtime.reuseStats).toEqual({ started: 1, reusedCalls: 4, spareCalls: 0, heldRetries: 0, retired: {} });
    expect(runtime.reusePids).toHaveLength(1);
  });

  it("retires a process whose rewind is refused or unanswered, and the next call starts another", async () => {
    for (const [mode, reason] of [
      ["refuse-rewind", "rewind refused"],
      ["silent-rewind", "rewind_conversation got no reply within 400 ms"],
    ] as const) {
      const { runtime } = reuseCli(mode);
      expect((await runtime.generateTextResult({ prompt: "one" })).text).toBe("answer 1 from claude-sonnet-4-6");
      // The second call waits for the first one's rewind to settle, then starts a fresh process.
      expect((await runtime.generateTextResult({ prompt: "two" })).text).toBe("answer 1 from claude-sonnet-4-6");
      expect(runtime.reuseStats).toMatchObject({ started: 2, reusedCalls: 0, retired: { [reason]: 1 } });
    }
  });

  it("drops a process that died or wrote while idle", async () => {
    for (const mode of ["die-idle", "stray-line"]) {
      const { runtime, warnings } = reuseCli(mode);
      await runtime.generateTextResult({ prompt: "one" });
      // The stand-in dies or writes 50 ms after its call; on a loaded machine noticing it may take longer.
      for (let waited = 0; runtime.reusePids.length > 0 && waited < 5_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(runtime.reusePids).toEqual([]);
      expect((await runtime.generateTextResult({ prompt: "two" })).text).toBe("answer 1 from claude-sonnet-4-6");
      expect(runtime.reuseStats?.started).toBe(2);
      if (mode === "die-idle") expect(warnings.some((w) => w.includes("idle reused Claude Code process exited"))).toBe(true);
      else expect(runtime.reuseStats?.retired).toMatchObject({ "a assistant line arrived between calls": 1 });
    }
  });

  it("retires a process at the call limit and above the memory limit", async () => {
    const limited = reuseCli("ok", { reuse: { maxCalls: 2 } }).runtime;
    for (let i = 0; i < 5; i += 1) await limited.generateTextResult({ prompt: "hi" });
    await limited.close();
    expect(limited.reuseStats).toMatchObject({ started: 3, reusedCalls: 2, retired: { "call limit": 2 } });
    const small = reuseCli("ok", { reuse: { maxRssMiB: 1 } }).runtime;
    await small.generateTextResult({ prompt: "hi" });
    await small.generateTextResult({ prompt: "hi" });
    await small.close();
    expect(small.reuseStats).toMatchObject({ started: 2, retired: { "memory limit": 2 } });
  });

  it("retires an idle process that puts the idle processes over maxIdleMiB", async () => {
    const { runtime } = reuseCli("ok", { reuse: { maxIdleMiB: 1 } });
    await runtime.generateTextResult({ prompt: "hi" });
    await runtime.generateTextResult({ prompt: "hi" });
    // The call returns at its result; the process is rewound, then found over the budget.
    for (let waited = 0; runtime.reuseStats?.retired["idle budget"] !== 2 && waited < 5_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(runtime.reuseStats).toMatchObject({ started: 2, reusedCalls: 0, retired: { "idle budget": 2 } });
  });

  it("interrupts and rewinds an aborted call's process, and reuses it", async () => {
    const { runtime } = reuseCli("ok");
    await runtime.generateTextResult({ prompt: "one" });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(new Error("enough")), 100);
    expect(await failure(runtime.generateTextResult({ prompt: "slow", signal: controller.signal }))).toBeInstanceOf(AbortError);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await runtime.generateTextResult({ prompt: "three" })).text).toBe("answer 3 from claude-sonnet-4-6");
    expect(runtime.reuseStats).toEqual({ started: 1, reusedCalls: 2, spareCalls: 0, heldRetries: 0, retired: {} });
  });

  it("retires the process when an interrupt brings no result, a call times out, or the CLI dies mid-call", async () => {
    const ignoring = reuseCli("ignore-interrupt").runtime;
    await ignoring.generateTextResult({ prompt: "one" });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    expect(await failure(ignoring.generateTextResult({ prompt: "slow", signal: controller.signal }))).toBeInstanceOf(AbortError);
    await ignoring.close();
    expect(ignoring.reuseStats?.retired).toEqual({ "no result within 400 ms of an interrupt": 1 });

    const { runtime } = reuseCli("ok");
    await runtime.generateTextResult({ prompt: "one" });
    expect(await failure(runtime.generateTextResult({ prompt: "slow", timeoutMs: 300 }))).toBeInstanceOf(TimeoutError);
    expect(await failure(runtime.generateTextResult({ prompt: "crash" }))).toBeInstanceOf(CliCrashError);
    expect((await runtime.generateTextResult({ prompt: "four" })).text).toBe("answer 1 from claude-sonnet-4-6");
    await runtime.close();
    expect(runtime.reuseStats).toMatchObject({ started: 3, retired: { "call failed": 1, exited: 1, "pool closed": 1 } });
  });

  it("gives concurrent calls of one shape their own processes, then reuses both", async () => {
    // A rewind slower than the file's 400 ms control timeout (a loaded machine) would retire a process: not what this test is about.
    const { runtime } = reuseCli("ok", { maxConcurrentRuns: 2, reuse: { controlTimeoutMs: 10_000 } });
    await Promise.all([runtime.generateTextResult({ prompt: "a" }), runtime.generateTextResult({ prompt: "b" })]);
    // Both rewound first: while one still rewinds, a call takes the idle one rather than wait (under load one
    // process then served both calls of the next pair, one after the other).
    await vi.waitFor(() => expect(runtime.idleMemory()).toHaveLength(2), { timeout: 10_000 });
    const outs = await Promise.all([runtime.generateTextResult({ prompt: "c" }), runtime.generateTextResult({ prompt: "d" })]);
    expect(outs.map((out) => out.text).sort()).toEqual(["answer 2 from claude-sonnet-4-6", "answer 2 from claude-sonnet-4-6"]);
    expect(runtime.reuseStats).toMatchObject({ started: 2, reusedCalls: 2 });
    expect(runtime.reusePids).toHaveLength(2);
  });

  it("records each call's lines in its own transcript, referencing the process's first", async () => {
    const dir = tempDir("transcripts");
    const { runtime } = reuseCli("ok", { transcript: { dir } });
    const first = await runtime.generateTextResult({ prompt: "one", transcript: { dir, name: "first" } });
    const second = await runtime.generateTextResult({ prompt: "two", transcript: { dir, name: "second" } });
    const records = (path: string) => readFileSync(path, "utf8").trim().split("\n").map((line) => JSON.parse(line));
    const [head1, ...lines1] = records(first.transcriptPath!);
    const [head2, ...lines2] = records(second.transcriptPath!);
    expect(head1.process).toMatchObject({ call: 1 });
    expect(head2.process).toEqual({ pid: head1.process.pid, launch: head1.process.launch, call: 2, source: "reused", launchTranscript: first.transcriptPath });
    // Each transcript ends with the call's own cost (the stand-in's running total is 0.01 per call) and its process's fate.
    expect(lines1.at(-1)).toMatchObject({ kind: "call", costUsd: 0.01, ending: "kept for reuse", process: { launch: head1.process.launch, call: 1 } });
    expect(lines2.at(-1)).toMatchObject({ kind: "call", costUsd: 0.01, ending: "kept for reuse", process: { launch: head1.process.launch, call: 2 } });
    const sent = (lines: Array<{ kind: string; text?: string }>) => lines.filter((l) => l.kind === "out").map((l) => JSON.parse(l.text!).request?.subtype ?? JSON.parse(l.text!).type);
    expect(sent(lines1)).toEqual(["initialize", "user", "rewind_conversation"]);
    expect(sent(lines2)).toEqual(["user", "rewind_conversation"]);
    expect(lines2.some((l: { text?: string }) => l.text?.includes("answer 1"))).toBe(false);
    // A process retired right after a call (here: its call limit) ends that call's transcript with its exit.
    const limited = reuseCli("ok", { reuse: { maxCalls: 1 }, transcript: { dir } }).runtime;
    const only = await limited.generateTextResult({ prompt: "one", transcript: { dir, name: "limited" } });
    expect(records(only.transcriptPath!).at(-2)).toMatchObject({ kind: "exit", exitCode: 0 });
    expect(records(only.transcriptPath!).at(-1)).toMatchObject({ kind: "call", ending: "retired: call limit" });
  });
});
