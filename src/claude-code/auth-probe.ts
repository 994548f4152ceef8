/**
 * Checks that the local Claude Code session can answer: one isolated one-turn call. Host-discovered
 * slash commands, skills and agents in `init` do not fail it; a missing session does, even when
 * `ANTHROPIC_API_KEY` is set (the scrub removes it, so the CLI reports "Not logged in").
 */
import { AUTH_FIX, ClaudeCodeAuthError, ClaudeCodeError, UnsupportedKtxDepError } from "../errors/index.js";
import type { Logger } from "../session/logger.js";
import type { ApiEndpoint, Env } from "../transport/env.js";
import { UnsupportedModelError, modelHint, unsupportedModelText } from "./models.js";
import { ClaudeCodeRuntime } from "./runtime.js";

export interface AuthProbeOptions {
  projectDir: string;
  model: string;
  cliPath?: string;
  allowUnverifiedCli?: boolean;
  env?: Env;
  apiEndpoint?: ApiEndpoint;
  /**
   * The runtime's interceptor, as for every call (on by default on the first-party path; `false` turns it
   * off); a stand-in CLI of the testing helpers at `cliPath` runs without it (docs/isolation.md).
   */
  wire?: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
  logger?: Logger;
  /**
   * KTX's own probe's test seam (the Agent SDK's `query`). Refused with `UnsupportedKtxDepError` (the
   * probe rejects), as the hook refuses it: tests pass `cliPath: createScriptedCli(…).path` instead.
   */
  query?: unknown;
}

/** KTX's auth probe result, exactly: `{ ok: true }`, or `{ ok: false, message }` with the fix in the message. */
export type AuthProbeResult = { ok: true } | { ok: false; message: string };

/** The same verdict with what was learnt on the way (the model the CLI resolved, the CLI, the typed error). */
export type AuthProbeDetails =
  | { ok: true; model: string; cliVersion: string; cliPath: string }
  | { ok: false; message: string; error: ClaudeCodeError };

export { AUTH_FIX };

/** KTX's auth probe: one isolated one-turn call; resolves `{ ok }` or `{ ok, message }`, never rejects for a ClaudeCodeError. */
export async function runClaudeCodeAuthProbe(options: AuthProbeOptions): Promise<AuthProbeResult> {
  const details = await runClaudeCodeAuthProbeDetailed(options);
  return details.ok ? { ok: true } : { ok: false, message: details.message };
}

/** `runClaudeCodeAuthProbe` with the model, the CLI and the error (status, doctor, diagnostics). */
export async function runClaudeCodeAuthProbeDetailed(options: AuthProbeOptions): Promise<AuthProbeDetails> {
  const { projectDir, model, signal, timeoutMs, query, ...rest } = options;
  // A caller's mistake, not a verdict on the login: rejected, never folded into { ok: false }.
  if (query !== undefined) throw UnsupportedKtxDepError.query("runClaudeCodeAuthProbe");
  try {
    const runtime = new ClaudeCodeRuntime({ projectDir, models: { default: model }, timeoutMs: timeoutMs ?? 60_000, warm: false, reuse: false, ...rest });
    const cli = await runtime.cli();
    const result = await runtime.generateTextResult({ prompt: "Reply with the single word OK.", system: "You are a connectivity check. Reply with OK.", signal });
    return { ok: true, model: result.model, cliVersion: cli.version, cliPath: cli.path };
  } catch (error) {
    if (!ClaudeCodeError.isInstance(error)) throw error;
    const message =
      error instanceof ClaudeCodeAuthError
        ? `Claude Code is not logged in on this machine. ${AUTH_FIX}`
        : error instanceof UnsupportedModelError
          ? unsupportedModelMessage(error)
          : `The Claude Code check failed: ${error.message}`;
    return { ok: false, message, error };
  }
}

/** KTX's own probe's message, word for word; a near miss's hint (a provider prefix, capitals) after it. */
function unsupportedModelMessage(error: UnsupportedModelError): string {
  const hint = modelHint(error.value).trim();
  return `${unsupportedModelText(error.value)}${hint ? ` ${hint[0] === "(" ? hint.slice(1, -1) : hint}.` : ""}`;
}
