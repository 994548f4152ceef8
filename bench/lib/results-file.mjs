/**
 * Where a bench run's results go: `bench/<name>.json` (ignored by git, the latest run for a reader at hand)
 * and a dated copy `bench/results/<YYYY-MM-DD>-<short commit><suffix>.json`, meant to be committed, so
 * the history of measurements lives beside the bench and in git (bench/results/README.md).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BENCH_DIR, ROOT } from "./common.mjs";

function shortCommit() {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return "nogit"; // a copy without .git (a tarball): the date alone still orders the runs
  }
}

/** Writes both files; `suffix` names a partial or variant run (`.latency-reuse`, `.base-url`); the dated copy of a `--quick` run ends `.quick`. Returns their paths. */
export function writeResults(suffix, results) {
  const commit = shortCommit();
  const text = `${JSON.stringify({ ...results, commit }, null, 2)}\n`;
  const latest = join(BENCH_DIR, `results${suffix}.json`);
  const dir = join(BENCH_DIR, "results");
  mkdirSync(dir, { recursive: true });
  const dated = join(dir, `${results.generatedAt.slice(0, 10)}-${commit}${suffix}${results.quick ? ".quick" : ""}.json`);
  writeFileSync(latest, text);
  writeFileSync(dated, text);
  return [latest, dated];
}
