/**
 * Reading KTX's `llm` configuration: from ktx.yaml text, a parsed ktx.yaml object, or the `llm`
 * block alone. Every problem is reported with its dotted path from the file's root
 * (`llm.provider.backend`), so the message points at the line to change.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import YAML from "yaml";
import { z } from "zod";
import { ClaudeCodeError } from "../errors/index.js";
import { type KtxLlmConfig, KTX_LLM_BACKENDS, ktxLlmConfigSchema } from "./schema.js";

export const KTX_YAML = "ktx.yaml";

export interface KtxConfigIssue {
  /** Dotted path from the root of ktx.yaml, e.g. `llm.provider.backend`. */
  path: string;
  message: string;
}

/** The `llm` configuration cannot be used; `issues` name each offending path. */
export class KtxLlmConfigError extends ClaudeCodeError {
  override readonly code = "invalid_llm_config";
  constructor(
    readonly issues: readonly KtxConfigIssue[],
    readonly source?: string,
  ) {
    super(
      `Invalid KTX llm configuration${source ? ` in ${source}` : ""}:\n${issues.map((issue) => `  - ${issue.path}: ${issue.message}`).join("\n")}`,
    );
  }
}

export interface ParseOptions {
  /** Where the text came from (a file path), for messages. */
  source?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const LLM_BLOCK_KEYS = ["provider", "models", "promptCaching"];

/** The `llm` block of a whole ktx.yaml, or the value itself when it already is an `llm` block. */
function llmBlockOf(value: unknown, source: string | undefined): unknown {
  if (!isRecord(value)) {
    throw new KtxLlmConfigError([{ path: "llm", message: `expected a mapping (ktx.yaml or its llm block), got ${describe(value)}` }], source);
  }
  if ("llm" in value) return value.llm;
  if (Object.keys(value).some((key) => LLM_BLOCK_KEYS.includes(key))) return value;
  throw new KtxLlmConfigError(
    [{ path: "llm", message: "missing: add an llm block with provider.backend and models.default (see docs/user-guide.md)" }],
    source,
  );
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "string" ? `the string ${JSON.stringify(value.slice(0, 60))}` : typeof value;
}

function dotted(path: ReadonlyArray<PropertyKey>): string {
  return ["llm", ...path.map((segment) => String(segment))].join(".");
}

function issuesOf(error: z.ZodError): KtxConfigIssue[] {
  const issues: KtxConfigIssue[] = [];
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") {
      // One entry per unknown key, each with its own path.
      for (const key of issue.keys) issues.push({ path: dotted([...issue.path, key]), message: "unknown key" });
      continue;
    }
    const path = dotted(issue.path);
    if (issue.code === "invalid_value" && path === "llm.provider.backend") {
      issues.push({ path, message: `must be one of ${KTX_LLM_BACKENDS.join(", ")}` });
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

/**
 * Parses KTX's llm configuration. Accepts ktx.yaml text, a parsed ktx.yaml object (with an `llm`
 * key), or the `llm` block itself. Throws `KtxLlmConfigError` whose `issues` name each offending
 * path (`llm.provider.backend`, `llm.models.default`, `llm.promptCaching.systemTtl`, …).
 */
export function parseKtxLlmConfig(input: string | unknown, options: ParseOptions = {}): KtxLlmConfig {
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
  const block = llmBlockOf(value, options.source);
  const parsed = ktxLlmConfigSchema.safeParse(block);
  if (!parsed.success) throw new KtxLlmConfigError(issuesOf(parsed.error), options.source);
  return parsed.data;
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

/** Reads and parses `<projectDir>/ktx.yaml`. */
export function loadKtxLlmConfig(projectDir: string): { path: string; config: KtxLlmConfig } {
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
  return { path, config: parseKtxLlmConfig(text, { source: path }) };
}
