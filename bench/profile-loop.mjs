/**
 * Where the host CPU of a reused 5-tool agent loop goes (not a section of `npm run bench`; a tool for
 * docs/performance.md, "Host CPU of a reused loop"). Runs `--loops` reused loops and as many on the reuse
 * floor, interleaved, and prints host CPU per loop (p50 of `process.cpuUsage()` around each call, as the
 * reuse section measures it). With `--profile`, a V8 CPU profile (node:inspector, 250 µs sampling) is
 * taken around the reused calls only (or the floor's, `--profile floor`), and its samples are grouped:
 * by our module (the nearest frame of dist/ on the stack) and by where the time was spent (the leaf).
 *
 *   npm run build && node bench/profile-loop.mjs [--loops 60] [--text] [--profile [reused|floor]] [--top 25] [--focus <module function>]
 */
import { Session } from "node:inspector/promises";
import { argValue, cleanup, DIST, log, selfCpuMs, startApiProcess, summarize } from "./lib/common.mjs";
import { loadLibrary, reuseFloorCalls, runtimeCalls, runtimeOptions } from "./lib/variants.mjs";

const loops = argValue("loops", 60);
// The measured call: the 5-tool loop (the goal's), or a one-turn text call (what every call pays).
const workload = process.argv.includes("--text") ? "text" : "loop";
const top = argValue("top", 25);
const profileIndex = process.argv.indexOf("--profile");
const focus = process.argv.includes("--focus") ? process.argv[process.argv.indexOf("--focus") + 1] : undefined;
const profiled = profileIndex < 0 ? undefined : process.argv[profileIndex + 1] === "floor" ? "rfloor" : "reused";

const api = await startApiProcess();
const lib = await loadLibrary();
const runtime = new lib.ClaudeCodeRuntime(runtimeOptions(api, { reuse: {}, warm: false }));
const variants = { reused: runtimeCalls(runtime), rfloor: reuseFloorCalls(lib, api) };
for (let i = 0; i < 5; i += 1) for (const v of Object.values(variants)) await v[workload]();

const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.setSamplingInterval", { interval: 250 });
// One profile over the whole burst; a sample counts when its time falls inside a profiled call.
if (profiled) await session.post("Profiler.start");
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const windows = [];
const cpu = { reused: [], rfloor: [] };
for (let i = 0; i < loops; i += 1) {
  for (const name of i % 2 === 0 ? ["reused", "rfloor"] : ["rfloor", "reused"]) {
    const from = nowUs();
    const before = selfCpuMs();
    await variants[name][workload]();
    cpu[name].push(selfCpuMs() - before);
    if (name === profiled) windows.push([from, nowUs()]);
    // As the reuse section does: the reused runtime rewinds after returning.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
const profile = profiled ? (await session.post("Profiler.stop")).profile : undefined;
session.disconnect();
await runtime.close();
await variants.rfloor.close();
await api.close();
await cleanup();

const reused = summarize(cpu.reused);
const floor = summarize(cpu.rfloor);
log(`host CPU per ${workload === "loop" ? "loop" : "text call"}, p50 ms: reused ${reused.p50}, reuse floor ${floor.p50}, ratio ${(reused.p50 / floor.p50).toFixed(3)} (${loops} loops each${profiled ? `, ${profiled} profiled` : ""})`);
log(`  means: reused ${reused.mean}, reuse floor ${floor.mean}`);
if (profile) report(profile, windows);

/** Groups the samples inside the windows: by the nearest frame of ours, and by the leaf's package. */
function report(profile, windows) {
  const byOwn = new Map();
  const byLeaf = new Map();
  const byFunction = new Map();
  const byFocus = new Map();
  const byModule = new Map();
  let totalMs = 0;
  const add = (map, key, ms) => map.set(key, (map.get(key) ?? 0) + ms);
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  let at = profile.startTime;
  let w = 0;
  for (let i = 0; i < profile.samples.length; i += 1) {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    at += profile.timeDeltas[i] ?? 0;
    while (w < windows.length && windows[w][1] < at) w += 1;
    if (w >= windows.length || at < windows[w][0]) continue;
    const leaf = nodes.get(profile.samples[i]);
    const leafKind = kindOf(leaf.callFrame);
    if (leafKind === "(idle)" || leafKind === "(program)") continue;
    totalMs += ms;
    let own = "(no frame of ours)";
    for (let id = leaf.id; id !== undefined; id = parent.get(id)) {
      const frame = nodes.get(id).callFrame;
      if (frame.url.includes(`${DIST}/`)) {
        own = `${frame.url.replace(/^.*\/dist\//, "")} ${frame.functionName || "(anonymous)"}`;
        break;
      }
    }
    add(byOwn, own, ms);
    add(byModule, own.startsWith("(") ? own : own.split(" ")[0], ms);
    add(byLeaf, leafKind, ms);
    add(byFunction, `${leafKind} ${leaf.callFrame.functionName || "(anonymous)"}`, ms);
    if (focus && own.startsWith(focus)) {
      const chain = [];
      for (let id = leaf.id; id !== undefined && chain.length < 6; id = parent.get(id)) chain.push(nodes.get(id).callFrame.functionName || "(anonymous)");
      add(byFocus, chain.join(" < "), ms);
    }
  }
  const all = windows;
  const per = (ms) => (ms / all.length).toFixed(3);
  const print = (title, map) => {
    log(`\n${title}`);
    for (const [key, ms] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) log(`  ${per(ms).padStart(7)}  ${key}`);
  };
  log(`\nprofiled samples inside the calls (idle and program left out): ${per(totalMs)} ms per loop over ${all.length} loops`);
  print("ms per loop by the nearest frame of ours (dist/ module)", byModule);
  print("ms per loop by the nearest frame of ours (dist/ module and function)", byOwn);
  print("ms per loop by where the sample landed (package or module of the leaf frame)", byLeaf);
  print("ms per loop by leaf function", byFunction);
  if (focus) print(`stacks (leaf first) under ${focus}`, byFocus);
}

function kindOf(frame) {
  const url = frame.url;
  if (!url) return frame.functionName.startsWith("(") ? frame.functionName : "(native)";
  if (url.startsWith("node:")) return url;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.includes(`${DIST}/`)) return url.replace(/^.*\/dist\//, "dist/");
  return url.replace(/^.*\/bench\//, "bench/");
}
