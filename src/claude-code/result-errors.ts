/**
 * Turns a failed `result` into a typed error. The CLI reports "Not logged in" and API failures as
 * `subtype: "success"` with `is_error: true` and `terminal_reason: "api_error"`, so `subtype` alone
 * is never trusted.
 */
import { ClaudeCodeApiError, ClaudeCodeAuthError, ClaudeCodeError, StructuredOutputError, type ErrorDetails } from "../errors/index.js";
import type { AssistantMessage, ResultMessage } from "../protocol/messages.js";
import { usageLimitFromResult } from "../limits/from-result.js";

/** A run the CLI ended with an error that is neither auth nor API (execution error, budget in USD, …). */
export class RunFailedError extends ClaudeCodeError {
  override readonly code = "run_failed";
  constructor(
    message: string,
    readonly subtype: string,
    readonly terminalReason: string | undefined,
    details: ErrorDetails = {},
  ) {
    super(message, details);
  }
}

const AUTH_TEXT = /not logged in|please run \/login|invalid api key|oauth token (has )?(expired|revoked)|authentication_error|invalid x-api-key|invalid bearer token/i;

export function assistantText(message: AssistantMessage): string {
  return message.message.content
    .filter((block) => block.type === "text")
    .map((block) => String((block as { text?: unknown }).text ?? ""))
    .join("");
}

export function isAuthFailure(result: ResultMessage, errorLines: readonly AssistantMessage[]): boolean {
  if (result.api_error_status === 401) return true;
  if (errorLines.some((line) => line.error === "authentication_failed")) return true;
  const texts = [result.result ?? "", ...(result.errors ?? []).map(String), ...errorLines.map(assistantText)];
  return texts.some((text) => AUTH_TEXT.test(text));
}

function describe(result: ResultMessage, errorLines: readonly AssistantMessage[]): string {
  const parts = [
    ...(result.errors ?? []).map((error) => (typeof error === "string" ? error : JSON.stringify(error))),
    ...errorLines.map(assistantText),
    result.result ?? "",
  ].filter((text) => text.length > 0);
  return [...new Set(parts)].join("; ").slice(0, 2_000) || "no detail given";
}

/**
 * The error for a result that is an error, or undefined when it is a success. `errorLines` are the
 * synthetic assistant lines the CLI writes for API failures (`error`/`is_api_error_message`).
 */
export function resultError(result: ResultMessage, errorLines: readonly AssistantMessage[], details: ErrorDetails = {}): ClaudeCodeError | undefined {
  const failed = result.is_error === true || result.subtype !== "success";
  if (!failed) return undefined;
  // A subscription usage limit (with its reset time) is its own error, never a generic API error.
  const usageLimit = usageLimitFromResult(result, errorLines, details);
  if (usageLimit) return usageLimit;
  const detail = describe(result, errorLines);
  if (isAuthFailure(result, errorLines)) return new ClaudeCodeAuthError(detail, details);
  if (result.subtype === "error_max_structured_output_retries" || result.terminal_reason === "structured_output_retry_exhausted") {
    return new StructuredOutputError(
      `The model did not produce output matching the schema within the CLI's retries: ${detail}. Simplify the schema or make the prompt state the expected shape.`,
      result,
      [],
      details,
    );
  }
  if (result.terminal_reason === "api_error" || result.api_error_status != null || errorLines.length > 0) {
    const status = result.api_error_status ?? errorLines.find((line) => line.api_error_status != null)?.api_error_status ?? undefined;
    return new ClaudeCodeApiError(
      `The Anthropic API failed${status ? ` with status ${status}` : ""} after the CLI's own retries: ${detail}. ` +
        `Retry later; for 429/529 lower maxConcurrentRuns or wait for your usage limit to reset.`,
      status ?? undefined,
      result.terminal_reason ?? undefined,
      details,
    );
  }
  return new RunFailedError(
    `The Claude Code run ended with ${result.subtype}${result.terminal_reason ? ` (${result.terminal_reason})` : ""}: ${detail}.`,
    result.subtype,
    result.terminal_reason ?? undefined,
    details,
  );
}
