/**
 * docs/options.md against the option schemas: every key a schema takes is documented, and every key the
 * page documents exists, for the runtime options and for each call's input. A schema that gains a key
 * without a row here fails, and so does a row left behind by a removed key. The `auth` option's fields are
 * documented in their own section, "Authentication" (AuthConfigError's message cites it).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { runtimeOptionsSchema } from "../../src/claude-code/options.js";
import { capabilitiesSchema } from "../../src/claude-code/capabilities.js";
import { MODEL_ROLES } from "../../src/port/ktx-port.js";
import { loopParamsSchema, objectInputSchema, textInputSchema } from "../../src/runtime/call-inputs.js";
import { schemaKeyPaths } from "../../src/runtime/validation.js";

const page = readFileSync(new URL("../../docs/options.md", import.meta.url), "utf8");

/** The first cell's key of each table row under the heading that starts with `heading`. */
function documentedKeys(heading: string): string[] {
  const start = page.split("\n").findIndex((line) => line.startsWith(`## ${heading}`));
  expect(start, `a section "## ${heading}" in docs/options.md`).toBeGreaterThan(-1);
  const lines = page.split("\n").slice(start + 1);
  const end = lines.findIndex((line) => line.startsWith("## "));
  return (end < 0 ? lines : lines.slice(0, end)).map((line) => /^\| `([^`]+)` \|/.exec(line)?.[1]).filter((key): key is string => key !== undefined);
}

/** Role names as `<role>`, and nothing below a role (its value is documented on the role's row). */
function schemaKeys(...schemas: z.ZodType[]): string[] {
  const roles = new Set<string>(MODEL_ROLES);
  const keys = schemas
    .flatMap((schema) => schemaKeyPaths(schema))
    .map((path) => path.split("."))
    .filter((segments) => !segments.slice(0, -1).some((segment) => roles.has(segment)))
    .map((segments) => segments.map((segment) => (roles.has(segment) ? "<role>" : segment)).join("."));
  return [...new Set(keys)].sort();
}

const sorted = (keys: string[]) => [...new Set(keys)].sort();

describe("docs/options.md", () => {
  it("documents every runtime option the schema takes, and no other", () => {
    const documented = [...documentedKeys("Runtime options"), ...documentedKeys("Authentication")];
    expect(documented.length).toBe(new Set(documented).size);
    expect(sorted(documented)).toEqual(schemaKeys(runtimeOptionsSchema));
    // The ones the issue found missing are there.
    expect(documented).toEqual(expect.arrayContaining(["modelsSource", "reuse.controlTimeoutMs", "includePartialMessages", "auth", "auth.skipAuth"]));
  });

  it("documents every field of generateText / generateObject (and their *Result forms), and no other", () => {
    expect(sorted(documentedKeys("Call inputs: `generateText`"))).toEqual(schemaKeys(textInputSchema, objectInputSchema));
  });

  it("documents every field of runAgentLoop, and no other", () => {
    expect(sorted(documentedKeys("Call inputs: `runAgentLoop`"))).toEqual(schemaKeys(loopParamsSchema));
  });

  it("documents every capability the schema takes, and no other", () => {
    expect(sorted(documentedKeys("Capabilities"))).toEqual(schemaKeys(capabilitiesSchema));
  });

  it("the check would catch a new key: a schema with one more key than the page documents differs", () => {
    const grown = runtimeOptionsSchema.extend({ brandNewOption: z.boolean().optional() });
    expect(schemaKeys(grown)).toContain("brandNewOption");
    expect(sorted(documentedKeys("Runtime options"))).not.toEqual(schemaKeys(grown));
  });
});
