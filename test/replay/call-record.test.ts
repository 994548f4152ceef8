/**
 * The call record the runtime appends to each call's transcript (issue 18): show, summary and diff
 * read it; transcripts without it (all recorded before it existed) read as before.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { diffTranscripts, isEmptyDiff, renderDiff, renderTranscript, summarizeTranscript } from "../../src/transcripts/inspect.js";
import { loadTranscript } from "../../src/transcripts/reader.js";
import { cleanup, tempDir } from "../support.js";

afterEach(cleanup);

const TEXT = join(import.meta.dirname, "../../fixtures/transcripts/2.1.330/text.jsonl");

/** The text fixture as a reused process's call: no exit record, a call record with this call's own figures. */
function asReusedCall(call: Record<string, unknown>, name = "call.jsonl"): string {
  const lines = readFileSync(TEXT, "utf8").trim().split("\n").filter((line) => !["exit", "outcome", "call"].includes(JSON.parse(line).kind));
  const path = join(tempDir("call-record"), name);
  writeFileSync(path, `${[...lines, JSON.stringify({ kind: "call", t: 400.5, ...call })].join("\n")}\n`);
  return path;
}

/** The text fixture as recorded before the call record existed. */
function withoutCallRecord(): string {
  const lines = readFileSync(TEXT, "utf8").trim().split("\n").filter((line) => JSON.parse(line).kind !== "call");
  const path = join(tempDir("call-record"), "old.jsonl");
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

const CALL = {
  costUsd: 0.000362,
  usage: { inputTokens: 112, outputTokens: 3, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
  ending: "kept for reuse",
  process: { launch: "launch-1a2b", call: 3 },
};

it("summary takes cost and tokens from the call record and says how the process ended", () => {
  const result = readFileSync(TEXT, "utf8").split("\n").map((line) => (line ? JSON.parse(line) : {})).find((record) => record.kind === "in" && JSON.parse(record.text).type === "result");
  const runningTotal = JSON.parse(result.text).total_cost_usd;
  expect(runningTotal).not.toBe(CALL.costUsd);
  const summary = summarizeTranscript(loadTranscript(asReusedCall(CALL)));
  expect(summary.costUsd).toBe(0.000362);
  expect(summary.tokens).toEqual({ input: 112, output: 3, cacheRead: 0, cacheCreation: 0, source: "call" });
  // A process kept for reuse has no exit record, and that is not the sign of a killed host.
  expect(summary.exit).toBeUndefined();
  expect(summary.ending).toBe("kept for reuse");
  expect(summary.call).toEqual({ costUsd: 0.000362, usage: { input: 112, output: 3, cacheRead: 0, cacheCreation: 0 }, ending: "kept for reuse", launch: "launch-1a2b", callOnProcess: 3 });

  const unknown = summarizeTranscript(loadTranscript(asReusedCall({ ...CALL, costUsd: null, usage: null, ending: "aborted" })));
  expect(unknown.ending).toBe("aborted");
  expect(unknown.tokens.source).toBe("billed");
  // Without the runtime's own figure, the result's per-model cost stands.
  expect(unknown.costUsd).toBeCloseTo(JSON.parse(result.text).model_usage_since_last_result["claude-sonnet-4-6"].costUSD, 9);
});

it("without a call record the ending is the exit record's", () => {
  const summary = summarizeTranscript(loadTranscript(withoutCallRecord()));
  expect(summary.call).toBeUndefined();
  expect(summary.ending).toBe("exited 0");
});

it("show prints the call record: this call's figures and the ending", () => {
  const shown = renderTranscript(loadTranscript(asReusedCall(CALL))).join("\n");
  expect(shown).toMatch(/== call 3 on process launch-1a2b: kept for reuse/);
  expect(shown).toMatch(/this call's tokens in 112, out 3, cache read 0, cache write 0; cost \$0\.000362/);
});

it("diff compares call records but not launch ids", () => {
  const a = loadTranscript(asReusedCall(CALL, "a.jsonl"));
  const otherLaunch = loadTranscript(asReusedCall({ ...CALL, process: { launch: "launch-9z9z", call: 3 } }, "b.jsonl"));
  expect(isEmptyDiff(diffTranscripts(a, otherLaunch))).toBe(true);
  const retired = loadTranscript(asReusedCall({ ...CALL, ending: "retired: idle" }, "c.jsonl"));
  const diff = diffTranscripts(a, retired);
  expect(diff.call).toEqual({ before: [expect.objectContaining({ ending: "kept for reuse" })], after: [expect.objectContaining({ ending: "retired: idle" })] });
  expect(renderDiff(diff).join("\n")).toMatch(/call record changed: .*kept for reuse.* -> .*retired: idle/);
  // An old transcript (no call record) against a new one: nothing to compare the record with.
  expect(diffTranscripts(loadTranscript(withoutCallRecord()), a).call).toBeUndefined();
});

it("a call record with a figure or the process reference missing still reads", () => {
  const path = asReusedCall({ costUsd: 0.001, usage: { inputTokens: 10, outputTokens: 2 }, ending: "aborted" }, "partial.jsonl");
  const summary = summarizeTranscript(loadTranscript(path));
  expect(summary.tokens).toEqual({ input: 10, output: 2, cacheRead: 0, cacheCreation: 0, source: "call" });
  expect(summary.call).toMatchObject({ ending: "aborted", launch: null, callOnProcess: null });
  expect(renderTranscript(loadTranscript(path)).join("\n")).toMatch(/== call \(no process\): aborted/);
});
