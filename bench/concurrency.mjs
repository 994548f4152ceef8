/**
 * Section 4: 1, 4 and 8 simultaneous 5-tool agent loops through one ClaudeCodeRuntime (cold, warm
 * pool off, maxConcurrentRuns 8 so every loop really runs at once) — wall time, throughput scaling
 * and the parent's peak RSS (sampled every 10 ms; the CLI children's summed RSS is sampled too).
 * A row (one rep) runs 8 loops under the default limit (availableParallelism()), which queues them; the
 * last row does the same with session reuse on (after a warm-up, so each slot has its process).
 *
 *   node bench/concurrency.mjs [--reps 2] [--levels 1,4,8]
 */
import { availableParallelism } from "node:os";
import { argValue, childrenRssMiB, cleanup, emit, log, percentile, rssMiB, startApiProcess, waitChildrenGone } from "./lib/common.mjs";
import { loadLibrary, runtimeCalls, runtimeOptions } from "./lib/variants.mjs";

const reps = argValue("reps", 2);
const levels = argValue("levels", "1,4,8").split(",").map(Number);

const api = await startApiProcess();
const lib = await loadLibrary();
const open = new lib.ClaudeCodeRuntime(runtimeOptions(api, { warm: false, maxConcurrentRuns: Math.max(...levels) }));
const limited = new lib.ClaudeCodeRuntime(runtimeOptions(api, { warm: false }));
const reused = new lib.ClaudeCodeRuntime(runtimeOptions(api, { warm: false, reuse: {} }));

// Warm-up: JIT, the CLI version check, the first CLI start.
await runtimeCalls(open).loop();
await runtimeCalls(limited).loop();
globalThis.gc?.();
const baseline = rssMiB();

async function batch(runtime, n) {
  const calls = runtimeCalls(runtime);
  let peak = rssMiB();
  let childPeak = 0;
  let childCountPeak = 0;
  const fast = setInterval(() => (peak = Math.max(peak, rssMiB())), 10);
  const slow = setInterval(() => {
    const children = childrenRssMiB(process.pid, [api.pid]);
    childPeak = Math.max(childPeak, children.total);
    childCountPeak = Math.max(childCountPeak, children.count);
  }, 100);
  const started = performance.now();
  const results = await Promise.all(Array.from({ length: n }, () => calls.loop()));
  const wallMs = performance.now() - started;
  // The last CLIs exit in the background after their results; the next batch starts without them.
  await waitChildrenGone(runtime.reusePids);
  clearInterval(fast);
  clearInterval(slow);
  return { wallMs, callMs: results.map((r) => r.ms), peak: Math.max(peak, rssMiB()), childPeak, childCountPeak };
}

const rows = [];
const plan = [
  ...levels.map((n) => ({ n, runtime: open, limit: Math.max(...levels) })),
  { n: Math.max(...levels), runtime: limited, limit: availableParallelism() },
  { n: Math.max(...levels), runtime: reused, limit: availableParallelism(), reuse: true },
];
for (const { n, runtime, limit, reuse = false } of plan) {
  const runs = [];
  const repsHere = runtime === open ? reps : 1;
  // Reused: one loop per slot first, so each slot has its process (steady state), as in the reuse section.
  if (reuse) await Promise.all(Array.from({ length: limit }, () => runtimeCalls(runtime).loop()));
  for (let rep = 0; rep < repsHere; rep += 1) runs.push(await batch(runtime, n));
  const wallMs = percentile(runs.map((r) => r.wallMs), 50);
  const row = {
    loops: n,
    maxConcurrentRuns: limit,
    reuse,
    reps: repsHere,
    wallMs: Math.round(wallMs),
    wallMsAll: runs.map((r) => Math.round(r.wallMs)),
    perLoopMsP50: Math.round(percentile(runs.flatMap((r) => r.callMs), 50)),
    loopsPerSecond: Math.round((n / (wallMs / 1000)) * 100) / 100,
    parentRssPeakMiB: Math.round(Math.max(...runs.map((r) => r.peak)) * 10) / 10,
    childrenRssPeakMiB: Math.round(Math.max(...runs.map((r) => r.childPeak))),
    childrenPeak: Math.max(...runs.map((r) => r.childCountPeak)),
  };
  rows.push(row);
  log(`  concurrency ${n} (limit ${limit}${reuse ? ", reused" : ""}): wall ${row.wallMs} ms, ${row.loopsPerSecond} loops/s, parent RSS peak ${row.parentRssPeakMiB} MiB, CLI children peak ${row.childrenRssPeakMiB} MiB`);
}
const single = rows.find((row) => row.loops === 1 && row.maxConcurrentRuns === Math.max(...levels) && !row.reuse);
for (const row of rows) row.scaling = single ? Math.round((row.loopsPerSecond / single.loopsPerSecond) * 100) / 100 : undefined;

await open.close();
await limited.close();
await reused.close();
await api.close();
await cleanup();
emit({ reps, parentRssBaselineMiB: Math.round(baseline * 10) / 10, rows });
