/**
 * `createKtxLlmRuntime` of `ktx-claude-code/ai-sdk`: the core factory (src/factory.ts) plus the anthropic
 * backend, `AiSdkKtxLlmRuntime` over `@ai-sdk/anthropic`. It lives behind its own entry point so the core
 * install needs neither `ai` nor `@ai-sdk/anthropic` (optional peers). claude-code gets `ClaudeCodeRuntime`,
 * anthropic `AiSdkKtxLlmRuntime`; every other backend is refused, never replaced by another one.
 */
import { createAnthropic } from "@ai-sdk/anthropic";
import type { LanguageModel } from "ai";
import { type KtxLlmConfig, resolvePromptCaching, resolveRoleModel } from "../config/schema.js";
import type { ClaudeCodeRuntime } from "../claude-code/runtime.js";
import {
  type ClaudeCodeRuntimeFromConfigOptions as CoreFactoryOptions,
  UnsupportedLlmBackendError,
  claudeCodeRuntimeFor,
  prepareKtxLlmConfig,
} from "../factory.js";
import type { ModelRole } from "../runtime/types.js";
import { AiSdkKtxLlmRuntime, type AiSdkKtxLlmRuntimeOptions } from "./runtime.js";

/** The claude-code runtime's options, plus the AI SDK runtime's (`getModel`, `repairToolCall`, `maxRetries`: anthropic only; `telemetry`: both). */
export interface CreateKtxLlmRuntimeOptions extends CoreFactoryOptions, Pick<AiSdkKtxLlmRuntimeOptions, "repairToolCall" | "maxRetries"> {
  /**
   * anthropic only: the model for a role (KTX's provider). Default: `createAnthropic` with `apiEndpoint`
   * when given (`<baseUrl>/v1`), else `llm.provider.anthropic` (`api_key`, `base_url`; the AI SDK reads
   * `ANTHROPIC_API_KEY` when no key is set), and the model of `llm.models`.
   */
  getModel?(role: ModelRole): LanguageModel;
}

export type KtxLlmRuntime = ClaudeCodeRuntime | AiSdkKtxLlmRuntime;

/**
 * Creates the runtime for `config` (a parsed `KtxLlmConfig`, ktx.yaml text or object, or the llm
 * block; anything not yet parsed is parsed with `parseKtxLlmConfig`).
 */
export function createKtxLlmRuntime(config: KtxLlmConfig | string | unknown, options: CreateKtxLlmRuntimeOptions): KtxLlmRuntime {
  const prepared = prepareKtxLlmConfig(config, options);
  const { backend, parsed, logger } = prepared;
  switch (backend) {
    case "claude-code": {
      const { getModel, repairToolCall, maxRetries, ...runtimeOptions } = options;
      const unused = Object.entries({ getModel, repairToolCall, maxRetries }).filter(([, value]) => value !== undefined);
      if (unused.length > 0) {
        const names = unused.map(([name]) => name).join(", ");
        logger.warn(unused.length === 1 ? `${names} is an AI SDK option; the claude-code backend ignores it.` : `${names} are AI SDK options; the claude-code backend ignores them.`);
      }
      return claudeCodeRuntimeFor(prepared, runtimeOptions);
    }
    case "anthropic": {
      const ignored = CLAUDE_CODE_ONLY_OPTIONS.filter((name) => options[name] !== undefined);
      if (ignored.length > 0) logger.warn(`${ignored.join(", ")} ${ignored.length === 1 ? "is a claude-code option; the anthropic backend ignores it" : "are claude-code options; the anthropic backend ignores them"}.`);
      const getModel = options.getModel ?? anthropicModels(parsed, options.apiEndpoint);
      return new AiSdkKtxLlmRuntime({
        getModel,
        backend,
        promptCaching: resolvePromptCaching(parsed),
        repairToolCall: options.repairToolCall,
        telemetry: options.telemetry ?? options.experimentalTelemetry,
        maxRetries: options.maxRetries,
        timeoutMs: options.timeoutMs,
        toolTimeoutMs: options.toolTimeoutMs,
        logger,
      });
    }
    default:
      throw new UnsupportedLlmBackendError(backend);
  }
}

const CLAUDE_CODE_ONLY_OPTIONS = [
  "cliPath",
  "modelAliases",
  "allowUnverifiedCli",
  "env",
  "disableNonessentialTraffic",
  "idleTimeoutMs",
  "maxLineBytes",
  "maxConcurrentRuns",
  "transcript",
  "warm",
  "reuse",
  "passEnv",
  "requireSubscription",
  "rateLimit",
  "rateLimitGovernor",
  "onEvent",
  "includePartialMessages",
  "apiRetryBudgetMs",
  "thinking",
  "wire",
] as const satisfies ReadonlyArray<keyof CreateKtxLlmRuntimeOptions>;

/**
 * `createAnthropic` with the configured credentials; an explicit `apiEndpoint` (tests, recording) takes
 * precedence, exactly as it does for the claude-code runtime (`<baseUrl>/v1`, its key).
 */
function anthropicModels(config: KtxLlmConfig, endpoint: CreateKtxLlmRuntimeOptions["apiEndpoint"]): (role: ModelRole) => LanguageModel {
  const credentials = config.provider.anthropic;
  const anthropic = createAnthropic(
    endpoint
      ? { baseURL: `${endpoint.baseUrl.replace(/\/+$/, "")}/v1`, apiKey: endpoint.apiKey }
      : {
          ...(credentials?.api_key ? { apiKey: credentials.api_key } : {}),
          ...(credentials?.base_url ? { baseURL: credentials.base_url } : {}),
        },
  );
  return (role) => anthropic(resolveRoleModel(config, role)!);
}
