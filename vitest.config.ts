import { configDefaults, defineConfig } from "vitest/config";
import { LongestFirstSequencer } from "./test/sequencer.js";

/** The unit tests: in-process only (no CLI, no child left), each file restoring what it changes (timers, TMPDIR). */
const UNIT = "test/unit/**/*.test.ts";
/**
 * Files that each get a fresh worker: they use the process-wide rate-limit governor (KTX's hook and
 * backend tests, the rate-limit e2e tests) or kill and crash processes on purpose (faults).
 */
const ISOLATED = ["test/ktx/**/*.test.ts", "test/e2e/rate-limits.test.ts", "test/faults/**/*.test.ts"];

export default defineConfig({
  test: {
    // Every CLI a test starts goes through a trap proxy: any non-loopback connection fails the run.
    globalSetup: ["test/loopback-guard.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // End-to-end tests each start a real CLI (~0.4 s, one core); two forks match the 2-core CI machine.
    pool: "forks",
    maxWorkers: 2,
    // Long files first, so the two workers end together (test/sequencer.ts).
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        extends: true,
        // Without isolation a worker imports the library once for all unit files instead of once per file:
        // test/unit took 20 s of CPU instead of 70 s (docs/testing.md, "What this library's suite costs").
        test: { name: "unit", include: [UNIT], isolate: false },
      },
      {
        extends: true,
        // The other files share a worker's module graph too: each closes its runtimes, servers and CLIs
        // after each test (test/support.ts `cleanup`) and checks none is left. Importing the library
        // afresh for each of ~60 files cost 90 s of CPU, 50 s of the suite's wall time (docs/testing.md).
        test: { name: "suite", include: ["test/**/*.test.ts"], exclude: [...configDefaults.exclude, UNIT, ...ISOLATED], isolate: false, setupFiles: ["test/teardown.ts"] },
      },
      {
        extends: true,
        test: { name: "isolated", include: ISOLATED, setupFiles: ["test/teardown.ts"] },
      },
    ],
  },
});
