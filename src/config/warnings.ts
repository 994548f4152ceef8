/**
 * Configuration that the claude-code backend accepts but does not apply. KTX's prompt-caching
 * tunables drive the AI SDK backends' cache-control markers; the Claude Code CLI places its own
 * breakpoints (docs/parity.md, "Prompt caching"), so each field a user sets is reported once,
 * by the factory (logger.warn) and by `ktx-claude-code status` / `doctor`.
 */
import type { KtxConfigWarning, KtxLlmBlock, KtxPromptCachingConfig } from "./schema.js";

export type { KtxConfigWarning };

/** What the Claude Code CLI does instead, per field (measured on CLI 2.1.330, see docs/parity.md). */
const CLI_BEHAVIOUR: Record<keyof KtxPromptCachingConfig, string> = {
  enabled: "the Claude Code CLI always places its own cache breakpoints (only DISABLE_PROMPT_CACHING in its environment turns them off)",
  cacheSystem: "the CLI marks the system prompt as a cache breakpoint itself",
  cacheTools: "the CLI sends no tools breakpoint",
  cacheHistory: "the CLI marks the latest message as a cache breakpoint itself",
  systemTtl: "the CLI chooses the TTL of its breakpoints itself (5 minutes unless its own settings select 1 hour)",
  toolsTtl: "the CLI sends no tools breakpoint, so there is no TTL to set",
  historyTtl: "the CLI chooses the TTL of its breakpoints itself (5 minutes unless its own settings select 1 hour)",
  vertexFallbackTo5m: "claude-code never routes to Vertex",
};

const FIX = "Remove the field, or use the anthropic, vertex or gateway backend when this cache setting is required.";

/**
 * One warning per `llm.promptCaching` field set in the config when the backend is claude-code
 * (empty for other backends and for a config without `promptCaching`). KTX cache markers are
 * never sent on claude-code; these fields are therefore ignored.
 */
export function promptCachingWarnings(config: Pick<KtxLlmBlock, "provider" | "promptCaching">): KtxConfigWarning[] {
  if (config.provider.backend !== "claude-code" || !config.promptCaching) return [];
  return Object.entries(config.promptCaching)
    .filter(([, value]) => value !== undefined)
    .map(([field, value]) => ({
      path: `llm.promptCaching.${field}`,
      message: `claude-code ignores llm.promptCaching.${field} (${JSON.stringify(value)}): ${CLI_BEHAVIOUR[field as keyof KtxPromptCachingConfig] ?? "the field has no claude-code equivalent"}.`,
      fix: FIX,
    }));
}

/** Credentials blocks of other backends, present while the backend is claude-code: never used, never a fallback. */
export function unusedProviderWarnings(config: Pick<KtxLlmBlock, "provider">): KtxConfigWarning[] {
  if (config.provider.backend !== "claude-code") return [];
  return (["anthropic", "vertex", "gateway"] as const)
    .filter((name) => config.provider[name] !== undefined)
    .map((name) => ({
      path: `llm.provider.${name}`,
      message: `llm.provider.${name} is not used: the claude-code backend runs every call through your local Claude Code session and never falls back to ${name}.`,
      fix: `Remove llm.provider.${name}, or set llm.provider.backend: ${name} to use it.`,
    }));
}

/** Every configuration warning for the claude-code backend. */
export function claudeCodeConfigWarnings(config: Pick<KtxLlmBlock, "provider" | "promptCaching">): KtxConfigWarning[] {
  return [...promptCachingWarnings(config), ...unusedProviderWarnings(config)];
}
