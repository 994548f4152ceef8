/**
 * Section: session reuse. One CLI process serves many calls, rewound between them.
 *   burst       per call shape, `--calls` calls back to back on our runtime with reuse (`reused`) and on
 *               the floor for reuse (`rfloor`: a bare CLI rewound by the least code), interleaved (on the
 *               first-party path also `nowire`: reused with the interceptor off);
 *               latency to the answer, and CLI CPU per call (user+sys of the live processes, /proc)
 *   steady      host CPU per loop once V8 has compiled our code: `--steady-warmup` more reused loops,
 *               then `--steady-calls` loops, reused and reuse floor interleaved (the burst's loop figure
 *               is taken while V8 still tiers our code up; docs/performance.md, "Host CPU of a reused loop")
 *   throughput  `--throughput` one-turn calls, 2 at a time, on a fresh reusing runtime (start-up included),
 *               against `--sdk-calls` Agent SDK query() calls, 2 at a time; calls/s and CPU per call
 *   tools       tools/call in -> our reply out, from transcripts of 5-tool loops on a reused process
 *
 * First-party path by default (reused: our runtime with its interceptor; reuse floor: the bare CLI straight to
 * the front, same login); `--base-url` the old way (lib/common.mjs `benchPath`).
 *
 *   node bench/reuse.mjs [--calls 100] [--steady-warmup 300] [--steady-calls 100] [--throughput 200] [--sdk-calls 20] [--loops 6] [--no-sdk] [--base-url]
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { argValue, benchPath, cleanup, cpuTicks, emit, hasFlag, log, reapedChildrenCpuMs, selfCpuMs, startApiProcess, summarize, tempDir } from "./lib/common.mjs";
import { loadLibrary, reuseFloorCalls, runtimeCalls, runtimeOptions, sdkCalls } from "./lib/variants.mjs";
import { WORKLOADS } from "./lib/workloads.mjs";

const calls = argValue("calls", 100);
const throughputCalls = argValue("throughput", 200);
const sdkThroughputCalls = argValue("sdk-calls", 20);
const loops = argValue("loops", 6);
const steadyWarmup = argValue("steady-warmup", 300);
const steadyCalls = argValue("steady-calls", 100);
const withSdk = !hasFlag("no-sdk");

const api = await startApiProcess();
const lib = await loadLibrary();
const started = performance.now();
const loads = [loadavg()[0]];
const TICK_MS = 1000 / 100;
const ticksOf = (pids) => pids.reduce((sum, pid) => sum + (cpuTicks(pid) ?? 0), 0);

// ---------------------------------------------------------------- burst: reused vs the reuse floor

// Warm pool off: the first call of each shape starts its process, every later one reuses it.
const reusedRuntime = new lib.ClaudeCodeRuntime(runtimeOptions(api, { reuse: {}, warm: false }));
// The interceptor runs in a process of its own: its CPU is counted apart (interceptorPid), never as the host's.
const variants = { reused: { ...runtimeCalls(reusedRuntime), pids: () => reusedRuntime.reusePids, interceptorPid: () => reusedRuntime.interceptorPid }, rfloor: reuseFloorCalls(lib, api) };
// First-party path: the same reused runtime with its interceptor off (the CLI straight to the front, like the
// reuse floor), so reused / reused-without-it is the interceptor's share of reused / reuse floor. `--no-nowire` skips it.
let nowireRuntime;
if (api.firstParty && !hasFlag("no-nowire")) {
  nowireRuntime = new lib.ClaudeCodeRuntime(runtimeOptions(api, { reuse: {}, warm: false, wire: false }));
  variants.nowire = { ...runtimeCalls(nowireRuntime), pids: () => nowireRuntime.reusePids };
}
const burst = {};

/** `n` calls of `workload`, reused and reuse floor alternating: per variant latency, CLI ticks and host CPU samples. */
async function interleaved(workload, n) {
  const samples = Object.fromEntries(Object.keys(variants).map((name) => [name, { ms: [], cpuTicks: 0, hostCpuMs: [], interceptorTicks: 0 }]));
  for (let i = 0; i < n; i += 1) {
    const names = Object.keys(variants);
    const order = [...names.slice(i % names.length), ...names.slice(0, i % names.length)];
    for (const name of order) {
      const variant = variants[name];
      const pids = variant.pids();
      const wirePid = variant.interceptorPid?.();
      const before = { ticks: ticksOf(pids), self: selfCpuMs(), wire: wirePid ? (cpuTicks(wirePid) ?? 0) : 0 };
      const out = await variant[workload]();
      samples[name].hostCpuMs.push(selfCpuMs() - before.self);
      // The reused runtime rewinds after returning; let it finish so its CPU is this call's.
      await new Promise((resolve) => setTimeout(resolve, 5));
      samples[name].ms.push(out.ms);
      samples[name].cpuTicks += ticksOf(pids) - before.ticks;
      if (wirePid) samples[name].interceptorTicks += (cpuTicks(wirePid) ?? 0) - before.wire;
    }
  }
  return samples;
}

for (const workload of WORKLOADS) {
  // Start-up and the first calls (caches, the first compilations) are not steady state.
  for (let i = 0; i < 3; i += 1) for (const v of Object.values(variants)) await v[workload]();
  const samples = await interleaved(workload, calls);
  burst[workload] = Object.fromEntries(
    Object.entries(samples).map(([name, s]) => [
      name,
      { ms: summarize(s.ms), cliCpuMsPerCall: Math.round((s.cpuTicks * TICK_MS * 10) / calls) / 10, hostCpuMsP50: summarize(s.hostCpuMs).p50, ...(variants[name].interceptorPid ? { interceptorCpuMsPerCall: Math.round((s.interceptorTicks * TICK_MS * 10) / calls) / 10 } : {}) },
    ]),
  );
  burst[workload].ratio = Math.round((burst[workload].reused.ms.p50 / burst[workload].rfloor.ms.p50) * 1000) / 1000;
  if (burst[workload].nowire) {
    burst[workload].nowireRatio = Math.round((burst[workload].nowire.ms.p50 / burst[workload].rfloor.ms.p50) * 1000) / 1000;
    burst[workload].interceptorShare = Math.round((burst[workload].reused.ms.p50 / burst[workload].nowire.ms.p50) * 1000) / 1000;
  }
  loads.push(loadavg()[0]);
  log(`  reuse burst ${workload}: reused p50 ${burst[workload].reused.ms.p50} ms, ${burst[workload].reused.cliCpuMsPerCall} ms CPU; floor p50 ${burst[workload].rfloor.ms.p50} ms, ${burst[workload].rfloor.cliCpuMsPerCall} ms CPU${burst[workload].nowire ? `; without the interceptor p50 ${burst[workload].nowire.ms.p50} ms, host CPU ${burst[workload].nowire.hostCpuMsP50} ms (reused ${burst[workload].reused.hostCpuMsP50}, floor ${burst[workload].rfloor.hostCpuMsP50})` : ""}`);
}

// Steady state for the loop: V8 compiles a function of ours only after it has run many times, and most
// run a few times per loop, so over the burst's loops our host code still runs largely in V8's lower
// tiers while the floor's few functions are already compiled. The warm-up loops' host CPU is kept too.
const warmupCpu = [];
for (let i = 0; i < steadyWarmup; i += 1) {
  const before = selfCpuMs();
  await variants.reused.loop();
  warmupCpu.push(selfCpuMs() - before);
  await new Promise((resolve) => setTimeout(resolve, 5));
}
const steadySamples = await interleaved("loop", steadyCalls);
const steady = {
  warmupLoops: steadyWarmup,
  loops: steadyCalls,
  warmupHostCpuMsP50: warmupCpu.length > 0 ? summarize(warmupCpu).p50 : undefined,
  reused: { hostCpuMsP50: summarize(steadySamples.reused.hostCpuMs).p50, ms: summarize(steadySamples.reused.ms), interceptorCpuMsPerLoop: Math.round((steadySamples.reused.interceptorTicks * TICK_MS * 10) / steadyCalls) / 10 },
  rfloor: { hostCpuMsP50: summarize(steadySamples.rfloor.hostCpuMs).p50, ms: summarize(steadySamples.rfloor.ms) },
  ...(steadySamples.nowire ? { nowire: { hostCpuMsP50: summarize(steadySamples.nowire.hostCpuMs).p50, ms: summarize(steadySamples.nowire.ms) } } : {}),
};
if (steady.nowire) steady.nowireHostCpuRatio = Math.round((steady.nowire.hostCpuMsP50 / steady.rfloor.hostCpuMsP50) * 1000) / 1000;
steady.hostCpuRatio = Math.round((steady.reused.hostCpuMsP50 / steady.rfloor.hostCpuMsP50) * 1000) / 1000;
burst.loop.steady = steady;
loads.push(loadavg()[0]);
log(`  reuse loop after ${calls + 3 + steadyWarmup} loops: host CPU p50 reused ${steady.reused.hostCpuMsP50} ms, floor ${steady.rfloor.hostCpuMsP50} ms (${steady.hostCpuRatio})${steady.nowire ? `, without the interceptor ${steady.nowire.hostCpuMsP50} ms (${steady.nowireHostCpuRatio})` : ""}`);
const rss = reusedRuntime.reusePids.map((pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024);
await reusedRuntime.close();
await nowireRuntime?.close();
await variants.rfloor.close();

// ---------------------------------------------------------------- throughput: one-turn calls, 2 at a time

async function twoAtATime(n, call, livePids) {
  const before = { reaped: reapedChildrenCpuMs(), self: selfCpuMs() };
  let next = 0;
  let liveTicks = 0;
  const at = performance.now();
  const worker = async () => {
    while (next < n) {
      next += 1;
      await call();
    }
  };
  await Promise.all([worker(), worker()]);
  const wallMs = performance.now() - at;
  // Processes still alive (reused ones) have not been reaped: their CPU is read from /proc.
  if (livePids) liveTicks = ticksOf(livePids());
  return { calls: n, wallMs: Math.round(wallMs), callsPerSecond: Math.round((n / wallMs) * 100000) / 100, cliCpuMsPerCall: Math.round(((reapedChildrenCpuMs() - before.reaped + liveTicks * TICK_MS) / n) * 10) / 10, hostCpuMsPerCall: Math.round(((selfCpuMs() - before.self) / n) * 10) / 10 };
}

const throughput = {};
const fresh = new lib.ClaudeCodeRuntime(runtimeOptions(api, { reuse: {}, warm: false, maxConcurrentRuns: 2 }));
throughput.reused = await twoAtATime(throughputCalls, () => runtimeCalls(fresh).text(), () => fresh.reusePids);
await fresh.close();
log(`  throughput reused: ${throughput.reused.callsPerSecond} calls/s (${throughputCalls} calls)`);
if (withSdk) {
  const sdk = await sdkCalls(lib, api);
  throughput.sdk = await twoAtATime(sdkThroughputCalls, () => sdk.text());
  log(`  throughput Agent SDK: ${throughput.sdk.callsPerSecond} calls/s (${sdkThroughputCalls} calls)`);
  throughput.ratio = Math.round((throughput.reused.callsPerSecond / throughput.sdk.callsPerSecond) * 100) / 100;
}
loads.push(loadavg()[0]);

// ---------------------------------------------------------------- tool round trip on a reused process

const transcriptDir = tempDir("reuse-transcripts");
const toolRuntime = new lib.ClaudeCodeRuntime(runtimeOptions(api, { reuse: {}, warm: false, transcript: { dir: transcriptDir } }));
const toolCalls = runtimeCalls(toolRuntime);
await toolCalls.loop();
await toolCalls.loop();
const roundTrips = [];
for (let i = 0; i < loops; i += 1) {
  const out = await toolCalls.loop();
  const arrived = new Map();
  for (const line of readFileSync(out.transcriptPath, "utf8").trim().split("\n")) {
    const record = JSON.parse(line);
    if (record.kind !== "in" && record.kind !== "out") continue;
    const message = JSON.parse(record.text);
    if (record.kind === "in" && message.type === "control_request" && message.request?.message?.method === "tools/call") arrived.set(message.request_id, record.t);
    if (record.kind === "out" && message.type === "control_response" && arrived.has(message.response.request_id)) roundTrips.push(record.t - arrived.get(message.response.request_id));
  }
}
await toolRuntime.close();

await api.close();
await cleanup();
emit({
  path: benchPath(),
  calls,
  seconds: Math.round((performance.now() - started) / 100) / 10,
  loadavg1m: { min: Math.min(...loads), max: Math.max(...loads) },
  burst,
  reusedRssMiB: rss.map((value) => Math.round(value)),
  throughput,
  toolRoundTrip: summarize(roundTrips),
});
