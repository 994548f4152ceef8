export {
  DEFAULT_PROMPT_CACHING,
  KTX_LLM_BACKENDS,
  KTX_PROMPT_CACHE_TTLS,
  KTX_WORK_UNIT_FAILURE_MODES,
  KTX_YAML_TOP_LEVEL_KEYS,
  PROMPT_CACHING_FIELDS,
  defaultKtxIngest,
  ktxLlmConfigSchema,
  ktxYamlLlmSchema,
  resolvePromptCaching,
  resolveRoleModel,
  type KtxConfigWarning,
  type KtxIngestConfig,
  type KtxIngestRateLimitConfig,
  type KtxIngestWorkUnitsConfig,
  type KtxLlmBackend,
  type KtxLlmBlock,
  type KtxLlmConfig,
  type KtxLlmConfigInput,
  type KtxPromptCacheTtl,
  type KtxPromptCachingConfig,
  type KtxPromptCachingInput,
  type KtxWorkUnitFailureMode,
} from "./schema.js";
export { KTX_YAML, KtxLlmConfigError, findKtxProjectDir, loadKtxLlmConfig, parseKtxLlmConfig, type KtxConfigIssue, type ParseOptions } from "./parse.js";
export { KtxConfigReferenceError, isConfigReference, resolveConfigReference, type ConfigEnv, type ReferenceOptions } from "./references.js";
export { claudeCodeConfigWarnings, promptCachingWarnings, unusedProviderWarnings } from "./warnings.js";
export { ktxLlmConfigJsonSchema, ktxLlmConfigJsonSchemaText, writeKtxLlmConfigJsonSchema } from "./json-schema.js";
