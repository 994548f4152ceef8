/**
 * Issue 40, finding 1, end to end: a 256 KiB prompt of `a://b:` with transcripts on made a 25.8 s call
 * and blocked the host's event loop 12.8 s (every call on the host stalled, no timeout could fire).
 * Now the real CLI runs a call with that prompt against the scripted API and the loop's largest delay
 * during the call stays under 50 ms; the prompt is in the transcript, redacted in full (no cut).
 *
 * The delay is measured twice. perf_hooks' monitorEventLoopDelay gives the wall-clock delay, which on a
 * loaded machine also counts the time the OS ran other processes (the same call without a transcript
 * showed 28–190 ms here at a load average of 13, and 57–151 ms beside the other test worker): it is
 * reported, not asserted. What is asserted is the delay this process spent working: a 2 ms timer
 * notes the wall time and the process's CPU time at each tick, and a gap between ticks counts as
 * blocked for the smaller of the two (a synchronous redaction is CPU time; a wait for a core is not).
 * The call is made up to three times and the smallest figure counts: redaction's block is in every call.
 */
import { readFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { expect, it } from "vitest";
import { turn } from "../../src/testing/scripted-api.js";
import { runtimeFor, scriptedApi, tempDir } from "../support.js";
import { endSuiteAfterAll } from "./harness.js";

/** The loop's largest blocked stretch while `work` runs: wall-clock, and counting only this process's CPU time. */
async function largestBlock<T>(work: () => Promise<T>): Promise<{ result: T; wallMs: number; workingMs: number }> {
  const wall = monitorEventLoopDelay({ resolution: 2 });
  let lastWall = performance.now();
  let lastCpu = process.cpuUsage();
  let workingMs = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    const cpu = process.cpuUsage(lastCpu);
    workingMs = Math.max(workingMs, Math.min(now - lastWall, (cpu.user + cpu.system) / 1000));
    lastWall = now;
    lastCpu = process.cpuUsage();
  }, 2);
  wall.enable();
  try {
    const result = await work();
    return { result, wallMs: wall.max / 1e6, workingMs };
  } finally {
    wall.disable();
    clearInterval(tick);
  }
}

endSuiteAfterAll(() => undefined);

const ADVERSARIAL: Record<string, string> = {
  "a://b: repeated": "a://b:",
  "a run of backslashes": "\\",
};

for (const [name, unit] of Object.entries(ADVERSARIAL)) {
  it(`a 256 KiB prompt of ${name}, with transcripts on, blocks the host's event loop under 50 ms`, async () => {
    const api = await scriptedApi([turn.text("warm"), turn.text("done"), turn.text("done"), turn.text("done")]);
    const dir = tempDir("transcripts");
    const runtime = runtimeFor(api, { transcript: { dir } });
    // The first call loads and compiles what every later call reuses (the pattern set's regexes among them).
    await runtime.generateText({ prompt: "warm up" });
    const prompt = unit.repeat((256 * 1024) / unit.length);
    const working: number[] = [];
    const wall: number[] = [];
    let result: Awaited<ReturnType<typeof runtime.generateTextResult>> | undefined;
    for (let attempt = 0; attempt < 3 && !(Math.min(...working) < 50); attempt++) {
      const measured = await largestBlock(() => runtime.generateTextResult({ prompt }));
      result = measured.result;
      expect(result.text).toBe("done");
      working.push(measured.workingMs);
      wall.push(measured.wallMs);
    }
    await runtime.close();
    const figures = `largest block per call: ${working.map((ms) => ms.toFixed(1)).join(", ")} ms working (wall clock: ${wall.map((ms) => ms.toFixed(1)).join(", ")} ms)`;
    expect(Math.min(...working), figures).toBeLessThan(50);
    const transcript = readFileSync(result!.transcriptPath!, "utf8");
    // The prompt was recorded whole (JSON-escaped inside the line), not cut by the budget.
    expect(transcript).toContain(JSON.stringify(JSON.stringify(prompt).slice(1, -1)).slice(1, -1).slice(0, 4096));
    expect(transcript).not.toContain("is not recorded");
  });
}
