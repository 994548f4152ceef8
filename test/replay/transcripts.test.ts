/** The recorder, redaction on a real run, and the inspection helpers, driven through the replay stand-in. */
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ClaudeCodeRuntime } from "../../src/claude-code/runtime.js";
import { createReplayCli } from "../../src/testing/replay.js";
import { checkOutcomeRecord, checkRecord } from "../../src/transcripts/format-check.js";
import { outcomeRecordSchema, TRANSCRIPT_FORMAT, transcriptRecordSchema } from "../../src/transcripts/format.js";
import { diffTranscripts, isEmptyDiff, renderTimeline, renderTranscript, summarizeTranscript } from "../../src/transcripts/inspect.js";
import { dollars } from "../../src/transcripts/inspect/text.js";
import { type AnyRecord, type LoadedTranscript, loadTranscript, readTranscriptRecords } from "../../src/transcripts/reader.js";
import { TranscriptFileError } from "../../src/errors/index.js";
import { cleanup, remainingChildren, tempDir } from "../support.js";

const ROOT = join(import.meta.dirname, "../../fixtures/transcripts");

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

describe("recording a run", () => {
  it("writes a header with env names only, every line both ways with rising offsets, and the exit; secrets are redacted", async () => {
    const dir = tempDir("transcripts");
    const secret = "sk-ant-planted-secret-0123456789";
    const runtime = new ClaudeCodeRuntime({
      projectDir: tempDir("project"),
      models: { default: "sonnet" },
      cliPath: createReplayCli(join(ROOT, "2.1.330", "text.jsonl"), tempDir("replay")),
      env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent", MY_SERVICE_VALUE: secret },
      passEnv: ["MY_SERVICE_VALUE"],
      apiEndpoint: { baseUrl: "http://127.0.0.1:9", apiKey: "sk-test-scripted" },
      warm: false, reuse: false,
    });
    const result = await runtime.generateTextResult({ prompt: "say hello", system: "You are a KTX test.", transcript: { dir, name: "run" } });
    expect(result.transcriptPath).toBe(join(dir, "run.jsonl"));
    const raw = readFileSync(result.transcriptPath!, "utf8");
    expect(raw).not.toContain(secret);
    const transcript = loadTranscript(result.transcriptPath!);
    expect(transcript.header.envNames).toEqual(expect.arrayContaining(["PATH", "HOME", "MY_SERVICE_VALUE", "ANTHROPIC_API_KEY", "DISABLE_AUTOUPDATER"]));
    expect(JSON.stringify(transcript.header)).not.toContain("sk-test-scripted");
    const kinds = transcript.records.map((record) => record.kind);
    expect(kinds[0]).toBe("header");
    // The exit (the process ended with its call), then the call record: the call's own cost and how its process ended.
    expect(kinds.at(-2)).toBe("exit");
    expect(kinds.at(-1)).toBe("call");
    expect(kinds).toContain("in");
    expect(kinds).toContain("out");
    const offsets = transcript.records.flatMap((record) => ("t" in record ? [Number(record.t)] : []));
    expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
    const summary = summarizeTranscript(transcript);
    expect(summary.result).toMatchObject({ subtype: "success", isError: false });
    expect(summary.messages.toCli).toMatchObject({ "control_request/initialize": 1, user: 1 });
  });
});

/** Protocol messages of one direction, with their records (for computing what the timeline must show). */
function messages(transcript: LoadedTranscript, kind: "in" | "out") {
  return transcript.records.flatMap((record) => (record.kind === kind ? [{ t: Number(record.t), message: JSON.parse(record.text) }] : []));
}

/** A copy of a transcript with each protocol line's text rewritten. */
function rewritten(transcript: LoadedTranscript, edit: (text: string) => string): LoadedTranscript {
  return {
    ...transcript,
    records: transcript.records.map((record) => (record.kind === "in" || record.kind === "out" ? { ...record, text: edit(record.text) } : record)),
  };
}

/** What changes between two live runs of the same call: uuids (session ids, the CLI's request ids), our request ids, timestamps, ports. */
/** Another run's uuids: each uuid consistently another (a fresh one per occurrence would change which request a reply answers). */
const otherUuids = new Map<string, string>();

function volatileRewrite(text: string): string {
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (uuid) => otherUuids.get(uuid) ?? (otherUuids.set(uuid, randomUUID()), otherUuids.get(uuid)!))
    .replace(/ktx_\d+_(\d+)/g, "ktx_4242_$1")
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z/g, "2030-01-02T03:04:05.678Z")
    .replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:65000");
}

describe("inspection", () => {
  const loop = loadTranscript(join(ROOT, "2.1.330", "tool-loop.jsonl"));

  it("shows a timeline: one heading per model response, tool calls with arguments and duration, tokens, cost and the exit", () => {
    const lines = renderTranscript(loop);
    const assistantIds = new Set(messages(loop, "in").flatMap(({ message }) => (message.type === "assistant" ? [message.message.id] : [])));
    const headings = lines.filter((line) => line.startsWith("── turn "));
    expect(headings).toHaveLength(assistantIds.size);
    for (const id of assistantIds) expect(headings.some((line) => line.includes(id))).toBe(true);

    const calls = messages(loop, "in").filter(({ message }) => message.request?.message?.method === "tools/call");
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      const { name, arguments: args } = call.message.request.message.params;
      const answer = messages(loop, "out").find(({ message }) => message.response?.request_id === call.message.request_id)!;
      expect(lines).toContainEqual(expect.stringContaining(`<< tools/call ${name} ${JSON.stringify(args)}`));
      expect(lines).toContainEqual(expect.stringContaining(`>> tools/call ${name} done in ${(answer.t - call.t).toFixed(1)} ms: ok`));
    }

    const result = messages(loop, "in").find(({ message }) => message.type === "result")!.message;
    expect(lines).toContainEqual(
      expect.stringContaining(`tokens in ${result.usage.input_tokens}, out ${result.usage.output_tokens}, cache read ${result.usage.cache_read_input_tokens}`),
    );
    // Shown rounded to a billionth of a dollar (the float sum 0.0036810000000000002 as $0.003681).
    expect(lines).toContainEqual(expect.stringContaining(`cost $${dollars(result.total_cost_usd)}`));
    expect(lines).toContainEqual(expect.stringMatching(/ms {2}exit code=0$/));
  });

  it("shows permission decisions: the CLI's question and our allow or deny with its reason", () => {
    const header = loop.records[0]!;
    const ask = (id: string, tool: string, input: object, t: number): AnyRecord => ({
      kind: "in",
      t,
      text: JSON.stringify({ type: "control_request", request_id: id, request: { subtype: "can_use_tool", tool_name: tool, input } }),
    });
    const answer = (id: string, response: object, t: number): AnyRecord => ({
      kind: "out",
      t,
      text: JSON.stringify({ type: "control_response", response: { subtype: "success", request_id: id, response } }),
    });
    const transcript = {
      path: "permissions.jsonl",
      header: loop.header,
      records: [
        header,
        ask("p1", "mcp__ktx__lookup", { term: "grain" }, 10),
        answer("p1", { behavior: "allow", updatedInput: { term: "grain" } }, 12.5),
        ask("p2", "Bash", { command: "rm -rf /" }, 20),
        answer("p2", { behavior: "deny", message: "Tool Bash is not available in this KTX run." }, 21),
      ],
    } as LoadedTranscript;
    const lines = renderTranscript(transcript);
    expect(lines).toContainEqual(expect.stringContaining('<< permission asked: mcp__ktx__lookup {"term":"grain"}'));
    expect(lines).toContainEqual(expect.stringContaining(">> permission allowed: mcp__ktx__lookup (2.5 ms)"));
    expect(lines).toContainEqual(expect.stringContaining('<< permission asked: Bash {"command":"rm -rf /"}'));
    expect(lines).toContainEqual(expect.stringContaining('>> permission DENIED: Bash (1.0 ms): "Tool Bash is not available in this KTX run."'));
    expect(summarizeTranscript(transcript).deniedPermissions).toEqual(["Tool Bash is not available in this KTX run."]);
  });

  it("filters by message type, prefixes included, and keeps the heading of a shown line's turn", () => {
    const only = (types: string[]) => renderTranscript(loop, { types }).filter((line) => / ms {2}/.test(line));
    const results = only(["result"]);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatch(/<< result success/);
    const toolCalls = only(["control_request/mcp_message/tools/call"]);
    expect(toolCalls.length).toBe(messages(loop, "in").filter(({ message }) => message.request?.message?.method === "tools/call").length);
    expect(toolCalls.every((line) => / << tools\/call /.test(line))).toBe(true);
    const mcp = only(["control_request/mcp_message"]);
    expect(mcp.length).toBe(messages(loop, "in").filter(({ message }) => message.request?.subtype === "mcp_message").length);
    const withHeadings = renderTranscript(loop, { types: ["assistant"] });
    expect(withHeadings.filter((line) => line.startsWith("── turn ")).length).toBe(only(["assistant"]).length);
    const raw = renderTranscript(loop, { raw: true, types: ["system/init"] }).filter((line) => / ms {2}/.test(line));
    expect(raw).toHaveLength(1);
    expect(raw[0]).toContain('"subtype":"init"');
  });

  it("renders lines as records arrive (the CLI streams the file)", async () => {
    async function* records() {
      yield* loop.records.slice(0, 3);
      throw new Error("the rest of the file is unreadable");
    }
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const line of renderTimeline(loop.path, records())) seen.push(line);
      })(),
    ).rejects.toThrow("unreadable");
    expect(seen.some((line) => line.includes(">> initialize"))).toBe(true);
  });

  it("summarises tool calls, the result, tokens and cost", () => {
    const summary = summarizeTranscript(loop);
    expect(summary.toolCalls).toEqual([{ name: "mcp__ktx__lookup", isError: false }, { name: "mcp__ktx__count", isError: false }]);
    expect(summary.outcome).toMatchObject({ stopReason: "natural" });
    const result = messages(loop, "in").find(({ message }) => message.type === "result")!.message;
    // The call record (the runtime's own account of the call) holds the result's usage; it wins over the result lines.
    expect(summary.tokens).toEqual({
      input: result.usage.input_tokens,
      output: result.usage.output_tokens,
      cacheRead: result.usage.cache_read_input_tokens,
      cacheCreation: result.usage.cache_creation_input_tokens,
      source: "call",
    });
    // Without it (transcripts recorded before it existed): one model, no subagent, the billed per-model figures are the main thread's usage.
    const old = summarizeTranscript({ ...loop, records: loop.records.filter((record) => record.kind !== "call") });
    expect(old.tokens).toEqual({ ...summary.tokens, source: "billed", models: Object.keys(result.modelUsage) });
    expect(summary.mainThreadTokens).toBeUndefined();
    expect(summary.costUsd).toBe(dollars(result.total_cost_usd));
    expect(summary.turns).toBe(result.num_turns);
  });

  it("sums the assistant lines' tokens (once per message id) when the run has no result", () => {
    const cut = { ...loop, records: loop.records.filter((record) => record.kind !== "call" && !(record.kind === "in" && JSON.parse(record.text).type === "result")) };
    const usageById = new Map(messages(loop, "in").flatMap(({ message }) => (message.type === "assistant" ? [[message.message.id, message.message.usage]] : [])));
    const summary = summarizeTranscript(cut);
    expect(summary.tokens.source).toBe("assistant");
    expect(summary.tokens.input).toBe([...usageById.values()].reduce((sum, usage) => sum + usage.input_tokens, 0));
    expect(summary.costUsd).toBeUndefined();
  });

  it("finds no difference between a transcript and itself, and real differences between CLI versions", () => {
    expect(isEmptyDiff(diffTranscripts(loop, loop))).toBe(true);
    const old = loadTranscript(join(ROOT, "2.1.142", "tool-loop.jsonl"));
    const diff = diffTranscripts(loop, old);
    expect(diff.controlRequests?.after.filter((key) => key === "control_request/mcp_message/initialize")).toHaveLength(2);
    expect(diff.removedFields["system/init"]).toEqual(expect.arrayContaining(["capabilities"]));
    // The versions are named once; a version string in a line is no change of its own.
    expect(diff.cliVersions).toEqual({ before: "2.1.330", after: "2.1.142" });
    expect(diff.valueChanges.find((change) => change.path.endsWith("claude_code_version") || change.path.endsWith("clientInfo.version"))).toBeUndefined();
    // Both versions were given the pinned id (claude-sonnet-4-6), so the model is the one thing that did not move.
    expect(diff.valueChanges.find((change) => change.key === "system/init" && change.path === "model")).toBeUndefined();
  });

  it("diffs normalised: ids, timestamps, session ids and ports do not count, a changed tool argument does", () => {
    const volatile = rewritten(loop, volatileRewrite);
    expect(JSON.stringify(volatile.records)).not.toBe(JSON.stringify(loop.records));
    expect(isEmptyDiff(diffTranscripts(loop, volatile))).toBe(true);

    const otherTerm = rewritten(loop, (text) => volatileRewrite(text).replaceAll("grain", "oats"));
    const diff = diffTranscripts(loop, otherTerm);
    expect(diff.addedFields).toEqual({});
    expect(diff.removedFields).toEqual({});
    expect(diff.controlRequests).toBeUndefined();
    expect(diff.valueChanges).toContainEqual(expect.objectContaining({ key: "assistant", occurrence: 1, path: "message.content[0].input.term", before: '"grain"', after: '"oats"' }));
    expect(diff.valueChanges).toContainEqual(
      expect.objectContaining({ key: "control_request/mcp_message/tools/call", path: "request.message.params.arguments.term", before: '"grain"', after: '"oats"' }),
    );
    // Every reported value is about the term, nothing about ids or times.
    for (const change of diff.valueChanges) expect(change.before).toContain("grain");
  });
});

describe("the reader's record check (format-check.ts, no zod) against the zod schemas (format.ts)", () => {
  const zodCheck = (value: unknown) => {
    const kind = (value as { kind?: unknown } | null)?.kind;
    const parsed = (kind === "outcome" ? outcomeRecordSchema : transcriptRecordSchema).safeParse(value);
    return parsed.success ? { success: true, data: parsed.data } : { success: false };
  };
  const plainCheck = (value: unknown) => {
    const kind = (value as { kind?: unknown } | null)?.kind;
    const checked = kind === "outcome" ? checkOutcomeRecord(value) : checkRecord(value);
    return checked.success ? { success: true, data: checked.data } : { success: false };
  };
  // The same verdict and the same data, key order included (records are written back out as JSON).
  const expectSame = (value: unknown) => {
    const [zod, plain] = [zodCheck(value), plainCheck(value)];
    expect(plain.success, JSON.stringify(value).slice(0, 300)).toBe(zod.success);
    expect(JSON.stringify(plain.data)).toBe(JSON.stringify(zod.data));
  };

  it("accepts every record of every fixture as the schemas do", () => {
    let records = 0;
    for (const version of readdirSync(ROOT).filter((name) => /^\d/.test(name))) {
      for (const file of readdirSync(join(ROOT, version)).filter((name) => name.endsWith(".jsonl"))) {
        for (const line of readFileSync(join(ROOT, version, file), "utf8").split("\n").filter(Boolean)) {
          expectSame(JSON.parse(line));
          records += 1;
        }
      }
    }
    expect(records).toBeGreaterThan(1_000);
  });

  it("fills in the same defaults and refuses the same malformed records", () => {
    const header = { kind: "header", format: TRANSCRIPT_FORMAT, library: "l", cliPath: "p", cliVersion: "2.1.330", args: ["-p"], envNames: [], cwd: "/x", startedAt: "now", extra: { kept: true } };
    const call = { kind: "call", t: 1, ending: "kept for reuse", usage: { inputTokens: 3, other: 1 }, process: { launch: "l1", call: 2, more: "x" }, requests: [] };
    const cases: unknown[] = [
      header,
      { ...header, scenario: "text" },
      { ...header, scenario: 1 },
      { ...header, format: "other/1" },
      { ...header, args: ["-p", 2] },
      { ...header, envNames: undefined },
      { kind: "in", text: "x" },
      { kind: "out", t: 1.5, text: "x", extra: 1 },
      { kind: "dropped", t: "1", text: "x" },
      { kind: "stderr", t: 1 },
      { kind: "exit", t: 2, exitCode: null, signal: "SIGTERM" },
      { kind: "exit", t: 2, exitCode: 0 },
      { kind: "exit", t: 2, exitCode: "0", signal: null },
      call,
      { ...call, usage: null, costUsd: 0.5 },
      { ...call, usage: undefined, process: undefined },
      { kind: "call", t: 1, ending: "aborted" },
      { ...call, usage: { inputTokens: "3" } },
      { ...call, usage: [] },
      { ...call, costUsd: "1" },
      { ...call, process: { launch: "l1" } },
      { ...call, ending: undefined },
      { kind: "outcome", scenario: "text", outcome: { text: "hi" } },
      { kind: "outcome", scenario: "text", outcome: [] },
      { kind: "outcome", outcome: {} },
      { kind: "note", text: "x" },
      { text: "x" },
      [],
      null,
      "header",
    ];
    for (const value of cases) expectSame(value);
  });

  it("checks a session's records as the schemas do", () => {
    const turn = { kind: "turn", t: 1, turn: 1, input: "hi", history: "native", process: { pid: 10, launch: "l1", call: 1, source: "cold" } };
    const end = { kind: "turn_end", t: 2, turn: 1, outcome: "ok", durationMs: 5, stopReason: "natural", usage: { inputTokens: 3, outputTokens: 1, other: 1 }, costUsd: 0.1, toolCalls: [] };
    const cases: unknown[] = [
      turn,
      { ...turn, process: undefined },
      { ...turn, process: { launch: "l1", call: 2 } },
      { ...turn, process: { pid: "10", launch: "l1", call: 1 } },
      { ...turn, process: { pid: 10, call: 1 } },
      { ...turn, history: "flattened" },
      { ...turn, input: 3 },
      { ...turn, turn: "1" },
      end,
      { ...end, usage: { inputTokens: 3 } },
      { ...end, usage: { inputTokens: "3" } },
      { ...end, usage: null },
      { ...end, outcome: "failed", usage: undefined, costUsd: undefined, error: { name: "CliCrashError", code: "cli_crashed", message: "killed", more: 1 } },
      { ...end, error: { name: "E", message: "m" } },
      { ...end, outcome: "crashed" },
      { ...end, durationMs: undefined },
      { ...end, costUsd: null },
      { kind: "interrupt", t: 3, turn: 2 },
      { kind: "interrupt", t: 3 },
      { kind: "session_end", t: 4, turns: 2, extra: true },
      { kind: "session_end", t: 4 },
    ];
    for (const value of cases) expectSame(value);
    // Both accept and refuse them alike, and refuse some of them (not a vacuous agreement).
    expect(cases.filter((value) => plainCheck(value).success)).toHaveLength(8);
  });
});

describe("a transcript that cannot be read", () => {
  it("is a TranscriptFileError naming the path and the reason, not a raw ENOENT", async () => {
    const dir = tempDir("missing");
    const absent = join(dir, "absent.jsonl");
    expect(() => loadTranscript(absent)).toThrow(TranscriptFileError);
    try {
      loadTranscript(absent);
    } catch (error) {
      expect(error).toMatchObject({ name: "TranscriptFileError", code: "invalid_input", path: absent, reason: "missing" });
      expect((error as Error).message).toMatch(/^No transcript at .*absent\.jsonl: there is no such file\./);
    }
    await expect(readTranscriptRecords(absent).next()).rejects.toMatchObject({ name: "TranscriptFileError", reason: "missing" });
    expect(() => loadTranscript(dir)).toThrow(expect.objectContaining({ reason: "not a file" }));
  });
});
