/** Shared set-up of test/ktx/backend-*.test.ts: KTX's hook over the scripted stand-in CLI, and a KTX-shaped governor. */
import { type CreateClaudeCodeRuntimeDeps, createClaudeCodeRuntime } from "../../src/index.js";
import type { RateLimitGovernorPort, RateLimitSignal } from "../../src/limits/governor.js";
import type { ScriptedCli, ScriptedCliInvocation } from "../../src/testing/index.js";
import { TEST_PASS_ENV, tempDir, testEnv } from "../support.js";

/** The runtime as KTX's factory builds it (`{ projectDir, modelSlots, env, rateLimitGovernor }`), on the stand-in. */
export function ktxRuntime(cli: ScriptedCli, deps: Partial<CreateClaudeCodeRuntimeDeps> = {}) {
  return createClaudeCodeRuntime({
    projectDir: tempDir("project"),
    modelSlots: { default: "sonnet", triage: "haiku" },
    env: testEnv(),
    rateLimitGovernor: recordingGovernor().governor,
    cliPath: cli.path,
    // No wire option: the helper's stand-in runs without the interceptor on its own (network.interceptor "standIn").
    passEnv: TEST_PASS_ENV,
    warm: false,
    reuse: false,
    ...deps,
  });
}

/** KTX's governor shape, recording what it is asked and told; `hold` makes `waitForReady` wait for the caller's abort. */
export function recordingGovernor(options: { hold?: boolean } = {}) {
  const waits: Array<AbortSignal | undefined> = [];
  const reports: RateLimitSignal[] = [];
  const governor: RateLimitGovernorPort = {
    waitForReady: (signal) => {
      waits.push(signal);
      if (!options.hold) return Promise.resolve();
      return new Promise<void>((_resolve, reject) => signal?.addEventListener("abort", () => reject(signal.reason), { once: true }));
    },
    report: (signal) => void reports.push(signal),
    maxRetryAttempts: () => 3,
  };
  return { governor, waits, reports };
}

/** The host's answers to the stand-in's own control requests (permission questions, MCP calls), in order. */
export function answers(invocation: ScriptedCliInvocation): Array<Record<string, unknown>> {
  return invocation.received.filter((line) => line.type === "control_response").map((line) => line.response?.response ?? line.response);
}

export const PROVIDER_ENV = {
  ANTHROPIC_API_KEY: "sk-ant-must-not-reach-the-cli",
  ANTHROPIC_AUTH_TOKEN: "token-must-not-reach-the-cli",
  ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
  AWS_PROFILE: "prod",
  CLAUDE_CODE_USE_VERTEX: "1",
  CLAUDE_CODE_USE_BEDROCK: "1",
};
