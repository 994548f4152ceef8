/**
 * `transcript diff` of two runs of one program (real CLI, scripted API on the first-party path, behind the
 * runtime's interceptor, as real use runs): each run has its own pid, temp dirs, HOME, times and ids (its
 * API numbers message, request and tool-use ids differently), and
 * the two still diff as equal (exit 0), so a diff can gate CI.
 */
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, expect, it } from "vitest";
import { diffTranscripts, isEmptyDiff, renderDiff, summarizeTranscript } from "../../src/transcripts/inspect.js";
import { loadTranscript } from "../../src/transcripts/reader.js";
import { callRecords, cleanup, tempDir } from "../support.js";

const PROGRAM = join(import.meta.dirname, "../fixtures/diff-program.mjs");
const MAIN = join(import.meta.dirname, "../../dist/cli/main.js");

afterEach(cleanup);

/**
 * One run of the program with its own TMPDIR, so its project dir and sockets are all elsewhere, and
 * its HOME in that TMPDIR or (homeParent) anywhere else.
 */
async function runProgram(name: string, homeParent?: string, ids?: { prefix: string; offset: number }): Promise<string> {
  const dir = tempDir(`diff-${name}`);
  const transcripts = join(dir, "transcripts");
  // The worker's proxies (the loopback guard) pass through the environment.
  await execa(process.execPath, [PROGRAM, transcripts, ...(homeParent ? [homeParent] : [])], { env: { TMPDIR: tempDir(`tmp-${name}`), CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1", ...(ids ? { KTX_DIFF_IDS: JSON.stringify(ids) } : {}) } });
  return transcripts;
}

it("two runs of one program in different temp roots and with different HOMEs diff as equal", { timeout: 180_000 }, async () => {
  const first = await runProgram("a");
  // The second HOME is outside its TMPDIR, three levels deeper and longer: the CLI's `…/.claude/output-styles`
  // and `memory_paths.auto` name it.
  const elsewhere = join(tempDir("homes"), "users", "someone-else", "with-a-longer-name");
  mkdirSync(elsewhere, { recursive: true });
  // Its API numbers message, request and tool-use ids differently, as a real API's differ in every run
  // (as long as the scripted ones: the scripted API counts input tokens by length, and tool-use ids go back in requests).
  const second = await runProgram("b", elsewhere, { prefix: "renumber", offset: 5 });
  expect(readFileSync(join(second, "1-text.jsonl"), "utf8")).toContain(`${elsewhere}/ktx-diff-home-`);
  const files = readdirSync(first).sort();
  expect(files).toEqual(["1-text.jsonl", "2-loop.jsonl", "3-text-again.jsonl"]);
  expect(readdirSync(second).sort()).toEqual(files);
  for (const file of files) {
    const [a, b] = [join(first, file), join(second, file)];
    // The raw files do differ: another pid, other temp dirs, other ids and times.
    const ids = (path: string) => [...readFileSync(path, "utf8").matchAll(/ktx_(\d+)_/g)].map((match) => match[1]);
    expect(ids(a).length).toBeGreaterThan(0);
    expect(ids(a)[0]).not.toBe(ids(b)[0]);
    expect(readFileSync(a, "utf8")).not.toContain(loadTranscript(b).header.cwd);
    expect(readFileSync(a, "utf8")).toMatch(/msg_scripted_\d+/);
    expect(readFileSync(b, "utf8")).not.toContain("msg_scripted_");
    expect(readFileSync(b, "utf8")).toMatch(/msg_renumber_\d+/);
    // Both runs went first party: every request of the call passed the runtime's interceptor.
    for (const path of [a, b]) expect(callRecords(path).flatMap((call) => call.requests).map((request) => request.status)).toEqual(file === "2-loop.jsonl" ? [200, 200] : [200]);
    const diff = diffTranscripts(loadTranscript(a), loadTranscript(b));
    expect(isEmptyDiff(diff), `${file}:\n${renderDiff(diff).join("\n")}`).toBe(true);
    const cli = await execa(process.execPath, [MAIN, "transcript", "diff", a, b], { reject: false });
    expect(cli.exitCode, cli.stdout).toBe(0);
    expect(cli.stdout.trim()).toBe("no differences");
  }
  // The third call ran on the first call's reused process: its result line carries the process's
  // running total, and the summary still reports the call's own cost (the result's per-model figures).
  const [once, again] = [summarizeTranscript(loadTranscript(join(first, "1-text.jsonl"))), summarizeTranscript(loadTranscript(join(first, "3-text-again.jsonl")))];
  expect(again.result!.costUsd).toBeGreaterThan(once.costUsd!);
  expect(again.costUsd).toBe(once.costUsd);
  expect(again.tokens).toEqual(once.tokens);
  expect(again.ending).not.toBe("no exit recorded");
});
