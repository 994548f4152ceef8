export {
  DEFAULT_PROMPT_CACHING,
  KTX_LLM_BACKENDS,
  KTX_PROMPT_CACHE_TTLS,
  PROMPT_CACHING_FIELDS,
  ktxLlmConfigSchema,
  ktxYamlLlmSchema,
  resolvePromptCaching,
  resolveRoleModel,
  type KtxLlmBackend,
  type KtxLlmConfig,
  type KtxLlmConfigInput,
  type KtxPromptCacheTtl,
  type KtxPromptCachingConfig,
  type KtxPromptCachingInput,
} from "./schema.js";
export { KTX_YAML, KtxLlmConfigError, findKtxProjectDir, loadKtxLlmConfig, parseKtxLlmConfig, type KtxConfigIssue, type ParseOptions } from "./parse.js";
export { claudeCodeConfigWarnings, promptCachingWarnings, unusedProviderWarnings, type KtxConfigWarning } from "./warnings.js";
export { ktxLlmConfigJsonSchema, ktxLlmConfigJsonSchemaText, writeKtxLlmConfigJsonSchema } from "./json-schema.js";
