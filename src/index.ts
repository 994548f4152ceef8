export type {
  KtxAgentRunnerPort,
  KtxCallMetrics,
  KtxGenerateObjectPortInput,
  KtxGenerateTextPortInput,
  KtxLlmRuntimePort,
  KtxModelRole,
  KtxRunLoopParams,
  KtxRunLoopResult,
  LlmTokenUsage,
  RunLoopMetrics,
} from "./port/ktx-port.js";
export { isAbortError } from "./port/ktx-port.js";
export { ClaudeCodeRuntime, type ClaudeCodeRuntimeOptions, type ClaudeCodeRuntimeOnHostOptions, type Routed } from "./claude-code/runtime.js";
export { ClaudeCodeHost, type ClaudeCodeHostOptions } from "./claude-code/host.js";
export { CALLER_OPTIONS } from "./claude-code/host-options.js";
export {
  ClaudeCodeSession,
  SessionBusyError,
  SessionClosedError,
  type SessionEvent,
  type SessionOptions,
  type SessionTurn,
  type SessionTurnRecord,
  type TurnResult,
} from "./sessions/session.js";
export type { PoolStats, ReuseOptions, SessionPoolStats, WarmOptions } from "./claude-code/pool/process-pool.js";
export type { Capabilities } from "./claude-code/capabilities.js";
export { type ThinkingOption, type ThinkingSetting, MIN_THINKING_BUDGET } from "./claude-code/thinking.js";
export { type CanUseTool, type PermissionDecision, type PermissionMode, type PermissionRequest, type PermissionsOption, PERMISSION_MODES } from "./claude-code/permissions.js";
export { PortRuntime, type CloseOptions } from "./runtime/port-runtime.js";
export type { ExperimentalTelemetry, TelemetrySettings } from "./runtime/spans.js";
export { runClaudeCodeAuthProbe, runClaudeCodeAuthProbeDetailed, type AuthProbeOptions, type AuthProbeResult, type AuthProbeDetails } from "./claude-code/auth-probe.js";
export { mapStopReason, type RunLoopStopReason } from "./claude-code/run/stop-reason.js";
export { buildCliArgs, checkInit } from "./claude-code/checks/isolation.js";
export { RunFailedError } from "./claude-code/run/result-errors.js";
export type * from "./runtime/types.js";
export { MODEL_ROLES } from "./runtime/types.js";
export {
  type KtxRuntimeToolDescriptor,
  type KtxRuntimeToolSet,
  type KtxToolOutput,
  defineKtxTool,
  normalizeToolOutput,
  ktxToolId,
} from "./mcp/tools.js";
export { fromAiSdkTools, type AiSdkToolLike, type AiSdkToolSetLike } from "./mcp/ai-sdk-tools.js";
export { createKtxClaudeCodeEnv, ALLOWED_ENV_NAMES, ALLOWED_ENV_PREFIXES, SCRUBBED_ENV_NAMES, SCRUBBED_ENV_PREFIXES, type ApiEndpoint } from "./transport/env.js";
export type { TelemetryOptions } from "./transport/telemetry.js";
export { resolveCli, locateBundledCli, bundledCliVersion, type ResolvedCli } from "./binary/locate.js";
export { VERIFIED_CLI_VERSIONS, NEWEST_VERIFIED_CLI_VERSION, PINNED_CLI_VERSION, type CliVersionFacts } from "./binary/versions.js";
export * from "./errors/index.js";
export type { Logger } from "./session/logger.js";
export { createAgentRunnerPort, type AgentRunnerPort } from "./port/agent-runner-port.js";
export {
  DEFAULT_PROMPT_CACHING,
  KTX_LLM_BACKENDS,
  KTX_PROMPT_CACHE_TTLS,
  KTX_YAML,
  KtxLlmConfigError,
  claudeCodeConfigWarnings,
  findKtxProjectDir,
  ktxLlmConfigJsonSchema,
  ktxLlmConfigSchema,
  loadKtxLlmConfig,
  parseKtxLlmConfig,
  promptCachingWarnings,
  resolvePromptCaching,
  resolveRoleModel,
  unusedProviderWarnings,
  type KtxConfigIssue,
  type KtxConfigWarning,
  type KtxLlmBackend,
  type KtxLlmConfig,
  type KtxLlmConfigInput,
  type KtxPromptCacheTtl,
  type KtxPromptCachingConfig,
} from "./config/index.js";
export { createClaudeCodeRuntime, UnsupportedKtxDepError, type CreateClaudeCodeRuntimeDeps, type KtxClaudeCodeRuntimeDeps } from "./ktx-hook.js";
export { createClaudeCodeRuntimeFromConfig, UnsupportedLlmBackendError, type ClaudeCodeRuntimeFromConfigOptions } from "./factory.js";
export { collectStatus, type StatusReport, type StatusOptions } from "./cli/status-probe.js";
export {
  KTX_WORK_UNIT_FAILURE_MODES,
  KtxConfigReferenceError,
  defaultKtxIngest,
  type KtxIngestConfig,
  type KtxIngestRateLimitConfig,
  type KtxIngestWorkUnitsConfig,
  type KtxLlmBlock,
  type KtxWorkUnitFailureMode,
  type ParseOptions,
} from "./config/index.js";
export {
  KTX_CLAUDE_CODE_MODEL_ALIASES,
  UnsupportedModelError,
  UnknownModelError,
  modelAliasTable,
  resolveModelValue,
  resolveRoleModels,
  type ResolvedModels,
  type ResolvedRoleModel,
} from "./claude-code/models.js";
export {
  UsageLimitError,
  ApiRetryBudgetError,
  type UsageLimitWindow,
  RateLimitGovernor,
  processRateLimitGovernor,
  type RateLimitGovernorPort,
  type RateLimitSignal,
  type RateLimitProvider,
  type GovernorSnapshot,
  type RateLimitOptions,
  type RateLimitRetryOptions,
  DEFAULT_RATE_LIMIT,
  DEFAULT_TOOL_TIMEOUT_MS,
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_API_RETRY_BUDGET_MS,
  describeEvent,
  type KtxProgressEvent,
  type ProgressListener,
  type GovernorEvent,
  type CallEvent,
} from "./limits/index.js";
