/** Shared test set-up: isolated HOME and project dirs, the scripted API, child-process counting. */
import { randomUUID } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { inject } from "vitest";
import { ClaudeCodeRuntime, type ClaudeCodeRuntimeOptions } from "../src/index.js";
import { cliVersion, locateBundledCli } from "../src/binary/locate.js";
import { type CliVersionFacts, factsFor } from "../src/binary/versions.js";
import { HOST_DEATH_WATCHER_MARK } from "../src/transport/host-death.js";
import { INTERCEPTOR_SCRIPT } from "../src/claude-code/wire/interceptor-process.js";
import { RateLimitGovernor } from "../src/limits/governor.js";
import { type Script, type ScriptedApiOptions, type ScriptedMessagesApi, startScriptedMessagesApi } from "../src/testing/scripted-api.js";

const cleanups: Array<() => unknown> = [];

/**
 * The loopback guard's trap proxy (test/loopback-guard.ts). Set on this worker's own environment too,
 * so CLIs started by library code from process.env (the scenario runner) are covered as well.
 */
const LOOPBACK_ONLY = { HTTPS_PROXY: inject("trapProxyUrl"), HTTP_PROXY: inject("trapProxyUrl"), NO_PROXY: "127.0.0.1,localhost,::1" };
Object.assign(process.env, LOOPBACK_ONLY);

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `ktx-${prefix}-`));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A temporary dir holding `files` (relative path -> text), removed by cleanup(). */
export function tempFiles(prefix: string, files: Record<string, string>): string {
  const dir = tempDir(prefix);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

/**
 * Marker set on every CLI a test starts (testEnv) and inherited by whatever that CLI starts: it finds
 * processes that escaped the tree, e.g. a grandchild re-parented to init when its CLI died.
 */
const OWNER_VAR = "KTX_TEST_OWNER";
const owner = `${process.pid}-${randomUUID().slice(0, 8)}`;

/** Environment for every CLI a test starts: an empty HOME, loopback only, no autoupdate. */
export function testEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: tempDir("home"),
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    ...LOOPBACK_ONLY,
    [OWNER_VAR]: owner,
    ...extra,
  };
}

/**
 * The scripted API at a base URL: `runtimeFor` then gives the runtime an `apiEndpoint` (no interceptor).
 * The end-to-end tests run on the first-party path (`firstPartyApi`) and use `baseUrlApi` only where a
 * test needs the base URL (docs/guides/testing.md lists them); the security, fault, KTX and parity suites still
 * use this one.
 */
export async function scriptedApi(script: Script, options?: ScriptedApiOptions): Promise<ScriptedMessagesApi> {
  const api = await startScriptedMessagesApi(script, options);
  cleanups.push(() => api.close());
  return api;
}

/**
 * Test-only variables the child must see although the allowlist drops them: the process marker, and
 * what the stand-in CLI (test/fixtures/stand-in-cli.mjs) reads.
 */
export const TEST_PASS_ENV = [OWNER_VAR, "STAND_IN_MODE", "STAND_IN_BYTES", "STAND_IN_STARTED_FILE", "STAND_IN_ABORTED_FILE", "STAND_IN_STREAM_FILE", "STAND_IN_VERSION"];

/**
 * A runtime for a test. With a scripted API in first-party mode (`firstPartyApi`) the CLI goes to
 * api.anthropic.com through the runtime's interceptor (on by default), as in real use; with a plain one
 * (`baseUrlApi`, `scriptedApi`), to its base URL. Without an API the runtime takes its defaults too.
 */
export function runtimeFor(api: ScriptedMessagesApi | undefined, options: Partial<ClaudeCodeRuntimeOptions> = {}): ClaudeCodeRuntime {
  const runtime = new ClaudeCodeRuntime({
    projectDir: tempDir("project"),
    models: { default: "sonnet" },
    env: api?.firstParty ? firstPartyEnv(api) : testEnv(),
    passEnv: TEST_PASS_ENV,
    ...(api && !api.firstParty ? { apiEndpoint: { baseUrl: api.baseUrl, apiKey: "sk-test-scripted" } } : {}),
    ...cliOption(),
    idleTimeoutMs: 30_000,
    // Warm processes are tested on their own (test/e2e/warm.test.ts); elsewhere every child must end with its call.
    warm: false, reuse: false,
    // Each runtime its own governor: one test's scripted outage must not pace the next test's calls
    // (test/e2e/rate-limits.test.ts covers the process-wide governor).
    rateLimitGovernor: new RateLimitGovernor(),
    ...options,
  });
  // A test that fails before its own close() must not leave CLIs for the next test's leak check (teardownFailedTest).
  testRuntimes.push(runtime);
  return runtime;
}

/** An executable shell script (a stand-in or wrapper CLI). */
export function script(name: string, body: string): string {
  const path = join(tempDir("bin"), name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/**
 * The CLI the suite runs: the binary named by `KTX_CC_CLI` (docs/guides/testing.md; `fixtures verify` sets
 * it), else the bundled one. Tests take its version and facts from the binary, never a literal.
 */
export const realCli = (): string => (process.env.KTX_CC_CLI ? resolve(process.env.KTX_CC_CLI) : locateBundledCli());

/** The version of the CLI in use, read from its `--version` (once per path). */
export const cliVersionInUse = (): Promise<string> => cliVersion(realCli());

/** The verified-table facts of the CLI in use. */
export const cliFactsInUse = async (): Promise<CliVersionFacts> => factsFor(await cliVersionInUse());

/** The `cliPath` option naming KTX_CC_CLI's binary, or nothing (the runtime finds the bundled one itself, as a user's does). */
export const cliOption = (): { cliPath?: string } => (process.env.KTX_CC_CLI ? { cliPath: realCli() } : {});

/** Arguments that point a `ktx-claude-code` command (its `flag`) at the CLI in use when KTX_CC_CLI names one. */
export const cliArgs = (flag: string): string[] => (process.env.KTX_CC_CLI ? [flag, realCli()] : []);

interface ProcEntry {
  pid: number;
  ppid: number;
  /** Start time (clock ticks since boot): with the pid, names one process even when pids are reused. */
  start: string;
}

/** One pass over /proc (Linux): every live, non-zombie process with its parent. */
function liveProcesses(): ProcEntry[] {
  const entries: ProcEntry[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] !== "Z") entries.push({ pid: Number(entry), ppid: Number(fields[1]), start: fields[19] ?? "" });
    } catch {
      // exited while we looked
    }
  }
  return entries;
}

function descendantsOf(root: number, processes: ProcEntry[]): number[] {
  const found: number[] = [];
  let frontier = [root];
  while (frontier.length > 0) {
    const parents = new Set(frontier);
    frontier = processes.filter((entry) => parents.has(entry.ppid)).map((entry) => entry.pid);
    found.push(...frontier);
  }
  return found;
}

/**
 * Processes outside our tree seen without the marker (pid:start). A process's environment changes only
 * when it execs, and everything we start carries the marker from its first exec, so such a process
 * never becomes ours: its environment is read once, not on every poll (reading every process's
 * environment was most of a scan's cost, and remainingChildren scans after every test).
 */
const notOurs = new Set<string>();

function carriesMarker(entry: ProcEntry): boolean {
  const key = `${entry.pid}:${entry.start}`;
  if (notOurs.has(key)) return false;
  let marked = false;
  try {
    // Other users' processes are unreadable (EACCES); they cannot be ours anyway.
    marked = `\0${readFileSync(`/proc/${entry.pid}/environ`, "latin1")}`.includes(`\0${OWNER_VAR}=${owner}\0`);
  } catch {
    marked = false;
  }
  if (!marked) notOurs.add(key);
  return marked;
}

/** The library's host-death watcher (src/transport/host-death.ts): a child, but no CLI. */
function isHostDeathWatcher(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(HOST_DEATH_WATCHER_MARK);
  } catch {
    return false;
  }
}

/**
 * A runtime's interceptor process (src/claude-code/wire/process-main.ts): no CLI, and by design alive until
 * its runtime closes or this process ends (test/e2e/wire-process.test.ts checks that it never outlives it).
 */
function isInterceptor(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(INTERCEPTOR_SCRIPT);
  } catch {
    return false;
  }
}

/** Live direct children of this test process: how many CLIs run at once (the host-death watcher and interceptors are not CLIs). */
export function childPids(): number[] {
  return liveProcesses()
    .filter((entry) => entry.ppid === process.pid && !isHostDeathWatcher(entry.pid) && !isInterceptor(entry.pid))
    .map((entry) => entry.pid);
}

/** Every live process this test started: all descendants at any depth, plus marked orphans re-parented away. */
export function leftoverPids(): number[] {
  const processes = liveProcesses();
  const descendants = descendantsOf(process.pid, processes).filter((pid) => !isInterceptor(pid));
  const known = new Set(descendants);
  const orphans = processes.filter((entry) => !known.has(entry.pid) && entry.pid !== process.pid && carriesMarker(entry)).map((entry) => entry.pid);
  return [...descendants, ...orphans].sort((a, b) => a - b);
}

/** Waits briefly for processes to be reaped (exit is asynchronous), then returns what is left. */
export async function remainingChildren(timeoutMs = 3_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let pids = leftoverPids();
  while (pids.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    pids = leftoverPids();
  }
  return pids;
}

/** Whether a process with this id is still there (signal 0: nothing is sent). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function cleanup(): Promise<void> {
  while (cleanups.length) await cleanups.pop()!();
}

/** Runtimes made by runtimeFor since the current test began (test/teardown.ts). */
const testRuntimes: ClaudeCodeRuntime[] = [];

export function beginTest(): void {
  testRuntimes.length = 0;
}

/**
 * After a test that failed (its own hooks included: an afterEach that threw skips the rest, cleanup among
 * them): the runtimes it made are closed and any process it started that is still there is killed, so its
 * failure cannot fail the next tests' leak checks (files share a worker). Returns what had to be killed.
 */
export async function teardownFailedTest(): Promise<number[]> {
  await Promise.all(testRuntimes.splice(0).map((runtime) => runtime.close({ abortInFlight: true }).catch(() => {})));
  const left = await remainingChildren(1_000);
  for (const pid of left) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }
  return left;
}

/** Text of every tool_result block the model received in a recorded API request. */
export function toolResultsIn(body: any): Array<{ tool_use_id: string; is_error?: boolean; text: string }> {
  const out: Array<{ tool_use_id: string; is_error?: boolean; text: string }> = [];
  for (const message of body?.messages ?? []) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (block.type !== "tool_result") continue;
      const text = typeof block.content === "string" ? block.content : (block.content ?? []).map((part: any) => part.text ?? "").join("");
      // For 4.x models (the pinned ids) CLI 2.1.330 appends its token-budget reminder to each tool result.
      out.push({ tool_use_id: block.tool_use_id, is_error: block.is_error, text: text.replace(/\n<system-reminder>[\s\S]*?<\/system-reminder>\s*$/, "") });
    }
  }
  return out;
}

export function systemText(body: any): string {
  return (body?.system ?? []).map((part: any) => part.text ?? "").join("\n");
}

/** The error a promise rejects with, or undefined when it resolves (a failure is the test's subject, not its end). */
export const failure = (promise: Promise<unknown>): Promise<Error | undefined> => promise.then(() => undefined, (error: unknown) => error as Error);

/**
 * The first-party path, as real users take it: the scripted API behind its HTTPS front on loopback
 * (src/testing/first-party.ts), a throwaway claude.ai login in the test HOME, no base URL. The caller's
 * environment names the front as its proxy and the test CA as its extra CA, like a corporate network
 * would; the runtime's own interceptor (on by default) sits between the CLI and that proxy.
 */
export async function firstPartyApi(script: Script, options: ScriptedApiOptions = {}): Promise<ScriptedMessagesApi> {
  return scriptedApi(script, { ...options, firstParty: true });
}

/**
 * The scripted API at a base URL, in an end-to-end test that needs it (a test of `apiEndpoint` itself,
 * of the init check the wire check would pre-empt, …): each use says why, and docs/guides/testing.md lists them.
 */
export async function baseUrlApi(script: Script, options: ScriptedApiOptions = {}): Promise<ScriptedMessagesApi> {
  return scriptedApi(script, options);
}

export function firstPartyEnv(api: ScriptedMessagesApi, extra: Record<string, string> = {}): Record<string, string> {
  const env = testEnv();
  api.firstParty!.login(env.HOME!);
  return { ...env, ...api.firstParty!.env(), ...extra };
}

export function firstPartyRuntimeFor(api: ScriptedMessagesApi, options: Partial<ClaudeCodeRuntimeOptions> = {}, extraEnv: Record<string, string> = {}): ClaudeCodeRuntime {
  return runtimeFor(api, { env: firstPartyEnv(api, extraEnv), ...options });
}

/** The `call` records of a transcript (the last record of each call): what the interceptor saw per request. */
export function callRecords(path: string): any[] {
  return readFileSync(path, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line)).filter((record) => record.kind === "call");
}
