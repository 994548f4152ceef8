/**
 * Session transcripts (issue 41, item 6): one file per session with its turns' boundaries, recorded from the
 * real CLI (2.1.330, scripted API) as fixtures/transcripts/2.1.330/session-tool-interrupt-crash.jsonl — a tool
 * turn, an interrupted turn, a text turn, a turn whose CLI is SIGKILLed, and the turn after it on a new process
 * with the history replayed. The stand-in CLI replays it (one recorded process per start) to the same session
 * results; show, summary, trace and diff read its turns.
 */
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { createReplayCli } from "../../src/testing/replay.js";
import { SESSION_SCENARIOS, findSessionScenario, runSessionScenario } from "../../src/testing/session-scenarios.js";
import { SESSION_SCENARIO_NAMES } from "../../src/testing/scenario-names.js";
import { loadTranscript } from "../../src/transcripts/reader.js";
import { diffTranscripts, isEmptyDiff, renderDiff, renderTranscript, summarizeTranscript, traceTranscript } from "../../src/transcripts/index.js";
import { openSessionTranscript } from "../../src/transcripts/recorder.js";
import { sessionSegments } from "../../src/transcripts/replay.js";
import { cleanup, remainingChildren, tempDir } from "../support.js";

const ROOT = join(import.meta.dirname, "../../fixtures/transcripts");
const FIXTURE = join(ROOT, "2.1.330", "session-tool-interrupt-crash.jsonl");
const MAIN = join(import.meta.dirname, "../../dist/cli/main.js");

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

function recordedOutcome(path: string) {
  const outcome = loadTranscript(path).records.find((record) => record.kind === "outcome");
  if (!outcome || outcome.kind !== "outcome") throw new Error(`${path} has no outcome record`);
  return outcome.outcome;
}

describe("the recorded session fixture", () => {
  const transcript = loadTranscript(FIXTURE);
  const kinds = (kind: string) => transcript.records.filter((record) => record.kind === kind) as any[];

  it("is one file for the session: a header per CLI process, each turn between its turn and turn_end records", () => {
    expect(SESSION_SCENARIOS.map((scenario) => scenario.name)).toEqual(SESSION_SCENARIO_NAMES);
    expect(transcript.header).toMatchObject({ session: true, cliVersion: "2.1.330", cwd: "<cwd>", cliPath: "<cli>" });
    const headers = kinds("header");
    expect(headers).toHaveLength(2);
    expect(headers[0].process.launch).not.toBe(headers[1].process.launch);
    expect(kinds("turn").map((turn) => [turn.turn, turn.history, turn.process.call])).toEqual([
      [1, "native", 1],
      [2, "native", 2],
      [3, "native", 3],
      [4, "native", 4],
      [5, "replayed", 1],
    ]);
    // Turns 1–4 on the first process, 5 on the second (its header comes before it).
    expect(kinds("turn").map((turn) => turn.process.launch)).toEqual([...Array(4).fill(headers[0].process.launch), headers[1].process.launch]);
    expect(kinds("turn_end").map((end) => [end.turn, end.outcome, end.error?.code])).toEqual([
      [1, "ok", undefined],
      [2, "interrupted", "aborted"],
      [3, "ok", undefined],
      [4, "failed", "cli_crashed"],
      [5, "ok", undefined],
    ]);
    expect(kinds("interrupt")).toEqual([expect.objectContaining({ turn: 2 })]);
    expect(kinds("exit")).toEqual([expect.objectContaining({ signal: "SIGKILL" })]);
    expect(kinds("session_end")).toEqual([expect.objectContaining({ turns: 5 })]);
    // Each turn's lines are inside its boundaries: the records in order are turn n … turn_end n, never interleaved.
    const order = transcript.records.flatMap((record: any) => (record.kind === "turn" ? [`+${record.turn}`] : record.kind === "turn_end" ? [`-${record.turn}`] : []));
    expect(order).toEqual(["+1", "-1", "+2", "-2", "+3", "-3", "+4", "-4", "+5", "-5"]);
    // The interrupt and the crash are inside their turns; the interrupt control request follows the caller's interrupt.
    const index = (predicate: (record: any) => boolean) => transcript.records.findIndex(predicate);
    const interruptAt = index((record) => record.kind === "interrupt");
    expect(interruptAt).toBeGreaterThan(index((record) => record.kind === "turn" && record.turn === 2));
    expect(index((record) => record.kind === "out" && record.text.includes('"subtype":"interrupt"'))).toBeGreaterThan(interruptAt);
    expect(index((record) => record.kind === "exit")).toBeLessThan(index((record) => record.kind === "turn_end" && record.turn === 4));
    // The restart's prompt carries the completed turns as text.
    const restartPrompt = transcript.records.slice(index((record) => record.kind === "turn" && record.turn === 5)).find((record: any) => record.kind === "out" && JSON.parse(record.text).type === "user") as any;
    expect(JSON.parse(restartPrompt.text).message.content[0].text).toMatch(/^<earlier_conversation>[\s\S]*User: What does grain mean\?[\s\S]*<\/earlier_conversation>\n\nWhat did we find so far\?$/);
  });

  it("cuts into one segment per process for the stand-in; a call's transcript stays one", () => {
    const segments = sessionSegments(transcript);
    expect(segments.map((segment) => segment.records.filter((record) => record.kind === "turn").length)).toEqual([4, 1]);
    expect(segments[1]!.header).toBe(kinds("header")[1]);
    const text = loadTranscript(join(ROOT, "2.1.330", "tool-loop.jsonl"));
    expect(sessionSegments(text)).toEqual([text]);
  });

  it("replays through the stand-in CLI to the session results the real CLI gave, and the replay's own transcript has no difference from it", { timeout: 60_000 }, async () => {
    const transcripts = tempDir("session-replay");
    const scenario = findSessionScenario("session-tool-interrupt-crash");
    const outcome = await runSessionScenario(scenario, { cliPath: createReplayCli(FIXTURE, tempDir("replay")), fakeEndpoint: true, transcriptDir: transcripts });
    expect(outcome).toEqual(recordedOutcome(FIXTURE));
    // Two stand-in processes, as the recording had two CLIs.
    const replayed = loadTranscript(join(transcripts, "session-tool-interrupt-crash.jsonl"));
    expect(replayed.records.filter((record) => record.kind === "header")).toHaveLength(2);
    const diff = diffTranscripts(transcript, replayed);
    expect(renderDiff(diff)).toEqual(["no differences"]);
    expect(isEmptyDiff(diff)).toBe(true);
  });

  it("diff names a session turn that ended otherwise", () => {
    const changed = join(tempDir("session-diff"), "changed.jsonl");
    writeFileSync(
      changed,
      readFileSync(FIXTURE, "utf8")
        .split("\n")
        .map((line) => (line.includes('"kind":"turn_end","t"') && line.includes('"turn":3,') ? line.replace('"outcome":"ok"', '"outcome":"failed"') : line))
        .join("\n"),
    );
    const diff = diffTranscripts(transcript, loadTranscript(changed));
    expect(isEmptyDiff(diff)).toBe(false);
    expect((diff.sessionTurns!.before[2] as any).outcome).toBe("ok");
    expect((diff.sessionTurns!.after[2] as any).outcome).toBe("failed");
    expect(renderDiff(diff).join("\n")).toContain("session turns changed:");
  });

  it("summary gives each turn: how it ended, its duration, tokens and cost, the process pid; the session's figures are the turns' together", () => {
    const summary = summarizeTranscript(transcript);
    const turns = summary.session!.turns;
    expect(turns.map((turn) => turn.outcome)).toEqual(["ok", "interrupted", "ok", "failed", "ok"]);
    expect(turns.map((turn) => turn.history)).toEqual(["native", "native", "native", "native", "replayed"]);
    expect(new Set(turns.slice(0, 4).map((turn) => turn.pid)).size).toBe(1);
    expect(turns[4]!.pid).not.toBe(turns[0]!.pid);
    expect(turns[1]!.interrupted).toBe(true);
    expect(turns[3]!.ending).toBe(kinds("call")[3].ending);
    expect(turns.every((turn) => typeof turn.durationMs === "number")).toBe(true);
    const ok = turns.filter((turn) => turn.outcome === "ok");
    expect(ok.every((turn) => turn.usage!.input > 0 && turn.costUsd! > 0)).toBe(true);
    expect(summary.session!.processes).toHaveLength(2);
    expect(summary.session!.closed).toBe(true);
    // The session's tokens: every call record's (each turn's own) summed.
    const calls = kinds("call");
    expect(summary.tokens.input).toBe(calls.reduce((sum, call) => sum + (call.usage?.inputTokens ?? 0), 0));
    expect(summary.tokens.source).toBe("call");
    expect(summary.costUsd).toBeCloseTo(ok.reduce((sum, turn) => sum + turn.costUsd!, 0), 6);
  });

  it("show heads each turn with its number and process, marks the interrupt, the crash and the replayed restart", () => {
    const lines = renderTranscript(transcript);
    const text = lines.join("\n");
    for (const n of [1, 2, 3, 4, 5]) expect(text).toMatch(new RegExp(`══ session turn ${n} · pid \\d+, process \\w+, call \\d on it`));
    expect(text).toContain("INTERRUPT asked by the caller (session turn 2)");
    expect(text).toContain("end of session turn 2: INTERRUPTED");
    expect(text).toMatch(/exit code=none signal=SIGKILL/);
    expect(text).toContain("end of session turn 4: FAILED");
    expect(text).toContain("another CLI process of the session");
    expect(text).toContain("session turn 5 · ");
    expect(text).toContain("history REPLAYED as text");
    expect(text).toMatch(/end of session turn 1: ok, stop natural in \d+ ms; tokens in \d+/);
    expect(text).toContain("session closed after 5 turn(s)");
    // Each turn's model responses are numbered from 1 as "response N"; the session's own turns are "session turn N".
    expect(text).toContain("── response 1 · msg_scripted_0");
    expect(text).not.toMatch(/── turn \d/);
  });

  it("trace puts each session turn on a track of its process, with its outcome, usage and pid", () => {
    const trace = traceTranscript(transcript);
    const spans = trace.traceEvents.filter((event) => event.cat === "session" && event.ph === "X");
    expect(spans.map((span) => span.name)).toEqual(["session turn 1", "session turn 2 (interrupted)", "session turn 3", "session turn 4 (failed)", "session turn 5"]);
    expect(spans.map((span) => span.pid)).toEqual([1, 1, 1, 1, 2]);
    expect(spans[0]!.args).toMatchObject({ outcome: "ok", history: "native", callOnProcess: 1 });
    expect(spans[4]!.args).toMatchObject({ outcome: "ok", history: "replayed", callOnProcess: 1 });
    expect(typeof spans[0]!.args!.pid).toBe("number");
    expect(trace.traceEvents.some((event) => event.name === "interrupt (session turn 2)")).toBe(true);
    // The second process starts where the file's clock was when it was launched, not at 0.
    const starts = trace.traceEvents.filter((event) => event.name === "process start");
    expect(starts[1]!.ts!).toBeGreaterThan(spans[3]!.ts!);
    for (const span of spans) expect(span.dur!).toBeGreaterThan(0);
  });

  it("the transcript commands render the turns", { timeout: 30_000 }, async () => {
    expect(existsSync(MAIN)).toBe(true);
    const summary = await execa(process.execPath, [MAIN, "transcript", "summary", FIXTURE]);
    expect(summary.stdout).toContain("session: 5 turn(s) on 2 CLI process(es), closed");
    expect(summary.stdout).toMatch(/turn 2: INTERRUPTED; \d+ ms; pid \d+ \(process \w+, call 2\)/);
    expect(summary.stdout).toMatch(/turn 5: ok; \d+ ms; tokens in \d+, out \d+, cache read 0, cache write 0; \$[\d.]+; pid \d+ \(process \w+, call 1\); history replayed/);
    const json = JSON.parse((await execa(process.execPath, [MAIN, "transcript", "summary", FIXTURE, "--json"])).stdout);
    expect(json.session.turns).toHaveLength(5);
    const show = await execa(process.execPath, [MAIN, "transcript", "show", FIXTURE, "--type", "turn,turn_end"]);
    expect(show.stdout.split("\n").filter((line) => line.includes("══ session turn"))).toHaveLength(5);
    const diff = await execa(process.execPath, [MAIN, "transcript", "diff", FIXTURE, FIXTURE], { reject: false });
    expect([diff.exitCode, diff.stdout.trim()]).toEqual([0, "no differences"]);
    // docs/guides/sessions.md, "Transcript", shows this summary's turn lines as the command prints them (a line ending "…" is cut there).
    const guide = readFileSync(join(import.meta.dirname, "../../docs/guides/sessions.md"), "utf8");
    const block = /```sh\n(npx --no-install ktx-claude-code transcript summary fixtures\/transcripts\/2\.1\.330\/session-tool-interrupt-crash\.jsonl\n[\s\S]*?)```/.exec(guide)![1]!;
    const shown = block.split("\n").filter((line) => line.startsWith("#   ")).map((line) => line.slice(4));
    const printed = summary.stdout.split("\n").map((line) => line.slice(2));
    expect(shown.length).toBe(8);
    const start = printed.indexOf(shown[0]!);
    expect(start).toBeGreaterThan(0);
    shown.forEach((line, index) => (line.endsWith(" …") ? expect(printed[start + index]!.startsWith(line.slice(0, -2))).toBe(true) : expect(printed[start + index]).toBe(line)));
  });
});

describe("the session recorder", () => {
  const info = (launch: string, pid: number) => ({
    cliPath: "/bin/claude",
    cliVersion: "2.1.330",
    args: ["-p", "--api-key=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH"],
    cwd: "/work",
    env: { PATH: "/bin" },
    process: { pid, launch, call: 1, source: "cold" as const },
  });

  it("redacts a turn's input, its lines and its error as a call's transcript does", async () => {
    const secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH";
    const file = await openSessionTranscript(tempDir("session-recorder"), { name: "s", secrets: ["hunter2-very-secret"] });
    file.beginTurn(1, `my key is ${secret} and hunter2-very-secret`, "native");
    const observer = file.observerFor(1);
    observer.start!(info("aaaa1111", 10));
    observer.wire!("out", JSON.stringify({ type: "user", message: { role: "user", content: `key ${secret}` } }));
    file.endTurn(1, { outcome: "failed", durationMs: 5, error: { name: "CliCrashError", code: "cli_crashed", message: `stderr: ${secret}` } });
    await file.close(1);
    const text = readFileSync(file.path, "utf8");
    expect(text).not.toContain(secret);
    expect(text).not.toContain("hunter2-very-secret");
    expect(text.match(/\[REDACTED\]/g)!.length).toBeGreaterThanOrEqual(4);
    // It reads as a transcript: header first, then the turn, its line, its end, the session's end.
    expect(loadTranscript(file.path).records.map((record) => record.kind)).toEqual(["header", "turn", "out", "turn_end", "session_end"]);
  });

  it("writes a header only for a process the session has not run on yet; records before any process wait for the first header", async () => {
    const file = await openSessionTranscript(tempDir("session-recorder"), { name: "s", secrets: [] });
    // A turn that failed before any process started: its records wait, the file still starts with a header.
    file.beginTurn(1, "first", "native");
    file.endTurn(1, { outcome: "failed", durationMs: 1, error: { name: "AbortError", code: "aborted", message: "x" } });
    file.beginTurn(2, "second", "native");
    file.observerFor(2).start!(info("aaaa1111", 10));
    file.endTurn(2, { outcome: "ok", durationMs: 2 });
    file.beginTurn(3, "third", "native");
    file.observerFor(3).start!({ ...info("aaaa1111", 10), process: { pid: 10, launch: "aaaa1111", call: 2, source: "reused" } });
    file.endTurn(3, { outcome: "ok", durationMs: 2 });
    file.beginTurn(4, "fourth", "replayed");
    file.observerFor(4).start!(info("bbbb2222", 11));
    file.endTurn(4, { outcome: "ok", durationMs: 2 });
    await file.close(4);
    const records = loadTranscript(file.path).records as any[];
    expect(records.map((record) => (record.kind === "turn" || record.kind === "turn_end" ? `${record.kind} ${record.turn}` : record.kind))).toEqual([
      "header",
      "turn 1",
      "turn_end 1",
      "turn 2",
      "turn_end 2",
      "turn 3",
      "turn_end 3",
      "header",
      "turn 4",
      "turn_end 4",
      "session_end",
    ]);
    expect(records[1].process).toBeUndefined();
    expect(records[5].process).toMatchObject({ pid: 10, launch: "aaaa1111", call: 2 });
    expect(records[7].t).toBeGreaterThanOrEqual(0);
  });

  it("a session's first turn on a process that served calls before: its header names that process's call number and its launch's transcript", async () => {
    const file = await openSessionTranscript(tempDir("session-recorder"), { name: "s", secrets: [] });
    file.beginTurn(1, "first", "native");
    file.observerFor(1).start!({ ...info("cccc3333", 12), process: { pid: 12, launch: "cccc3333", call: 3, source: "reused", launchTranscript: "/transcripts/ktx-call.jsonl" } });
    file.endTurn(1, { outcome: "ok", durationMs: 1 });
    file.beginTurn(2, "second", "native");
    // Its later turns on the same process write no header; an own path as the launch's transcript is never named.
    file.observerFor(2).start!({ ...info("cccc3333", 12), process: { pid: 12, launch: "cccc3333", call: 4, source: "reused", launchTranscript: file.path } });
    file.endTurn(2, { outcome: "ok", durationMs: 1 });
    await file.close(2);
    const records = loadTranscript(file.path).records as any[];
    expect(records.filter((record) => record.kind === "header")).toHaveLength(1);
    expect(records[0]).toMatchObject({ session: true, process: { call: 3, source: "reused", launchTranscript: "/transcripts/ktx-call.jsonl" } });
    expect(records.filter((record) => record.kind === "turn").map((record) => record.process.call)).toEqual([3, 4]);
  });

  it("leaves no file for a session none of whose turns reached a process", async () => {
    const dir = tempDir("session-recorder");
    const file = await openSessionTranscript(dir, { name: "s", secrets: [] });
    file.beginTurn(1, "first", "native");
    file.endTurn(1, { outcome: "failed", durationMs: 1, error: { name: "AbortError", code: "aborted", message: "x" } });
    await file.close(1);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("copies of the fixture with the call transcript's records only still read (the format's older readers' records are unchanged)", () => {
    const copy = join(tempDir("session-compat"), "copy.jsonl");
    copyFileSync(join(ROOT, "2.1.330", "text.jsonl"), copy);
    expect(summarizeTranscript(loadTranscript(copy)).session).toBeUndefined();
  });
});
