/**
 * AI SDK tools as KTX tool descriptors (tools.ts): KTX code written against the AI SDK keeps its
 * `tool({ ... })` definitions, and they run through the same MCP bridge as native descriptors.
 */
import { randomUUID } from "node:crypto";
import { ToolDefinitionError } from "../errors/index.js";
import { type KtxRuntimeToolDescriptor, type KtxToolContext, type KtxToolOutput, describeValue, isZodV4Schema, normalizeToolOutput } from "./tools.js";

/**
 * An AI SDK v6 tool as far as `fromAiSdkTools` takes it: every `tool({ ... })` fits. Our own shape, not the
 * AI SDK's `ToolSet`, so the core's declarations need no `ai` (an optional peer).
 */
export interface AiSdkToolLike {
  type?: string | undefined;
  description?: string | undefined;
  inputSchema?: unknown;
  needsApproval?: unknown;
  execute?: ((input: never, options: never) => unknown) | undefined;
  toModelOutput?: ((options: never) => unknown) | undefined;
}

/** An AI SDK `ToolSet`: tools by name. */
export type AiSdkToolSetLike = Readonly<Record<string, AiSdkToolLike>>;

/** The parts of an AI SDK tool this module reads, with the calls it makes. */
interface AiSdkToolView {
  type?: string;
  description?: string;
  inputSchema?: unknown;
  needsApproval?: unknown;
  execute?: (input: unknown, options: { toolCallId: string; messages: []; abortSignal?: AbortSignal }) => unknown;
  toModelOutput?: (options: { toolCallId: string; input: unknown; output: unknown }) => unknown;
}

/**
 * Converts AI SDK v6 tools (`tool({ description, inputSchema: z.object(...), execute })`) into descriptors.
 * `execute` gets `{ toolCallId, messages: [], abortSignal }`; an async-iterable result (preliminary outputs) counts
 * by its last value; `toModelOutput`, when present, decides what the model sees.
 * Throws `ToolDefinitionError` naming the tool when it has no execute, is provider-executed, needs approval, or its
 * input schema is not a zod v4 schema.
 */
export function fromAiSdkTools(toolSet: AiSdkToolSetLike): KtxRuntimeToolDescriptor[] {
  return Object.entries(toolSet).map(([name, raw]) => {
    const t = raw as AiSdkToolView;
    if (t.type === "provider") {
      throw new ToolDefinitionError(`Tool "${name}" is a provider-defined tool; it runs at the model provider and cannot be hosted for Claude Code.`);
    }
    const execute = t.execute;
    if (typeof execute !== "function") {
      throw new ToolDefinitionError(`Tool "${name}" has no execute function; Claude Code can only call tools that KTX executes.`);
    }
    if (t.needsApproval !== undefined && t.needsApproval !== false) {
      throw new ToolDefinitionError(`Tool "${name}" sets needsApproval, which cannot be honoured through Claude Code; remove it or check inside execute.`);
    }
    if (!isZodV4Schema(t.inputSchema)) {
      throw new ToolDefinitionError(
        `Tool "${name}" inputSchema must be a zod v4 schema (z.object({...})); AI SDK jsonSchema()/zodSchema() wrappers and zod v3 schemas are not supported. Got ${describeValue(t.inputSchema)}.`,
      );
    }
    const toModelOutput = t.toModelOutput;
    return {
      name,
      description: t.description ?? "",
      inputSchema: t.inputSchema,
      async execute(input: unknown, context: KtxToolContext): Promise<unknown> {
        const toolCallId = context.toolUseId ?? `ktx_${randomUUID()}`;
        const output = await lastValue(execute(input, { toolCallId, messages: [], abortSignal: context.signal }));
        if (!toModelOutput) return output;
        return fromModelOutput(await toModelOutput({ toolCallId, input, output }), output);
      },
    };
  });
}

async function lastValue(result: unknown): Promise<unknown> {
  if (typeof result === "object" && result !== null && Symbol.asyncIterator in result && typeof (result as { then?: unknown }).then !== "function") {
    let last: unknown;
    for await (const value of result as AsyncIterable<unknown>) last = value;
    return last;
  }
  return await result;
}

/** Maps an AI SDK `ToolResultOutput` to KTX output; error kinds throw so they count as tool failures. */
function fromModelOutput(modelOutput: unknown, output: unknown): KtxToolOutput {
  const m = modelOutput as { type?: unknown; value?: unknown; reason?: unknown };
  const withStructured = (markdown: string): KtxToolOutput => (output === undefined ? { markdown } : { markdown, structured: output });
  switch (m?.type) {
    case "text":
      return withStructured(String(m.value));
    case "json":
      return withStructured(normalizeToolOutput(m.value ?? null).markdown);
    case "content": {
      const parts = Array.isArray(m.value) ? (m.value as Array<{ type?: unknown; text?: unknown }>) : [];
      // Only text reaches the model through this bridge; other parts are named so the omission is visible.
      return withStructured(parts.map((p) => (p.type === "text" ? String(p.text) : `[${String(p.type)} content omitted]`)).join("\n\n"));
    }
    case "error-text":
      throw new Error(String(m.value));
    case "error-json":
      throw new Error(normalizeToolOutput(m.value ?? null).markdown);
    case "execution-denied":
      throw new Error(`Tool execution denied${typeof m.reason === "string" ? `: ${m.reason}` : "."}`);
    default:
      throw new Error(`toModelOutput returned an unsupported output type ${JSON.stringify(m?.type)}.`);
  }
}
