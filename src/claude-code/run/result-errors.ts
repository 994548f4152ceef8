/**
 * Turns a failed `result` into a typed error. The CLI reports "Not logged in" and API failures as
 * `subtype: "success"` with `is_error: true` and `terminal_reason: "api_error"`, so `subtype` alone
 * is never trusted.
 */
import { ClaudeCodeApiError, ClaudeCodeAuthError, ClaudeCodeError, IsolationError, LOGIN_COMMAND, PromptTooLongError, StructuredOutputError, type ErrorDetails } from "../../errors/index.js";
import type { AssistantMessage, ResultMessage } from "../../protocol/messages.js";
import { usageLimitFromResult } from "../../limits/from-result.js";
import { resultCauses } from "../../protocol/result-causes.js";

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
  if (apiErrorStatus(result, errorLines) === 401) return true;
  if (errorLines.some((line) => line.error === "authentication_failed")) return true;
  const texts = [result.result ?? "", ...(result.errors ?? []).map(String), ...errorLines.map(assistantText)];
  return texts.some((text) => AUTH_TEXT.test(text));
}


function describe(result: ResultMessage, errorLines: readonly AssistantMessage[]): string {
  const errors = (result.errors ?? []).map((error) => (typeof error === "string" ? error : JSON.stringify(error)));
  // The cause first (e.g. "Request was aborted.", even when listed with a stack trace); stack traces of
  // non-fatal errors after it, by their first line only.
  const { causes, traces } = resultCauses(errors);
  const parts = [
    ...causes,
    ...errorLines.map(assistantText),
    result.result ?? "",
    ...(traces.length ? [`${traces.length} non-fatal error${traces.length === 1 ? "" : "s"} before it, first: ${traces[0]!.split("\n")[0]}`] : []),
  ].filter((text) => text.length > 0);
  return [...new Set(parts)].join("; ").slice(0, 2_000) || "no detail given";
}

/** The HTTP status of an API failure: the CLI's field, else the `API Error: NNN` text older versions (2.0.x, 2.1.100) write. */
export function apiErrorStatus(result: ResultMessage, errorLines: readonly AssistantMessage[]): number | undefined {
  const field = result.api_error_status ?? errorLines.find((line) => line.api_error_status != null)?.api_error_status;
  if (field != null) return field;
  for (const text of [...errorLines.map(assistantText), result.result ?? "", ...(result.errors ?? []).map(String)]) {
    // `API Error: 404 {…}` (2.0.x, 2.1.100) and `API Error: Request rejected (429) · …`.
    const match = /\bAPI Error: (?:(\d{3})\b|[^(\n]{0,80}\((\d{3})\))/.exec(text);
    if (match) return Number(match[1] ?? match[2]);
  }
  return undefined;
}

/** One `[claude-code:<code>] <detail>` line the CLI writes on stderr, e.g. `[claude-code:unrecognized_model] {"model":"x"}`. */
export interface CliDiagnostic {
  code: string;
  detail: string;
}

export function cliDiagnostics(stderr: string | undefined): CliDiagnostic[] {
  return [...(stderr ?? "").matchAll(/\[claude-code:([A-Za-z0-9_.-]+)\][ \t]*([^\n]*)/g)].map((match) => ({ code: match[1]!, detail: match[2]!.trim() }));
}

/** What the run saw besides the result: whether the CLI retried (so a message claims only what happened). */
export interface RunEvidence {
  /** `system/api_retry` messages seen; undefined when not followed. */
  apiRetries?: number;
}

/**
 * A prompt over the model's context window. The CLI refuses it itself, before any request: a result
 * with `is_error`, `terminal_reason: "blocking_limit"`, no `api_error_status`, `duration_api_ms: 0`, the
 * text "Prompt is too long" and a synthetic assistant line with `error: "invalid_request"` (2.1.330, a
 * 4 MiB prompt); the API's own refusal is a 400 with the same words (or `terminal_reason: "prompt_too_long"`).
 */
function isPromptTooLong(result: ResultMessage, detail: string): boolean {
  return result.terminal_reason === "blocking_limit" || result.terminal_reason === "prompt_too_long" || /\bprompt is too long\b/i.test(detail);
}

const SHORTEN = "Shorten the prompt, the system prompt or the tool results (or split the input over several calls); a retry as it is fails the same way.";

/** What to do about an API failure, by status and cause: each has its own fix. */
export function apiAdvice(status: number | undefined, diagnostics: readonly CliDiagnostic[] = [], apiRetries?: number): string {
  if (status === 404 || diagnostics.some((d) => d.code === "unrecognized_model")) {
    return "The model was not found, or this account cannot use it: check the configured model (an alias such as sonnet, opus or haiku, or a full model id); `ktx-claude-code doctor` tries each configured model.";
  }
  if (status === 400) return "The API rejected the request as invalid (400): check the model options and the size of the prompt and output schema; `ktx-claude-code transcript show` on the transcript shows what was sent.";
  if (status === 401) return `The credentials were refused (401): log in again with \`${LOGIN_COMMAND}\` (or fix the apiEndpoint key).`;
  if (status === 403) return "This account is not allowed to do this (403): check its access to the model, or configure another model.";
  if (status === 413) return "The request is too large (413): shorten the prompt, the system prompt or the tool results.";
  if (status === 429) return "Rate limited (429): lower maxConcurrentRuns so fewer calls run at once, and retry once the limit resets.";
  if (status === 529) {
    const retried = apiRetries === undefined ? "" : apiRetries > 0 ? ` (the CLI already retried ${apiRetries} time${apiRetries === 1 ? "" : "s"} with backoff)` : " (the CLI did not retry it: CLAUDE_CODE_MAX_RETRIES may be 0)";
    return `The API is overloaded (529): retry later${retried}, or lower maxConcurrentRuns to add less load.`;
  }
  if (status !== undefined && status >= 500) return `The API failed on its side (${status}): retry later; if it persists, check https://status.anthropic.com.`;
  if (status === undefined) return "No HTTP status was reported (a connection or stream failure): check the network, any proxy (HTTPS_PROXY) or the apiEndpoint baseUrl, then retry.";
  if (status === 408) return "The request timed out (408): retry; if it keeps happening, check the network or any proxy (HTTPS_PROXY).";
  return "Check the message above, then retry.";
}

const withoutPeriod = (text: string) => text.replace(/[.\s]+$/, "");

/**
 * The error for a result that is an error, or undefined when it is a success. `errorLines` are the
 * synthetic assistant lines the CLI writes for API failures (`error`/`is_api_error_message`).
 */
export function resultError(result: ResultMessage, errorLines: readonly AssistantMessage[], details: ErrorDetails = {}, evidence: RunEvidence = {}): ClaudeCodeError | undefined {
  const failed = result.is_error === true || result.subtype !== "success";
  if (!failed) return undefined;
  // A subscription usage limit (with its reset time) is its own error, never a generic API error.
  const usageLimit = usageLimitFromResult(result, errorLines, details);
  if (usageLimit) return usageLimit;
  const detail = describe(result, errorLines);
  // The runtime's interceptor refused a request (a 403 the CLI reports as an auth failure). Where the call was
  // told what differed it fails with that IsolationError first; this is the refusal it was not told of.
  const refused = /ktx-claude-code interceptor: ([^"\n]*)/.exec(detail);
  if (refused) return new IsolationError([`wire: ${withoutPeriod(refused[1]!)}`], "The runtime's interceptor refused a request of this call and nothing of it was forwarded; the transcript's call record names what it saw (docs/isolation.md, \"The wire check\").");
  if (isAuthFailure(result, errorLines)) return new ClaudeCodeAuthError(detail, details);
  if (result.subtype === "error_max_structured_output_retries" || result.terminal_reason === "structured_output_retry_exhausted") {
    return new StructuredOutputError(
      `The model did not produce output matching the schema within the CLI's retries: ${detail}. Simplify the schema or make the prompt state the expected shape.`,
      result,
      [],
      details,
    );
  }
  const status = apiErrorStatus(result, errorLines);
  // No HTTP status: the CLI refused the prompt itself and sent no request (no network involved, nothing billed).
  if (status === undefined && isPromptTooLong(result, detail)) {
    const reason = result.terminal_reason ? `, terminal_reason ${result.terminal_reason}` : "";
    return new PromptTooLongError(
      `The prompt is too long for the model's context window: the CLI refused it before sending any request (${withoutPeriod(detail)}${reason}). ${SHORTEN}`,
      result.terminal_reason ?? undefined,
      details,
    );
  }
  if (result.terminal_reason === "api_error" || result.api_error_status != null || errorLines.length > 0) {
    const diagnostics = cliDiagnostics(details.stderrTail);
    // The CLI's own diagnostic names the cause more precisely than the API's text.
    const reported = diagnostics.length ? ` The CLI reported ${diagnostics.map((d) => `[claude-code:${d.code}]${d.detail ? ` ${d.detail}` : ""}`).join("; ")}.` : "";
    // Only what was seen: retries are claimed when the CLI reported them (system/api_retry).
    const retries = evidence.apiRetries ?? 0;
    const retried = retries > 0 ? ` after ${retries} retr${retries === 1 ? "y" : "ies"} by the CLI` : "";
    return new ClaudeCodeApiError(
      `The Anthropic API failed${status ? ` with status ${status}` : ""}${retried}: ${withoutPeriod(detail)}.${reported} ${isPromptTooLong(result, detail) ? `The API refused the prompt as too long. ${SHORTEN}` : apiAdvice(status, diagnostics, evidence.apiRetries)}`,
      status,
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
