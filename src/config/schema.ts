/**
 * KTX's `llm` block of ktx.yaml as a zod schema: the backend, the model per role, and the
 * prompt-caching tunables. The JSON Schema for editors (docs/ktx-llm-config.schema.json) is
 * generated from these schemas, so every `describe()` here is what an editor shows.
 */
import { z } from "zod";
import { MODEL_ROLES, type ModelRole } from "../runtime/types.js";

export const KTX_LLM_BACKENDS = ["none", "anthropic", "vertex", "gateway", "claude-code"] as const;
export type KtxLlmBackend = (typeof KTX_LLM_BACKENDS)[number];

export const KTX_PROMPT_CACHE_TTLS = ["5m", "1h"] as const;
export type KtxPromptCacheTtl = (typeof KTX_PROMPT_CACHE_TTLS)[number];

/** Every prompt-caching field with KTX's default (what the AI SDK backends apply when a field is omitted). */
export interface KtxPromptCachingConfig {
  enabled: boolean;
  cacheSystem: boolean;
  cacheTools: boolean;
  cacheHistory: boolean;
  systemTtl: KtxPromptCacheTtl;
  toolsTtl: KtxPromptCacheTtl;
  historyTtl: KtxPromptCacheTtl;
  vertexFallbackTo5m: boolean;
}

export const DEFAULT_PROMPT_CACHING: Readonly<KtxPromptCachingConfig> = Object.freeze({
  enabled: true,
  cacheSystem: true,
  cacheTools: true,
  cacheHistory: true,
  systemTtl: "1h",
  toolsTtl: "1h",
  historyTtl: "5m",
  vertexFallbackTo5m: false,
});

export const PROMPT_CACHING_FIELDS = Object.keys(DEFAULT_PROMPT_CACHING) as ReadonlyArray<keyof KtxPromptCachingConfig>;

/** Same rule as `ClaudeCodeRuntime`'s `models`: an alias (`sonnet`) or a full id (`claude-sonnet-5-5`, `anthropic/claude-…`). */
const modelId = z
  .string()
  .trim()
  .min(1, "a model alias or id is required")
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:\-[\]/@]*$/, "not a model alias or id (letters, digits and . _ : - [ ] / @ only)");

const ROLE_DESCRIPTIONS: Record<ModelRole, string> = {
  default: "Model for every call whose role has no model of its own. Required.",
  triage: "Page triage and light extraction. Falls back to `default`.",
  candidateExtraction: "Context-candidate extraction. Falls back to `default`.",
  curator: "Context-candidate curation agent loops. Falls back to `default`.",
  reconcile: "Reconciliation agent loops. Falls back to `default`.",
  repair: "Tool-call repair (AI SDK backends only). Falls back to `default`.",
};

const modelsSchema = z
  .strictObject(
    Object.fromEntries(
      MODEL_ROLES.map((role) => [role, (role === "default" ? modelId : modelId.optional()).describe(ROLE_DESCRIPTIONS[role])]),
    ) as { default: typeof modelId } & Record<Exclude<ModelRole, "default">, z.ZodOptional<typeof modelId>>,
  )
  .describe(
    "Model per KTX role: an alias (`sonnet`, `opus`, `haiku`; claude-code only) or a full model id. Roles without a model use `default`.",
  );

const apiCredentialsSchema = z
  .strictObject({
    api_key: z.string().min(1).optional().describe("API key. Omit to use the provider's environment variable."),
    base_url: z.string().min(1).optional().describe("Override the provider's API base URL (a proxy or self-hosted gateway)."),
  })
  .describe("API credentials for an API-key backend.");

const vertexSchema = z
  .strictObject({
    project: z.string().min(1).optional().describe("Google Cloud project hosting the Vertex AI endpoint."),
    location: z.string().optional().describe('Vertex AI region, e.g. "us-east5".'),
  })
  .describe("Google Vertex AI settings, used when backend is vertex.");

const providerSchema = z
  .strictObject({
    backend: z
      .enum(KTX_LLM_BACKENDS)
      .default("none")
      .describe(
        'LLM backend. "none" disables LLM features; "anthropic", "vertex" and "gateway" use their credentials block; ' +
          '"claude-code" uses your own local Claude Code session (no API key). A backend is never replaced by another one.',
      ),
    anthropic: apiCredentialsSchema.optional().describe('Anthropic API credentials, used when backend is "anthropic".'),
    vertex: vertexSchema.optional(),
    gateway: apiCredentialsSchema.optional().describe('AI Gateway credentials, used when backend is "gateway".'),
  })
  .describe("Which backend runs KTX's LLM calls, and its credentials.");

const ttl = (what: string, fallback: KtxPromptCacheTtl) =>
  z
    .enum(KTX_PROMPT_CACHE_TTLS)
    .optional()
    .meta({ description: `Cache TTL of ${what} ("5m" or "1h"). Default "${fallback}". Ignored by claude-code.`, default: fallback });
// `default` is an annotation for editors only: parsing keeps what the user wrote (see resolvePromptCaching).
const flag = (what: string, fallback: boolean) =>
  z.boolean().optional().meta({ description: `${what} Default ${fallback}. Ignored by claude-code.`, default: fallback });

const promptCachingSchema = z
  .strictObject({
    enabled: flag("Master switch for KTX's Anthropic cache-control markers.", DEFAULT_PROMPT_CACHING.enabled),
    cacheSystem: flag("Mark the system prompt as a cache breakpoint.", DEFAULT_PROMPT_CACHING.cacheSystem),
    cacheTools: flag("Mark the tool definitions as a cache breakpoint.", DEFAULT_PROMPT_CACHING.cacheTools),
    cacheHistory: flag("Mark the latest conversation message as a cache breakpoint.", DEFAULT_PROMPT_CACHING.cacheHistory),
    systemTtl: ttl("the system-prompt breakpoint", DEFAULT_PROMPT_CACHING.systemTtl),
    toolsTtl: ttl("the tools breakpoint", DEFAULT_PROMPT_CACHING.toolsTtl),
    historyTtl: ttl("the history breakpoint", DEFAULT_PROMPT_CACHING.historyTtl),
    vertexFallbackTo5m: flag("On vertex, downgrade 1h TTLs to 5m.", DEFAULT_PROMPT_CACHING.vertexFallbackTo5m),
  })
  .describe(
    "Prompt-caching tunables of the AI SDK backends (anthropic, vertex, gateway). claude-code ignores every field: the Claude Code CLI places its own cache breakpoints; status and doctor name each ignored field.",
  );

/** The `llm` block. Fields left out keep KTX's defaults; `promptCaching` keeps only what the user wrote. */
export const ktxLlmConfigSchema = z
  .strictObject({
    provider: providerSchema.prefault({}),
    models: modelsSchema,
    promptCaching: promptCachingSchema.optional(),
  })
  .describe("KTX LLM configuration: backend, model per role, prompt caching.");

/** A whole ktx.yaml as far as this library reads it: the `llm` block; other top-level keys belong to KTX. */
export const ktxYamlLlmSchema = z
  .looseObject({ llm: ktxLlmConfigSchema.optional() })
  .describe("ktx.yaml (only the llm block is described here; other top-level keys are KTX's).");

export type KtxLlmConfig = z.output<typeof ktxLlmConfigSchema>;
export type KtxLlmConfigInput = z.input<typeof ktxLlmConfigSchema>;
export type KtxPromptCachingInput = NonNullable<KtxLlmConfig["promptCaching"]>;

/** KTX's prompt-caching defaults overlaid with what the config sets. */
export function resolvePromptCaching(config: Pick<KtxLlmConfig, "promptCaching">): KtxPromptCachingConfig {
  const set = Object.fromEntries(Object.entries(config.promptCaching ?? {}).filter(([, value]) => value !== undefined));
  return { ...DEFAULT_PROMPT_CACHING, ...set };
}

/** The model configured for `role`, falling back to `default`. */
export function resolveRoleModel(config: Pick<KtxLlmConfig, "models">, role: ModelRole): string {
  return config.models[role] ?? config.models.default;
}
