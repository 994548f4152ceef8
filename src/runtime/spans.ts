/**
 * OpenTelemetry spans shaped like the AI SDK's (`ai` v6, src/telemetry/ and generate-text/): a call is
 * `ai.generateText` or `ai.generateObject`, each loop step an `ai.generateText.doGenerate` child, each
 * tool call an `ai.toolCall` child, with the AI SDK's attribute names (`operation.name`,
 * `ai.telemetry.metadata.*`, `ai.usage.*`, `ai.toolCall.*`). So a KTX user who traces the anthropic
 * backend sees the same trace shape from claude-code. Only `@opentelemetry/api`: the caller's tracer
 * (or the global one) records, and nothing is exported by us. Off unless `isEnabled: true`, as in the
 * AI SDK. Parents are passed explicitly, so the tree holds without a context manager.
 */
import { type Attributes, type AttributeValue, type Span, type Tracer, SpanStatusCode, context, trace } from "@opentelemetry/api";
import type { KtxRuntimeToolSet, KtxToolContext } from "../mcp/tools.js";
import { tokenUsage } from "./port-support.js";
import type { RunUsage } from "./types.js";
import { InvalidInputError } from "../errors/index.js";

/**
 * The AI SDK's `TelemetrySettings` (`ai` v6), restated with the fields read here: an AI SDK settings object
 * fits it, and the core's declarations need no `ai` (an optional peer, for `ktx-claude-code/ai-sdk` only).
 */
export interface TelemetrySettings {
  isEnabled?: boolean | undefined;
  recordInputs?: boolean | undefined;
  recordOutputs?: boolean | undefined;
  functionId?: string | undefined;
  metadata?: Record<string, AttributeValue> | undefined;
  tracer?: Tracer | undefined;
}

/** The AI SDK's settings, or KTX's factory shape (`deps.telemetry.createTelemetry(telemetryTags)`). */
export type ExperimentalTelemetry = TelemetrySettings | ((telemetryTags: Record<string, string>) => TelemetrySettings | undefined);

export type TracedOperation = "ai.generateText" | "ai.generateObject";

/** The settings for one call: the factory is called with the call's tags (`{}` for text and object calls). */
export function resolveTelemetry(option: ExperimentalTelemetry | undefined, tags: Record<string, string> | undefined): TelemetrySettings | undefined {
  return typeof option === "function" ? option(tags ?? {}) : option;
}

export interface CallStart {
  model: string;
  /** `ai.model.provider`: "claude-code" for this library's CLI runtime. */
  provider: string;
  system?: string;
  prompt: string;
}

export interface CallEnd {
  usage: RunUsage;
  model?: string;
  text?: string;
  object?: unknown;
  /** The AI SDK's unified finish reason: stop, tool-calls, length, error. */
  finishReason: string;
}

/** Starts a call's span, or returns undefined when telemetry is off for it. */
export function startCallTrace(operation: TracedOperation, settings: TelemetrySettings | undefined, start: CallStart): CallTrace | undefined {
  if (settings?.isEnabled !== true) return undefined;
  requireTracer(settings.tracer);
  return new CallTrace(operation, settings, start);
}

/**
 * A `tracer` that cannot start spans is refused before the call starts, with what to pass instead: the
 * likely mistake is the object `createInMemoryTracer()` returns (`{ tracer, spans, … }`) given whole,
 * which would otherwise fail mid-call as `this.tracer.startSpan is not a function`.
 */
function requireTracer(tracer: unknown): void {
  if (tracer === undefined || typeof (tracer as Tracer | null)?.startSpan === "function") return;
  const keys = tracer !== null && typeof tracer === "object" ? Object.keys(tracer) : [];
  const recorder = keys.includes("tracer") && keys.includes("spans");
  const error = new InvalidInputError(
    `experimentalTelemetry.tracer is ${recorder ? "the object createInMemoryTracer() returns ({ tracer, spans, unended, tree })" : keys.length > 0 ? `an object with ${keys.slice(0, 6).join(", ")}` : String(tracer)}; allowed: an OpenTelemetry Tracer (with startSpan)` +
      (recorder ? ". Pass its tracer property: const recorder = createInMemoryTracer(); { isEnabled: true, tracer: recorder.tracer }, then read recorder.spans." : "."),
  );
  error.field = "experimentalTelemetry.tracer";
  throw error;
}

const json = (value: unknown): string | undefined => {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
};

export class CallTrace {
  private readonly tracer: Tracer;
  readonly span: Span;
  private readonly parent: ReturnType<typeof context.active>;
  private stepStarted = new Date();
  private readonly open = new Set<Span>();
  private ended = false;

  constructor(
    private readonly operation: TracedOperation,
    private readonly settings: TelemetrySettings,
    private readonly start: CallStart,
  ) {
    this.tracer = settings.tracer ?? trace.getTracer("ai");
    this.span = this.tracer.startSpan(operation, {
      attributes: {
        ...this.base(operation),
        "ai.model.provider": start.provider,
        "ai.model.id": start.model,
        ...(settings.recordInputs === false ? {} : { "ai.prompt": json({ system: start.system, prompt: start.prompt }) }),
      },
    });
    this.parent = trace.setSpan(context.active(), this.span);
  }

  /** `operation.name`, `ai.operationId`, function id and metadata, as the AI SDK puts on every span. */
  private base(operationId: string): Attributes {
    const functionId = this.settings.functionId;
    const attributes: Attributes = {
      "operation.name": functionId === undefined ? operationId : `${operationId} ${functionId}`,
      "ai.operationId": operationId,
      ...(functionId === undefined ? {} : { "resource.name": functionId, "ai.telemetry.functionId": functionId }),
    };
    for (const [key, value] of Object.entries(this.settings.metadata ?? {})) {
      if (value !== undefined && value !== null) attributes[`ai.telemetry.metadata.${key}`] = value as AttributeValue;
    }
    return attributes;
  }

  /** One finished model response of a loop: a `doGenerate` span from the previous step's end to now. */
  step(): void {
    if (this.ended) return;
    const name = `${this.operation}.doGenerate`;
    const span = this.tracer.startSpan(
      name,
      { startTime: this.stepStarted, attributes: { ...this.base(name), "ai.model.provider": this.start.provider, "ai.model.id": this.start.model, "gen_ai.system": this.start.provider, "gen_ai.request.model": this.start.model } },
      this.parent,
    );
    span.end();
    this.stepStarted = new Date();
  }

  /** The tool set with each `execute` inside an `ai.toolCall` span (definitions unchanged). */
  wrapTools<T extends KtxRuntimeToolSet | undefined>(toolSet: T): T {
    if (!toolSet || typeof toolSet !== "object") return toolSet;
    const wrap = <E extends { execute: (input: never, context: KtxToolContext) => unknown }>(name: string, entry: E): E => {
      if (typeof entry?.execute !== "function") return entry;
      const execute = entry.execute.bind(entry) as (input: unknown, context: KtxToolContext) => unknown;
      return { ...entry, execute: (input: unknown, toolContext: KtxToolContext) => this.toolCall(name, input, toolContext, execute) };
    };
    if (Array.isArray(toolSet)) return toolSet.map((entry) => wrap(entry?.name, entry)) as unknown as T;
    return Object.fromEntries(Object.entries(toolSet).map(([key, entry]) => [key, wrap(entry?.name ?? key, entry)])) as T;
  }

  private async toolCall(name: string, input: unknown, toolContext: KtxToolContext, execute: (input: unknown, context: KtxToolContext) => unknown): Promise<unknown> {
    const outputs = this.settings.recordOutputs !== false;
    const span = this.tracer.startSpan(
      "ai.toolCall",
      {
        attributes: {
          ...this.base("ai.toolCall"),
          "ai.toolCall.name": name,
          ...(toolContext?.toolUseId === undefined ? {} : { "ai.toolCall.id": toolContext.toolUseId }),
          // The AI SDK records the arguments as an output of the model.
          ...(outputs ? { "ai.toolCall.args": json(input) } : {}),
        },
      },
      this.parent,
    );
    this.open.add(span);
    // A handler that ignores its abort signal may never settle; its span still ends when the call is cancelled.
    const onAbort = () => this.endSpan(span, toolContext.signal.reason ?? new Error("the tool call was cancelled"));
    toolContext?.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const output = await execute(input, toolContext);
      if (outputs && this.open.has(span)) span.setAttribute("ai.toolCall.result", json(output) ?? "");
      this.endSpan(span);
      return output;
    } catch (error) {
      this.endSpan(span, error);
      throw error;
    } finally {
      toolContext?.signal?.removeEventListener("abort", onAbort);
    }
  }

  private endSpan(span: Span, error?: unknown): void {
    if (!this.open.delete(span)) return;
    if (error !== undefined) recordError(span, error);
    span.end();
  }

  /** Ends the call's span with the AI SDK's response and usage attributes. */
  succeed(end: CallEnd): void {
    if (this.ended) return;
    const usage = tokenUsage(end.usage);
    const outputs = this.settings.recordOutputs !== false;
    this.span.setAttributes({
      "ai.response.finishReason": end.finishReason,
      ...(end.model ? { "ai.response.model": end.model } : {}),
      ...(outputs && end.text !== undefined ? { "ai.response.text": end.text } : {}),
      ...(outputs && end.object !== undefined ? { "ai.response.object": json(end.object) ?? "" } : {}),
      "ai.usage.inputTokens": usage.inputTokens ?? 0,
      "ai.usage.outputTokens": usage.outputTokens ?? 0,
      "ai.usage.totalTokens": usage.totalTokens ?? 0,
      "ai.usage.cachedInputTokens": end.usage.cacheReadInputTokens,
      "ai.usage.inputTokenDetails.noCacheTokens": end.usage.inputTokens,
      "ai.usage.inputTokenDetails.cacheReadTokens": end.usage.cacheReadInputTokens,
      "ai.usage.inputTokenDetails.cacheWriteTokens": end.usage.cacheCreationInputTokens,
    });
    this.finish();
  }

  /** Ends the call's span (and any child still open) with the error recorded. */
  fail(error: unknown, end?: CallEnd): void {
    if (this.ended) return;
    if (end) this.span.setAttributes({ "ai.response.finishReason": end.finishReason });
    recordError(this.span, error);
    this.finish(error);
  }

  private finish(error?: unknown): void {
    for (const span of [...this.open]) this.endSpan(span, error ?? new Error("the call ended before the tool call settled"));
    this.ended = true;
    this.span.end();
  }
}

/** As the AI SDK's recordErrorOnSpan: the exception event and an ERROR status. */
function recordError(span: Span, error: unknown): void {
  if (error instanceof Error) {
    span.recordException({ name: error.name, message: error.message, stack: error.stack });
    span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
  } else {
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
}
