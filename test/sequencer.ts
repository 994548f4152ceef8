/**
 * File order for a run without vitest's results cache (CI after `npm ci`: node_modules/.vite is gone),
 * where vitest would start the largest files first, a poor guess at the longest: the replay of every
 * fixture is a short file and one of the longest. The files known to be long start first, longest first,
 * so the two workers finish close together instead of one running a long file alone at the end. A run
 * with the cache (a second local run) keeps vitest's own order, by the durations it measured.
 */
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds per file, roughly: a full run of the suite (2 workers, 2026-11-26, 996 tests, the machine otherwise idle); only
 * files over ~10 s matter. A missing or stale entry costs balance, never correctness.
 */
const KNOWN_SECONDS: Record<string, number> = {
  "test/e2e/warm.test.ts": 57,
  "test/e2e/scripted-api.test.ts": 52,
  "test/e2e/wire.test.ts": 49,
  "test/e2e/rate-limits.test.ts": 47,
  "test/replay/fixtures.test.ts": 41,
  "test/e2e/cli-tool.test.ts": 35,
  "test/e2e/core.test.ts": 35,
  "test/faults/tool-and-api-faults.test.ts": 31,
  "test/e2e/status.test.ts": 31,
  "test/e2e/probe-facts.test.ts": 29,
  "test/parity/conformance.test.ts": 26,
  "test/pack/zod-peer.test.ts": 26,
  "test/faults/close.test.ts": 25,
  "test/e2e/agent-loop.test.ts": 25,
  "test/ktx/call-sites.test.ts": 23,
  "test/pack/footprint.test.ts": 22,
  "test/faults/process-faults.test.ts": 22,
  "test/e2e/reuse.test.ts": 19,
  "test/e2e/reuse-soak.test.ts": 18,
  "test/e2e/wire-process.test.ts": 16,
  "test/faults/shutdown.test.ts": 16,
  "test/e2e/cli-commands.test.ts": 15,
  "test/e2e/transcript-diff.test.ts": 15,
  "test/parity/differences.test.ts": 14,
  "test/e2e/telemetry-spans.test.ts": 14,
};

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const key = (file: TestSpecification) => `${file.project.name}:${relative(this.ctx.config.root, file.moduleId)}`;
    // With measured durations for most files, vitest's order is the better one.
    const measured = sorted.filter((file) => this.ctx.cache.getFileTestResults(key(file))?.duration).length;
    if (measured >= sorted.length / 2) return sorted;
    const known = (file: TestSpecification) => KNOWN_SECONDS[relative(this.ctx.config.root, file.moduleId).split("\\").join("/")] ?? 0;
    // Stable: the files not in the table keep vitest's order (largest first) after the known ones.
    return sorted.map((file, index) => ({ file, index })).sort((a, b) => known(b.file) - known(a.file) || a.index - b.index).map(({ file }) => file);
  }
}
