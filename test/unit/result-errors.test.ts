import { describe, expect, it } from "vitest";
import { ClaudeCodeApiError, ClaudeCodeAuthError, IsolationError, PromptTooLongError } from "../../src/errors/index.js";
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

  it("maps the interceptor's 403, which the CLI reports as an auth failure, to IsolationError, not a login problem", () => {
    // 2.1.330's result for a request the interceptor refused on a session the call was not told of.
    const text = "Failed to authenticate. API Error: 403 ktx-claude-code interceptor: the request differs from what the library built for the call";
    const error = resultError(result({ is_error: true, api_error_status: 403, result: text }), [errorLine(text, "authentication_failed")]);
    expect(error).toBeInstanceOf(IsolationError);
    expect((error as IsolationError).differences).toEqual(["wire: the request differs from what the library built for the call"]);
    expect(error!.message).not.toMatch(/login/);
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
    // Retries are claimed only when the CLI reported them (system/api_retry), never with retries off.
    expect(apiFailure(404, "x").message).not.toMatch(/retr(y|ied)/);
    const overloaded = (apiRetries: number | undefined) =>
      resultError(result({ is_error: true, terminal_reason: "api_error", api_error_status: 529, result: "Overloaded." }), [], {}, { apiRetries })!.message;
    expect(overloaded(2)).toMatch(/^The Anthropic API failed with status 529 after 2 retries by the CLI: Overloaded\. .*\(the CLI already retried 2 times with backoff\)/);
    expect(overloaded(0)).not.toMatch(/already retried|retries by the CLI/);
    expect(overloaded(0)).toMatch(/the CLI did not retry it: CLAUDE_CODE_MAX_RETRIES may be 0/);
    expect(overloaded(undefined)).not.toMatch(/already retried|did not retry/);
  });

  it("a prompt the CLI refuses locally gets advice to shorten it, not to check the network (2.1.330, a 4 MiB prompt)", () => {
    // The lines the pinned CLI writes for it: no request sent, no status, terminal_reason blocking_limit.
    const refusal = resultError(
      result({ is_error: true, terminal_reason: "blocking_limit", api_error_status: null, result: "Prompt is too long", num_turns: 1 }),
      [errorLine("Prompt is too long", "invalid_request")],
    );
    expect(refusal).toBeInstanceOf(PromptTooLongError);
    expect(refusal).toBeInstanceOf(ClaudeCodeApiError);
    expect((refusal as PromptTooLongError).status).toBeUndefined();
    expect((refusal as PromptTooLongError).terminalReason).toBe("blocking_limit");
    expect(refusal!.message).toBe(
      "The prompt is too long for the model's context window: the CLI refused it before sending any request (Prompt is too long, terminal_reason blocking_limit). " +
        "Shorten the prompt, the system prompt or the tool results (or split the input over several calls); a retry as it is fails the same way.",
    );
    expect(refusal!.message).not.toMatch(/network|proxy|apiEndpoint|Anthropic API failed/);
    // The API's own refusal (a 400 with the same words) keeps its status and class, with the same fix.
    const remote = apiFailure(400, "prompt is too long: 250000 tokens > 200000 maximum");
    expect(remote.constructor).toBe(ClaudeCodeApiError);
    expect(remote.status).toBe(400);
    expect(remote.message).toMatch(/The API refused the prompt as too long\. Shorten the prompt/);
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
