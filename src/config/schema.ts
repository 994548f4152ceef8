/**
 * What this library reads of ktx.yaml, as zod schemas mirroring KTX 0.12's own (packages/cli/src/context/
 * project/config.ts): the `llm` block (backend, model per role, prompt caching) and the two `ingest`
 * blocks that govern LLM work (`workUnits`, `rateLimit`), with KTX's defaults. docs/guides/ktx-backend.md puts
 * the two side by side. The JSON Schema for editors (docs/ktx-llm-config.schema.json) is generated
 * from these schemas, so every `describe()` here is what an editor shows.
 */
import { z } from "zod";
import { MODEL_ROLES, type ModelRole } from "../runtime/types.js";

export const KTX_LLM_BACKENDS = ["none", "anthropic", "vertex", "gateway", "claude-code", "codex"] as const;
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

/**
 * Like KTX: any non-empty string (an `env:`/`file:` reference is resolved at load). Whether the value
 * names a model the backend can use is decided by the backend: claude-code checks it when the runtime
 * is constructed (alias or `claude-*` id, see claude-code/models.ts).
 */
const modelId = z.string().trim().min(1, "a model alias or id is required");

const ROLE_DESCRIPTIONS: Record<ModelRole, string> = {
  default: "Model for every call whose role has no model of its own. Required unless the backend is none.",
  triage: "Page triage and light extraction. Falls back to `default`.",
  candidateExtraction: "Context-candidate extraction. Falls back to `default`.",
  curator: "Context-candidate curation agent loops. Falls back to `default`.",
  reconcile: "Reconciliation agent loops. Falls back to `default`.",
  repair: "Tool-call repair (AI SDK backends only). Falls back to `default`.",
};

const modelsSchema = z
  .strictObject(
    Object.fromEntries(MODEL_ROLES.map((role) => [role, modelId.optional().describe(ROLE_DESCRIPTIONS[role])])) as Record<ModelRole, z.ZodOptional<typeof modelId>>,
  )
  .describe(
    "Model per KTX role (a partial record): on claude-code an alias (`sonnet` -> claude-sonnet-4-6, `opus` -> claude-opus-4-7, `haiku` -> claude-haiku-4-5) or a claude-* id; " +
      "on the API backends the provider's model id. `env:NAME` / `file:PATH` references are resolved at load. Roles without a model use `default`.",
  );

const apiCredentialsSchema = z
  .strictObject({
    api_key: z
      .string()
      .min(1)
      .optional()
      .describe("API key: a literal, `env:NAME` or `file:PATH` (resolved at load; `~` is your home). Omit to use the provider's environment variable."),
    base_url: z.string().min(1).optional().describe("Override the provider's API base URL (a proxy or self-hosted gateway). May be a reference."),
  })
  .describe("API credentials for an API-key backend.");

const vertexSchema = z
  .strictObject({
    project: z.string().min(1).optional().describe("Google Cloud project hosting the Vertex AI endpoint."),
    location: z.string().min(1).describe('Vertex AI region, e.g. "us-east5". Required whenever the vertex block is present (as in KTX).'),
  })
  .describe("Google Vertex AI settings, used when backend is vertex.");

const providerSchema = z
  .strictObject({
    backend: z
      .enum(KTX_LLM_BACKENDS)
      .default("none")
      .describe(
        'LLM backend. "none" disables LLM features; "anthropic", "vertex" and "gateway" use their credentials block; ' +
          '"claude-code" uses your own local Claude Code session (no API key); "codex" is KTX\'s own Codex backend (recognised; ' +
          "this package does not run it). A backend is never replaced by another one.",
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
    models: modelsSchema.prefault({}),
    promptCaching: promptCachingSchema.optional(),
  })
  .describe("KTX LLM configuration: backend, model per role, prompt caching.");

export const KTX_WORK_UNIT_FAILURE_MODES = ["abort", "continue"] as const;

const workUnitsSchema = z
  .strictObject({
    stepBudget: z.int().positive().default(40).describe("Most agent steps a work unit may take before it is stopped. Default 40."),
    maxConcurrency: z.int().positive().default(1).describe("Work units run at once during ingest. Default 1."),
    failureMode: z
      .enum(KTX_WORK_UNIT_FAILURE_MODES)
      .default("continue")
      .describe('"abort" stops the ingest run at the first failed work unit; "continue" records it and goes on. Default "continue".'),
  })
  .describe("Step budget, concurrency and failure handling of ingest work units (KTX's defaults).");

const rateLimitRetrySchema = z
  .strictObject({
    maxAttempts: z.int().positive().default(6).describe("Attempts of one rate-limited call, the first included, before the failure surfaces. Default 6."),
    baseDelayMs: z.int().positive().default(1_000).describe("First backoff delay (ms) when the provider gives no reset time. Default 1000."),
    maxDelayMs: z.int().positive().default(60_000).describe("Largest backoff delay (ms). Default 60000."),
    jitter: z.boolean().default(true).describe("Randomise backoff delays within bounds. Default true."),
  })
  .describe("Backoff for rate-limit answers without a reset time or retry-after.");

const rateLimitSchema = z
  .strictObject({
    enabled: z.boolean().default(true).describe("Pace ingest LLM calls under rate limits and show the waits. Default true."),
    throttleThreshold: z.number().min(0).max(1).default(0.8).describe("Provider utilisation (0-1) from which new work-unit starts are throttled. Default 0.8."),
    minConcurrencyUnderPressure: z.int().positive().default(1).describe("Work-unit concurrency while the provider is under rate-limit pressure. Default 1."),
    maxWaitMs: z.int().positive().optional().describe("Cap (ms) on one wait for a provider reset. Omit to wait until the reset."),
    retry: rateLimitRetrySchema.prefault({}),
  })
  .describe("Rate-limit pacing and waits of ingest LLM calls (KTX's defaults).");

/** `ingest` as far as LLM work goes; its other keys (adapters, embeddings, profile) are KTX's own. */
const ingestSchema = z
  .looseObject({ workUnits: workUnitsSchema.prefault({}), rateLimit: rateLimitSchema.prefault({}) })
  .describe("KTX's ingest settings; this library reads workUnits and rateLimit.");

/** KTX 0.12's top-level keys: anything else is reported as an unknown key (ignored), as KTX does. */
export const KTX_YAML_TOP_LEVEL_KEYS = ["setup", "connections", "storage", "llm", "ingest", "agent", "scan"] as const;

/** A whole ktx.yaml as far as this library reads it: `llm` and `ingest`; other top-level keys belong to KTX. */
export const ktxYamlLlmSchema = z
  .looseObject({ llm: ktxLlmConfigSchema.prefault({}), ingest: ingestSchema.prefault({}) })
  .describe("ktx.yaml (the llm block and ingest.workUnits / ingest.rateLimit are described here; other keys are KTX's).");

export type KtxLlmBlock = z.output<typeof ktxLlmConfigSchema>;
export type KtxLlmConfigInput = z.input<typeof ktxLlmConfigSchema>;
export type KtxPromptCachingInput = NonNullable<KtxLlmBlock["promptCaching"]>;
/** `ingest.workUnits` with KTX's defaults applied. */
export type KtxIngestWorkUnitsConfig = z.output<typeof workUnitsSchema>;
/** `ingest.rateLimit` with KTX's defaults applied (what a rate-limit governor is built from). */
export type KtxIngestRateLimitConfig = z.output<typeof rateLimitSchema>;
export type KtxWorkUnitFailureMode = (typeof KTX_WORK_UNIT_FAILURE_MODES)[number];

export interface KtxIngestConfig {
  workUnits: KtxIngestWorkUnitsConfig;
  rateLimit: KtxIngestRateLimitConfig;
}

/** Something in ktx.yaml that is ignored: an unknown key, an unused reference, a field claude-code does not apply. */
export interface KtxConfigWarning {
  /** Dotted path from the root of ktx.yaml, e.g. `llm.provider.antropic`. */
  path: string;
  message: string;
  fix: string;
}

/**
 * The parsed configuration: the `llm` block (references resolved, KTX's defaults applied), the
 * `ingest` settings for LLM work, the warnings of the load, and the file it came from.
 */
export interface KtxLlmConfig extends KtxLlmBlock {
  ingest: KtxIngestConfig;
  /** Unknown keys (ignored, as KTX does) and unresolvable references in blocks the backend does not use. */
  warnings: KtxConfigWarning[];
  /** The ktx.yaml path, when the configuration was read from a file (or `source` was given). */
  source?: string;
}

/** KTX's ingest defaults (what an empty or missing `ingest` block means). */
export function defaultKtxIngest(): KtxIngestConfig {
  const { workUnits, rateLimit } = ktxYamlLlmSchema.parse({}).ingest;
  return { workUnits, rateLimit };
}

/** KTX's prompt-caching defaults overlaid with what the config sets. */
export function resolvePromptCaching(config: Pick<KtxLlmBlock, "promptCaching">): KtxPromptCachingConfig {
  const set = Object.fromEntries(Object.entries(config.promptCaching ?? {}).filter(([, value]) => value !== undefined));
  return { ...DEFAULT_PROMPT_CACHING, ...set };
}

/** The model configured for `role`, falling back to `default` (undefined when neither is set). */
export function resolveRoleModel(config: Pick<KtxLlmBlock, "models">, role: ModelRole): string | undefined {
  return config.models[role] ?? config.models.default;
}
