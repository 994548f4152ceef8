/** generateObject's schema plan: JSON Schema for the CLI, validation of what comes back. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ClaudeCodeRuntime, StructuredOutputError } from "../../src/index.js";
import { planObjectSchema, validateObject } from "../../src/runtime/object-schema.js";
import { LIBRARY_VERSION } from "../../src/version.js";

describe("planObjectSchema", () => {
  it("refuses a schema JSON Schema cannot express, before any process starts", async () => {
    expect(() => planObjectSchema(z.object({ when: z.date() }))).toThrow(StructuredOutputError);
    expect(() => planObjectSchema(z.object({ n: z.bigint() }))).toThrow(/cannot be expressed as JSON Schema/);
    // Through the runtime: a CLI path that does not exist proves nothing was spawned or resolved first.
    const runtime = new ClaudeCodeRuntime({ projectDir: process.cwd(), models: { default: "sonnet" }, cliPath: "/nonexistent/claude", warm: false, reuse: false });
    const call = runtime.generateObjectResult({ prompt: "when?", schema: z.object({ when: z.date() }) });
    await expect(call).rejects.toBeInstanceOf(StructuredOutputError);
    await expect(call).rejects.toThrow(/Use JSON-representable types/);
  });

  it("wraps a non-object schema as { value } and unwraps it after validation", () => {
    const plan = planObjectSchema(z.array(z.string()));
    expect(plan.wrapped).toBe(true);
    expect(plan.jsonSchema).toMatchObject({ type: "object", required: ["value"], properties: { value: { type: "array" } } });
    expect(validateObject(z.array(z.string()), plan, { value: ["a", "b"] }, undefined)).toEqual(["a", "b"]);
  });

  it("reports each violation with its path and keeps what came back", () => {
    const schema = z.object({ title: z.string(), rows: z.number().int() });
    const plan = planObjectSchema(schema);
    let error: StructuredOutputError | undefined;
    try {
      validateObject(schema, plan, { title: 7, rows: 1.5 }, undefined);
    } catch (caught) {
      error = caught as StructuredOutputError;
    }
    expect(error).toBeInstanceOf(StructuredOutputError);
    expect(error!.message).toMatch(/title: .*; rows: /);
    expect(error!.received).toEqual({ title: 7, rows: 1.5 });
  });

  it("accepts structured output the CLI delivered as a JSON string", () => {
    const schema = z.object({ ok: z.boolean() });
    expect(validateObject(schema, planObjectSchema(schema), '{"ok":true}', undefined)).toEqual({ ok: true });
  });
});

describe("library version", () => {
  it("matches package.json", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    expect(LIBRARY_VERSION).toBe(pkg.version);
  });
});
