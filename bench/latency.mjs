/**
 * Section 1: per-call latency of one-turn text, a structured object and a 5-tool agent loop, made
 * by the floor (bare CLI), our runtime (cold and warm) and the Agent SDK's query(). Variants are
 * interleaved round-robin (the order rotates every round) so machine noise hits all of them alike.
 * The warm variant (an addition: it hides the CLI's boot, it does not remove its CPU) joins every
 * `--warm-every`th round to keep the whole bench within a few minutes.
 *
 * On the first-party path (the default; `--base-url` for the old way, lib/common.mjs `benchPath`) the
 * variant `nowire` is our runtime cold with its interceptor off (`wire: false`): the CLI talks to the
 * front directly, like the floor, so ours / nowire is what the interceptor costs per call.
 *
 *   node bench/latency.mjs [--runs 20] [--warmup 1] [--warm-every 2] [--variants floor,ours,nowire,sdk,warm] [--base-url]
 */
import { loadavg } from "node:os";
import { argValue, benchPath, cleanup, emit, log, percentile, ratio, reapedChildrenCpuMs, selfCpuMs, startApiProcess, summarize, waitChildrenGone, waitQuiet } from "./lib/common.mjs";
import { floorCalls, loadLibrary, runtimeCalls, runtimeOptions, sdkCalls } from "./lib/variants.mjs";
import { WORKLOADS } from "./lib/workloads.mjs";

const runs = argValue("runs", 20);
const warmup = argValue("warmup", 1);
const warmEvery = argValue("warm-every", 2);
const wanted = argValue("variants", "floor,ours,sdk,warm").split(",").filter(Boolean);

const api = await startApiProcess();
const lib = await loadLibrary();
const runtimes = [];
const makeRuntime = (extra) => {
  const runtime = new lib.ClaudeCodeRuntime(runtimeOptions(api, extra));
  // Ours runs as a user's runtime does: first party, its interceptor on by default; nowire alone turns it off.
  const want = !api.firstParty ? "apiEndpoint" : extra.wire === false ? "off" : "on";
  if (runtime.interceptor !== want) throw new Error(`bench: a runtime's interceptor is ${runtime.interceptor}, not ${want}`);
  runtimes.push(runtime);
  return runtime;
};

const calls = {};
if (wanted.includes("floor")) calls.floor = floorCalls(lib, api);
if (wanted.includes("ours")) calls.ours = runtimeCalls(makeRuntime({ warm: false }));
if (wanted.includes("nowire") && api.firstParty) calls.nowire = runtimeCalls(makeRuntime({ warm: false, wire: false }));
if (wanted.includes("sdk")) calls.sdk = await sdkCalls(lib, api);
const warmRuntimes = {};
if (wanted.includes("warm")) {
  // The default pool size (2) per call shape, as a host making one kind of call repeatedly has; a long
  // idle time so a process is not expired between the rounds that use it.
  const perWorkload = Object.fromEntries(WORKLOADS.map((w) => [w, makeRuntime({ warm: { idleMs: 300_000 } })]));
  Object.assign(warmRuntimes, perWorkload);
  calls.warm = Object.fromEntries(WORKLOADS.map((w) => [w, () => runtimeCalls(perWorkload[w])[w]()]));
}
const variants = wanted.filter((v) => calls[v]);

const idleWarmPids = () => Object.values(warmRuntimes).flatMap((runtime) => runtime.warmIdlePids);

/**
 * Between two measured calls: the runtime returns at the result and reaps its CLI in the background,
 * and after a warm call the pool starts a replacement CLI. Let both finish (the exit, the replacement's
 * boot) so neither slows the next variant; the CLI's CPU is then also counted against its own call.
 */
async function settle() {
  await waitChildrenGone(idleWarmPids());
  for (const pid of idleWarmPids()) await waitQuiet(pid);
}

const samples = Object.fromEntries(WORKLOADS.map((w) => [w, Object.fromEntries(variants.map((v) => [v, { ms: [], doneMs: [], cliCpuMs: [], hostCpuMs: [], warmServed: 0 }]))]));
const paired = Object.fromEntries(WORKLOADS.map((w) => [w, { floor: [], sdk: [], sdkDone: [], floorExit: [], warmFloor: [], nowire: [] }]));
const started = performance.now();
const loads = [];
const last = {};

for (let round = 0; round < warmup + runs; round += 1) {
  const measured = round >= warmup;
  const present = variants.filter((v) => v !== "warm" || !measured || (round - warmup) % warmEvery === 0);
  for (const [wi, workload] of WORKLOADS.entries()) {
    const shift = (round + wi) % present.length;
    const order = [...present.slice(shift), ...present.slice(0, shift)];
    const got = {};
    last[workload] = got;
    for (const variant of order) {
      const cpuBefore = { child: reapedChildrenCpuMs(), self: selfCpuMs() };
      got[variant] = await calls[variant][workload]();
      // Host CPU up to the answer (the settling below polls /proc, which is the bench's, not the call's).
      got[variant].hostCpuMs = selfCpuMs() - cpuBefore.self;
      await settle();
      // The CLI's CPU is counted when it is reaped: a cold call's own process; a warm call reaps the
      // process it used (started during an earlier call), so per call it is also one whole process.
      got[variant].cliCpuMs = reapedChildrenCpuMs() - cpuBefore.child;
    }
    if (!measured) continue;
    for (const variant of order) {
      const s = samples[workload][variant];
      s.ms.push(got[variant].ms);
      if (got[variant].doneMs !== undefined) s.doneMs.push(got[variant].doneMs);
      s.cliCpuMs.push(got[variant].cliCpuMs);
      s.hostCpuMs.push(got[variant].hostCpuMs);
      if (got[variant].warm) s.warmServed += 1;
    }
    const p = paired[workload];
    if (got.ours && got.floor) {
      p.floor.push(got.ours.ms / got.floor.ms);
      p.floorExit.push(got.ours.ms / got.floor.doneMs);
    }
    if (got.ours && got.sdk) {
      p.sdk.push(got.ours.ms / got.sdk.ms);
      p.sdkDone.push(got.ours.ms / got.sdk.doneMs);
    }
    if (got.warm && got.floor) p.warmFloor.push(got.warm.ms / got.floor.ms);
    if (got.ours && got.nowire) p.nowire.push(got.ours.ms / got.nowire.ms);
  }
  loads.push(loadavg()[0]);
  const line = WORKLOADS.map((w) => `${w} ${present.map((v) => `${v}=${Math.round(last[w][v].ms)}`).join(" ")}`).join(" | ");
  log(`  latency round ${round + 1}/${warmup + runs}${measured ? "" : " (warm-up)"}: ${line}`);
}

const workloads = {};
for (const workload of WORKLOADS) {
  const out = { variants: {}, ratios: {} };
  for (const variant of variants) {
    const s = samples[workload][variant];
    out.variants[variant] = {
      ms: summarize(s.ms),
      ...(s.doneMs.length ? { doneMs: summarize(s.doneMs) } : {}),
      cliCpuMsP50: Math.round(percentile(s.cliCpuMs, 50)),
      hostCpuMsP50: Math.round(percentile(s.hostCpuMs, 50)),
      // runAgentLoop reports no warmStart, so warm-served loops are not counted.
      ...(variant === "warm" && workload !== "loop" ? { warmServed: s.warmServed } : {}),
    };
  }
  const v = out.variants;
  const pairedMedian = (list) => (list.length ? Math.round(percentile(list, 50) * 1000) / 1000 : undefined);
  if (v.ours && v.floor) {
    out.ratios.oursOverFloor = { p50: ratio(v.ours.ms.p50, v.floor.ms.p50), p95: ratio(v.ours.ms.p95, v.floor.ms.p95), pairedMedian: pairedMedian(paired[workload].floor) };
    out.ratios.oursOverFloorExit = { p50: ratio(v.ours.ms.p50, v.floor.doneMs.p50), p95: ratio(v.ours.ms.p95, v.floor.doneMs.p95), pairedMedian: pairedMedian(paired[workload].floorExit) };
  }
  if (v.ours && v.sdk) {
    out.ratios.oursOverSdk = { p50: ratio(v.ours.ms.p50, v.sdk.ms.p50), p95: ratio(v.ours.ms.p95, v.sdk.ms.p95), pairedMedian: pairedMedian(paired[workload].sdk) };
    out.ratios.oursOverSdkDone = { p50: ratio(v.ours.ms.p50, v.sdk.doneMs.p50), p95: ratio(v.ours.ms.p95, v.sdk.doneMs.p95), pairedMedian: pairedMedian(paired[workload].sdkDone) };
  }
  if (v.ours && v.nowire) out.ratios.oursOverNowire = { p50: ratio(v.ours.ms.p50, v.nowire.ms.p50), p95: ratio(v.ours.ms.p95, v.nowire.ms.p95), pairedMedian: pairedMedian(paired[workload].nowire) };
  if (v.nowire && v.floor) out.ratios.nowireOverFloor = { p50: ratio(v.nowire.ms.p50, v.floor.ms.p50), p95: ratio(v.nowire.ms.p95, v.floor.ms.p95) };
  if (v.warm && v.floor) out.ratios.warmOverFloor = { p50: ratio(v.warm.ms.p50, v.floor.ms.p50), p95: ratio(v.warm.ms.p95, v.floor.ms.p95), pairedMedian: pairedMedian(paired[workload].warmFloor) };
  workloads[workload] = out;
}

for (const runtime of runtimes) await runtime.close();
await api.close();
await cleanup();
emit({
  path: benchPath(),
  runs,
  warmup,
  warmEvery,
  variants,
  order: "round-robin per workload, starting variant rotated every round",
  seconds: Math.round((performance.now() - started) / 100) / 10,
  loadavg1m: { min: Math.min(...loads), max: Math.max(...loads) },
  workloads,
});
