/**
 * The caller's zod schema as the JSON Schema the CLI's StructuredOutput tool takes, and validation
 * of what comes back with the same zod schema. Tool input must be an object, so other schemas are
 * wrapped as `{ value: … }` and unwrapped after validation.
 */
import { z } from "zod";
import { StructuredOutputError } from "../errors/index.js";

export interface ObjectSchemaPlan {
  jsonSchema: Record<string, unknown>;
  wrapped: boolean;
}

export function planObjectSchema(schema: z.ZodType): ObjectSchemaPlan {
  let jsonSchema: Record<string, unknown>;
  try {
    jsonSchema = z.toJSONSchema(schema, { io: "input", unrepresentable: "throw" }) as Record<string, unknown>;
  } catch (error) {
    throw new StructuredOutputError(
      `The schema cannot be expressed as JSON Schema (${(error as Error).message}), so the CLI cannot enforce it. Use JSON-representable types (no dates, bigints, functions, transforms without input types).`,
      undefined,
    );
  }
  delete jsonSchema.$schema;
  if (jsonSchema.type === "object") return { jsonSchema, wrapped: false };
  return {
    jsonSchema: { type: "object", properties: { value: jsonSchema }, required: ["value"], additionalProperties: false },
    wrapped: true,
  };
}

/** Validates the CLI's `structured_output` with the caller's schema. */
export function validateObject<T>(schema: z.ZodType<T>, plan: ObjectSchemaPlan, received: unknown, prose: string | undefined): T {
  if (received === undefined || received === null) {
    throw new StructuredOutputError(
      `The model finished without calling the StructuredOutput tool (it answered in prose${prose ? `: ${JSON.stringify(prose.slice(0, 300))}` : ""}), so there is no object. Retry, or make the prompt ask for the structured answer explicitly.`,
      prose,
    );
  }
  const candidate = typeof received === "string" ? tryJson(received) : received;
  const value = plan.wrapped ? (candidate as { value?: unknown } | undefined)?.value : candidate;
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`);
    throw new StructuredOutputError(
      `The structured output does not match the schema: ${issues.join("; ")}.`,
      received,
      issues,
    );
  }
  return parsed.data;
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
