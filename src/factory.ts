/**
 * `createKtxLlmRuntime`: the runtime for a KTX `llm` configuration. claude-code gets
 * `ClaudeCodeRuntime`, anthropic gets `AiSdkKtxLlmRuntime`; every other backend is refused with
 * `UnsupportedLlmBackendError`. A backend is never replaced by another one (seed 000: no silent
 * fallback), and nothing here reads credentials for a backend other than the configured one.
 */
import { createAnthropic } from "@ai-sdk/anthropic";
import type { LanguageModel } from "ai";
import { ClaudeCodeError } from "./errors/index.js";
import { type KtxLlmBackend, type KtxLlmConfig, resolvePromptCaching, resolveRoleModel } from "./config/schema.js";
import { KtxLlmConfigError, parseKtxLlmConfig } from "./config/parse.js";
import { claudeCodeConfigWarnings } from "./config/warnings.js";
import { type Logger, silentLogger } from "./session/logger.js";
import { AiSdkKtxLlmRuntime, type AiSdkKtxLlmRuntimeOptions } from "./ai-sdk/runtime.js";
import { ClaudeCodeRuntime, type ClaudeCodeRuntimeOptions } from "./claude-code/runtime.js";
import type { ModelRole } from "./runtime/types.js";

/** The configured backend is one this factory does not construct; nothing else was used in its place. */
export class UnsupportedLlmBackendError extends ClaudeCodeError {
  override readonly code = "unsupported_llm_backend";
  constructor(readonly backend: KtxLlmBackend | string) {
    super(
      backend === "none"
        ? `llm.provider.backend is "none": LLM features are turned off for this project, so there is no runtime to create. ` +
            `Set llm.provider.backend to claude-code (your local Claude Code session) or anthropic in ktx.yaml.`
        : backend === "codex"
          ? `llm.provider.backend is "codex": this package serves the claude-code and anthropic backends, and no other backend is used in its place. ` +
            `Keep KTX's own codex runtime for this project (KTX builds it itself), or set llm.provider.backend: claude-code in ktx.yaml ` +
            `to run KTX through your local Claude Code session (models: sonnet, opus, haiku or claude-* ids).`
          : `createKtxLlmRuntime does not construct the "${backend}" backend: this package serves claude-code and anthropic, and no other backend is used in its place. ` +
            `Build it with KTX's own provider (new AiSdkKtxLlmRuntime({ getModel, backend: "${backend}" })), or set llm.provider.backend to claude-code or anthropic.`,
    );
  }
}

/** The claude-code runtime's options, plus the AI SDK runtime's (`repairToolCall`, `maxRetries`: anthropic only; `telemetry`: both). */
export interface CreateKtxLlmRuntimeOptions
  extends Omit<ClaudeCodeRuntimeOptions, "models" | "logger" | "timeoutMs" | "toolTimeoutMs" | "telemetry">,
    Pick<AiSdkKtxLlmRuntimeOptions, "repairToolCall" | "telemetry" | "maxRetries" | "timeoutMs" | "toolTimeoutMs"> {
  /** The KTX project directory (the claude-code runtime's cwd). */
  projectDir: string;
  /**
   * anthropic only: the model for a role (KTX's provider). Default: `createAnthropic` with `apiEndpoint`
   * when given (`<baseUrl>/v1`), else `llm.provider.anthropic` (`api_key`, `base_url`; the AI SDK reads
   * `ANTHROPIC_API_KEY` when no key is set), and the model of `llm.models`.
   */
  getModel?(role: ModelRole): LanguageModel;
  /** Receives the configuration warnings (claude-code: each ignored `llm.promptCaching` field). */
  logger?: Logger;
}

export type KtxLlmRuntime = ClaudeCodeRuntime | AiSdkKtxLlmRuntime;

/**
 * Creates the runtime for `config` (a parsed `KtxLlmConfig`, ktx.yaml text or object, or the llm
 * block; anything not yet parsed is parsed with `parseKtxLlmConfig`).
 */
export function createKtxLlmRuntime(config: KtxLlmConfig | string | unknown, options: CreateKtxLlmRuntimeOptions): KtxLlmRuntime {
  const parsed = parseKtxLlmConfig(config, { env: options.env });
  const logger = options.logger ?? silentLogger;
  const backend = parsed.provider.backend;
  for (const warning of parsed.warnings) logger.warn(`${warning.message} ${warning.fix}`);
  const defaultModel = parsed.models.default;
  if ((backend === "claude-code" || backend === "anthropic") && defaultModel === undefined) {
    throw new KtxLlmConfigError([{ path: "llm.models.default", message: `required when llm.provider.backend is ${backend} (the model of every role without its own)` }], parsed.source);
  }
  switch (backend) {
    case "claude-code": {
      for (const warning of claudeCodeConfigWarnings(parsed)) logger.warn(`${warning.message} ${warning.fix}`);
      const { getModel, repairToolCall, telemetry, maxRetries, ...runtimeOptions } = options;
      const unused = Object.entries({ getModel, repairToolCall, maxRetries }).filter(([, value]) => value !== undefined);
      if (unused.length > 0) {
        const names = unused.map(([name]) => name).join(", ");
        logger.warn(unused.length === 1 ? `${names} is an AI SDK option; the claude-code backend ignores it.` : `${names} are AI SDK options; the claude-code backend ignores them.`);
      }
      return new ClaudeCodeRuntime({
        ...runtimeOptions,
        // The AI SDK's telemetry settings give the same spans here (src/runtime/spans.ts).
        ...(telemetry !== undefined && runtimeOptions.experimentalTelemetry === undefined ? { experimentalTelemetry: telemetry } : {}),
        models: { ...parsed.models, default: defaultModel! },
        modelsSource: options.modelsSource ?? parsed.source ?? "the KTX llm configuration",
        // ktx.yaml's ingest.rateLimit paces the calls unless the caller brings its own settings or KTX's governor.
        ...(options.rateLimit === undefined && options.rateLimitGovernor === undefined ? { rateLimit: parsed.ingest.rateLimit } : {}),
        logger,
      });
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
