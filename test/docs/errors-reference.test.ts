/**
 * docs/errors.md against the package's exports: every error class the entry points export (a
 * `ClaudeCodeError` subclass) has a row on the page, and that row names its `code` as the source declares
 * it (inherited codes followed up the class chain). A new error class without a row fails, and so does a
 * row whose code drifted.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as aiSdk from "../../src/ai-sdk/index.js";
import * as core from "../../src/index.js";
import * as provider from "../../src/provider/index.js";
import * as testing from "../../src/testing/index.js";
import * as transcripts from "../../src/transcripts/index.js";

const root = join(import.meta.dirname, "../..");
const page = readFileSync(join(root, "docs/errors.md"), "utf8");
const ClaudeCodeError = core.ClaudeCodeError;

function errorClasses(): string[] {
  const names = new Set<string>();
  for (const entry of [core, aiSdk, provider, testing, transcripts]) {
    for (const [name, value] of Object.entries(entry)) {
      if (typeof value === "function" && value.prototype instanceof ClaudeCodeError) names.add(name);
    }
  }
  return [...names].sort();
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith(".ts") ? [readFileSync(path, "utf8")] : [];
  });
}

/** Each class's declared parent and own `code`, read from the source. */
function declarations(): Map<string, { parent: string; code?: string }> {
  const found = new Map<string, { parent: string; code?: string }>();
  for (const text of sources(join(root, "src"))) {
    for (const match of text.matchAll(/export class (\w+) extends (\w+) \{([\s\S]*?)\n\}/g)) {
      const code = /readonly code(?:: string)? = "([^"]+)"/.exec(match[3]!)?.[1];
      found.set(match[1]!, { parent: match[2]!, ...(code ? { code } : {}) });
    }
  }
  return found;
}

function codeOf(name: string, declared: Map<string, { parent: string; code?: string }>): string | undefined {
  for (let current: string | undefined = name; current; current = declared.get(current)?.parent) {
    const code = declared.get(current)?.code;
    if (code) return code;
  }
  return undefined;
}

/** The table row whose first cell starts with the class name. */
function row(name: string): string | undefined {
  return page.split("\n").find((line) => line.startsWith(`| \`${name}\``));
}

describe("docs/errors.md", () => {
  const classes = errorClasses();
  const declared = declarations();

  it("finds the exported error classes", () => {
    expect(classes).toEqual(expect.arrayContaining(["InvalidInputError", "UsageLimitError", "IsolationError", "AiSdkCallError", "UnsupportedLlmBackendError"]));
  });

  it("has a row for every exported error class, naming its code", () => {
    const missing: string[] = [];
    for (const name of classes) {
      const code = codeOf(name, declared);
      expect(code, `the code of ${name} in src/`).toBeDefined();
      const line = row(name);
      if (!line || !line.includes(`| \`${code}\` |`)) missing.push(`${name} (${code})`);
    }
    expect(missing).toEqual([]);
  });

  it("documents no class the package does not export", () => {
    const rows = page.split("\n").map((line) => /^\| `(\w+Error)` /.exec(line)?.[1]).filter((name): name is string => name !== undefined);
    expect(rows.filter((name) => !classes.includes(name))).toEqual([]);
  });
});
