import { describe, expect, it } from "vitest";
import { ClaudeCodeApiError, ClaudeCodeAuthError } from "../../src/errors/index.js";
import type { AssistantMessage, ResultMessage } from "../../src/protocol/messages.js";
import { RunFailedError, cliDiagnostics, resultError } from "../../src/claude-code/run/result-errors.js";

const result = (fields: Partial<ResultMessage>): ResultMessage => ({ type: "result", subtype: "success", ...fields });
const errorLine = (text: string, error?: string): AssistantMessage => ({
  type: "assistant",
  message: { id: "x", model: "<synthetic>", content: [{ type: "text", text }] },
  parent_tool_use_id: null,
  ...(error ? { error } : {}),
});

describe("resultError", () => {
  it("is undefined for a real success", () => {
    expect(resultError(result({ is_error: false, result: "hi" }), [])).toBeUndefined();
  });

  it("maps the CLI's 'Not logged in' success-with-is_error to an auth error", () => {
    const error = resultError(result({ is_error: true, terminal_reason: "api_error", result: "Not logged in · Please run /login" }), [
      errorLine("Not logged in · Please run /login", "authentication_failed"),
    ]);
    expect(error).toBeInstanceOf(ClaudeCodeAuthError);
    expect(error!.message).toMatch(/Authenticate Claude Code locally/);
  });

  it("maps an API failure to ClaudeCodeApiError with the status", () => {
    const error = resultError(result({ is_error: true, terminal_reason: "api_error", api_error_status: 529, result: "Overloaded" }), []);
    expect(error).toBeInstanceOf(ClaudeCodeApiError);
    expect((error as ClaudeCodeApiError).status).toBe(529);
    expect(error!.message).toContain("529");
  });

  it("reads the status from an older CLI's `API Error: NNN` text (2.0.x, 2.1.100 write no api_error_status)", () => {
    // 2.0.55: a 404 with no status field; the advice must be about the model, not the network.
    const error = resultError(result({ is_error: true, result: 'API Error: 404 {"type":"error","error":{"type":"not_found_error","message":"model: x"}}' }), [
      errorLine('API Error: 404 {"type":"error","error":{"type":"not_found_error","message":"model: x"}}'),
    ]);
    expect(error).toBeInstanceOf(ClaudeCodeApiError);
    expect((error as ClaudeCodeApiError).status).toBe(404);
    expect(error!.message).toMatch(/The model was not found/);
    expect(error!.message).not.toMatch(/check the network/);
    const throttled = resultError(result({ is_error: true, result: "API Error: 429 {}" }), [errorLine("API Error: 429 {}")]);
    expect((throttled as ClaudeCodeApiError).status).toBe(429);
    const worded = resultError(result({ is_error: true, result: "API Error: Request rejected (429) · rate limited" }), [errorLine("API Error: Request rejected (429) · rate limited")]);
    expect((worded as ClaudeCodeApiError).status).toBe(429);
  });

  it("puts the cause before the stack traces of non-fatal errors", () => {
    const trace = (n: number) => `Error: ENOENT: no such file ${n}\n    at Object.openSync (node:fs:1)\n    at load (file:///cli.js:2:3)`;
    const error = resultError(result({ subtype: "error_during_execution", is_error: true, errors: [trace(1), trace(2), "Request was aborted."] }), []);
    expect(error).toBeInstanceOf(RunFailedError);
    expect(error!.message).toMatch(/^The Claude Code run ended with error_during_execution: Request was aborted\.; 2 non-fatal errors before it, first: Error: ENOENT: no such file 1\.$/);
    expect(error!.message).not.toContain("    at ");
  });

  it("maps other error subtypes to RunFailedError naming subtype and terminal reason", () => {
    const error = resultError(result({ subtype: "error_during_execution", is_error: true, terminal_reason: "aborted_tools", errors: ["boom"] }), []);
    expect(error).toBeInstanceOf(RunFailedError);
    expect(error!.message).toMatch(/error_during_execution \(aborted_tools\): boom/);
  });
});

describe("API failure advice", () => {
  const apiFailure = (status: number | undefined, text: string, stderrTail?: string) =>
    resultError(result({ is_error: true, terminal_reason: "api_error", ...(status === undefined ? {} : { api_error_status: status }), result: text }), [], { stderrTail }) as ClaudeCodeApiError;

  it("gives each status its own fix, never the same advice twice", () => {
    const advice = new Map<number | undefined, string>();
    for (const status of [400, 403, 404, 413, 429, 500, 529, undefined]) {
      const error = apiFailure(status, "failed.");
      expect(error).toBeInstanceOf(ClaudeCodeApiError);
      expect(error.message).not.toMatch(/\.\./);
      advice.set(status, error.message.slice(error.message.indexOf("failed.") + "failed.".length).trim());
    }
    expect(new Set(advice.values()).size).toBe(advice.size);
    expect(advice.get(400)).toMatch(/rejected the request as invalid \(400\)/);
    expect(advice.get(404)).toMatch(/model was not found/);
    expect(advice.get(429)).toMatch(/Rate limited \(429\): lower maxConcurrentRuns/);
    expect(advice.get(529)).toMatch(/overloaded \(529\)/);
    expect(advice.get(500)).toMatch(/failed on its side \(500\)/);
    expect(advice.get(undefined)).toMatch(/No HTTP status .* network/);
    // Only statuses the CLI retries say so.
    expect(apiFailure(404, "x").message).not.toContain("own retries");
    expect(apiFailure(529, "x").message).toContain("after the CLI's own retries");
  });

  it("uses the CLI's [claude-code:…] stderr diagnostic when present (a mistyped model: 404 plus unrecognized_model)", () => {
    const text = "There's an issue with the selected model (claude-sonet-5). It may not exist or you may not have access to it. Run --model to pick a different model.";
    const error = apiFailure(404, text, 'some log line\n[claude-code:unrecognized_model] {"model":"claude-sonet-5","query_source":"sdk"}\n');
    expect(error.message).toContain('The CLI reported [claude-code:unrecognized_model] {"model":"claude-sonet-5","query_source":"sdk"}.');
    expect(error.message).toMatch(/pick a different model\. The CLI reported/);
    expect(error.message).not.toMatch(/\.\.|Retry later|maxConcurrentRuns/);
    expect(cliDiagnostics("[claude-code:a_b] x\nno\n[claude-code:c]")).toEqual([
      { code: "a_b", detail: "x" },
      { code: "c", detail: "" },
    ]);
  });
});
