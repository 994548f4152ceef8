/**
 * Reading ktx.yaml as KTX reads it: from its text, a parsed object, or the `llm` block alone. Every
 * ktx.yaml KTX accepts is accepted: without `llm` the backend is `none`; keys KTX does not know are
 * ignored with a warning (a file written by another KTX version still loads); a bad value on a known
 * field is an error naming its dotted path from the file's root (`llm.provider.backend`).
 * `env:` / `file:` references are resolved here (references.ts), so nothing downstream sees one.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import YAML from "yaml";
import { z } from "zod";
import { type KtxConfigWarning, type KtxLlmConfig, KTX_LLM_BACKENDS, KTX_YAML_TOP_LEVEL_KEYS, ktxYamlLlmSchema } from "./schema.js";
import { type KtxConfigIssue, KtxLlmConfigError } from "./errors.js";
import { type ReferenceOptions, resolveLlmReferences } from "./references.js";

export { type KtxConfigIssue, KtxLlmConfigError };

export const KTX_YAML = "ktx.yaml";

export interface ParseOptions extends ReferenceOptions {
  /** Where the text came from (the ktx.yaml path), for messages; relative `file:` paths start from its directory. */
  source?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Configurations this module produced: parsing one again returns it as it is. */
const PARSED = new WeakSet<object>();

const LLM_BLOCK_KEYS = ["provider", "models", "promptCaching"];
/** Keys of a parsed configuration that sit next to the llm block's own. */
const RESULT_KEYS = ["ingest", "warnings", "source"];

/**
 * The input as a whole ktx.yaml. An object with `llm` is one; an object with `provider`, `models` or
 * `promptCaching` is an llm block (maybe a parsed configuration, whose `ingest` is kept); any other
 * mapping is a ktx.yaml without `llm`.
 */
function asKtxYaml(value: unknown, source: string | undefined): { document: Record<string, unknown>; carried: KtxConfigWarning[] } {
  if (!isRecord(value)) {
    throw new KtxLlmConfigError([{ path: "(root)", message: `expected a mapping (ktx.yaml or its llm block), got ${describe(value)}` }], source);
  }
  if ("llm" in value || !Object.keys(value).some((key) => LLM_BLOCK_KEYS.includes(key))) return { document: value, carried: [] };
  const llm = Object.fromEntries(Object.entries(value).filter(([key]) => !RESULT_KEYS.includes(key)));
  const carried = Array.isArray(value.warnings) ? (value.warnings as KtxConfigWarning[]) : [];
  return { document: { llm, ...(value.ingest === undefined ? {} : { ingest: value.ingest }) }, carried };
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return "an empty document";
  if (Array.isArray(value)) return "a list";
  return typeof value === "string" ? `the string ${JSON.stringify(value.slice(0, 60))}` : typeof value;
}

const dotted = (path: ReadonlyArray<PropertyKey>) => path.map((segment) => String(segment)).join(".");

function valueAt(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let cursor = root;
  for (const segment of path) cursor = isRecord(cursor) ? cursor[segment as string] : undefined;
  return cursor;
}

function issuesOf(error: z.ZodError, input: unknown): KtxConfigIssue[] {
  const issues: KtxConfigIssue[] = [];
  for (const issue of error.issues) {
    const path = dotted(issue.path);
    if (issue.code === "invalid_value" && path === "llm.provider.backend") {
      issues.push({ path, message: `${JSON.stringify(valueAt(input, issue.path))} is not a backend; use one of ${KTX_LLM_BACKENDS.join(", ")}` });
      continue;
    }
    if (issue.code === "invalid_type") {
      const detail = issue.message.replace(/^Invalid input: /, "");
      issues.push({ path, message: /received undefined$/.test(detail) ? `required (${detail.replace(/, received undefined$/, "")})` : detail });
      continue;
    }
    issues.push({ path, message: issue.message });
  }
  // One issue per path: the first is the most basic (an empty model is not also "not an id").
  return issues.filter((issue, index) => issues.findIndex((other) => other.path === issue.path) === index);
}

/** Unknown keys, as KTX treats them: removed from the value read (never from the file) and reported. */
function stripUnknownKeys(document: Record<string, unknown>): { document: Record<string, unknown>; warnings: KtxConfigWarning[] } {
  const found: Array<{ container: ReadonlyArray<PropertyKey>; key: string }> = Object.keys(document)
    .filter((key) => !(KTX_YAML_TOP_LEVEL_KEYS as readonly string[]).includes(key))
    .map((key) => ({ container: [], key }));
  const first = ktxYamlLlmSchema.safeParse(document);
  if (!first.success) {
    for (const issue of first.error.issues) if (issue.code === "unrecognized_keys") for (const key of issue.keys) found.push({ container: issue.path, key });
  }
  if (found.length === 0) return { document, warnings: [] };
  const copy = structuredClone(document);
  const warnings = found.map(({ container, key }) => {
    const holder = valueAt(copy, container);
    if (isRecord(holder)) delete holder[key];
    const path = dotted([...container, key]);
    return {
      path,
      message: `${path} is not a ktx.yaml key KTX knows; it is ignored.`,
      fix: container.length === 0 ? `Check the spelling, or remove ${path}.` : `Check the spelling against docs/guides/ktx-backend.md, or remove ${path}.`,
    };
  });
  return { document: copy, warnings };
}

/**
 * Parses KTX's llm configuration from ktx.yaml text, a parsed ktx.yaml object, or the `llm` block
 * itself. Returns the llm block with KTX's defaults, `ingest.workUnits` / `ingest.rateLimit`, the
 * warnings and the source. Throws `KtxLlmConfigError` whose `issues` name each offending path, or
 * `KtxConfigReferenceError` when a reference the backend needs cannot be resolved.
 */
export function parseKtxLlmConfig(input: string | unknown, options: ParseOptions = {}): KtxLlmConfig {
  if (isRecord(input) && PARSED.has(input)) return input as unknown as KtxLlmConfig;
  let value: unknown = input;
  if (typeof input === "string") {
    const document = YAML.parseDocument(input, { prettyErrors: true });
    if (document.errors.length > 0) {
      throw new KtxLlmConfigError(
        document.errors.map((error) => ({ path: "(yaml)", message: error.message.split("\n")[0] ?? error.message })),
        options.source,
      );
    }
    value = document.toJS();
  }
  const { document, carried } = asKtxYaml(value, options.source);
  const stripped = stripUnknownKeys(document);
  const parsed = ktxYamlLlmSchema.safeParse(stripped.document);
  if (!parsed.success) throw new KtxLlmConfigError(issuesOf(parsed.error, stripped.document), options.source);
  const llm = parsed.data.llm;
  const referenceWarnings = resolveLlmReferences(llm, {
    ...options,
    baseDir: options.baseDir ?? (options.source ? dirname(resolve(options.source)) : undefined),
  });
  const { workUnits, rateLimit } = parsed.data.ingest;
  const config: KtxLlmConfig = {
    ...llm,
    ingest: { workUnits, rateLimit },
    warnings: [...carried, ...stripped.warnings, ...referenceWarnings],
    ...(options.source ? { source: options.source } : typeof (value as { source?: unknown }).source === "string" ? { source: (value as { source: string }).source } : {}),
  };
  PARSED.add(config);
  return config;
}

/** The nearest directory at or above `from` that holds a ktx.yaml, or undefined. */
export function findKtxProjectDir(from: string = process.cwd()): string | undefined {
  let dir = resolve(from);
  for (;;) {
    const candidate = join(dir, KTX_YAML);
    if (existsSync(candidate) && statSync(candidate).isFile()) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** Reads and parses `<projectDir>/ktx.yaml` (references resolved with `options.env`, default `process.env`). */
export function loadKtxLlmConfig(projectDir: string, options: Omit<ParseOptions, "source"> = {}): { path: string; config: KtxLlmConfig } {
  const path = join(resolve(projectDir), KTX_YAML);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new KtxLlmConfigError(
      [{ path: "(file)", message: code === "ENOENT" ? `${path} does not exist` : `cannot read ${path}: ${(error as Error).message}` }],
      path,
    );
  }
  return { path, config: parseKtxLlmConfig(text, { ...options, source: path }) };
}
