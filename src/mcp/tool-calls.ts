/**
 * Running a `tools/call` for the ktx MCP server (bridge.ts): the tool by name, its arguments checked, its handler
 * run under its own signal (timeout, cancellation), its output made the text the model sees, and `onToolCall`
 * told. Both paths of the bridge use it: the SDK's `Server` handler, and the direct answer to a well-formed call.
 */
import type { CallToolResult, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { type Cancellation, RequestCancel, onCancel } from "./cancel.js";
import { CANCELLED_BY_CLI, type KtxMcpLogger } from "./control-transport.js";
import { Deadlines, type Expiring } from "./deadlines.js";
import { InFlight } from "./in-flight.js";
import { errorMessage, normalizeToolOutput, type KtxToolOutput, type PreparedTool } from "./tools.js";

export interface KtxToolCallEvent {
  name: string;
  toolUseId?: string;
  ok: boolean;
  /** What the model was told, when `ok` is false. */
  error?: string;
  durationMs: number;
  /** The CLI cancelled the call (or the bridge closed); the model saw nothing from it. */
  cancelled?: boolean;
  timedOut?: boolean;
  /** `structured` from the tool's output, on success. */
  structured?: unknown;
  /** Set when the text handed to the CLI was cut to `TOOL_OUTPUT_LIMIT` characters. */
  truncated?: ToolOutputTruncation;
}

export interface ToolOutputTruncation {
  /** Characters the tool produced. */
  originalChars: number;
  /** Characters of it the model got (the note comes on top). */
  keptChars: number;
}

/**
 * Most characters of tool text handed to the CLI. The CLI writes a longer result (over 50,000
 * characters, measured on 2.1.330) to `~/.claude/projects/<project>/<session>/tool-results/` and gives
 * the model a file path instead, so we cut below that with room for the note.
 */
export const TOOL_OUTPUT_LIMIT = 40_000;

/** Cuts `text` to `limit` characters (never inside a surrogate pair) with a note the model can act on. */
export function boundToolText(text: string, limit = TOOL_OUTPUT_LIMIT): { text: string; truncated?: ToolOutputTruncation } {
  if (text.length <= limit) return { text };
  let kept = limit;
  const code = text.charCodeAt(kept);
  if (code >= 0xdc00 && code <= 0xdfff) kept -= 1;
  const note = `\n\n[ktx: tool output truncated: showing the first ${kept.toLocaleString("en-US")} of ${text.length.toLocaleString("en-US")} characters. Ask for less at once (a narrower query, a smaller page) to see the rest.]`;
  return { text: text.slice(0, kept) + note, truncated: { originalChars: text.length, keptChars: kept } };
}

/** The params of a `tools/call`, as the SDK's schema reads them. */
export type ToolCallParams = { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> };

/** A call's answer, and whether its request was cancelled (then no reply is sent; the result only fed onToolCall). */
export interface ToolCallEnd {
  result: CallToolResult;
  cancelled: boolean;
}

export interface ToolCallsOptions {
  /** Per-call limit; on expiry the handler's signal is aborted and the model gets a timeout error. */
  toolTimeoutMs?: number;
  onToolCall?(event: KtxToolCallEvent): void;
  logger?: KtxMcpLogger;
}

type Outcome = { kind: "ok"; value: unknown } | { kind: "error"; error: unknown } | { kind: "timeout" } | { kind: "cancelled" };

export class ToolCalls {
  private readonly byName: Map<string, PreparedTool>;
  /** The handlers running now (abortRunning): their signals. */
  private readonly running = new InFlight<RequestCancel>();
  /** Direct requests in flight (each knows the CLI's JSON-RPC id): `notifications/cancelled` and close() end them. */
  private readonly direct = new InFlight<HandlerRun>();
  private readonly deadlines = new Deadlines();

  constructor(
    private readonly tools: readonly PreparedTool[],
    private readonly options: ToolCallsOptions,
  ) {
    this.byName = new Map(tools.map((tool) => [tool.name, tool]));
  }

  /**
   * One `tools/call`. `signal` is its request's: when it aborts the handler is cancelled. A direct request
   * (`directId`, the CLI's id) may also be cancelled by `cancelDirect` or `cancelAllDirect`; its handler then
   * sees the reasons the SDK's `Server` would give.
   */
  call(params: ToolCallParams, signal: Cancellation | undefined, directId?: RequestId): Promise<ToolCallEnd> {
    const started = performance.now();
    const rawToolUseId = params._meta?.["claudecode/toolUseId"];
    const toolUseId = typeof rawToolUseId === "string" ? rawToolUseId : undefined;
    const tool = this.byName.get(params.name);
    if (!tool) {
      const available = this.tools.length === 0 ? "none" : this.tools.map((t) => t.name).join(", ");
      return Promise.resolve(this.fail(params.name, toolUseId, started, `Unknown tool "${params.name}". Available tools: ${available}.`));
    }
    let input: unknown = params.arguments ?? {};
    // A schema that takes anything as it is (a forwarding tool's, which checks the input itself) is not run.
    if (!acceptsAnything(tool.inputSchema)) {
      let parsed: ReturnType<typeof z.safeParse>;
      try {
        parsed = z.safeParse(tool.inputSchema, input);
      } catch (error) {
        // A refinement that throws: a rejection, as when this was an async function (the bridge answers it with an internal error).
        return Promise.reject(error as Error);
      }
      if (!parsed.success) return Promise.resolve(this.fail(tool.name, toolUseId, started, `Invalid arguments for tool ${tool.name}: ${z.prettifyError(parsed.error)}`));
      input = parsed.data;
    }
    // Not an async function: its frame was most of a tool call's allocation (docs/performance.md). The run settles with the call's end.
    return this.run(tool, input, toolUseId, signal, directId, started);
  }

  /** What the model is told, and onToolCall, once a handler's run settled. @internal */
  end(name: string, toolUseId: string | undefined, started: number, outcome: Outcome): ToolCallEnd {
    switch (outcome.kind) {
      case "cancelled":
        // The SDK sends nothing for an aborted request; this result only feeds onToolCall.
        return this.fail(name, toolUseId, started, `Tool ${name} was cancelled.`, "cancelled");
      case "timeout":
        return this.fail(name, toolUseId, started, this.timeoutMessage(name), "timedOut");
      case "error": {
        const message = errorMessage(outcome.error);
        return this.fail(name, toolUseId, started, message === "" ? `Tool ${name} failed without an error message.` : message);
      }
      case "ok": {
        let output: KtxToolOutput;
        try {
          output = normalizeToolOutput(outcome.value);
        } catch (error) {
          return this.fail(name, toolUseId, started, `Tool ${name} returned output that cannot be sent to the model: ${errorMessage(error)}`);
        }
        const { text, truncated } = boundToolText(output.markdown);
        const event = this.event(name, toolUseId, started, true);
        if (output.structured !== undefined) event.structured = output.structured;
        if (truncated) event.truncated = truncated;
        this.report(event);
        return { result: { content: [{ type: "text", text }] }, cancelled: false };
      }
    }
  }

  /** `notifications/cancelled` for a direct request in flight. */
  cancelDirect(requestId: unknown): void {
    for (const run of this.direct.snapshot()) if (run.directId === requestId) run.cancel(CANCELLED_BY_CLI);
  }

  /** Every direct request in flight, as the SDK's `Server` ends its own on close: the handlers' signals abort with no reason. */
  cancelAllDirect(): void {
    for (const run of this.direct.snapshot()) run.cancel(undefined);
  }

  /** Aborts the signals of the handlers running now; their requests stay open. */
  abortRunning(reason: () => unknown): void {
    if (this.running.size === 0) return;
    const why = reason();
    for (const cancel of this.running.snapshot()) cancel.abort(why);
  }

  /**
   * Runs one handler under its own signal, which aborts on timeout, when the request's signal aborts (with its
   * reason; a direct request's with the SDK's cancel reason), or when the request is cancelled directly.
   */
  private run(tool: PreparedTool, input: unknown, toolUseId: string | undefined, requestSignal: Cancellation | undefined, directId: RequestId | undefined, started: number): Promise<ToolCallEnd> {
    return new Promise<ToolCallEnd>((resolve) => {
      const run = new HandlerRun(this, resolve, tool.name, toolUseId, started, directId);
      this.running.add(run.handlerCancel);
      if (directId !== undefined) this.direct.add(run);
      if (requestSignal) {
        if (requestSignal.aborted) return run.cancel(directId !== undefined ? CANCELLED_BY_CLI : requestSignal.reason);
        run.unlisten = onCancel(requestSignal, () => run.cancel(directId !== undefined ? CANCELLED_BY_CLI : requestSignal.reason));
      }
      const { toolTimeoutMs } = this.options;
      if (toolTimeoutMs !== undefined) this.deadlines.add(run, toolTimeoutMs);
      let value: unknown;
      try {
        value = tool.execute(input, toolContext(run.handlerCancel, toolUseId));
      } catch (error) {
        return run.settle({ kind: "error", error });
      }
      if (isThenable(value)) {
        Promise.resolve(value).then(
          (resolved) => run.settle({ kind: "ok", value: resolved }),
          (error: unknown) => run.settle({ kind: "error", error }),
        );
      } else run.settle({ kind: "ok", value });
    });
  }

  /** What the model is told, and the handler's abort reason, when a tool times out. @internal */
  timeoutMessage(name: string): string {
    return `Tool ${name} timed out after ${this.options.toolTimeoutMs} ms`;
  }

  /** A handler's run ended (HandlerRun): it is no longer running, cancellable or timed. @internal */
  forget(run: HandlerRun): void {
    this.running.delete(run.handlerCancel);
    this.direct.delete(run);
    this.deadlines.delete(run);
    run.unlisten?.();
  }

  private fail(name: string, toolUseId: string | undefined, started: number, message: string, flag?: "cancelled" | "timedOut"): ToolCallEnd {
    const { text, truncated } = boundToolText(message);
    const event = this.event(name, toolUseId, started, false);
    event.error = text;
    if (flag) event[flag] = true;
    if (truncated) event.truncated = truncated;
    this.report(event);
    return { result: { content: [{ type: "text", text }], isError: true }, cancelled: flag === "cancelled" };
  }

  private event(name: string, toolUseId: string | undefined, started: number, ok: boolean): KtxToolCallEvent {
    const durationMs = Math.round(performance.now() - started);
    return toolUseId === undefined ? { name, durationMs, ok } : { name, toolUseId, durationMs, ok };
  }

  /** Exceptions of onToolCall are logged and ignored. */
  private report(event: KtxToolCallEvent): void {
    try {
      this.options.onToolCall?.(event);
    } catch (error) {
      this.options.logger?.warn?.(`ktx MCP: onToolCall threw for tool ${event.name}: ${errorMessage(error)}`);
    }
  }
}

/**
 * One handler's run: the first of its value, its timeout or its cancellation settles it. An object with
 * methods rather than a closure per way of ending: a reused loop makes one per tool call (docs/performance.md).
 */
class HandlerRun implements Expiring {
  /** The handler's signal, made when the handler first reads it. */
  readonly handlerCancel = new RequestCancel();
  unlisten: (() => void) | undefined;
  deadlineAt: number | undefined = undefined;
  private settled = false;

  constructor(
    private readonly calls: ToolCalls,
    private readonly resolve: (end: ToolCallEnd) => void,
    private readonly name: string,
    private readonly toolUseId: string | undefined,
    private readonly started: number,
    readonly directId: RequestId | undefined,
  ) {}

  settle(outcome: Outcome): void {
    if (this.settled) return;
    this.settled = true;
    this.calls.forget(this);
    this.resolve(this.calls.end(this.name, this.toolUseId, this.started, outcome));
  }

  /** Ends the call as cancelled; the handler's signal aborts with `reason` (undefined: the default AbortError). */
  cancel(reason: unknown): void {
    this.settle({ kind: "cancelled" });
    this.handlerCancel.abort(reason);
  }

  expire(): void {
    // Settled before aborting: a handler reacting to the abort must not win the race with its own rejection.
    this.settle({ kind: "timeout" });
    this.handlerCancel.abort(new Error(this.calls.timeoutMessage(this.name)));
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { then?: unknown }).then === "function";
}

/** The handler's context; its signal is made when the handler first reads it (most never do). An own getter, so `{ ...context }` keeps it. */
function toolContext(cancel: RequestCancel, toolUseId: string | undefined): { signal: AbortSignal; toolUseId?: string } {
  return toolUseId === undefined
    ? {
        get signal() {
          return cancel.signal;
        },
      }
    : {
        get signal() {
          return cancel.signal;
        },
        toolUseId,
      };
}

/** `z.unknown()` and `z.any()` return their input unchanged, whatever it is. */
function acceptsAnything(schema: z.ZodType): boolean {
  const type = (schema as { _zod?: { def?: { type?: unknown } } })._zod?.def?.type;
  return type === "unknown" || type === "any";
}
