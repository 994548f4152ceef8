/**
 * A runtime's first call (issue 45, item 3: "the interceptor's start overlapped with the first CLI's spawn,
 * so a runtime's first call pays none of it"): each round builds a new runtime per variant and times its
 * first one-turn text call (a new CLI, `warm: false`) on the first-party path, with the interceptor (`on`,
 * the default: its process starts with this call) and with `wire: false` (`off`), for build A and build B,
 * round-robin in one process against one scripted API, so load swings hit all alike. Round 0 (the CLI's
 * version read, module loads) is not counted. Also run by `npm run bench` as the `first-call` section (A only).
 *
 *   node bench/first-call.mjs [--a <dist dir>] [--b <dist dir>] [--runs 15] [--gap-ms 200]
 */
import { isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { DIST, argValue, cleanup, emit, log, percentile, startApiProcess } from "./lib/common.mjs";
import { loadLibrary, runtimeOptions } from "./lib/variants.mjs";
import { SYSTEM, TEXT_PROMPT, TEXT_REPLY } from "./lib/workloads.mjs";

const runs = Number(argValue("runs", 15));
const gapMs = Number(argValue("gap-ms", 200));
const dirOf = (value) => (isAbsolute(value) ? value : resolve(value));
const builds = { A: dirOf(argValue("a", DIST)) };
if (argValue("b", undefined)) builds.B = dirOf(argValue("b", undefined));

const api = await startApiProcess({ firstParty: true });
// This checkout's testing helpers write each runtime's HOME login.
await loadLibrary();
const libs = {};
for (const [build, dir] of Object.entries(builds)) libs[build] = await import(pathToFileURL(join(dir, "index.js")).href);
const variants = Object.keys(builds).flatMap((build) => [`${build} on`, `${build} off`]);
const ms = Object.fromEntries(variants.map((name) => [name, []]));

for (let round = 0; round <= runs; round += 1) {
  const shift = round % variants.length;
  const order = [...variants.slice(shift), ...variants.slice(0, shift)];
  const line = [];
  for (const name of order) {
    const [build, wire] = name.split(" ");
    const runtime = new libs[build].ClaudeCodeRuntime(runtimeOptions(api, { warm: false, ...(wire === "off" ? { wire: false } : {}) }));
    const started = performance.now();
    const out = await runtime.generateTextResult({ prompt: TEXT_PROMPT, system: SYSTEM });
    const took = performance.now() - started;
    await runtime.close();
    if (out.text !== TEXT_REPLY) throw new Error(`bench: ${name} answered ${JSON.stringify(out.text)}`);
    if ((out.network?.interceptor === "on") !== (wire === "on")) throw new Error(`bench: ${name} ran with the interceptor ${out.network?.interceptor}`);
    if (round > 0) ms[name].push(took);
    line.push(`${name}=${took.toFixed(0)}`);
    await new Promise((done) => setTimeout(done, gapMs));
  }
  log(`  round ${round}${round === 0 ? " (warm-up)" : ""}: ${line.join(" ")}`);
}

const p50 = (values) => Math.round(percentile(values, 50) * 10) / 10;
const result = { runs, builds, p50: {}, p95: {}, onOverOff: {} };
for (const name of variants) {
  result.p50[name] = p50(ms[name]);
  result.p95[name] = Math.round(percentile(ms[name], 95) * 10) / 10;
}
for (const build of Object.keys(builds)) result.onOverOff[build] = Math.round((result.p50[`${build} on`] / result.p50[`${build} off`]) * 1000) / 1000;
log(JSON.stringify(result, null, 2));
emit(result);
await api.close();
await cleanup();
process.exit(0);
