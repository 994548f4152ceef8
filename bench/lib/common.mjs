/**
 * Shared bench plumbing: paths, statistics, machine facts, isolated directories and environments,
 * the scripted API child process, the on-demand Agent SDK install, and section child processes.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { availableParallelism, cpus, loadavg, release, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";

export const BENCH_DIR = dirname(dirname(fileURLToPath(import.meta.url)));
export const ROOT = dirname(BENCH_DIR);
// KTX_BENCH_DIST: another build to measure (A/B of two builds; docs/performance.md).
export const DIST = process.env.KTX_BENCH_DIST ?? join(ROOT, "dist");
export const dist = (path) => pathToFileURL(join(DIST, path)).href;

/**
 * The Agent SDK is a bench-only tool: installed on demand into the gitignored cache, never a dependency.
 * KTX_BENCH_SDK_VERSION / KTX_BENCH_SDK_PREFIX measure another version from another directory (KTX
 * pins 0.3.146: `KTX_BENCH_SDK_VERSION=0.3.146 KTX_BENCH_SDK_PREFIX=/tmp/sdk-0.3.146`, docs/performance.md).
 */
export const SDK_VERSION = process.env.KTX_BENCH_SDK_VERSION ?? "0.3.330";
export const SDK_PREFIX = process.env.KTX_BENCH_SDK_PREFIX ?? join(ROOT, ".cache", "bench-sdk");
const SDK_PACKAGE = join(SDK_PREFIX, "node_modules", "@anthropic-ai", "claude-agent-sdk");

export const log = (line) => process.stderr.write(`${line}\n`);

// ---------------------------------------------------------------- statistics

/** Linear-interpolation percentile (p in 0..100) of unsorted numbers. */
export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - low);
}

export function summarize(values) {
  const round = (x) => Math.round(x * 1000) / 1000;
  return {
    n: values.length,
    p50: round(percentile(values, 50)),
    p95: round(percentile(values, 95)),
    min: round(Math.min(...values)),
    max: round(Math.max(...values)),
    mean: round(values.reduce((a, b) => a + b, 0) / values.length),
  };
}

export const ratio = (a, b) => Math.round((a / b) * 1000) / 1000;

// ---------------------------------------------------------------- machine

export function machineInfo() {
  const cpuList = cpus();
  let cliVersion = "";
  try {
    cliVersion = execFileSync(bundledCliPathSync(), ["--version"], { env: { DISABLE_AUTOUPDATER: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", PATH: process.env.PATH ?? "" } })
      .toString()
      .trim();
  } catch {
    cliVersion = "unknown";
  }
  return {
    cpuModel: cpuList[0]?.model ?? "unknown",
    cores: cpuList.length,
    availableParallelism: availableParallelism(),
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    kernel: release(),
    cli: cliVersion,
    loadavgAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

function bundledCliPathSync() {
  // Same resolution as src/binary/locate.ts, without importing dist (usable before the build check).
  const base = join(ROOT, "node_modules", "@anthropic-ai");
  for (const name of [`claude-code-${process.platform}-${process.arch}`, `claude-code-${process.platform}-${process.arch}-musl`]) {
    const path = join(base, name, "claude");
    if (existsSync(path)) return path;
  }
  return join(base, "claude-code", "bin", "claude.exe");
}

// ---------------------------------------------------------------- isolation

const cleanups = [];

export function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), `ktx-bench-${prefix}-`));
  // A CLI may still be flushing its log files into HOME for a moment after it exits.
  cleanups.push(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));
  return dir;
}

export async function cleanup() {
  while (cleanups.length) await cleanups.pop()();
}

/** Base environment of every CLI the bench starts: an empty temp HOME, no autoupdate, no non-essential traffic. */
export function isolatedEnv(home) {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" };
}

/** A dummy key for the scripted API on loopback (never a real credential). */
export const DUMMY_API_KEY = "sk-ant-bench-dummy";

// ---------------------------------------------------------------- scripted API in its own process

/**
 * Which way the bench's CLIs reach the scripted API. The default is the path real users take: the
 * first-party front (api.anthropic.com through an HTTPS proxy on 127.0.0.1 with a test CA), a throwaway
 * claude.ai login in each temp HOME, and the runtime's interceptor (its default) in front. `--base-url`
 * runs the old way for comparison: `ANTHROPIC_BASE_URL` at the plain scripted API with a dummy key, no
 * interceptor. run.mjs passes the flag on to every section.
 */
export const benchPath = () => (process.argv.includes("--base-url") ? "base-url" : "first-party");

/**
 * Starts the scripted Messages API (bench/lib/api-server.mjs) in a child process on 127.0.0.1, so
 * the API's own work never runs on the event loop being measured. It ends when we close its stdin.
 * On the first-party path (the default, `benchPath()`) it runs its first-party front too: the result's
 * `firstParty` then holds `{ proxyUrl, caFile }` (a CLI's `HTTPS_PROXY` and `NODE_EXTRA_CA_CERTS`).
 */
export async function startApiProcess({ firstParty = benchPath() === "first-party" } = {}) {
  const child = spawn(process.execPath, [join(BENCH_DIR, "lib", "api-server.mjs"), ...(firstParty ? ["--first-party"] : [])], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise((resolve, reject) => {
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the scripted API process exited (${code}) before listening`)));
  });
  const { baseUrl, firstParty: front } = JSON.parse(first);
  if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(baseUrl)) throw new Error(`scripted API is not on loopback: ${baseUrl}`);
  if (front && !/^http:\/\/127\.0\.0\.1:\d+$/.test(front.proxyUrl)) throw new Error(`first-party front is not on loopback: ${front.proxyUrl}`);
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return {
    baseUrl,
    firstParty: front,
    pid: child.pid,
    /** Requests the API has received so far: `{ messages, all }` (Messages requests; every request, any path). */
    async counts() {
      const next = new Promise((resolve) => lines.once("line", (line) => resolve(JSON.parse(line))));
      child.stdin.write("count\n");
      return next;
    },
    /** Ends the process; resolves with what it reports at its end (`connects`). */
    async close() {
      const last = new Promise((resolve) => lines.once("line", (line) => resolve(JSON.parse(line))));
      child.stdin.end();
      await exited;
      return Promise.race([last, Promise.resolve({})]);
    },
  };
}

// ---------------------------------------------------------------- Agent SDK (bench only)

export function sdkInstalled() {
  try {
    return JSON.parse(readFileSync(join(SDK_PACKAGE, "package.json"), "utf8")).version === SDK_VERSION;
  } catch {
    return false;
  }
}

/** Installs the pinned Agent SDK into .cache/bench-sdk when missing (the bench's only network use). */
export function ensureSdk() {
  if (sdkInstalled()) return SDK_PACKAGE;
  log(`installing @anthropic-ai/claude-agent-sdk@${SDK_VERSION} into ${SDK_PREFIX} (bench only, not a dependency) ...`);
  execFileSync("npm", ["install", "--prefix", SDK_PREFIX, `@anthropic-ai/claude-agent-sdk@${SDK_VERSION}`, "--no-save", "--no-audit", "--no-fund", "--loglevel=error"], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (!sdkInstalled()) throw new Error("the Agent SDK install did not produce the expected version");
  return SDK_PACKAGE;
}

export function importSdk() {
  return import(pathToFileURL(join(SDK_PACKAGE, "sdk.mjs")).href);
}

// ---------------------------------------------------------------- the peer AI SDK provider (bench only)

/**
 * `ai-sdk-provider-claude-code`, the peer of our provider (bench/provider.mjs): the version for `ai` 6,
 * installed like the Agent SDK into its own gitignored cache (it brings its own Agent SDK), never a dependency.
 */
export const PEER_VERSION = process.env.KTX_BENCH_PEER_VERSION ?? "3.6.0";
export const PEER_PREFIX = process.env.KTX_BENCH_PEER_PREFIX ?? join(ROOT, ".cache", "bench-peer");
const PEER_PACKAGE = join(PEER_PREFIX, "node_modules", "ai-sdk-provider-claude-code");

export function peerInstalled() {
  try {
    return JSON.parse(readFileSync(join(PEER_PACKAGE, "package.json"), "utf8")).version === PEER_VERSION;
  } catch {
    return false;
  }
}

/** Installs the pinned peer provider into .cache/bench-peer when missing. */
export function ensurePeer() {
  if (peerInstalled()) return PEER_PACKAGE;
  log(`installing ai-sdk-provider-claude-code@${PEER_VERSION} into ${PEER_PREFIX} (bench only, not a dependency) ...`);
  execFileSync("npm", ["install", "--prefix", PEER_PREFIX, `ai-sdk-provider-claude-code@${PEER_VERSION}`, "zod@4", "--no-save", "--no-audit", "--no-fund", "--loglevel=error"], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (!peerInstalled()) throw new Error("the peer provider install did not produce the expected version");
  return PEER_PACKAGE;
}

export function importPeer() {
  return import(pathToFileURL(join(PEER_PACKAGE, "dist", "index.js")).href);
}

// ---------------------------------------------------------------- sections as child processes

/**
 * Runs one section script in a fresh Node process (so its memory figures are its own) and returns
 * the JSON it prints as its last stdout line. Progress goes to stderr.
 */
export function runSection(script, args = [], nodeArgs = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, join(BENCH_DIR, script), ...args], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      const last = out.trim().split("\n").pop() ?? "";
      if (code !== 0) return reject(new Error(`${script} failed (code ${code}, signal ${signal})`));
      try {
        resolve(JSON.parse(last));
      } catch {
        reject(new Error(`${script} printed no JSON result`));
      }
    });
  });
}

/** Prints a section's result as the process's last stdout line. */
export function emit(result) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

export function argValue(name, fallback) {
  const index = process.argv.indexOf(`--${name}`);
  if (index < 0) return fallback;
  const value = process.argv[index + 1];
  return typeof fallback === "number" ? Number(value) : value;
}

export const hasFlag = (name) => process.argv.includes(`--${name}`);

// ---------------------------------------------------------------- process memory

export const rssMiB = () => process.memoryUsage().rss / 2 ** 20;

/** Samples this process's RSS every `everyMs` and keeps the peak. */
export function rssSampler(everyMs = 10) {
  let peak = rssMiB();
  const timer = setInterval(() => (peak = Math.max(peak, rssMiB())), everyMs);
  return {
    get peak() {
      return Math.max(peak, rssMiB());
    },
    stop() {
      clearInterval(timer);
      return Math.max(peak, rssMiB());
    },
  };
}

/** RSS (MiB) of the live child processes of `pid`, from /proc (Linux), leaving out `exclude` pids. */
export function childrenRssMiB(pid = process.pid, exclude = []) {
  let total = 0;
  let count = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) !== pid || exclude.includes(Number(entry))) continue;
      total += (Number(fields[21]) * 4096) / 2 ** 20;
      count += 1;
    } catch {
      // exited while we looked
    }
  }
  return { total, count };
}

let clockTicks;
/** Kernel clock ticks per second (CLK_TCK), for /proc CPU fields. */
function ticksPerSecond() {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/**
 * CPU milliseconds (user + system) of this process's children that have been reaped so far
 * (/proc/self/stat cutime + cstime): a finished CLI's whole CPU cost. 10 ms resolution.
 */
export function reapedChildrenCpuMs() {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / ticksPerSecond();
}

/** CPU milliseconds (user + system) this process has used so far. */
export function selfCpuMs() {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** CPU ticks (user + system) a process has used so far; undefined once it is gone. */
export function cpuTicks(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Pids of this process's direct children (/proc/self/task/<tid>/children, else a /proc scan). */
function directChildren() {
  try {
    const pids = [];
    for (const tid of readdirSync("/proc/self/task")) {
      for (const pid of readFileSync(`/proc/self/task/${tid}/children`, "utf8").trim().split(/\s+/)) if (pid) pids.push(Number(pid));
    }
    return pids;
  } catch {
    return readdirSync("/proc")
      .filter((entry) => /^\d+$/.test(entry))
      .map(Number)
      .filter((pid) => {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
          return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === process.pid;
        } catch {
          return false;
        }
      });
  }
}

/** Pids of this process's live (not zombie) children whose command name is `comm`. */
export function childPids(comm = "claude") {
  const pids = [];
  for (const pid of directChildren()) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      if (name === comm && stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z") pids.push(pid);
    } catch {
      // exited while we looked
    }
  }
  return pids;
}

/**
 * Waits until every CLI child (other than `keep`, e.g. idle warm processes) is gone. The runtime
 * returns at the result and reaps its child in the background; the next measured call must not
 * share the machine with that exit.
 */
export async function waitChildrenGone(keep = [], maxMs = 5000) {
  const deadline = performance.now() + maxMs;
  while (childPids().some((pid) => !keep.includes(pid))) {
    if (performance.now() > deadline) return false;
    await sleep(10);
  }
  return true;
}

/** Waits until `pid` has used no CPU for `quietMs` (a pre-started CLI finished booting), at most `maxMs`. */
export async function waitQuiet(pid, { quietMs = 120, maxMs = 5000 } = {}) {
  const deadline = performance.now() + maxMs;
  let last = cpuTicks(pid);
  let quietSince = performance.now();
  while (performance.now() < deadline) {
    await sleep(30);
    const now = cpuTicks(pid);
    if (now === undefined) return;
    if (now !== last) {
      last = now;
      quietSince = performance.now();
    } else if (performance.now() - quietSince >= quietMs) {
      return;
    }
  }
}

/**
 * The floors' minimal NDJSON reader: every JSON line of `stream` to `onMessage` (no framing limits or
 * noise handling, so the floor measures the bare CLI rather than our parser).
 */
export function readMessages(stream, onMessage) {
  let pending = "";
  stream.on("data", (chunk) => {
    let text = pending + chunk.toString("utf8");
    let newline;
    while ((newline = text.indexOf("\n")) >= 0) {
      const line = text.slice(0, newline);
      text = text.slice(newline + 1);
      if (line.length > 0) onMessage(JSON.parse(line));
    }
    pending = text;
  });
}
