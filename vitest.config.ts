import { defineConfig } from "vitest/config";
import { LongestFirstSequencer } from "./test/sequencer.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Every CLI a test starts goes through a trap proxy: any non-loopback connection fails the run.
    globalSetup: ["test/loopback-guard.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // End-to-end tests each start a real CLI (~0.4 s, one core); two forks match the 2-core CI machine.
    pool: "forks",
    maxWorkers: 2,
    // Long files first, so the two workers end together (test/sequencer.ts).
    sequence: { sequencer: LongestFirstSequencer },
  },
});
