/**
 * Debugging an interrupted run from its transcript (issue 33, item 13): a tool call that got no result
 * is shown in `summary` and `trace`, not left out, and the interrupt's own cause ("Request was
 * aborted.", which the CLI may list with a stack trace like its non-fatal errors) comes first. The
 * capture is written here, line by line, in the shapes the pinned CLI writes (fixtures/protocol-2.1.330).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { renderSummary } from "../../src/cli/summary-text.js";
import { resultError } from "../../src/claude-code/run/result-errors.js";
import type { ResultMessage } from "../../src/protocol/messages.js";
import { renderTranscript, summarizeTranscript, traceTranscript } from "../../src/transcripts/inspect.js";
import { loadTranscript } from "../../src/transcripts/reader.js";
import { cleanup, tempDir } from "../support.js";

afterEach(cleanup);

const trace = (n: number) => `Error: ENOENT: no such file or directory, open '/home/u/.claude/x${n}'\n    at Object.openSync (node:fs:573:18)\n    at load (file:///cli.js:1:2)`;
const ERRORS = [trace(1), trace(2), trace(3), "Error: Request was aborted.\n    at Stream.abort (file:///cli.js:9:9)\n    at AbortSignal.x (file:///cli.js:9:10)", trace(4), trace(5), trace(6), "[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=tool_use"];

const assistant = (id: string, content: unknown[]) => ({ type: "assistant", message: { id, model: "claude-sonnet-4-6", role: "assistant", content, usage: { input_tokens: 10, output_tokens: 5 } }, parent_tool_use_id: null, session_id: "s" });
const LINES = [
  { type: "system", subtype: "init", cwd: "/tmp/p", session_id: "s", tools: ["mcp__ktx__lookup", "mcp__ktx__count"], mcp_servers: [{ name: "ktx", status: "connected" }], model: "claude-sonnet-4-6", claude_code_version: "2.1.330" },
  assistant("msg_1", [{ type: "tool_use", id: "toolu_answered", name: "mcp__ktx__lookup", input: { term: "grain" } }]),
  { type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_answered", content: "grain: one row" }] }, parent_tool_use_id: null, session_id: "s" },
  assistant("msg_2", [{ type: "tool_use", id: "toolu_pending", name: "mcp__ktx__count", input: { table: "orders" } }]),
  { type: "result", subtype: "error_during_execution", is_error: true, terminal_reason: "aborted_tools", num_turns: 2, errors: ERRORS, session_id: "s" },
];

function capture(): string {
  const file = join(tempDir("interrupted"), "run.ndjson");
  writeFileSync(file, `${LINES.map((line) => JSON.stringify(line)).join("\n")}\n`);
  return file;
}

describe("an interrupted loop's transcript", () => {
  it("summary names the interrupt's cause first and counts the tool call that got no result", () => {
    const summary = summarizeTranscript(loadTranscript(capture()));
    expect(summary.toolCalls).toEqual([
      { name: "mcp__ktx__lookup", isError: false },
      { name: "mcp__ktx__count", isError: false, noResult: true },
    ]);
    const text = renderSummary(summary);
    expect(text).toMatch(/ {2}ended: INTERRUPTED: Request was aborted\.; \[ede_diagnostic\] .*; terminal reason aborted_tools; 6 non-fatal errors with stack traces, first: Error: ENOENT/);
    expect(text).toContain("  tool calls: 2 (1 without a result): mcp__ktx__lookup ×1, mcp__ktx__count ×1 (1 without a result)");
  });

  it("show gives the same cause first", () => {
    expect(renderTranscript(loadTranscript(capture())).join("\n")).toMatch(/INTERRUPTED: Request was aborted\./);
  });

  it("trace shows the tool call without a result as a span up to the process's last line", () => {
    const events = traceTranscript(loadTranscript(capture())).traceEvents;
    const tools = events.filter((event) => event.cat === "tool");
    expect(tools.map((event) => event.name)).toEqual(["tool mcp__ktx__lookup", "tool mcp__ktx__count (no result)"]);
    expect(tools[1]!.args).toEqual({ toolUseId: "toolu_pending", noResult: true });
  });

  it("the runtime's error names the same cause first", () => {
    const error = resultError(LINES.at(-1) as unknown as ResultMessage, []);
    expect(error!.message).toMatch(/^The Claude Code run ended with error_during_execution \(aborted_tools\): Request was aborted\.; \[ede_diagnostic\] [^;]*; 6 non-fatal errors before it, first: Error: ENOENT/);
  });
});
