/**
 * Model resolution for the claude-code backend. Every role's model is turned into a pinned model id
 * before any CLI starts: an alias goes through this library's own table (by default the ids KTX's own
 * claude-code backend uses), a `claude-*` id passes as is, anything else is refused. The CLI only ever
 * receives the id, never the bare alias: the CLI's own alias table moves with its version (2.1.330
 * maps `sonnet` to `claude-sonnet-5-5`), which would silently change the model of the same ktx.yaml.
 */
import { ClaudeCodeError, InvalidInputError } from "../errors/index.js";
import { MODEL_ROLES, type ModelMap, type ModelRole } from "../runtime/types.js";

/** KTX's own claude-code backend table (packages/cli/src/context/llm/claude-code-models.ts in KTX 0.12). */
export const KTX_CLAUDE_CODE_MODEL_ALIASES: Readonly<Record<string, string>> = Object.freeze({
  sonnet: "claude-sonnet-4-6",
  opus: "claude-opus-4-7",
  haiku: "claude-haiku-4-5",
});

/**
 * A full Claude model id: `claude-` then lowercase words joined by `-` or `.`, e.g. `claude-sonnet-4-6`,
 * `claude-opus-4-1-20250805`, `claude-3-5-haiku-20241022`; the CLI's `[1m]` context suffix is kept.
 */
const CLAUDE_MODEL_ID = /^claude-[a-z0-9]+(?:[.-][a-z0-9]+)*(?:\[1m\])?$/;

export function isClaudeModelId(value: string): boolean {
  return CLAUDE_MODEL_ID.test(value);
}

export interface ResolvedRoleModel {
  role: ModelRole;
  /** The value as configured (the default's value when the role has none of its own). */
  configured: string;
  /** "role" when the role names its own model, "default" when it falls back. */
  from: "role" | "default";
  /** The pinned id the CLI is given. */
  id: string;
  /** Whether `configured` was an alias of the table or already an id. */
  via: "alias" | "id";
}

export type ResolvedModels = Readonly<Record<ModelRole, ResolvedRoleModel>>;

export interface ModelResolutionOptions {
  /** Aliases added to (or replacing entries of) KTX's table. Values must be `claude-*` ids. */
  aliases?: Readonly<Record<string, string>>;
  /** Where the models came from, for messages: the ktx.yaml path when they came from config. */
  source?: string;
}

export interface UnsupportedModelProblem {
  role: ModelRole;
  value: string;
}

/** KTX's own backend's message for a model it cannot use, word for word (its auth probe and its tests read it). */
export function unsupportedModelText(model: string): string {
  return `Unsupported Claude Code model "${model}". Use sonnet, opus, haiku, or a claude-* model id.`;
}

/** A role's model is neither an alias of the table nor a `claude-*` id; raised before any CLI starts. */
export class UnsupportedModelError extends ClaudeCodeError {
  override readonly code = "unsupported_model";
  /** The first offending role and value (all of them are in `problems`). */
  readonly role: ModelRole;
  readonly value: string;
  constructor(
    readonly problems: readonly UnsupportedModelProblem[],
    readonly source: string | undefined,
    readonly aliases: Readonly<Record<string, string>>,
  ) {
    const where = (role: ModelRole) => (source ? `llm.models.${role} in ${source}` : `models.${role}`);
    const lines = problems.map((p) => `  - ${where(p.role)}: ${JSON.stringify(p.value)}${modelHint(p.value)}`);
    const table = Object.entries(aliases)
      .map(([alias, id]) => `${alias} (${id})`)
      .join(", ");
    super(
      `${unsupportedModelText(problems[0]!.value)}\n${lines.join("\n")}\n` +
        `Use an alias — ${table} — or a full claude-* model id such as ${aliases.sonnet ?? "claude-sonnet-4-6"}.`,
    );
    this.role = problems[0]!.role;
    this.value = problems[0]!.value;
  }
}

/** A nudge for near misses: a provider prefix, capitals, spaces. */
export function modelHint(value: string): string {
  const bare = value.replace(/^[a-z-]+\/(?=claude-)/, "");
  if (bare !== value && isClaudeModelId(bare)) return ` (drop the provider prefix: ${bare})`;
  if (value.toLowerCase() !== value && (isClaudeModelId(value.toLowerCase()) || value.toLowerCase() in KTX_CLAUDE_CODE_MODEL_ALIASES)) {
    return ` (model names are lowercase: ${value.toLowerCase()})`;
  }
  return "";
}

/** The CLI's marker on stderr when the API refused the model (2.1.330: after a 404 `not_found_error`). */
const UNRECOGNIZED_MODEL = "[claude-code:unrecognized_model]";

export function isUnrecognizedModelError(error: unknown): boolean {
  return ClaudeCodeError.isInstance(error) && `${error.stderrTail ?? ""}\n${error.message}`.includes(UNRECOGNIZED_MODEL);
}

/** The API does not know a role's (pinned) model; names the role, the value written, the id and its source. */
export class UnknownModelError extends ClaudeCodeError {
  override readonly code = "unknown_model";
  readonly role: ModelRole;
  /** The value as configured (an alias or an id). */
  readonly value: string;
  readonly id: string;
  constructor(
    model: ResolvedRoleModel,
    readonly source: string | undefined,
    cause: ClaudeCodeError,
  ) {
    const field = `${source ? "llm." : ""}models.${model.from === "role" ? model.role : "default"}${source ? ` in ${source}` : ""}`;
    const written = `${JSON.stringify(model.configured)}${model.configured === model.id ? "" : ` -> ${model.id}`}`;
    super(
      `The API does not know the model ${model.id}, asked for role ${model.role} (${field}: ${written}): it may not exist, ` +
        `or this account may not have access to it. Use sonnet, opus, haiku or a claude-* model id the account can use.`,
      { cause, stderrTail: cause.stderrTail, transcriptPath: cause.transcriptPath },
    );
    this.role = model.role;
    this.value = model.configured;
    this.id = model.id;
  }
}

/** `error` as an `UnknownModelError` when the CLI reported the model as unrecognized, else `error` itself. */
export function unknownModelError(error: unknown, model: ResolvedRoleModel | undefined, source?: string): unknown {
  if (!model || !isUnrecognizedModelError(error)) return error;
  return new UnknownModelError(model, source, error as ClaudeCodeError);
}

/** KTX's table with `overrides` applied; each override is checked (alias name, `claude-*` id). */
export function modelAliasTable(overrides: Readonly<Record<string, string>> = {}): Readonly<Record<string, string>> {
  const problems: string[] = [];
  for (const [alias, id] of Object.entries(overrides)) {
    if (!/^[a-z][a-z0-9._-]*$/.test(alias) || alias.startsWith("claude-")) problems.push(`${JSON.stringify(alias)} is not an alias name (lowercase, not starting with claude-)`);
    if (typeof id !== "string" || !isClaudeModelId(id)) problems.push(`${JSON.stringify(alias)} -> ${JSON.stringify(id)}: the target must be a full claude-* model id`);
  }
  if (problems.length > 0) throw new InvalidInputError(`Invalid modelAliases: ${problems.join("; ")}.`);
  return Object.freeze({ ...KTX_CLAUDE_CODE_MODEL_ALIASES, ...overrides });
}

/** One value to its id, or undefined when it is neither an alias nor a `claude-*` id. */
export function resolveModelValue(value: string, aliases: Readonly<Record<string, string>> = KTX_CLAUDE_CODE_MODEL_ALIASES): { id: string; via: "alias" | "id" } | undefined {
  const trimmed = value.trim();
  if (Object.hasOwn(aliases, trimmed)) return { id: aliases[trimmed]!, via: "alias" };
  if (isClaudeModelId(trimmed)) return { id: trimmed, via: "id" };
  return undefined;
}

/**
 * Every role's pinned id. Throws `UnsupportedModelError` naming each role whose own value (or the
 * default, for roles without one) is neither an alias nor a `claude-*` id.
 */
export function resolveRoleModels(models: ModelMap, options: ModelResolutionOptions = {}): ResolvedModels {
  const aliases = modelAliasTable(options.aliases);
  const problems: UnsupportedModelProblem[] = [];
  const resolved = {} as Record<ModelRole, ResolvedRoleModel>;
  for (const role of MODEL_ROLES) {
    const own = models[role];
    const configured = own ?? models.default;
    const hit = resolveModelValue(configured, aliases);
    // A role that falls back is reported once, as `default`.
    if (!hit) {
      if (own !== undefined) problems.push({ role, value: configured });
      continue;
    }
    resolved[role] = { role, configured, from: own === undefined ? "default" : "role", id: hit.id, via: hit.via };
  }
  if (problems.length > 0) throw new UnsupportedModelError(problems, options.source, aliases);
  return Object.freeze(resolved);
}
