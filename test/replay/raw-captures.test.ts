/**
 * Raw stream-json captures (what `claude -p --output-format stream-json --verbose` writes to stdout)
 * read by show, summary, diff and import: every capture in fixtures/protocol-2.1.330/, two of them
 * recorded live from the pinned CLI by scripts/record-raw-capture.mjs.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { diffTranscripts, isEmptyDiff, renderTimeline, renderTranscript, summarizeRecords, summarizeTranscript } from "../../src/transcripts/inspect.js";
import { unknownTypes } from "../../src/transcripts/inspect/text.js";
import { importCapture, isRawCapture, loadTranscript, streamTranscript } from "../../src/transcripts/reader.js";
import { cleanup, tempDir } from "../support.js";

const DIR = join(import.meta.dirname, "../../fixtures/protocol-2.1.330");
const captures = readdirSync(DIR).filter((name) => name.endsWith(".ndjson"));
const path = (name: string) => join(DIR, name);
const lines = (name: string) =>
  readFileSync(path(name), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));

afterEach(cleanup);

describe("every raw capture", () => {
  it("is at least the nine protocol captures plus the live ones", () => {
    expect(captures.length).toBeGreaterThanOrEqual(14);
    expect(captures).toEqual(expect.arrayContaining(["live_subagent.stdout.ndjson", "live_subagent_partial.stdout.ndjson", "t01_text_basic.stdout.ndjson"]));
  });

  for (const name of captures) {
    it(`${name}: shows and summarises every line, no literal undefined, tokens from the result`, async () => {
      const transcript = loadTranscript(path(name));
      expect(isRawCapture(transcript.header)).toBe(true);
      expect(transcript.header.cliVersion).toBe("2.1.330");
      const shown = renderTranscript(transcript);
      const streamed: string[] = [];
      for await (const line of renderTimeline(path(name), streamTranscript(path(name)))) streamed.push(line);
      expect(streamed).toEqual(shown);
      const text = shown.join("\n");
      expect(text).not.toMatch(/undefined/);
      expect(text).toContain("a raw stream-json capture");
      // Every line of the capture is located by its line number (partial deltas are gathered).
      const messages = lines(name);
      const located = new Set([...text.matchAll(/^ +line (\d+) {2}·· /gm)].map((match) => Number(match[1])));
      messages.forEach((message, index) => {
        if (message.type !== "stream_event") expect(located.has(index + 1), `line ${index + 1} (${message.type})`).toBe(true);
      });
      // Tool results are named after their tool_use, the subagent's included.
      expect(text).not.toMatch(/tool_result toolu_/);

      const summary = await summarizeRecords(path(name), streamTranscript(path(name)));
      expect(JSON.stringify(summary)).not.toContain("undefined");
      expect(summary).toMatchObject({ source: "stream-json", cliVersion: "2.1.330", notes: [] });
      for (const call of summary.toolCalls) expect(call.name).not.toMatch(/unknown tool|\?/);
      const results = messages.filter((message) => message.type === "result");
      if (results.length > 0) {
        // Tokens over the scope the cost covers: each result's own per-model usage, every model summed
        // (a failed request bills no model: then the result's usage, all zeros).
        const billed = results.flatMap((result) => Object.values(result.model_usage_since_last_result ?? {}) as any[]);
        expect(summary.tokens.source).toBe(billed.length > 0 ? "billed" : "result");
        const sum = (field: string) => billed.reduce((total, model) => total + model[field], 0);
        expect(summary.tokens).toMatchObject({ input: sum("inputTokens"), output: sum("outputTokens"), cacheRead: sum("cacheReadInputTokens"), cacheCreation: sum("cacheCreationInputTokens") });
        // One process: total_cost_usd is a running total, so the last one is the run's cost.
        expect(summary.costUsd).toBeCloseTo(results.at(-1).total_cost_usd, 9);
        expect(summary.costUsd).toBeCloseTo(sum("costUSD"), 9);
      }
    });
  }

  it("all diff against each other without error; each against itself finds nothing", () => {
    const loaded = captures.map((name) => loadTranscript(path(name)));
    for (const a of loaded) {
      expect(isEmptyDiff(diffTranscripts(a, a))).toBe(true);
      for (const b of loaded) if (a !== b) expect(isEmptyDiff(diffTranscripts(a, b)), `${a.path} vs ${b.path}`).toBe(false);
    }
  });
});

describe("display problems of raw captures", () => {
  it("takes final token counts from the result, not the assistant line's early snapshot", () => {
    const summary = summarizeTranscript(loadTranscript(path("t01_text_basic.stdout.ndjson")));
    const assistant = lines("t01_text_basic.stdout.ndjson").find((message) => message.type === "assistant");
    expect(assistant.message.usage.output_tokens).toBe(1);
    expect(summary.tokens).toMatchObject({ input: 10, output: 5, source: "billed" });
    const shown = renderTranscript(loadTranscript(path("t01_text_basic.stdout.ndjson")));
    expect(shown.find((line) => line.startsWith("── turn 1"))).not.toMatch(/out 1/);
    expect(shown).toContainEqual(expect.stringContaining("tokens in 10, out 5, cache read 0, cache write 0; cost $"));
  });

  it("names a subagent's tool calls and labels its activity as the subagent's (live capture)", () => {
    const transcript = loadTranscript(path("live_subagent.stdout.ndjson"));
    const summary = summarizeTranscript(transcript);
    expect(summary.toolCalls).toEqual([
      { name: "Read", isError: false, subagent: true },
      { name: "Agent", isError: false },
    ]);
    expect(summary.turns).toBe(2);
    expect(summary.subagentTurns).toBe(1);
    const shown = renderTranscript(transcript);
    expect(shown).toContainEqual(expect.stringMatching(/^── subagent turn 1 \(for Agent toolu_scripted_0_0\) · /));
    expect(shown).toContainEqual(expect.stringMatching(/·· \(subagent\) tool_use Read \{"file_path":/));
    expect(shown).toContainEqual(expect.stringMatching(/·· \(subagent\) tool_result Read ok "1\\tgrain: the level of detail of one row/));
    expect(shown).toContainEqual(expect.stringMatching(/·· tool_result Agent ok /));
  });

  it("flags an interrupted run with its cause, also when is_error is false, and takes its tokens from the per-model figures", () => {
    const transcript = loadTranscript(path("f_kill_midstream_SIGINT.stdout.ndjson"));
    const summary = summarizeTranscript(transcript);
    expect(summary.end).toMatchObject({ state: "interrupted", cause: expect.stringContaining("aborted_streaming") });
    // usage is all zeros on this result; model_usage_since_last_result has the spent tokens.
    expect(summary.tokens).toMatchObject({ input: 10, output: 3 });
    const shown = renderTranscript(transcript).join("\n");
    expect(shown).toMatch(/result error_during_execution INTERRUPTED turns=2 terminal=aborted_streaming/);
    // The cause comes before the result line's figures.
    expect(shown).toMatch(/INTERRUPTED: .*aborted_streaming.*\n.*result error_during_execution/);

    const notAnError = readFileSync(path("g1_interrupt_control_request.stdout.ndjson"), "utf8").replace('"is_error":true', '"is_error":false');
    const file = join(tempDir("capture"), "interrupted.ndjson");
    writeFileSync(file, notAnError);
    expect(summarizeTranscript(loadTranscript(file)).end?.state).toBe("interrupted");
    expect(renderTranscript(loadTranscript(file)).join("\n")).toMatch(/INTERRUPTED/);
  });

  it("flags failed runs with their cause first, and a turn-limit stop as the budget stop the runtime calls it", () => {
    const api = summarizeTranscript(loadTranscript(path("k_api_err400.stdout.ndjson")));
    expect(api.end).toMatchObject({ state: "failed", cause: expect.stringMatching(/^API Error: 400 fake invalid_request_error/) });
    expect(api.result).toMatchObject({ apiErrorStatus: 400 });
    // The synthetic API-error line is the CLI's report, not a model turn.
    expect(api.turns).toBe(0);
    expect(renderTranscript(loadTranscript(path("k_api_err400.stdout.ndjson"))).some((line) => line.startsWith("── turn"))).toBe(false);
    const turns = summarizeTranscript(loadTranscript(path("b2_maxturns2_loop.stdout.ndjson")));
    expect(turns.end).toMatchObject({ state: "budget", cause: expect.stringContaining("Reached maximum number of turns (2)") });
    expect(renderTranscript(loadTranscript(path("b2_maxturns2_loop.stdout.ndjson"))).join("\n")).toMatch(/BUDGET STOP \(turn limit reached\): Reached maximum number of turns \(2\).*\n.*result error_max_turns BUDGET STOP/);
    const dollarBudget = summarizeTranscript(loadTranscript(path("k_max_budget.stdout.ndjson")));
    expect(dollarBudget.end).toMatchObject({ state: "failed", cause: expect.stringContaining("Reached maximum budget") });
    // No float noise: the capture's 0.00014000000000000001 reads as 0.00014.
    expect(dollarBudget.costUsd).toBe(0.00014);
  });

  it("bills a subagent's tokens with the run: tokens match the per-model usage the cost is computed from", () => {
    const summary = summarizeTranscript(loadTranscript(path("live_subagent.stdout.ndjson")));
    const result = lines("live_subagent.stdout.ndjson").find((message) => message.type === "result");
    const billed = result.modelUsage["claude-sonnet-5-5"];
    // The main thread's usage alone is about half of it: the subagent's request is the rest.
    expect(result.usage.input_tokens).toBeLessThan(billed.inputTokens);
    expect(summary.tokens).toEqual({ input: billed.inputTokens, output: billed.outputTokens, cacheRead: billed.cacheReadInputTokens, cacheCreation: billed.cacheCreationInputTokens, source: "billed", models: ["claude-sonnet-5-5"] });
    expect(summary.mainThreadTokens).toMatchObject({ input: result.usage.input_tokens, output: result.usage.output_tokens });
    expect(summary.costUsd).toBe(billed.costUSD);
    expect(summary.durationMs).toBeNull();
    // A capture records no stderr: unknown, not 0 bytes (issue 39).
    expect(summary.stderrBytes).toBeNull();
  });

  it("reads the status of an older CLI's `API Error: NNN` text", () => {
    // 2.0.55 writes no api_error_status; the status is only in the text.
    const old = readFileSync(path("k_api_err400.stdout.ndjson"), "utf8").replaceAll('"api_error_status":400,', "").replaceAll("API Error: 400", "API Error: 404");
    const file = join(tempDir("capture"), "old.ndjson");
    writeFileSync(file, old);
    expect(old).not.toContain("api_error_status");
    const summary = summarizeTranscript(loadTranscript(file));
    expect(summary.result).toMatchObject({ apiErrorStatus: 404 });
    expect(renderTranscript(loadTranscript(file)).join("\n")).toMatch(/API ERROR status=404/);
  });

  it("shows partial-message text, gathered per content block", () => {
    for (const name of ["l1_partial_messages_text.stdout.ndjson", "live_subagent_partial.stdout.ndjson"]) {
      const messages = lines(name);
      const deltas = messages.filter((message) => message.type === "stream_event" && message.event.type === "content_block_delta" && message.event.delta.type === "text_delta");
      expect(deltas.length).toBeGreaterThan(0);
      const shown = renderTranscript(loadTranscript(path(name)));
      const partial = shown.filter((line) => / partial text /.test(line));
      expect(partial.length).toBeGreaterThan(0);
      // Together the gathered lines carry every delta.
      const count = partial.reduce((sum, line) => sum + Number(/\((\d+) deltas?\)$/.exec(line)![1]), 0);
      expect(count).toBe(deltas.length);
      // The first gathered line: the text deltas that follow each other from the first one on.
      const start = messages.indexOf(deltas[0]);
      const end = messages.findIndex((message, index) => index > start && !deltas.includes(message));
      const text = messages.slice(start, end === -1 ? undefined : end).map((d) => d.event.delta.text).join("");
      expect(partial[0]).toContain(JSON.stringify(text).slice(0, 40));
    }
    const final = renderTranscript(loadTranscript(path("live_subagent_partial.stdout.ndjson")));
    expect(final).toContainEqual(expect.stringMatching(/partial message_delta stop=end_turn out=\d+/));
  });

  it("reports a truncated last line and still shows the rest", async () => {
    const whole = readFileSync(path("t01_text_basic.stdout.ndjson"), "utf8").trimEnd();
    const cut = whole.slice(0, whole.length - 20);
    const file = join(tempDir("capture"), "cut.ndjson");
    writeFileSync(file, cut);
    const shown: string[] = [];
    for await (const line of renderTimeline(file, streamTranscript(file))) shown.push(line);
    const lastLine = whole.split("\n").length;
    expect(shown).toContainEqual(expect.stringContaining(`note: line ${lastLine} is cut short`));
    expect(shown).toContainEqual(expect.stringContaining("init model="));
    expect(shown).toContainEqual(expect.stringContaining('text "hello from fake"'));
    const summary = await summarizeRecords(file, streamTranscript(file));
    expect(summary.notes).toHaveLength(1);
    // The lines before the cut one are all read: the result comes just before it.
    expect(summary.result).toMatchObject({ subtype: "success" });
    expect(shown).toContainEqual(expect.stringContaining("·· result success"));
    expect(loadTranscript(file).records.at(-1)).toMatchObject({ kind: "note" });
  });

  it("imports a capture into the transcript format: same reading, no timing, a truncated line named", () => {
    const name = "live_subagent.stdout.ndjson";
    const imported = importCapture(path(name));
    const file = join(tempDir("capture"), "imported.jsonl");
    writeFileSync(file, `${imported.lines.join("\n")}\n`);
    const transcript = loadTranscript(file);
    expect(transcript.header).toMatchObject({ kind: "header", format: "ktx-claude-code-transcript/1", cliVersion: "2.1.330", importedFrom: path(name) });
    expect(transcript.records.filter((record) => record.kind === "in")).toHaveLength(lines(name).length);
    const { path: _a, ...fromImport } = summarizeTranscript(transcript);
    const { path: _b, ...fromCapture } = summarizeTranscript(loadTranscript(path(name)));
    expect(fromImport).toEqual(fromCapture);
    expect(isEmptyDiff(diffTranscripts(loadTranscript(path(name)), transcript))).toBe(true);
  });

  it("--type result shows the result alone, without the last turn's heading", () => {
    const shown = renderTranscript(loadTranscript(path("live_subagent.stdout.ndjson")), { types: ["result"] });
    expect(shown.filter((line) => !line.startsWith("#"))).toEqual([expect.stringMatching(/^ +line 13 {2}·· result success/), expect.stringMatching(/^ +tokens in /)]);
  });

  it("prints no tools= or mcp= an init line does not have, and keeps tool-result blocks apart", () => {
    const messages = lines("t01_text_basic.stdout.ndjson");
    const init = messages.find((message) => message.type === "system" && message.subtype === "init");
    const { tools: _tools, mcp_servers: _mcp, ...bare } = init;
    const result = { type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "first" }, { type: "text", text: "second" }] }] }, parent_tool_use_id: null };
    const file = join(tempDir("capture"), "bare.ndjson");
    writeFileSync(file, `${[JSON.stringify(bare), JSON.stringify(result)].join("\n")}\n`);
    const shown = renderTranscript(loadTranscript(file)).join("\n");
    expect(shown).toMatch(/init model=/);
    expect(shown).not.toMatch(/tools=|mcp=/);
    expect(shown).toContain('"first\\nsecond"');
  });

  it("numbers an imported file's lines as the capture's", () => {
    const name = "live_subagent.stdout.ndjson";
    const file = join(tempDir("capture"), "imported.jsonl");
    writeFileSync(file, `${importCapture(path(name)).lines.join("\n")}\n`);
    const located = (text: string) => [...text.matchAll(/^ +line (\d+) {2}·· (\S+)/gm)].map((match) => `${match[1]} ${match[2]}`);
    expect(located(renderTranscript(loadTranscript(file)).join("\n"))).toEqual(located(renderTranscript(loadTranscript(path(name))).join("\n")));
  });

  it("keeps every summary line within the documented width", async () => {
    const { renderSummary } = await import("../../src/cli/summary-text.js");
    const { LINE_WIDTH } = await import("../../src/transcripts/inspect/text.js");
    for (const name of captures) {
      for (const line of renderSummary(summarizeTranscript(loadTranscript(path(name)))).split("\n")) expect(line.length).toBeLessThanOrEqual(LINE_WIDTH + 20);
    }
  });

  it("rejects unknown --type values, accepts known types with any subtype", () => {
    expect(unknownTypes(["result", "system/init", "control_request/mcp_message/tools/call", "stderr", "stream_event"])).toEqual([]);
    expect(unknownTypes(["resutl", "assistant", "tool_call"])).toEqual(["resutl", "tool_call"]);
  });

  it("says what it expected when a file is neither a transcript nor a capture", () => {
    const file = join(tempDir("capture"), "notes.txt");
    writeFileSync(file, "hello\n");
    expect(() => loadTranscript(file)).toThrow(/neither a ktx-claude-code transcript .* nor a stream-json capture/);
  });

  it("does not take any JSON with a `type` key for a capture: the first line must be a CLI message type", () => {
    const file = join(tempDir("capture"), "package.json");
    writeFileSync(file, '{"name":"app","type":"module"}\n');
    expect(() => loadTranscript(file)).toThrow(/neither a ktx-claude-code transcript .* nor a stream-json capture \(one CLI message per line, the first of type system, assistant/);
    const capture = join(tempDir("capture"), "run.ndjson");
    writeFileSync(capture, '{"type":"keep_alive"}\n');
    expect(isRawCapture(loadTranscript(capture).header)).toBe(true);
  });
});
