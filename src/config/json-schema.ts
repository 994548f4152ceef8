/**
 * The JSON Schema of ktx.yaml's `llm` block for editors (yaml-language-server, VS Code), generated
 * from the zod schema with `z.toJSONSchema`. docs/ktx-llm-config.schema.json is this output; a unit
 * test fails when the two differ. Regenerate with `npm run build && node dist/config/json-schema.js`.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { resolve } from "node:path";
import { z } from "zod";
import { ktxYamlLlmSchema } from "./schema.js";

/** The schema object (input side: what a user may write, defaults shown as `default`). */
export function ktxLlmConfigJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ktxYamlLlmSchema, { io: "input", target: "draft-2020-12" }) as Record<string, unknown>;
  return { $schema: schema.$schema, title: "KTX llm configuration (ktx.yaml)", ...schema };
}

/** The file's exact text (2-space JSON and a final newline). */
export function ktxLlmConfigJsonSchemaText(): string {
  return `${JSON.stringify(ktxLlmConfigJsonSchema(), null, 2)}\n`;
}

export function writeKtxLlmConfigJsonSchema(path: string): void {
  writeFileSync(path, ktxLlmConfigJsonSchemaText());
}

// `node dist/config/json-schema.js [path]` rewrites the committed file.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const target = resolve(process.argv[2] ?? "docs/ktx-llm-config.schema.json");
  writeKtxLlmConfigJsonSchema(target);
  process.stdout.write(`wrote ${target}\n`);
}
