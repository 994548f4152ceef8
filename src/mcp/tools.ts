/**
 * KTX tool descriptors and their preparation for the in-process MCP server.
 *
 * A descriptor is plain data (name, description, zod input schema, execute). `prepareToolSet` validates a set of
 * them once, up front, and converts each input schema to the JSON Schema the model sees; the bridge then only
 * dispatches. See docs/guides/agent-loops.md.
 */
import { z } from "zod";
import { InvalidInputError, ToolDefinitionError } from "../errors/index.js";

/** Name under which the KTX tools are registered with the CLI (`--mcp-config` / `sdkMcpServers`). */
export const KTX_MCP_SERVER_NAME = "ktx";

/** The name the model and the CLI use for a KTX tool: `mcp__ktx__<name>`. */
export function ktxToolId(name: string): string {
  return `mcp__${KTX_MCP_SERVER_NAME}__${name}`;
}

/** MCP tool names; also keeps `mcp__ktx__<name>` within the CLI's tool-name rules. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** What a tool produces for the model. Only `markdown` reaches the model; `structured` is for the caller. */
export interface KtxToolOutput {
  markdown: string;
  structured?: unknown;
}

export interface KtxToolContext {
  /** Aborted when the CLI cancels the call, the tool times out, or the bridge closes. */
  signal: AbortSignal;
  /** The Anthropic `tool_use` id (`toolu_…`) the CLI reports for this call, when it reports one. */
  toolUseId?: string;
}

export interface KtxRuntimeToolDescriptor<I = any> {
  name: string;
  /** Shown to the model; say what the tool does and when to use it. */
  description: string;
  /** Must describe a JSON object (normally `z.object({...})`): MCP tools take an object of named arguments. */
  inputSchema: z.ZodType<I>;
  /**
   * Receives the arguments parsed by `inputSchema` (defaults applied, transforms run).
   * May return a string (markdown), a `KtxToolOutput`, or JSON-serialisable data (see `normalizeToolOutput`).
   * Throwing reports a tool error to the model; it does not end the run.
   */
  execute(input: I, context: KtxToolContext): unknown;
}

/** A descriptor in a record keyed by tool name; `name`, if given, must equal the key. */
export type KtxRuntimeToolEntry<I = any> = Omit<KtxRuntimeToolDescriptor<I>, "name"> & { name?: string };

/**
 * Either an array of descriptors, or a record keyed by tool name (like an AI SDK `ToolSet`).
 * Order is kept: it is the order of `tools/list`.
 */
export type KtxRuntimeToolSet = readonly KtxRuntimeToolDescriptor[] | Readonly<Record<string, KtxRuntimeToolEntry>>;

/** Identity helper that infers `I` from the schema, so `execute` gets a typed input. */
export function defineKtxTool<I>(descriptor: KtxRuntimeToolDescriptor<I>): KtxRuntimeToolDescriptor<I> {
  return descriptor;
}

/** JSON Schema of a tool's input; MCP requires `type: "object"` at the root. */
export type ToolInputJsonSchema = { type: "object"; [key: string]: unknown };

export interface PreparedTool {
  readonly name: string;
  readonly description: string;
  readonly inputJsonSchema: ToolInputJsonSchema;
  readonly inputSchema: z.ZodType;
  execute(input: unknown, context: KtxToolContext): unknown;
}

/**
 * Turns whatever a tool returned into what the model sees.
 * - `{ markdown, structured? }` (no other keys) passes through;
 * - a string is the markdown;
 * - `undefined` is an empty result (the CLI shows the model "(<tool> completed with no output)");
 * - anything else is pretty JSON in a ```json fence, with the value kept as `structured`.
 * Throws `InvalidInputError` when the value cannot be serialised (BigInt, cycles, functions); the bridge turns that
 * into a tool error.
 */
export function normalizeToolOutput(value: unknown): KtxToolOutput {
  if (value === undefined) return { markdown: "" };
  if (typeof value === "string") return { markdown: value };
  if (isKtxToolOutput(value)) {
    return value.structured === undefined ? { markdown: value.markdown } : { markdown: value.markdown, structured: value.structured };
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(value, null, 2);
  } catch (error) {
    throw new InvalidInputError(
      `Tool output cannot be serialised to JSON (${errorMessage(error)}). ` +
        `Return a string, a { markdown } object, or JSON-serialisable data.`,
      { cause: error },
    );
  }
  if (json === undefined) {
    throw new InvalidInputError(
      `Tool output of type ${typeof value} cannot be serialised to JSON. Return a string, a { markdown } object, or JSON-serialisable data.`,
    );
  }
  return { markdown: fenced(json, "json"), structured: value };
}

function isKtxToolOutput(value: unknown): value is KtxToolOutput {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  if (typeof (value as { markdown?: unknown }).markdown !== "string") return false;
  // Only exactly this shape: a domain object that merely has a `markdown` field is data, not an output envelope.
  return Object.keys(value).every((key) => key === "markdown" || key === "structured");
}

/** A fence longer than any backtick run inside, so JSON strings containing ``` cannot close it early. */
function fenced(body: string, lang: string): string {
  let longest = 0;
  for (const match of body.matchAll(/`{3,}/g)) longest = Math.max(longest, match[0].length);
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}${lang}\n${body}\n${fence}`;
}

/**
 * Validates a tool set and converts each input schema to JSON Schema (zod v4 `toJSONSchema`, input side, so
 * defaulted fields are optional). Throws `ToolDefinitionError` naming the tool for: a bad or duplicate name, a
 * missing execute, a schema that is not zod v4, cannot be represented in JSON Schema, or is not an object.
 */
export function prepareToolSet(toolSet: KtxRuntimeToolSet): PreparedTool[] {
  const entries: Array<[label: string, entry: unknown]> = [];
  if (Array.isArray(toolSet)) {
    toolSet.forEach((entry: unknown, index) => {
      const name = (entry as { name?: unknown } | null)?.name;
      entries.push([typeof name === "string" ? name : `#${index}`, entry]);
    });
  } else if (typeof toolSet === "object" && toolSet !== null) {
    for (const [key, entry] of Object.entries(toolSet)) {
      const name = (entry as { name?: unknown } | null)?.name;
      if (name !== undefined && name !== key) {
        throw new ToolDefinitionError(`Tool "${key}" has name "${String(name)}"; in a record of tools the name must equal the key (or be omitted).`);
      }
      entries.push([key, entry === null || typeof entry !== "object" ? entry : { ...entry, name: key }]);
    }
  } else {
    throw new ToolDefinitionError(`The tool set must be an array of tool descriptors or a record keyed by tool name; got ${describeValue(toolSet)}.`);
  }

  const seen = new Set<string>();
  return entries.map(([label, entry]) => {
    const tool = prepareTool(label, entry);
    if (seen.has(tool.name)) throw new ToolDefinitionError(`Tool "${tool.name}" is defined more than once; tool names must be unique.`);
    seen.add(tool.name);
    return tool;
  });
}

/**
 * A schema's JSON Schema (without the `$schema` marker: the dialect is implied by MCP, 2020-12, and the marker
 * only adds noise to every tool definition sent to the model), converted once per schema object: KTX builds
 * its tool sets per call from the same schemas, and the conversion, then a copy per call, was a measurable
 * share of a reused loop's host CPU (docs/performance.md). Every caller shares one deep-frozen object, so
 * nothing one does to it reaches another; its JSON text is kept beside it for the pool's keys.
 */
const jsonSchemaCache = new WeakMap<object, Readonly<Record<string, unknown>>>();
const jsonSchemaTexts = new WeakMap<object, string>();
function inputJsonSchema(inputSchema: z.ZodType): Readonly<Record<string, unknown>> {
  let cached = jsonSchemaCache.get(inputSchema);
  if (cached === undefined) {
    const converted = z.toJSONSchema(inputSchema, { io: "input" }) as Record<string, unknown>;
    delete converted.$schema;
    const text = JSON.stringify(converted);
    cached = deepFreeze(JSON.parse(text) as Record<string, unknown>);
    jsonSchemaCache.set(inputSchema, cached);
    jsonSchemaTexts.set(cached, text);
  }
  return cached;
}

/** The JSON text of a prepared tool's `inputJsonSchema` (its own, if the object did not come from prepareToolSet). */
export function inputJsonSchemaText(schema: object): string {
  return jsonSchemaTexts.get(schema) ?? JSON.stringify(schema);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function prepareTool(label: string, entry: unknown): PreparedTool {
  if (typeof entry !== "object" || entry === null) {
    throw new ToolDefinitionError(`Tool "${label}" must be an object with name, description, inputSchema and execute; got ${describeValue(entry)}.`);
  }
  const { name, description, inputSchema, execute } = entry as Record<string, unknown>;
  if (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name)) {
    throw new ToolDefinitionError(
      `Tool "${label}" has an invalid name ${JSON.stringify(name)}: MCP tool names must match ${TOOL_NAME_PATTERN.source} (letters, digits, _ and -, at most 64).`,
    );
  }
  if (description !== undefined && typeof description !== "string") {
    throw new ToolDefinitionError(`Tool "${name}" has a non-string description (${describeValue(description)}).`);
  }
  if (typeof execute !== "function") {
    throw new ToolDefinitionError(`Tool "${name}" has no execute function.`);
  }
  if (!isZodV4Schema(inputSchema)) {
    throw new ToolDefinitionError(
      `Tool "${name}" inputSchema must be a zod v4 schema such as z.object({...}); got ${describeValue(inputSchema)}` +
        (isZodV3Schema(inputSchema) ? " (a zod v3 schema; import from \"zod\" v4 instead of \"zod/v3\")." : "."),
    );
  }
  let jsonSchema: Readonly<Record<string, unknown>>;
  try {
    jsonSchema = inputJsonSchema(inputSchema);
  } catch (error) {
    throw new ToolDefinitionError(`Tool "${name}" inputSchema cannot be converted to JSON Schema: ${errorMessage(error)}.`, { cause: error });
  }
  if (jsonSchema.type !== "object") {
    throw new ToolDefinitionError(
      `Tool "${name}" inputSchema must be a z.object({...}) (MCP tools take an object of named arguments); got a zod ${inputSchema._zod.def.type} schema.`,
    );
  }
  return {
    name,
    description: description ?? "",
    inputJsonSchema: jsonSchema as ToolInputJsonSchema,
    inputSchema,
    execute: execute as PreparedTool["execute"],
  };
}

export function isZodV4Schema(value: unknown): value is z.ZodType {
  const internals = (value as { _zod?: { def?: { type?: unknown } } } | null | undefined)?._zod;
  return typeof value === "object" && value !== null && typeof internals?.def?.type === "string";
}

function isZodV3Schema(value: unknown): boolean {
  return typeof value === "object" && value !== null && "_def" in value && !("_zod" in value);
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/** A value's kind, for error messages. */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return `an object (${value.constructor?.name ?? "no prototype"})`;
  return typeof value;
}
