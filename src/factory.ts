/**
 * `createClaudeCodeRuntimeFromConfig`: the claude-code runtime for a KTX `llm` configuration. anthropic
 * needs the AI SDK, so it is built by `createKtxLlmRuntime` of `ktx-claude-code/ai-sdk` (src/ai-sdk/factory.ts,
 * on top of this one; it picks either backend) and refused here with a message saying so. The two have
 * distinct names because they behave differently (issue 39). Every other
 * backend is refused with `UnsupportedLlmBackendError`. A backend is never replaced by another one (seed
 * 000: no silent fallback), and nothing here reads credentials for a backend other than the configured one.
 */
import { ClaudeCodeError } from "./errors/index.js";
import type { KtxLlmBackend, KtxLlmConfig } from "./config/schema.js";
import { KtxLlmConfigError, parseKtxLlmConfig } from "./config/parse.js";
import { claudeCodeConfigWarnings } from "./config/warnings.js";
import { type Logger, silentLogger } from "./session/logger.js";
import { ClaudeCodeRuntime, type ClaudeCodeRuntimeOptions } from "./claude-code/runtime.js";
import type { ExperimentalTelemetry } from "./runtime/spans.js";

/** The configured backend is one this factory does not construct; nothing else was used in its place. */
export class UnsupportedLlmBackendError extends ClaudeCodeError {
  override readonly code = "unsupported_llm_backend";
  constructor(readonly backend: KtxLlmBackend | string) {
    super(
      backend === "none"
        ? `llm.provider.backend is "none": LLM features are turned off for this project, so there is no runtime to create. ` +
            `Set llm.provider.backend to claude-code (your local Claude Code session) or anthropic in ktx.yaml.`
        : backend === "anthropic"
          ? `llm.provider.backend is "anthropic": createClaudeCodeRuntimeFromConfig from "ktx-claude-code" builds the claude-code backend only, and no other backend is used in its place. ` +
              `The anthropic backend runs on the AI SDK: import { createKtxLlmRuntime } from "ktx-claude-code/ai-sdk" (install its optional peers ai and @ai-sdk/anthropic), ` +
              `or set llm.provider.backend: claude-code in ktx.yaml.`
          : backend === "codex"
            ? `llm.provider.backend is "codex": this package serves the claude-code and anthropic backends, and no other backend is used in its place. ` +
              `Keep KTX's own codex runtime for this project (KTX builds it itself), or set llm.provider.backend: claude-code in ktx.yaml ` +
              `to run KTX through your local Claude Code session (models: sonnet, opus, haiku or claude-* ids).`
            : `This package does not construct the "${backend}" backend: it serves claude-code and anthropic, and no other backend is used in its place. ` +
              `Build it with KTX's own provider (new AiSdkKtxLlmRuntime({ getModel, backend: "${backend}" }) from "ktx-claude-code/ai-sdk"), or set llm.provider.backend to claude-code or anthropic.`,
    );
  }
}

/** The claude-code runtime's options, plus `telemetry` (the AI SDK's settings, as for the anthropic backend). */
export interface ClaudeCodeRuntimeFromConfigOptions extends Omit<ClaudeCodeRuntimeOptions, "models" | "logger" | "telemetry"> {
  /** The KTX project directory (the claude-code runtime's cwd). */
  projectDir: string;
  /** The AI SDK's `TelemetrySettings` (or KTX's factory of them): the same spans as `experimentalTelemetry`. */
  telemetry?: ExperimentalTelemetry;
  /** Receives the configuration warnings (claude-code: each ignored `llm.promptCaching` field). */
  logger?: Logger;
}

/** A configuration parsed for a factory: its warnings logged, the default model required where a backend needs one. */
export interface PreparedKtxLlmConfig {
  parsed: KtxLlmConfig;
  backend: KtxLlmBackend;
  logger: Logger;
  defaultModel: string | undefined;
}

/** @internal Shared with `ktx-claude-code/ai-sdk`'s factory. */
export function prepareKtxLlmConfig(config: KtxLlmConfig | string | unknown, options: { env?: ClaudeCodeRuntimeFromConfigOptions["env"]; logger?: Logger | undefined }): PreparedKtxLlmConfig {
  const parsed = parseKtxLlmConfig(config, { env: options.env });
  const logger = options.logger ?? silentLogger;
  const backend = parsed.provider.backend;
  for (const warning of parsed.warnings) logger.warn(`${warning.message} ${warning.fix}`);
  const defaultModel = parsed.models.default;
  if ((backend === "claude-code" || backend === "anthropic") && defaultModel === undefined) {
    throw new KtxLlmConfigError([{ path: "llm.models.default", message: `required when llm.provider.backend is ${backend} (the model of every role without its own)` }], parsed.source);
  }
  return { parsed, backend, logger, defaultModel };
}

/** @internal The claude-code runtime for a prepared configuration (shared with `ktx-claude-code/ai-sdk`). */
export function claudeCodeRuntimeFor({ parsed, logger, defaultModel }: PreparedKtxLlmConfig, options: ClaudeCodeRuntimeFromConfigOptions): ClaudeCodeRuntime {
  for (const warning of claudeCodeConfigWarnings(parsed)) logger.warn(`${warning.message} ${warning.fix}`);
  const { telemetry, ...runtimeOptions } = options;
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

/**
 * Creates the claude-code runtime for `config` (a parsed `KtxLlmConfig`, ktx.yaml text or object, or the llm
 * block; anything not yet parsed is parsed with `parseKtxLlmConfig`). Any other backend throws
 * `UnsupportedLlmBackendError`; for anthropic, use `createKtxLlmRuntime` from `ktx-claude-code/ai-sdk`.
 */
export function createClaudeCodeRuntimeFromConfig(config: KtxLlmConfig | string | unknown, options: ClaudeCodeRuntimeFromConfigOptions): ClaudeCodeRuntime {
  const prepared = prepareKtxLlmConfig(config, options);
  if (prepared.backend !== "claude-code") throw new UnsupportedLlmBackendError(prepared.backend);
  return claudeCodeRuntimeFor(prepared, options);
}
