/**
 * Section 5: parent memory while a 100 MiB stream goes through the parser path. A Node child
 * (bench/lib/stream-writer.mjs) writes ordinary stream-json lines to a real pipe; the parent reads
 * it with the library's CliProcess (execa pipe -> NdjsonFramer) and runs JSON.parse + parseCliMessage
 * on every line, as the session does. RSS is sampled every 10 ms. Run with --expose-gc for a clean
 * baseline.
 *
 *   node --expose-gc bench/memory.mjs [--mib 100]
 */
import { join } from "node:path";
import { BENCH_DIR, argValue, dist, emit, log, rssMiB, sleep } from "./lib/common.mjs";

const mib = argValue("mib", 100);
const { CliProcess } = await import(dist("transport/process.js"));
const { parseCliMessage } = await import(dist("protocol/messages.js"));

globalThis.gc?.();
await sleep(100);
globalThis.gc?.();
const baseline = rssMiB();
const heapBaseline = process.memoryUsage().heapUsed / 2 ** 20;
let peak = baseline;
let heapPeak = heapBaseline;
const timeline = [];
const started = performance.now();
const sampler = setInterval(() => {
  const rss = rssMiB();
  peak = Math.max(peak, rss);
  heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed / 2 ** 20);
}, 10);
const coarse = setInterval(() => timeline.push([Math.round(performance.now() - started), Math.round(rssMiB() * 10) / 10]), 250);

let lines = 0;
let bytes = 0;
let invalid = 0;
let sawResult = false;
const ended = new Promise((resolve) => {
  const proc = new CliProcess(
    { path: process.execPath, args: [join(BENCH_DIR, "lib", "stream-writer.mjs"), String(mib * 2 ** 20)], cwd: BENCH_DIR, env: { PATH: process.env.PATH ?? "" } },
    {
      line(text) {
        lines += 1;
        bytes += Buffer.byteLength(text) + 1;
        const parsed = parseCliMessage(JSON.parse(text));
        if (parsed.kind === "invalid") invalid += 1;
        if (parsed.kind === "result") sawResult = true;
      },
      oversizedLine() {
        invalid += 1;
      },
      stderr(text) {
        process.stderr.write(text);
      },
      stdoutEnd: () => resolve(proc),
    },
  );
});
const proc = await ended;
const seconds = (performance.now() - started) / 1000;
const exit = await proc.stop();
clearInterval(sampler);
clearInterval(coarse);
const end = rssMiB();
if (!sawResult || invalid > 0) throw new Error(`memory: stream incomplete (result ${sawResult}, invalid ${invalid}, exit ${exit.exitCode})`);
const round = (x) => Math.round(x * 10) / 10;
const result = {
  streamedMiB: round(bytes / 2 ** 20),
  lines,
  seconds: round(seconds),
  MBps: round(bytes / 2 ** 20 / seconds),
  rssBaselineMiB: round(baseline),
  rssPeakMiB: round(peak),
  rssGrowthMiB: round(peak - baseline),
  rssEndMiB: round(end),
  heapPeakMiB: round(heapPeak),
  heapGrowthMiB: round(heapPeak - heapBaseline),
  timeline,
};
log(`  memory: ${result.streamedMiB} MiB, ${lines} lines in ${result.seconds} s; RSS ${result.rssBaselineMiB} -> peak ${result.rssPeakMiB} MiB (+${result.rssGrowthMiB})`);
emit(result);
