import { describe, expect, it } from "vitest";
import { ClaudeCodeApiError, ClaudeCodeAuthError } from "../../src/errors/index.js";
import type { AssistantMessage, ResultMessage } from "../../src/protocol/messages.js";
import { RunFailedError, resultError } from "../../src/claude-code/result-errors.js";

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

  it("maps other error subtypes to RunFailedError naming subtype and terminal reason", () => {
    const error = resultError(result({ subtype: "error_during_execution", is_error: true, terminal_reason: "aborted_tools", errors: ["boom"] }), []);
    expect(error).toBeInstanceOf(RunFailedError);
    expect(error!.message).toMatch(/error_during_execution \(aborted_tools\): boom/);
  });
});
