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

  it("describes the llm block: backends, required default model, prompt-caching defaults, no unknown keys", () => {
    const schema = ktxLlmConfigJsonSchema() as any;
    const llm = schema.properties.llm;
    expect(llm.additionalProperties).toBe(false);
    expect(llm.properties.provider.properties.backend.enum).toEqual(["none", "anthropic", "vertex", "gateway", "claude-code"]);
    expect(llm.properties.models.required).toEqual(["default"]);
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
});
