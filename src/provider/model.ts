/**
 * `ClaudeCodeLanguageModel`: an AI SDK `LanguageModelV3` on a `ClaudeCodeHost`. Each `doGenerate` /
 * `doStream` is a segment of a turn (turn.ts): a new turn on a pooled process, or the continuation of a
 * parked one when its prompt brings the results of that turn's pending tool calls.
 */
import type {
  JSONObject,
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage,
  SharedV3ProviderMetadata,
  SharedV3Warning,
} from "@ai-sdk/provider";
import { z } from "zod";
import { ToolDefinitionError } from "../errors/index.js";
import type { ClaudeCodeHost } from "../claude-code/host.js";
import { thinkingEnv, type ThinkingSetting, thinkingOptionSchema } from "../claude-code/thinking.js";
import type { CallLimits } from "../limits/index.js";
import { type AiSdkToolSetLike, fromAiSdkTools } from "../mcp/ai-sdk-tools.js";
import { type PreparedTool, prepareToolSet, TOOL_NAME_PATTERN, type ToolInputJsonSchema } from "../mcp/tools.js";
import { invalidInputError } from "../runtime/validation.js";
import { answeredIds, continuationOf, planPrompt } from "./prompt.js";
import { PROVIDER_ID } from "./results.js";
import { type AppTool, ProviderTurn, type SegmentSink } from "./turn.js";

/** Settings of one model (`provider(modelId, settings)`); each may also come per call in `providerOptions["claude-code"]`. */
export interface ClaudeCodeModelSettings {
  /** The model's thinking: `"adaptive"` (the CLI's default), `"off"`, or `{ budgetTokens }`. Part of the pool key. */
  thinking?: ThinkingSetting;
  /** The CLI's `--max-turns` for one turn (default: 100 with tools, 8 for JSON, 1 otherwise). */
  maxTurns?: number;
  /** A turn's timeout in ms, parked time included (default: the host's `timeoutMs`). */
  timeoutMs?: number;
  /** This model's transcripts: `false` for none, or a dir (and name); default: the host's `transcript`. */
  transcript?: { dir: string; name?: string } | false;
  /**
   * Tools the provider runs itself, in-process, in every call of this model (AI SDK `tool()`s with an
   * `execute` and a zod schema): the CLI calls them within its turn, and the app sees their calls and results
   * as provider-executed, dynamic parts (it does not run them). The call's own `tools` stay the app's.
   */
  tools?: AiSdkToolSetLike;
}

const thinkingSchema = thinkingOptionSchema.options[0];
const settingsSchema = z.strictObject({
  thinking: thinkingSchema.optional(),
  maxTurns: z.number().int().positive().optional(),
  timeoutMs: z.number().positive().optional(),
  transcript: z.union([z.literal(false), z.strictObject({ dir: z.string(), name: z.string().optional() })]).optional(),
  tools: z.record(z.string(), z.custom<AiSdkToolSetLike[string]>((value) => typeof value === "object" && value !== null, "an AI SDK tool()")).optional(),
});
const callOptionsSchema = settingsSchema.pick({ thinking: true, maxTurns: true });

/** A model's own tools, prepared once per model (a bad one throws `ToolDefinitionError` when the model is made). */
export function prepareProviderTools(settings: ClaudeCodeModelSettings): PreparedTool[] {
  return settings.tools ? prepareToolSet(fromAiSdkTools(settings.tools)) : [];
}

export function parseModelSettings(settings: unknown, subject: string): ClaudeCodeModelSettings {
  const schema = subject.includes("providerOptions") ? callOptionsSchema : settingsSchema;
  const parsed = schema.safeParse(settings ?? {});
  if (!parsed.success) throw invalidInputError(subject, schema, parsed.error, settings);
  return parsed.data as ClaudeCodeModelSettings;
}

/** What the model shares with its provider: the host, the limits, the parked turns. */
export interface ProviderContext {
  host: ClaudeCodeHost;
  limits: CallLimits;
  parkMs: number;
  /** Parked turns by pending tool call id. */
  parked: Map<string, ProviderTurn>;
  /** Turns in flight (close() ends them). */
  turns: Set<ProviderTurn>;
}

/** Call options the CLI has no way to honour, each warned about when set. */
const UNSUPPORTED: Array<[keyof LanguageModelV3CallOptions, string]> = [
  ["temperature", "Claude Code sets no temperature"],
  ["topP", "Claude Code sets no top-p"],
  ["topK", "Claude Code sets no top-k"],
  ["presencePenalty", "the Messages API has no presence penalty"],
  ["frequencyPenalty", "the Messages API has no frequency penalty"],
  ["seed", "the Messages API has no seed"],
  ["maxOutputTokens", "Claude Code chooses the output limit itself"],
];

export class ClaudeCodeLanguageModel implements LanguageModelV3 {
  readonly specificationVersion = "v3" as const;
  readonly provider = PROVIDER_ID;
  readonly supportedUrls: Record<string, RegExp[]> = {};

  constructor(
    readonly modelId: string,
    /** The pinned model id the CLI is given. */
    readonly cliModel: string,
    private readonly settings: ClaudeCodeModelSettings,
    private readonly context: ProviderContext,
  ) {
    this.providerTools = prepareProviderTools(settings);
  }

  private readonly providerTools: PreparedTool[];

  async doGenerate(options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    const collected = collector(options);
    this.start(options, collected.sink);
    return collected.result;
  }

  async doStream(options: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
    const cancel = new AbortController();
    let controller!: ReadableStreamDefaultController<LanguageModelV3StreamPart>;
    let closed = false;
    const stream = new ReadableStream<LanguageModelV3StreamPart>({
      start: (c) => void (controller = c),
      // A reader that stops reading ends the turn, as an abort does.
      cancel: (reason) => void ((closed = true), cancel.abort(reason)),
    });
    const signal = options.abortSignal ? AbortSignal.any([options.abortSignal, cancel.signal]) : cancel.signal;
    this.start(options, {
      prompt: options.prompt,
      signal,
      warnings: [],
      part: (part) => void (closed || controller.enqueue(part)),
      end: () => void (closed || ((closed = true), controller.close())),
    });
    return { stream };
  }

  /** The call as a new turn, or as the continuation of the parked turn its tool results answer. */
  private start(options: LanguageModelV3CallOptions, sink: SegmentSink): void {
    const warnings = this.warningsFor(options);
    for (const id of answeredIds(options.prompt)) {
      const turn = this.context.parked.get(id);
      if (!turn?.parked) continue;
      const { key, length, pending } = turn.parkedPrompt;
      const continuation = continuationOf(options.prompt, key, length, pending);
      if (continuation) {
        for (const pendingId of pending) this.context.parked.delete(pendingId);
        sink.warnings.push(...warnings);
        turn.resume(sink, continuation.results);
        return;
      }
    }
    const own = parseModelSettings(options.providerOptions?.[PROVIDER_ID], `providerOptions["${PROVIDER_ID}"]`);
    const settings = { ...this.settings, ...own };
    const planned = planPrompt(options.prompt);
    sink.warnings.push(...warnings, ...planned.warnings);
    const json = jsonPlan(options, sink.warnings);
    const appTools = toolsFor(options, sink.warnings);
    const clash = appTools.find((tool) => this.providerTools.some((own) => own.name === tool.name));
    if (clash) throw new ToolDefinitionError(`Tool "${clash.name}" is both a call's tool (the app runs it) and one of the model's settings.tools (the provider runs it); give one of them another name.`);
    const maxTurns = settings.maxTurns ?? (appTools.length + this.providerTools.length > 0 ? 100 : json ? 8 : 1);
    const turn = new ProviderTurn(
      {
        host: this.context.host,
        limits: this.context.limits,
        call: {
          model: this.cliModel,
          system: planned.system,
          prompt: planned.prompt,
          maxTurns,
          jsonSchema: json?.schema,
          launchSettings: settings.thinking ? thinkingEnv(settings.thinking) : undefined,
          timeoutMs: settings.timeoutMs,
          transcript: settings.transcript,
        },
        appTools,
        providerTools: this.providerTools,
        json: json && { wrapped: json.wrapped },
        parkMs: this.context.parkMs,
        onParked: (parkedTurn, pending) => {
          for (const id of pending) this.context.parked.set(id, parkedTurn);
        },
        onEnded: (ended) => {
          for (const [id, parkedTurn] of this.context.parked) if (parkedTurn === ended) this.context.parked.delete(id);
        },
      },
      sink,
    );
    this.context.turns.add(turn);
    void turn.done.finally(() => this.context.turns.delete(turn));
  }

  private warningsFor(options: LanguageModelV3CallOptions): SharedV3Warning[] {
    const warnings: SharedV3Warning[] = [];
    for (const [name, details] of UNSUPPORTED) if (options[name] !== undefined) warnings.push({ type: "unsupported", feature: name, details: `${details}; the option was not applied.` });
    if (options.stopSequences && options.stopSequences.length > 0) warnings.push({ type: "unsupported", feature: "stopSequences", details: "Claude Code takes no stop sequences; the option was not applied." });
    return warnings;
  }
}

/** `responseFormat: json` with a schema → the CLI's structured output (a non-object schema wrapped as `{ value }`). */
function jsonPlan(options: LanguageModelV3CallOptions, warnings: SharedV3Warning[]): { schema: Record<string, unknown>; wrapped: boolean } | undefined {
  const format = options.responseFormat;
  if (format?.type !== "json") return undefined;
  if (!format.schema) {
    warnings.push({ type: "unsupported", feature: "responseFormat", details: "JSON without a schema is not supported by Claude Code's structured output; the call ran as text." });
    return undefined;
  }
  const { $schema: _ignored, ...schema } = format.schema as Record<string, unknown>;
  if (schema.type === "object") return { schema, wrapped: false };
  return { schema: { type: "object", properties: { value: schema }, required: ["value"], additionalProperties: false }, wrapped: true };
}

/** The call's function tools as the app's deferred tools; provider tools and forced choices warn. */
function toolsFor(options: LanguageModelV3CallOptions, warnings: SharedV3Warning[]): AppTool[] {
  const choice = options.toolChoice;
  if (choice?.type === "none") return [];
  if (choice && choice.type !== "auto") warnings.push({ type: "unsupported", feature: "toolChoice", details: `Claude Code cannot force a tool (${choice.type === "tool" ? `tool ${choice.toolName}` : choice.type}); the model chose freely.` });
  const tools: AppTool[] = [];
  for (const tool of options.tools ?? []) {
    if (tool.type !== "function") {
      warnings.push({ type: "unsupported", feature: `provider tool ${tool.id}`, details: "Provider-defined tools do not run on Claude Code; the tool was not offered." });
      continue;
    }
    if (!TOOL_NAME_PATTERN.test(tool.name)) throw new ToolDefinitionError(`Tool "${tool.name}" has an invalid name: MCP tool names must match ${TOOL_NAME_PATTERN.source} (letters, digits, _ and -, at most 64).`);
    const { $schema: _ignored, ...schema } = tool.inputSchema as Record<string, unknown>;
    if (schema.type !== "object") throw new ToolDefinitionError(`Tool "${tool.name}" input schema must describe a JSON object (MCP tools take named arguments); got type ${JSON.stringify(schema.type)}.`);
    tools.push({ name: tool.name, description: tool.description ?? "", inputJsonSchema: schema as ToolInputJsonSchema });
  }
  return tools;
}

/** A segment's parts gathered into `doGenerate`'s result. */
function collector(options: LanguageModelV3CallOptions): { sink: SegmentSink; result: Promise<LanguageModelV3GenerateResult> } {
  const content: LanguageModelV3Content[] = [];
  const open = new Map<string, { type: "text" | "reasoning"; text: string }>();
  let warnings: SharedV3Warning[] = [];
  let response: LanguageModelV3GenerateResult["response"];
  let finish: { usage: LanguageModelV3Usage; finishReason: LanguageModelV3FinishReason; providerMetadata?: SharedV3ProviderMetadata } | undefined;
  let failure: { error: unknown } | undefined;
  let settle!: () => void;
  const ended = new Promise<void>((resolve) => (settle = resolve));
  const sink: SegmentSink = {
    prompt: options.prompt,
    signal: options.abortSignal,
    warnings: [],
    part(part) {
      switch (part.type) {
        case "stream-start":
          warnings = part.warnings;
          return;
        case "response-metadata":
          response ??= { ...(part.id ? { id: part.id } : {}), ...(part.timestamp ? { timestamp: part.timestamp } : {}), ...(part.modelId ? { modelId: part.modelId } : {}) };
          return;
        case "text-start":
        case "reasoning-start": {
          const entry = { type: part.type === "text-start" ? ("text" as const) : ("reasoning" as const), text: "" };
          open.set(part.id, entry);
          content.push(entry as LanguageModelV3Content);
          return;
        }
        case "text-delta":
        case "reasoning-delta": {
          const entry = open.get(part.id);
          if (entry) entry.text += part.delta;
          return;
        }
        case "tool-call":
          content.push({ type: "tool-call", toolCallId: part.toolCallId, toolName: part.toolName, input: part.input, ...(part.providerExecuted ? { providerExecuted: true, dynamic: true } : {}) });
          return;
        case "tool-result":
          content.push(part);
          return;
        case "finish":
          finish = { usage: part.usage, finishReason: part.finishReason, ...(part.providerMetadata ? { providerMetadata: part.providerMetadata } : {}) };
          return;
        case "error":
          failure = { error: part.error };
          return;
        default:
          return;
      }
    },
    end: () => settle(),
  };
  const result = ended.then((): LanguageModelV3GenerateResult => {
    if (failure || !finish) throw failure ? failure.error : new Error("the turn ended without a result");
    return {
      // Blocks that streamed nothing are left out, as an empty text part says nothing.
      content: content.filter((part) => !((part.type === "text" || part.type === "reasoning") && part.text === "")),
      finishReason: finish.finishReason,
      usage: finish.usage,
      ...(finish.providerMetadata ? { providerMetadata: finish.providerMetadata } : {}),
      ...(response ? { response } : {}),
      warnings,
    };
  });
  return { sink, result };
}

export type { JSONObject };
