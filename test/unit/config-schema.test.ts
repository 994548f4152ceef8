/** docs/ktx-llm-config.schema.json is exactly what z.toJSONSchema generates from the config schema. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ktxLlmConfigJsonSchema } from "../../src/index.js";
import { ktxLlmConfigJsonSchemaText } from "../../src/config/json-schema.js";

const committed = fileURLToPath(new URL("../../docs/ktx-llm-config.schema.json", import.meta.url));

describe("the editor JSON Schema", () => {
  it("is committed exactly as generated (regenerate: npm run build && node dist/config/json-schema.js)", () => {
    expect(readFileSync(committed, "utf8")).toBe(ktxLlmConfigJsonSchemaText());
  });

  it("describes the llm block as KTX does: six backends, models as a partial record, vertex.location required, prompt-caching defaults", () => {
    const schema = ktxLlmConfigJsonSchema() as any;
    const llm = schema.properties.llm;
    expect(llm.additionalProperties).toBe(false);
    expect(llm.properties.provider.properties.backend.enum).toEqual(["none", "anthropic", "vertex", "gateway", "claude-code", "codex"]);
    expect(llm.properties.provider.properties.vertex.required).toEqual(["location"]);
    expect(llm.properties.models.required).toBeUndefined();
    expect(Object.keys(llm.properties.models.properties)).toEqual(["default", "triage", "candidateExtraction", "curator", "reconcile", "repair"]);
    const caching = llm.properties.promptCaching.properties;
    expect(Object.fromEntries(Object.entries(caching).map(([key, value]) => [key, (value as { default: unknown }).default]))).toEqual({
      enabled: true,
      cacheSystem: true,
      cacheTools: true,
      cacheHistory: true,
      systemTtl: "1h",
      toolsTtl: "1h",
      historyTtl: "5m",
      vertexFallbackTo5m: false,
    });
  });

  it("describes ingest.workUnits and ingest.rateLimit with KTX's defaults, leaving ingest's other keys to KTX", () => {
    const ingest = (ktxLlmConfigJsonSchema() as any).properties.ingest;
    expect(ingest.additionalProperties).toEqual({});
    const defaults = (block: any) => Object.fromEntries(Object.entries(block.properties).map(([key, value]) => [key, (value as { default?: unknown }).default]));
    expect(defaults(ingest.properties.workUnits)).toEqual({ stepBudget: 40, maxConcurrency: 1, failureMode: "continue" });
    const rateLimit = ingest.properties.rateLimit;
    expect(defaults(rateLimit)).toEqual({ enabled: true, throttleThreshold: 0.8, minConcurrencyUnderPressure: 1, maxWaitMs: undefined, retry: {} });
    expect(defaults(rateLimit.properties.retry)).toEqual({ maxAttempts: 6, baseDelayMs: 1000, maxDelayMs: 60000, jitter: true });
  });
});
