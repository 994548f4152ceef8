/**
 * `transcript trace`: Chrome trace-event JSON (the Trace Event Format that Perfetto and
 * chrome://tracing load) for our transcripts and raw captures, one event per API turn and tool call.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { summarizeTranscript, traceTranscript, type TraceFile } from "../../src/transcripts/inspect.js";
import { loadTranscript } from "../../src/transcripts/reader.js";
import { cleanup, tempDir } from "../support.js";

afterEach(cleanup);

const ROOT = join(import.meta.dirname, "../../fixtures");
const MAIN = join(import.meta.dirname, "../../dist/cli/main.js");

/** The Trace Event Format's rules for the phases we write (µs timestamps, a duration on complete events). */
const base = { name: z.string().min(1), pid: z.number().int().positive(), tid: z.number().int().nonnegative(), cat: z.string().optional(), args: z.record(z.string(), z.unknown()).optional() };
const traceSchema = z.object({
  traceEvents: z.array(
    z.discriminatedUnion("ph", [
      z.strictObject({ ...base, ph: z.literal("X"), ts: z.number().int().nonnegative(), dur: z.number().int().positive() }),
      z.strictObject({ ...base, ph: z.literal("i"), ts: z.number().int().nonnegative(), s: z.enum(["t", "p", "g"]) }),
      z.strictObject({ ...base, ph: z.literal("M"), args: z.record(z.string(), z.unknown()) }),
    ]),
  ),
  displayTimeUnit: z.enum(["ms", "ns"]),
  metadata: z.record(z.string(), z.unknown()),
});

const spans = (trace: TraceFile, cat: string) => trace.traceEvents.filter((event) => event.ph === "X" && event.cat === cat);
const names = (trace: TraceFile) => trace.traceEvents.map((event) => event.name);

function checkAgainstSummary(path: string): TraceFile {
  const transcript = loadTranscript(path);
  const trace = traceTranscript(transcript);
  // Valid JSON of the format, as a file would hold it.
  traceSchema.parse(JSON.parse(JSON.stringify(trace)));
  const summary = summarizeTranscript(transcript);
  expect(spans(trace, "turn")).toHaveLength(summary.turns + summary.subagentTurns);
  expect(spans(trace, "tool")).toHaveLength(summary.toolCalls.length);
  expect(names(trace)).toContain("process start");
  if (summary.result) expect(names(trace)).toContainEqual(expect.stringMatching(/^result /));
  return trace;
}

describe("transcript trace", () => {
  it("a tool loop: the process, initialize, each turn, each tool call and its handler, result and exit on one axis", () => {
    const trace = checkAgainstSummary(join(ROOT, "transcripts/2.1.330/tool-loop.jsonl"));
    expect(spans(trace, "turn")).toHaveLength(3);
    expect(spans(trace, "tool").map((event) => event.name)).toEqual(["tool mcp__ktx__lookup", "tool mcp__ktx__count"]);
    expect(spans(trace, "mcp").map((event) => event.name)).toEqual(["tools/call lookup", "tools/call count"]);
    expect(spans(trace, "initialize")).toHaveLength(1);
    expect(names(trace)).toContain("exit code=0");
    // Times are the transcript's: the first turn ends before the first tool call starts, which ends before the second turn ends.
    const [turn1, turn2] = spans(trace, "turn");
    const [tool1] = spans(trace, "tool");
    expect(turn1!.ts! + turn1!.dur!).toBeLessThanOrEqual(tool1!.ts! + 1);
    expect(tool1!.ts! + tool1!.dur!).toBeLessThanOrEqual(turn2!.ts! + turn2!.dur!);
    // Each track is named.
    expect(trace.traceEvents.filter((event) => event.name === "thread_name").map((event) => event.args!.name)).toEqual(expect.arrayContaining(["CLI process", "main thread: API turns and tool calls"]));
  });

  it("a permission answer is an event of its own, on its own track", () => {
    // The CLI asks nothing under the runtime's flags, so the question and our answer are written in.
    const path = join(tempDir("trace"), "permission.jsonl");
    const lines = readFileSync(join(ROOT, "transcripts/2.1.330/tool-loop.jsonl"), "utf8").trim().split("\n");
    const at = lines.findIndex((line) => line.includes("tools/call"));
    const t = JSON.parse(lines[at]!).t as number;
    const ask = { type: "control_request", request_id: "perm-1", request: { subtype: "can_use_tool", tool_name: "mcp__ktx__lookup", input: {} } };
    const answer = { type: "control_response", response: { subtype: "success", request_id: "perm-1", response: { behavior: "deny", message: "no" } } };
    lines.splice(at, 0, JSON.stringify({ kind: "in", t: t - 2, text: JSON.stringify(ask) }), JSON.stringify({ kind: "out", t: t - 1, text: JSON.stringify(answer) }));
    writeFileSync(path, `${lines.join("\n")}\n`);
    const trace = checkAgainstSummary(path);
    const [permission] = spans(trace, "permission");
    expect(permission).toMatchObject({ name: "permission mcp__ktx__lookup: deny", ts: Math.round((t - 2) * 1000), dur: 1000, args: { behavior: "deny" } });
    // A raw capture has the question only: it still shows, marked unanswered.
    const raw = checkAgainstSummary(join(ROOT, "protocol-2.1.330/d1_perm_mcp_allow.stdout.ndjson"));
    expect(names(raw)).toContainEqual(expect.stringMatching(/^permission .* \(no answer recorded\)$/));
  });

  it("a raw capture with a subagent: lines in order 1 ms apart, the subagent on its own track", () => {
    const trace = checkAgainstSummary(join(ROOT, "protocol-2.1.330/live_subagent.stdout.ndjson"));
    expect(trace.metadata.timing).toMatch(/raw capture/);
    const [main, subagent] = [spans(trace, "turn").filter((event) => event.name === "API turn"), spans(trace, "turn").filter((event) => event.name === "subagent API turn")];
    expect(main).toHaveLength(2);
    expect(subagent).toHaveLength(1);
    expect(subagent[0]!.tid).not.toBe(main[0]!.tid);
    const track = trace.traceEvents.find((event) => event.name === "thread_name" && event.tid === subagent[0]!.tid);
    expect(track!.args!.name).toMatch(/^subagent for Agent toolu_/);
    // The subagent's Read runs on its track, inside the Agent tool call.
    const read = spans(trace, "tool").find((event) => event.name === "tool Read")!;
    const agent = spans(trace, "tool").find((event) => event.name === "tool Agent")!;
    expect(read.tid).toBe(subagent[0]!.tid);
    expect(read.ts!).toBeGreaterThanOrEqual(agent.ts!);
    expect(read.ts! + read.dur!).toBeLessThanOrEqual(agent.ts! + agent.dur!);
  });

  it("every committed fixture and capture gives valid trace-event JSON with one event per turn and tool call", () => {
    for (const dir of ["transcripts/2.1.330", "transcripts/2.1.142", "protocol-2.1.330"]) {
      for (const name of readdirNames(join(ROOT, dir))) checkAgainstSummary(join(ROOT, dir, name));
    }
  });

  it("writes the file with --out and says what it holds", async () => {
    const out = join(tempDir("trace"), "trace.json");
    const { exitCode, stderr } = await execa(process.execPath, [MAIN, "transcript", "trace", join(ROOT, "transcripts/2.1.330/tool-loop.jsonl"), "--out", out], { reject: false });
    expect(exitCode).toBe(0);
    expect(stderr).toMatch(/^Wrote \d+ trace events \(3 API turns, 2 tool calls\) to .*trace\.json; open it in https:\/\/ui\.perfetto\.dev/);
    traceSchema.parse(JSON.parse(readFileSync(out, "utf8")));
  });
});

function readdirNames(dir: string): string[] {
  return readdirSync(dir).filter((name: string) => name.endsWith(".jsonl") || name.endsWith(".ndjson"));
}
