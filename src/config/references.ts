/**
 * `env:NAME` and `file:PATH` references in ktx.yaml, resolved at load as KTX resolves them (the same
 * fields: models, `anthropic` / `gateway` credentials, `vertex` project and location). Unlike KTX, an
 * unresolvable reference in a field the selected backend uses is an error naming the field, never an
 * empty value and never the reference text itself: `env:ANTHROPIC_API_KEY` must not reach a provider
 * as if it were a key. In blocks the backend does not use, such a field is dropped with a warning.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";
import type { KtxConfigWarning, KtxLlmBlock } from "./schema.js";
import { type KtxConfigIssue, KtxLlmConfigError } from "./errors.js";

export type ConfigEnv = Readonly<Record<string, string | undefined>>;

export interface ReferenceOptions {
  /** Variables for `env:` (default `process.env`). */
  env?: ConfigEnv;
  /** Directory relative `file:` paths start from (default: the ktx.yaml's directory, else the cwd). */
  baseDir?: string;
  /** What `~` means in `file:` paths (default: the user's home directory). */
  homeDir?: string;
}

/** A reference that could not be resolved for a field the backend uses; `issues` name each field. */
export class KtxConfigReferenceError extends KtxLlmConfigError {
  override readonly code: string = "unresolved_config_reference";
}

const REFERENCE = /^(env|file):/;

export function isConfigReference(value: unknown): value is string {
  return typeof value === "string" && REFERENCE.test(value);
}

/** The value a reference stands for, or the reason it has none. Literals come back as they are. */
export function resolveConfigReference(value: string, options: ReferenceOptions = {}): { ok: true; value: string } | { ok: false; reason: string } {
  if (value.startsWith("env:")) {
    const name = value.slice(4).trim();
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return { ok: false, reason: `${JSON.stringify(name)} is not an environment variable name` };
    const found = (options.env ?? process.env)[name]?.trim();
    return found ? { ok: true, value: found } : { ok: false, reason: `the environment variable ${name} is ${found === "" ? "empty" : "not set"}` };
  }
  if (value.startsWith("file:")) {
    const raw = value.slice(5).trim();
    if (raw === "") return { ok: false, reason: "no file path after file:" };
    const home = options.homeDir ?? homedir();
    const expanded = raw === "~" ? home : raw.startsWith("~/") ? resolve(home, raw.slice(2)) : raw;
    const path = isAbsolute(expanded) ? expanded : resolve(options.baseDir ?? process.cwd(), expanded);
    let text: string;
    try {
      text = readFileSync(path, "utf8").trim();
    } catch (error) {
      const code = (error as { code?: string }).code;
      return { ok: false, reason: code === "ENOENT" ? `the file ${path} does not exist` : `the file ${path} cannot be read (${code ?? (error as Error).message})` };
    }
    return text ? { ok: true, value: text } : { ok: false, reason: `the file ${path} is empty` };
  }
  return { ok: true, value };
}

type Field = { path: string; get(): unknown; set(value: string | undefined): unknown; used: boolean };

/** The fields KTX resolves references in, with whether the selected backend uses each. */
function fields(llm: KtxLlmBlock): Field[] {
  const backend = llm.provider.backend;
  const out: Field[] = [];
  for (const role of Object.keys(llm.models) as Array<keyof KtxLlmBlock["models"]>) {
    out.push({ path: `llm.models.${role}`, get: () => llm.models[role], set: (v) => (v === undefined ? delete llm.models[role] : (llm.models[role] = v)), used: backend !== "none" });
  }
  for (const block of ["anthropic", "gateway"] as const) {
    const credentials = llm.provider[block];
    if (!credentials) continue;
    for (const key of ["api_key", "base_url"] as const) {
      out.push({ path: `llm.provider.${block}.${key}`, get: () => credentials[key], set: (v) => void (credentials[key] = v), used: backend === block });
    }
  }
  const vertex = llm.provider.vertex;
  if (vertex) {
    out.push({ path: "llm.provider.vertex.project", get: () => vertex.project, set: (v) => void (vertex.project = v), used: backend === "vertex" });
    // location is required: when it cannot be resolved for an unused vertex block, the block goes.
    out.push({
      path: "llm.provider.vertex.location",
      get: () => vertex.location,
      set: (v) => (v === undefined ? delete llm.provider.vertex : (vertex.location = v)),
      used: backend === "vertex",
    });
  }
  return out;
}

/**
 * Replaces every reference in `llm` (in place) with its value. Throws `KtxConfigReferenceError` for
 * fields the backend uses; returns warnings for the fields of other blocks that were dropped.
 */
export function resolveLlmReferences(llm: KtxLlmBlock, options: ReferenceOptions & { source?: string }): KtxConfigWarning[] {
  const issues: KtxConfigIssue[] = [];
  const warnings: KtxConfigWarning[] = [];
  for (const field of fields(llm)) {
    const value = field.get();
    if (!isConfigReference(value)) continue;
    const result = resolveConfigReference(value, options);
    if (result.ok) {
      field.set(result.value);
      continue;
    }
    if (field.used) {
      issues.push({ path: field.path, message: `${value} cannot be resolved: ${result.reason}` });
      continue;
    }
    field.set(undefined);
    warnings.push({
      path: field.path,
      message: `${field.path} (${value}) is ignored: ${result.reason}, and the ${llm.provider.backend} backend does not use it.`,
      fix: `Remove ${field.path}, or make the reference resolvable before selecting a backend that uses it.`,
    });
  }
  if (issues.length > 0) throw new KtxConfigReferenceError(issues, options.source);
  return warnings;
}
