import { configDefaults, defineConfig } from "vitest/config";
import { LongestFirstSequencer } from "./test/sequencer.js";

/** The unit tests: in-process only (no CLI, no child left), each file restoring what it changes (timers, TMPDIR). */
const UNIT = "test/unit/**/*.test.ts";

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
        // Every other file in a fresh module graph: they start CLIs, hosts and servers, and some check
        // process-wide state (signal handlers, the governor, the processes left).
        test: { name: "suite", include: ["test/**/*.test.ts"], exclude: [...configDefaults.exclude, UNIT] },
      },
    ],
  },
});
