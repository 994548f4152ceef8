/**
 * The call inputs' schemas: every field of KTX's port (port/ktx-port.ts) and this library's call
 * options, strict like the runtime options, so `maxturns: 2` is refused with the key named instead of
 * being ignored. Only shapes are checked here; the deeper checks stay where they were (tools in
 * prepareToolSet, the prompt's emptiness, `transcript.name`). The input is used as given, never the
 * parsed copy: signals, schemas and tools keep their identity.
 */
import { z } from "zod";
import { MODEL_ROLES } from "../port/ktx-port.js";
import { checkInput, timeoutMsSchema } from "./validation.js";

const fn = (what: string) => z.custom<(...args: never[]) => unknown>((value) => typeof value === "function", what);
const signal = z
  .custom<AbortSignal>((value) => typeof value === "object" && value !== null && typeof (value as AbortSignal).aborted === "boolean" && typeof (value as AbortSignal).addEventListener === "function", "an AbortSignal")
  .optional();
const role = z.enum(MODEL_ROLES).describe(`one of ${MODEL_ROLES.join(", ")}`);
const toolSet = z.custom((value) => typeof value === "object" && value !== null, "a tool set: tools by name ({ search: tool }) or an array of tools");

const callOptions = {
  abortSignal: signal,
  signal,
  timeoutMs: timeoutMsSchema.optional(),
  transcript: z
    .union([z.literal(false), z.strictObject({ dir: z.string().min(1), name: z.string().min(1).optional() })])
    .describe("false, or { dir, name? }")
    .optional(),
};

const textFields = {
  ...callOptions,
  role: role.optional(),
  prompt: z.string(),
  system: z.string().optional(),
  temperature: z.number().optional(),
  tools: toolSet.optional(),
  maxTurns: z.number().int().positive().optional(),
  onMetrics: fn("a function ({ totalMs, usage }) => void").optional(),
};

export const textInputSchema = z.strictObject(textFields);

export const objectInputSchema = z.strictObject({
  ...textFields,
  schema: z.custom<z.ZodType>((value) => typeof (value as { safeParse?: unknown } | null)?.safeParse === "function", "a zod schema"),
});

export const loopParamsSchema = z.strictObject({
  ...callOptions,
  modelRole: role,
  systemPrompt: z.string(),
  userPrompt: z.string(),
  toolSet,
  stepBudget: z.number().int().positive(),
  telemetryTags: z.record(z.string(), z.string()).optional(),
  onStepFinish: fn("a function ({ stepIndex, stepBudget }) => void").optional(),
});

export const checkTextInput = (input: unknown): void => checkInput("generateText input", textInputSchema, input);
export const checkObjectInput = (input: unknown): void => checkInput("generateObject input", objectInputSchema, input);
export const checkLoopParams = (params: unknown): void => checkInput("runAgentLoop params", loopParamsSchema, params);
