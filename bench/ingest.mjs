/**
 * Section: an ingest through a subscription that hits its 5-hour limit. N one-turn calls at
 * concurrency C (all submitted at once, as a KTX ingest queues its work units) through the
 * subscription-mode scripted API, which rejects every request after call R until a reset a few
 * seconds later. Three runs, each with a fresh API process:
 *   baseline  no rejection: the ingest's own time
 *   wait      the process governor waits for the reset: 0 failed calls, extra time ~ the reset wait,
 *             our CPU while waiting ~ 0 (no polling)
 *   maxWait   maxWaitMs below the reset: every call without an answer (calls - rejectAfter on an idle
 *             machine; fewer when in-flight requests land after the reset) ends in UsageLimitError at once
 *
 *   node bench/ingest.mjs [--calls 200] [--concurrency 4] [--reject-after 80] [--reset-ms 8000] [--max-wait-ms 2000]
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { BENCH_DIR, argValue, cleanup, emit, log, reapedChildrenCpuMs, selfCpuMs, waitChildrenGone } from "./lib/common.mjs";
import { loadLibrary, runtimeOptions } from "./lib/variants.mjs";

const calls = argValue("calls", 200);
const concurrency = argValue("concurrency", 4);
const rejectAfter = argValue("reject-after", 80);
const resetMs = argValue("reset-ms", 8_000);
const maxWaitMs = argValue("max-wait-ms", 2_000);

const lib = await loadLibrary();

/** The scripted API in its own process; `rejection` resolves with the API's record of the first rejection. */
async function startApi(args) {
  const child = spawn(process.execPath, [join(BENCH_DIR, "lib", "ingest-api.mjs"), ...args], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  let onRejection;
  let onCounts;
  const rejection = new Promise((resolve) => (onRejection = resolve));
  const counts = new Promise((resolve) => (onCounts = resolve));
  const baseUrl = await new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the ingest API process exited (${code}) before listening`)));
    lines.on("line", (line) => {
      const message = JSON.parse(line);
      if (message.baseUrl) resolve(message.baseUrl);
      if (message.rejection) onRejection(message.rejection);
      if (message.counts) onCounts(message.counts);
    });
  });
  if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(baseUrl)) throw new Error(`scripted API is not on loopback: ${baseUrl}`);
  return {
    baseUrl,
    rejection,
    async close() {
      child.stdin.end();
      return counts;
    },
  };
}

async function ingest(name, apiArgs, extra = {}, count = calls) {
  const api = await startApi(apiArgs);
  const events = [];
  const cpuAtWait = {};
  const runtime = new lib.ClaudeCodeRuntime(
    runtimeOptions(api.baseUrl, {
      apiEndpoint: { baseUrl: api.baseUrl, oauthToken: "sk-ant-oat01-bench-scripted" },
      maxConcurrentRuns: concurrency,
      onEvent: (event) => {
        if (event.type === "text_delta") return;
        events.push({ ...event, t: performance.now() });
        // Our own CPU and the reaped CLIs' CPU while every call waits (idle warm processes only sit there).
        if (event.type === "wait_started") Object.assign(cpuAtWait, { start: performance.now(), self: selfCpuMs(), children: reapedChildrenCpuMs() });
        if (event.type === "wait_finished" && cpuAtWait.start !== undefined) {
          Object.assign(cpuAtWait, { ms: performance.now() - cpuAtWait.start, selfMs: selfCpuMs() - cpuAtWait.self, childrenMs: reapedChildrenCpuMs() - cpuAtWait.children });
        }
      },
      ...extra,
    }),
  );
  log(`  ${name}: ${count} calls at concurrency ${concurrency}${apiArgs.length ? ` (${apiArgs.join(" ")})` : ""} ...`);
  const started = performance.now();
  const outcomes = await Promise.allSettled(Array.from({ length: count }, (_, n) => runtime.generateText({ prompt: `work unit ${n}` })));
  const wallMs = performance.now() - started;
  await runtime.close();
  await waitChildrenGone();
  const counts = await api.close();
  const failures = outcomes.filter((outcome) => outcome.status === "rejected").map((outcome) => outcome.reason);
  const rejection = counts.rejected > 0 ? await api.rejection : undefined;
  return {
    name,
    wallMs: Math.round(wallMs),
    succeeded: outcomes.length - failures.length,
    failed: failures.length,
    usageLimitErrors: failures.filter((error) => error?.code === "usage_limit_reached").length,
    otherErrors: [...new Set(failures.filter((error) => error?.code !== "usage_limit_reached").map((error) => `${error?.code}: ${String(error?.message).slice(0, 160)}`))],
    api: counts,
    rejection,
    waitCpu: cpuAtWait.ms === undefined ? undefined : { waitMs: Math.round(cpuAtWait.ms), selfCpuMs: Math.round(cpuAtWait.selfMs), reapedChildrenCpuMs: Math.round(cpuAtWait.childrenMs), selfCpuPercentOfOneCore: Math.round((cpuAtWait.selfMs / cpuAtWait.ms) * 1000) / 10 },
    // Where the extra time goes: the pause (from the first rejection the CLI reported to its end), and after it.
    timeline: timeline(events, started, wallMs),
    events: Object.fromEntries(["rate_limit_observed", "wait_started", "wait_tick", "wait_finished", "concurrency_adjusted", "call_retry"].map((type) => [type, events.filter((event) => event.type === type).length])),
  };
}

function timeline(events, started, wallMs) {
  const at = (type) => events.find((event) => event.type === type)?.t;
  const waitStarted = at("wait_started");
  const waitFinished = at("wait_finished");
  if (waitStarted === undefined || waitFinished === undefined) return undefined;
  return { pauseStartMs: Math.round(waitStarted - started), pauseMs: Math.round(waitFinished - waitStarted), afterPauseMs: Math.round(started + wallMs - waitFinished) };
}

// Warm-up: the CLI version check, the first CLI start, JIT.
await ingest("warm-up", [], {}, concurrency);

const baseline = await ingest("baseline", []);
const wait = await ingest("wait", ["--reject-after", String(rejectAfter), "--reset-ms", String(resetMs)]);
const maxWait = await ingest("maxWait", ["--reject-after", String(rejectAfter), "--reset-ms", String(resetMs)], { rateLimit: { maxWaitMs } });
await cleanup();

const scriptedWaitMs = wait.rejection ? wait.rejection.headerResetAt - wait.rejection.at : undefined;
const extraMs = wait.wallMs - baseline.wallMs;
// The split of the extra time: the pause beyond the scripted wait (our reset margin plus the CLI's
// report lag), the calls whose first attempt the limit rejected (run again), and the rest (ramp-up).
const perCallMs = baseline.wallMs / calls;
const t = wait.timeline;
const breakdown = t && scriptedWaitMs
  ? {
      pauseBeyondScriptedWaitMs: t.pauseMs - scriptedWaitMs,
      retriedCalls: wait.events.call_retry,
      // Without the limit the calls after the pause would take their share of the baseline's time.
      afterPauseOverBaselineShareMs: Math.round(t.afterPauseMs - (calls - rejectAfter) * perCallMs),
      beforePauseOverBaselineShareMs: Math.round(t.pauseStartMs - rejectAfter * perCallMs),
    }
  : undefined;
emit({
  calls,
  concurrency,
  rejectAfter,
  resetMs,
  maxWaitMs,
  scriptedWaitMs,
  extraMs,
  extraOverScriptedWait: scriptedWaitMs ? Math.round((extraMs / scriptedWaitMs) * 1000) / 1000 : undefined,
  breakdown,
  runs: { baseline, wait, maxWait },
});
