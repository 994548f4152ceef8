/**
 * `createClaudeCodeRuntime`: KTX's factory hook (`createLocalKtxLlmRuntimeFromConfig(config, { …,
 * createClaudeCodeRuntime })`), taking KTX's hook deps exactly as KTX passes them, so no field of
 * them (its rate-limit governor included) can be lost between KTX and the runtime.
 */
import { InvalidInputError, UnsupportedKtxDepError } from "./errors/index.js";
import { ClaudeCodeRuntime, type ClaudeCodeRuntimeOptions } from "./claude-code/runtime.js";
import type { RateLimitGovernorPort } from "./limits/governor.js";

/**
 * What KTX's factory passes its `createClaudeCodeRuntime` hook (KTX's backend constructor deps):
 * `{ projectDir, modelSlots, env, rateLimitGovernor }`, plus the Agent SDK `query` seam of KTX's own tests.
 * Optional fields take `undefined` too: KTX passes what it has, under `exactOptionalPropertyTypes` as well.
 */
export interface KtxClaudeCodeRuntimeDeps {
  /** The KTX project directory; checked when a call starts (`ProjectDirNotFoundError`), never here. */
  projectDir: string;
  /** `llm.models` as KTX resolved it: role -> alias or `claude-*` id; `default` is required. */
  modelSlots: { default: string } & Partial<Record<string, string>>;
  /**
   * KTX's own backend's test seam (the Agent SDK's `query`). This runtime has no Agent SDK, so it is
   * refused (`UnsupportedKtxDepError`), never ignored; tests use `createScriptedCli` as `cliPath`.
   */
  query?: unknown;
  /** The CLI's base environment (default `process.env`); always scrubbed (docs/environment.md). */
  env?: NodeJS.ProcessEnv | undefined;
  /** KTX's governor (built from `ingest.rateLimit` and `workUnits.maxConcurrency`): every call waits for it and reports to it. */
  rateLimitGovernor?: RateLimitGovernorPort | undefined;
}

/** KTX's deps plus this library's own runtime options (everything but `models`, which is `modelSlots`). */
export type CreateClaudeCodeRuntimeDeps = KtxClaudeCodeRuntimeDeps & Omit<ClaudeCodeRuntimeOptions, keyof KtxClaudeCodeRuntimeDeps | "models">;

export { UnsupportedKtxDepError };

/**
 * KTX's hook: `createLocalKtxLlmRuntimeFromConfig(config, { projectDir, env, rateLimitGovernor,
 * createClaudeCodeRuntime })`. Every KTX dep is used; `query` is refused with `UnsupportedKtxDepError`.
 */
export function createClaudeCodeRuntime(deps: CreateClaudeCodeRuntimeDeps): ClaudeCodeRuntime {
  if (typeof deps !== "object" || deps === null) throw new InvalidInputError("createClaudeCodeRuntime needs KTX's deps ({ projectDir, modelSlots, … }).");
  const { modelSlots, query, ...options } = deps;
  if (query !== undefined) {
    throw UnsupportedKtxDepError.query();
  }
  if (typeof modelSlots !== "object" || modelSlots === null) {
    throw new InvalidInputError("createClaudeCodeRuntime needs modelSlots with a default model ({ default: \"sonnet\", … }), as KTX passes them.");
  }
  // Undefined slots (a role KTX left unset) are dropped: the role falls back to `default`.
  const models = Object.fromEntries(Object.entries(modelSlots).filter(([, value]) => value !== undefined)) as ClaudeCodeRuntimeOptions["models"];
  return new ClaudeCodeRuntime({ ...options, models });
}
