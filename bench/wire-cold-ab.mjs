/**
 * The interceptor's cost on cold calls, two builds in one run (issue 45, item 3): cold one-turn text calls
 * (a new CLI each, `warm: false`, `reuse: false`) on the first-party path, with the interceptor (`on`) and
 * with `wire: false` (`off`), for build A and build B, round-robin in one process against one scripted API,
 * so load swings hit all four alike. Also each `on` call's first Messages request's `firstByteMs` from its
 * transcript record: the interceptor's time from the CLI's request to the API's first answer byte, which
 * holds any handshake the way out makes on the call's path. Not part of `npm run bench`.
 *
 *   node bench/wire-cold-ab.mjs --a <dist dir> --b <dist dir> [--runs 20] [--gap-ms 300]
 *
 * `--a` defaults to this checkout's dist/; build the other one from a `git archive` of the commit to compare.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { DIST, argValue, cleanup, log, percentile, startApiProcess } from "./lib/common.mjs";
import { loadLibrary, runtimeOptions } from "./lib/variants.mjs";
import { SYSTEM, TEXT_PROMPT, TEXT_REPLY } from "./lib/workloads.mjs";

const runs = Number(argValue("runs", 20));
const gapMs = Number(argValue("gap-ms", 300));
const dirOf = (value) => (isAbsolute(value) ? value : resolve(value));
const builds = { A: dirOf(argValue("a", DIST)), B: dirOf(argValue("b", DIST)) };

const api = await startApiProcess({ firstParty: true });
// This checkout's testing helpers write each runtime's HOME login.
await loadLibrary();
const runtimes = {};
for (const [build, dir] of Object.entries(builds)) {
  const lib = await import(pathToFileURL(join(dir, "index.js")).href);
  const transcript = { dir: mkdtempSync(join(tmpdir(), "ktx-bench-ab-")) };
  runtimes[`${build} on`] = new lib.ClaudeCodeRuntime(runtimeOptions(api, { warm: false, transcript }));
  runtimes[`${build} off`] = new lib.ClaudeCodeRuntime(runtimeOptions(api, { warm: false, wire: false, transcript }));
}
const names = Object.keys(runtimes);
const ms = Object.fromEntries(names.map((name) => [name, []]));
const firstByteMs = { A: [], B: [] };

// Round 0 warms each runtime (its interceptor's start, the CLI's files) and is not counted.
for (let round = 0; round <= runs; round += 1) {
  const shift = round % names.length;
  const order = [...names.slice(shift), ...names.slice(0, shift)];
  const line = [];
  for (const name of order) {
    const started = performance.now();
    const out = await runtimes[name].generateTextResult({ prompt: TEXT_PROMPT, system: SYSTEM });
    const took = performance.now() - started;
    if (out.text !== TEXT_REPLY) throw new Error(`bench: ${name} answered ${JSON.stringify(out.text)}`);
    if (round > 0) {
      ms[name].push(took);
      if (name.endsWith(" on")) {
        const calls = readFileSync(out.transcriptPath, "utf8").split("\n").filter(Boolean).map((text) => JSON.parse(text)).filter((record) => record.kind === "call");
        const first = calls.at(-1)?.requests?.[0]?.firstByteMs;
        if (typeof first === "number") firstByteMs[name[0]].push(first);
      }
    }
    line.push(`${name}=${took.toFixed(0)}`);
    await new Promise((done) => setTimeout(done, gapMs));
  }
  log(`  round ${round}${round === 0 ? " (warm-up)" : ""}: ${line.join(" ")}`);
}

const p50 = (values) => Math.round(percentile(values, 50) * 10) / 10;
const result = { runs, builds, p50: {}, onOverOff: {}, firstByteMsP50: {} };
for (const build of Object.keys(builds)) {
  result.p50[`${build} on`] = p50(ms[`${build} on`]);
  result.p50[`${build} off`] = p50(ms[`${build} off`]);
  result.onOverOff[build] = Math.round((result.p50[`${build} on`] / result.p50[`${build} off`]) * 1000) / 1000;
  result.firstByteMsP50[build] = p50(firstByteMs[build]);
}
console.log(JSON.stringify(result, null, 2));
for (const runtime of Object.values(runtimes)) await runtime.close?.();
await api.close();
await cleanup();
process.exit(0);
