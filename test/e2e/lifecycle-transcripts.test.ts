/**
 * Transcripts on the defaults tell each call's own truth (real CLI, scripted API): a reused call's
 * transcript reports that call's cost, as the runtime returned it, not the process's running total,
 * and says how its process ended; an aborted call's transcript says so.
 */
import { execa } from "execa";
import { afterEach, expect, it } from "vitest";
import { turn } from "../../src/testing/scripted-api.js";
import { cleanup, firstPartyApi, remainingChildren, runtimeFor, tempDir } from "../support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

const summaryJson = async (path: string) => JSON.parse((await execa(process.execPath, ["dist/cli/main.js", "transcript", "summary", path, "--json"])).stdout);

it("the third of three identical reused calls: summary --json has the cost the runtime returned for it", async () => {
  const api = await firstPartyApi(() => turn.text("the same answer"));
  const dir = tempDir("transcripts");
  const runtime = runtimeFor(api, { reuse: {}, warm: {}, transcript: { dir } });
  const results = [];
  for (let i = 0; i < 3; i += 1) results.push(await runtime.generateTextResult({ system: "KTX triage.", prompt: "Is this about billing?" }));
  expect(results.map((result) => result.warmStart)).toEqual([false, true, true]);
  const third = results[2]!;
  expect(third.costUsd).toBeGreaterThan(0);
  // The result line of the third call carries the process's running total: three times the call's cost.
  const summary = await summaryJson(third.transcriptPath!);
  expect(summary.costUsd).toBeCloseTo(third.costUsd, 9);
  expect(summary.ending).toBe("kept for reuse");
  expect(summary.call).toMatchObject({ ending: "kept for reuse", callOnProcess: 3 });
  expect((await summaryJson(results[0]!.transcriptPath!)).call.launch).toBe(summary.call.launch);
  await runtime.close();
});

it("an aborted call's transcript ends with a call record that says it was aborted", async () => {
  const api = await firstPartyApi(() => ({ text: "late", delayMs: 30_000 }));
  const dir = tempDir("transcripts");
  const runtime = runtimeFor(api, { transcript: { dir } });
  const controller = new AbortController();
  const call = runtime.generateTextResult({ prompt: "slow", abortSignal: controller.signal });
  while (api.messageRequests.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  controller.abort(new Error("user pressed ctrl-c"));
  const error = await call.catch((caught: unknown) => caught as Error & { transcriptPath?: string });
  expect(error).toMatchObject({ name: "AbortError" });
  const summary = await summaryJson(error.transcriptPath!);
  expect(summary.ending).toBe("aborted");
  expect(summary.call.ending).toBe("aborted");
  const { stdout } = await execa(process.execPath, ["dist/cli/main.js", "transcript", "show", error.transcriptPath!]);
  expect(stdout).toMatch(/: aborted\n.*\n.*the call failed: AbortError: The Claude Code run was aborted/);
  await runtime.close();
});
