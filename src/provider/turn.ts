/**
 * One CLI turn as the AI SDK sees it: one or more `doGenerate`/`doStream` calls ("segments"). The turn
 * is one `host.run` (the one run path): the app's function tools are on the MCP bridge as deferred
 * tools, whose handlers wait for the app's results. When a model response ends with calls to them, the
 * segment ends with `tool-calls` and the turn is **parked**: the CLI waits in its `tools/call`, the
 * process keeps its slot. The next call whose prompt continues this one (its prompt, the assistant's
 * calls, a result for every pending call) resumes it: the handlers answer, and the CLI goes on, on the
 * same process. A turn never resumed within `parkMs`, or whose parking call's signal aborts, is aborted
 * through the run path (the CLI interrupted, the process rewound or retired, the slot freed).
 */
import { z } from "zod";
import type { JSONValue, LanguageModelV3Prompt, LanguageModelV3StreamPart, LanguageModelV3ToolResultOutput, SharedV3Warning } from "@ai-sdk/provider";
import type { ClaudeCodeHost, HostCall } from "../claude-code/host.js";
import type { CallOutput } from "../claude-code/run/call-output.js";
import type { CallLimits } from "../limits/index.js";
import type { KtxToolContext, PreparedTool, ToolInputJsonSchema } from "../mcp/tools.js";
import type { CliMessage } from "../protocol/messages.js";
import { ParkedTurnExpiredError, ParkedTurnAbortedError } from "./errors.js";
import { outputText, promptKey } from "./prompt.js";
import { endMetadata, finishReason, parkedMetadata, resultUsage, sumUsage, v3Usage } from "./results.js";
import { type AppToolCall, ResponseMapper } from "./stream-map.js";

/** Where a segment's parts go (a `doStream` stream, or `doGenerate`'s collector). */
export interface SegmentSink {
  /** The prompt of the call this segment answers (a parked turn is matched against it). */
  prompt: LanguageModelV3Prompt;
  signal: AbortSignal | undefined;
  /** This call's warnings, sent in its `stream-start`. */
  warnings: SharedV3Warning[];
  part(part: LanguageModelV3StreamPart): void;
  /** The segment is over (after its `finish` or `error` part). */
  end(): void;
}

export interface AppTool {
  name: string;
  description: string;
  inputJsonSchema: ToolInputJsonSchema;
}

export interface TurnSpec {
  host: ClaudeCodeHost;
  limits: CallLimits;
  call: Omit<HostCall, "signal" | "tools" | "onCliMessage" | "includePartialMessages">;
  appTools: AppTool[];
  /** The model's own tools (settings.tools), run in-process within the turn; their results surface as parts. */
  providerTools: PreparedTool[];
  /** JSON mode: the answer is the CLI's structured output (unwrapped from `{ value }` when `wrapped`). */
  json?: { wrapped: boolean };
  parkMs: number;
  /** The turn stopped at the app's tool calls (their ids), or it ended (resolved, failed or abandoned). */
  onParked(turn: ProviderTurn, pending: readonly string[]): void;
  onEnded(turn: ProviderTurn): void;
}

type Answer = { ok: true; text: string } | { ok: false; message: string };

export class ProviderTurn {
  private readonly abort = new AbortController();
  private readonly mapper: ResponseMapper;
  private segment: SegmentSink | undefined;
  /** Usage ids of the responses the current segment saw. */
  private segmentResponses: string[] = [];
  private segments = 0;
  /** Lines that arrived while parked (the CLI went on without a tool call of the app's): replayed on resume. */
  private backlog: CliMessage[] = [];
  private state: "running" | "parked" | "ended" = "running";
  private sessionId: string | undefined;
  /** The app's calls of the last response, awaiting results, by id. */
  private pending: string[] = [];
  /** Results given before their handler asked; handlers waiting for theirs. */
  private readonly answers = new Map<string, Answer>();
  private readonly waiting = new Map<string, { resolve(text: string): void; reject(error: Error): void }>();
  private parkTimer: NodeJS.Timeout | undefined;
  private unlinkSignal: (() => void) | undefined;
  private parkedKey = "";
  private parkedLength = 0;
  /** Settles when the turn's run has ended, however (close() waits for it). */
  readonly done: Promise<void>;

  constructor(
    private readonly spec: TurnSpec,
    first: SegmentSink,
  ) {
    this.mapper = new ResponseMapper(spec.json !== undefined, new Set(spec.appTools.map((tool) => tool.name)), new Set(spec.providerTools.map((tool) => tool.name)));
    this.begin(first);
    const output = spec.host.run(
      {
        ...spec.call,
        includePartialMessages: true,
        tools: [...spec.appTools.map((tool) => this.deferred(tool)), ...spec.providerTools.map((tool) => this.reported(tool))],
        signal: this.abort.signal,
        onCliMessage: (message) => this.onMessage(message),
      },
      spec.limits,
    );
    this.done = output.then(
      (result) => this.finish(result),
      (error: unknown) => this.fail(error),
    );
  }

  get parked(): boolean {
    return this.state === "parked";
  }

  /** The parked prompt, for matching a continuation. */
  get parkedPrompt(): { key: string; length: number; pending: readonly string[] } {
    return { key: this.parkedKey, length: this.parkedLength, pending: this.pending };
  }

  /** Answers the pending calls with `results` and streams on into `sink`. */
  resume(sink: SegmentSink, results: Map<string, LanguageModelV3ToolResultOutput>): void {
    if (this.state !== "parked") throw new Error("resume of a turn that is not parked");
    this.unpark();
    this.state = "running";
    this.begin(sink);
    for (const id of this.pending) {
      const output = results.get(id)!;
      const { text, error } = outputText(output);
      const answer: Answer = error ? { ok: false, message: text } : { ok: true, text };
      const waiter = this.waiting.get(id);
      if (waiter) {
        this.waiting.delete(id);
        if (answer.ok) waiter.resolve(answer.text);
        else waiter.reject(new Error(answer.message));
      } else this.answers.set(id, answer);
    }
    this.pending = [];
    const reports = this.reports;
    this.reports = [];
    for (const part of reports) sink.part(part);
    const backlog = this.backlog;
    this.backlog = [];
    for (const message of backlog) this.onMessage(message);
  }

  /** Ends a parked turn that will not be resumed: the run is aborted (CLI interrupted, process rewound or retired). */
  abandon(reason: Error): void {
    if (this.state !== "parked") return;
    this.unpark();
    this.state = "ended";
    this.spec.onEnded(this);
    this.spec.host.logger.warn(`${reason.name}: ${reason.message}`);
    // The run fails first, so the handlers' answers below are never sent to the CLI.
    this.abort.abort(reason);
    for (const waiter of this.waiting.values()) waiter.reject(reason);
    this.waiting.clear();
  }

  private begin(sink: SegmentSink): void {
    this.segment = sink;
    this.segments += 1;
    this.segmentResponses = [];
    sink.part({ type: "stream-start", warnings: sink.warnings });
    const signal = sink.signal;
    if (signal) {
      const onAbort = () => this.abort.abort(signal.reason);
      if (signal.aborted) onAbort();
      else {
        signal.addEventListener("abort", onAbort, { once: true });
        this.unlinkSignal = () => signal.removeEventListener("abort", onAbort);
      }
    }
  }

  /** A handler of the app's tool: it waits for the app's result (given by resume), or for its cancellation. */
  private deferred(tool: AppTool): PreparedTool {
    return {
      name: tool.name,
      description: tool.description,
      inputJsonSchema: tool.inputJsonSchema,
      inputSchema: UNCHECKED,
      execute: (_input: unknown, context: KtxToolContext) => {
        const id = context.toolUseId;
        if (id === undefined) throw new Error(`Tool ${tool.name}: the CLI sent no tool use id, so the app's result cannot be matched to this call.`);
        const answer = this.answers.get(id);
        if (answer) {
          this.answers.delete(id);
          if (answer.ok) return answer.text;
          throw new Error(answer.message);
        }
        return new Promise<string>((resolve, reject) => {
          this.waiting.set(id, { resolve, reject });
          const signal = context.signal;
          signal.addEventListener("abort", () => (this.waiting.delete(id), reject(signal.reason instanceof Error ? signal.reason : new Error(`Tool ${tool.name} was cancelled.`))), { once: true });
        });
      },
    };
  }

  /**
   * A tool of the model's own: it runs here, and its result goes to the app as a `tool-result` part (to the
   * segment running then; one parked meanwhile, when the same response also called the app's tools, gets it
   * when it resumes, as the CLI's other lines).
   */
  private reported(tool: PreparedTool): PreparedTool {
    return {
      ...tool,
      execute: async (input: unknown, context: KtxToolContext) => {
        const part = (result: unknown, isError: boolean): LanguageModelV3StreamPart => ({ type: "tool-result", toolCallId: context.toolUseId ?? "", toolName: tool.name, result: jsonValue(result), ...(isError ? { isError } : {}), dynamic: true });
        try {
          const output = await tool.execute(input, context);
          this.report(part(output, false));
          return output;
        } catch (error) {
          this.report(part(error instanceof Error ? error.message : String(error), true));
          throw error;
        }
      },
    };
  }

  private report(part: LanguageModelV3StreamPart): void {
    if (this.state === "running" && this.segment) this.segment.part(part);
    else if (this.state === "parked") this.reports.push(part);
  }

  /** Provider-executed tool results that came while parked. */
  private reports: LanguageModelV3StreamPart[] = [];

  private onMessage(message: CliMessage): void {
    if (this.state === "ended") return;
    if (this.state === "parked") {
      this.backlog.push(message);
      return;
    }
    if (message.kind === "system_init") this.sessionId = message.message.session_id ?? this.sessionId;
    const segment = this.segment!;
    this.mapper.map(message, {
      part: (part) => {
        if (part.type === "response-metadata" && part.id) this.segmentResponses.push(part.id);
        segment.part(part);
      },
      responseEnd: (calls, stopReason) => {
        if (calls.length > 0) this.park(calls, stopReason);
      },
    });
  }

  /** The response ended with the app's tool calls: this segment ends with them, the turn waits for their results. */
  private park(calls: AppToolCall[], stopReason: string | undefined): void {
    const segment = this.segment!;
    this.unlinkSignal?.();
    this.unlinkSignal = undefined;
    this.segment = undefined;
    this.state = "parked";
    this.pending = calls.map((call) => call.toolCallId);
    this.parkedKey = promptKey(segment.prompt);
    this.parkedLength = segment.prompt.length;
    const usage = sumUsage(this.segmentResponses.flatMap((id) => this.mapper.usage.get(id) ?? []));
    segment.part({ type: "finish", finishReason: { unified: "tool-calls", raw: stopReason ?? "tool_use" }, usage: v3Usage(usage, this.mapper.reasoningSeen), providerMetadata: parkedMetadata(this.sessionId, this.pending) });
    segment.end();
    // While parked, the parking call's signal still ends the turn (an app aborting between steps).
    const signal = segment.signal;
    if (signal) {
      const onAbort = () => this.abandon(new ParkedTurnAbortedError(signal.reason));
      signal.addEventListener("abort", onAbort, { once: true });
      this.unlinkSignal = () => signal.removeEventListener("abort", onAbort);
    }
    this.parkTimer = setTimeout(() => this.abandon(new ParkedTurnExpiredError(this.spec.parkMs, this.pending)), this.spec.parkMs);
    this.parkTimer.unref();
    this.spec.onParked(this, this.pending);
  }

  private unpark(): void {
    clearTimeout(this.parkTimer);
    this.parkTimer = undefined;
    this.unlinkSignal?.();
    this.unlinkSignal = undefined;
  }

  private finish(output: CallOutput): void {
    const segment = this.segment;
    const wasParked = this.state === "parked";
    this.unpark();
    this.state = "ended";
    this.segment = undefined;
    this.spec.onEnded(this);
    if (!segment) {
      if (wasParked) for (const waiter of this.waiting.values()) waiter.reject(new Error("the turn ended"));
      return;
    }
    const result = output.result;
    if (this.spec.json) {
      const structured = result.structured_output;
      const value = this.spec.json.wrapped ? (structured as { value?: unknown } | undefined)?.value : structured;
      const text = value === undefined ? (result.result ?? output.lastText) : typeof value === "string" && !this.spec.json.wrapped ? value : JSON.stringify(value);
      const id = `${result.session_id ?? "result"}:structured`;
      segment.part({ type: "text-start", id });
      segment.part({ type: "text-delta", id, delta: text });
      segment.part({ type: "text-end", id });
    }
    // A turn answered in one segment has the CLI's own count; a later segment sums the responses it saw.
    const tokens = this.segments === 1 ? resultUsage(result) : sumUsage(this.segmentResponses.flatMap((id) => this.mapper.usage.get(id) ?? []));
    segment.part({ type: "finish", finishReason: finishReason(result), usage: v3Usage(tokens, this.mapper.reasoningSeen, this.segments === 1 ? result.usage : undefined), providerMetadata: endMetadata(output) });
    segment.end();
  }

  private fail(error: unknown): void {
    const segment = this.segment;
    this.unpark();
    const wasEnded = this.state === "ended";
    this.state = "ended";
    this.segment = undefined;
    if (!wasEnded) this.spec.onEnded(this);
    for (const waiter of this.waiting.values()) waiter.reject(error instanceof Error ? error : new Error(String(error)));
    this.waiting.clear();
    if (!segment) return;
    segment.part({ type: "error", error });
    segment.end();
  }
}

/** A tool's output as the JSON value a `tool-result` part carries (what cannot be JSON, as its text). */
function jsonValue(value: unknown): NonNullable<JSONValue> {
  if (value === undefined || value === null) return "";
  try {
    return JSON.parse(JSON.stringify(value)) as NonNullable<JSONValue>;
  } catch {
    return String(value);
  }
}

/** Inputs are the model's; the AI SDK validates them against the app's schema when it runs the tool. */
const UNCHECKED = z.unknown();
