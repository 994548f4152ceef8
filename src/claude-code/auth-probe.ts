/**
 * Checks that the local Claude Code session can answer: one isolated one-turn call. Host-discovered
 * slash commands, skills and agents in `init` do not fail it; a missing session does, even when
 * `ANTHROPIC_API_KEY` is set (the scrub removes it, so the CLI reports "Not logged in").
 */
import { ClaudeCodeAuthError, ClaudeCodeError } from "../errors/index.js";
import type { Logger } from "../session/logger.js";
import type { ApiEndpoint, Env } from "../transport/env.js";
import { ClaudeCodeRuntime } from "./runtime.js";

export interface AuthProbeOptions {
  projectDir: string;
  model: string;
  cliPath?: string;
  allowUnverifiedCli?: boolean;
  env?: Env;
  apiEndpoint?: ApiEndpoint;
  timeoutMs?: number;
  signal?: AbortSignal;
  logger?: Logger;
}

export type AuthProbeResult =
  | { ok: true; model: string; cliVersion: string; cliPath: string }
  | { ok: false; message: string; error: ClaudeCodeError };

export const AUTH_FIX =
  "Authenticate Claude Code locally with the Claude Code CLI, then rerun (run `claude` once and log in).";

export async function runClaudeCodeAuthProbe(options: AuthProbeOptions): Promise<AuthProbeResult> {
  const { projectDir, model, signal, timeoutMs, ...rest } = options;
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
        : `The Claude Code check failed: ${error.message}`;
    return { ok: false, message, error };
  }
}
