/**
 * An OpenTelemetry `Tracer` that keeps every span in memory, for tests of `experimentalTelemetry` (and of
 * the AI SDK's `experimental_telemetry`): names, attributes, parents, exceptions, status, and whether
 * each span ended. `@opentelemetry/api` only; no SDK, no exporter.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import {
  type AttributeValue,
  type Attributes,
  type Context,
  type ContextManager,
  type Span,
  type SpanOptions,
  type SpanStatus,
  type TimeInput,
  type Tracer,
  ROOT_CONTEXT,
  context,
  trace,
} from "@opentelemetry/api";

export interface RecordedSpan {
  name: string;
  spanId: string;
  traceId: string;
  parentSpanId?: string;
  attributes: Record<string, AttributeValue>;
  events: Array<{ name: string; attributes?: Attributes }>;
  status?: SpanStatus;
  ended: boolean;
}

export interface InMemoryTracer {
  tracer: Tracer;
  spans: RecordedSpan[];
  /** Spans started and never ended. */
  unended(): RecordedSpan[];
  /** The spans as an indented tree (name and the chosen attributes), for reading and docs. */
  tree(attributes?: readonly string[]): string;
}

let nextId = 1;
const hex = (length: number) => (nextId++).toString(16).padStart(length, "0");

export function createInMemoryTracer(): InMemoryTracer {
  const spans: RecordedSpan[] = [];
  const startSpan = (name: string, options: SpanOptions = {}, parentContext: Context = context.active()): Span => {
    const parent = trace.getSpan(parentContext)?.spanContext();
    const record: RecordedSpan = { name, spanId: hex(16), traceId: parent?.traceId ?? hex(32), ...(parent ? { parentSpanId: parent.spanId } : {}), attributes: {}, events: [], ended: false };
    const setAttributes = (attributes: Attributes = {}) => {
      for (const [key, value] of Object.entries(attributes)) if (value !== undefined) record.attributes[key] = value;
    };
    setAttributes(options.attributes);
    spans.push(record);
    const span: Span = {
      spanContext: () => ({ traceId: record.traceId, spanId: record.spanId, traceFlags: 1 }),
      setAttribute: (key, value) => (setAttributes({ [key]: value }), span),
      setAttributes: (attributes) => (setAttributes(attributes), span),
      addEvent: (eventName: string, attributes?: Attributes | TimeInput) => (record.events.push({ name: eventName, ...(attributes && typeof attributes === "object" && !(attributes instanceof Date) && !Array.isArray(attributes) ? { attributes } : {}) }), span),
      addLink: () => span,
      addLinks: () => span,
      setStatus: (status) => ((record.status = status), span),
      updateName: (newName) => ((record.name = newName), span),
      end: () => void (record.ended = true),
      isRecording: () => !record.ended,
      recordException: (exception) => void record.events.push({ name: "exception", attributes: typeof exception === "string" ? { "exception.message": exception } : { "exception.type": exception.name ?? "", "exception.message": exception.message ?? "" } }),
    };
    return span;
  };
  const tracer = {
    startSpan,
    startActiveSpan(name: string, ...args: unknown[]) {
      const fn = args.at(-1) as (span: Span) => unknown;
      const options = (args.length >= 2 ? args[0] : undefined) as SpanOptions | undefined;
      const parentContext = (args.length >= 3 ? args[1] : context.active()) as Context;
      const span = startSpan(name, options, parentContext);
      return context.with(trace.setSpan(parentContext, span), fn, undefined, span);
    },
  } as Tracer;
  return {
    tracer,
    spans,
    unended: () => spans.filter((span) => !span.ended),
    tree(attributes = []) {
      const lines: string[] = [];
      const walk = (parent: string | undefined, depth: number) => {
        for (const span of spans.filter((s) => s.parentSpanId === parent)) {
          const shown = attributes.filter((key) => key in span.attributes).map((key) => `${key}=${JSON.stringify(span.attributes[key])}`);
          lines.push(`${"  ".repeat(depth)}${span.name}${shown.length ? `  ${shown.join(" ")}` : ""}${span.status?.code === 2 ? "  [error]" : ""}`);
          walk(span.spanId, depth + 1);
        }
      };
      walk(undefined, 0);
      return lines.join("\n");
    },
  };
}

/**
 * Registers an AsyncLocalStorage context manager, as an application's OpenTelemetry SDK does, so spans
 * the AI SDK starts as "active" get their parents. Returns the function that removes it.
 */
export function enableAsyncContext(): () => void {
  const storage = new AsyncLocalStorage<Context>();
  const manager: ContextManager = {
    active: () => storage.getStore() ?? ROOT_CONTEXT,
    with: (ctx, fn, thisArg, ...args) => storage.run(ctx, () => fn.call(thisArg, ...args)),
    bind: (_ctx, target) => target,
    enable: () => manager,
    disable: () => manager,
  };
  context.setGlobalContextManager(manager);
  return () => context.disable();
}
