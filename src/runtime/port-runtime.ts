/**
 * What KTX's port asks of every runtime, written once: the port's operations (a string, an object, a
 * loop result with metrics) over each runtime's rich operations, `onMetrics`, abort semantics (an
 * abort throws `AbortError` from every operation, loops included), the step budget and tool-failure
 * counting per `telemetryTags.unitKey`. Each runtime supplies how one call runs.
 */
import { setMaxListeners } from "node:events";
import type { z } from "zod";
import { AbortError, ClaudeCodeError, InvalidInputError } from "../errors/index.js";
import { type PreparedTool, prepareToolSet } from "../mcp/tools.js";
import type { KtxLlmRuntimePort } from "../port/ktx-port.js";
import type { Logger } from "../session/logger.js";
import { checkLoopParams, checkObjectInput, checkTextInput } from "./call-inputs.js";
import { type CallTrace, type ExperimentalTelemetry, type TracedOperation, resolveTelemetry, startCallTrace } from "./spans.js";
import {
  CallClock,
  LoopTracker,
  ToolFailureCounter,
  type CallSignal,
  callSignal,
  failedLoopResult,
  notifyCaller,
  notifyStepFinish,
  requirePrompt,
  requireStepBudget,
} from "./port-support.js";
import type {
  CallOptions,
  KtxGenerateObjectInput,
  KtxGenerateObjectResult,
  KtxGenerateObjectSchemaInput,
  KtxGenerateTextInput,
  KtxGenerateTextResult,
  ModelRole,
  RunLoopParams,
  RunLoopResult,
} from "./types.js";

export type TextOutcome = Omit<KtxGenerateTextResult, "metrics">;
export type ObjectOutcome<T> = Omit<KtxGenerateObjectResult<T>, "metrics">;
export type LoopOutcome = Omit<RunLoopResult, "metrics">;

export interface CloseOptions {
  /** Abort the calls still running (they reject with `AbortError`); default false: they finish. */
  abortInFlight?: boolean;
}

/** A loop's stop reason as the AI SDK's unified finish reason of its last step. */
const LOOP_FINISH: Record<RunLoopResult["stopReason"], string> = { natural: "stop", budget: "tool-calls", error: "error" };

export abstract class PortRuntime implements KtxLlmRuntimePort {
  protected abstract readonly logger: Logger;
  private readonly failures = new ToolFailureCounter();
  private readonly closing = new AbortController();

  constructor() {
    // Every call in flight links its signal to this one; hundreds of queued calls are normal in an ingest.
    setMaxListeners(0, this.closing.signal);
  }

  /** One text call on this runtime; `clock.answered` once the model answered. */
  protected abstract runText(input: KtxGenerateTextInput, signal: AbortSignal | undefined, clock: CallClock): Promise<TextOutcome>;
  protected abstract runObject<T>(input: KtxGenerateObjectInput<T, z.ZodType<T>>, signal: AbortSignal | undefined, clock: CallClock): Promise<ObjectOutcome<T>>;
  /** One loop; feeds `tracker` with finished steps, settled tool calls and, when known, usage. */
  protected abstract runLoop(params: RunLoopParams, tools: PreparedTool[], signal: AbortSignal | undefined, tracker: LoopTracker): Promise<LoopOutcome>;
  /** The model id a failed loop reports. */
  protected abstract loopModel(role: ModelRole): string;

  /**
   * Spans at the port (src/runtime/spans.ts) for a runtime whose calls make none of their own; the AI
   * SDK runtime leaves this off, since `generateText` records the same spans itself.
   */
  protected portTelemetry(): { option: ExperimentalTelemetry; provider: string } | undefined {
    return undefined;
  }

  private startTrace(operation: TracedOperation, role: ModelRole, tags: Record<string, string> | undefined, system: string | undefined, prompt: string): CallTrace | undefined {
    const telemetry = this.portTelemetry();
    if (!telemetry) return undefined;
    return startCallTrace(operation, resolveTelemetry(telemetry.option, tags), { model: this.loopModel(role), provider: telemetry.provider, system, prompt });
  }

  /** KTX's port: the answer text. */
  async generateText(input: KtxGenerateTextInput): Promise<string> {
    return (await this.generateTextResult(input)).text;
  }

  /**
   * KTX's port: the object, validated by the caller's schema. Its type is the schema's output when no
   * type arguments are given (`generateObject({ schema, … })`); KTX's `<TOutput, TSchema>` and a lone
   * `<TOutput>` work too. The inferring overload comes first, so a bare call never falls to `unknown`.
   */
  generateObject<TSchema extends z.ZodType>(input: KtxGenerateObjectSchemaInput<TSchema>): Promise<z.output<TSchema>>;
  generateObject<TOutput, TSchema extends z.ZodType<TOutput> = z.ZodType<TOutput>>(input: KtxGenerateObjectInput<TOutput, TSchema>): Promise<TOutput>;
  async generateObject(input: KtxGenerateObjectInput<unknown, z.ZodType>): Promise<unknown> {
    return (await this.generateObjectResult(input)).object;
  }

  /** `generateText` with everything known about the call (model, usage, cost, tool calls, transcript, metrics). */
  async generateTextResult(input: KtxGenerateTextInput): Promise<KtxGenerateTextResult> {
    requirePrompt(input?.prompt);
    checkTextInput(input);
    const { signal, release } = this.startSignal(input);
    const traced = this.startTrace("ai.generateText", input.role ?? "default", undefined, input.system, input.prompt);
    const call = traced && input.tools ? { ...input, tools: traced.wrapTools(input.tools) } : input;
    try {
      const result = await this.measured(call, (clock) => this.runText(call, signal, clock));
      traced?.succeed({ usage: result.usage, model: result.model, text: result.text, finishReason: "stop" });
      return result;
    } catch (error) {
      traced?.fail(error);
      throw error;
    } finally {
      release();
    }
  }

  /** `generateObject` with everything known about the call (the same type arguments, or none). */
  generateObjectResult<TSchema extends z.ZodType>(input: KtxGenerateObjectSchemaInput<TSchema>): Promise<KtxGenerateObjectResult<z.output<TSchema>>>;
  generateObjectResult<TOutput, TSchema extends z.ZodType<TOutput> = z.ZodType<TOutput>>(input: KtxGenerateObjectInput<TOutput, TSchema>): Promise<KtxGenerateObjectResult<TOutput>>;
  async generateObjectResult<TOutput>(input: KtxGenerateObjectInput<TOutput, z.ZodType<TOutput>>): Promise<KtxGenerateObjectResult<TOutput>> {
    requirePrompt(input?.prompt);
    checkObjectInput(input);
    const { signal, release } = this.startSignal(input);
    const traced = this.startTrace("ai.generateObject", input.role ?? "default", undefined, input.system, input.prompt);
    const call = traced && input.tools ? { ...input, tools: traced.wrapTools(input.tools) } : input;
    try {
      const result = await this.measured(call, (clock) => this.runObject<TOutput>(call, signal, clock));
      traced?.succeed({ usage: result.usage, model: result.model, object: result.object, finishReason: "stop" });
      return result;
    } catch (error) {
      traced?.fail(error);
      throw error;
    } finally {
      release();
    }
  }

  /**
   * Runs a tool loop under `stepBudget` model responses. Invalid input and tool definitions throw, and
   * so does an abort (KTX rethrows it: a cancelled work unit is not a failed one); every other failure
   * after the loop started is returned as `stopReason: "error"` with `error`. Metrics are always there.
   */
  async runAgentLoop(params: RunLoopParams): Promise<RunLoopResult> {
    requirePrompt(params?.userPrompt, "userPrompt");
    requireStepBudget(params.stepBudget);
    checkLoopParams(params);
    const prepared = prepareToolSet(params.toolSet);
    const { signal, release } = this.startSignal(params);
    const unitKey = params.telemetryTags?.unitKey;
    // KTX's AI SDK runtime runs a loop as one generateText call.
    const traced = this.startTrace("ai.generateText", params.modelRole, params.telemetryTags, params.systemPrompt, params.userPrompt);
    const tools = traced ? traced.wrapTools(prepared) : prepared;
    const tracker = new LoopTracker((stepIndex) => {
      traced?.step();
      notifyStepFinish(params, stepIndex, this.logger);
    });
    try {
      const outcome = await this.runLoop(params, tools, signal, tracker);
      this.failures.add(unitKey, outcome.toolFailures);
      const end = { usage: outcome.usage, model: outcome.model, text: outcome.text, finishReason: LOOP_FINISH[outcome.stopReason] };
      if (outcome.stopReason === "error") traced?.fail(outcome.error ?? new Error("the loop ended with an error"), end);
      else traced?.succeed(end);
      return { ...outcome, metrics: tracker.metrics(outcome.usage) };
    } catch (error) {
      traced?.fail(error);
      if (!ClaudeCodeError.isInstance(error) || error instanceof InvalidInputError) throw error;
      // Tool calls that settled before the failure count for the unit like any others.
      const failed = failedLoopResult(error, { tracker, model: this.loopModel(params.modelRole), transcriptPath: error.transcriptPath });
      this.failures.add(unitKey, failed.toolFailures);
      if (error instanceof AbortError) throw error;
      return failed;
    } finally {
      release();
    }
  }

  /** Failures of the tool calls of loops tagged with `telemetryTags.unitKey`. */
  toolFailureCount(unitKey: string): number {
    return this.failures.count(unitKey);
  }

  /** Stops the calls in flight when asked; subclasses release their processes. */
  async close(options: CloseOptions = {}): Promise<void> {
    if (options.abortInFlight) this.closing.abort(new Error("the runtime was closed"));
  }

  /** The call's signal (release it when the call ends); an already aborted one starts nothing. */
  private startSignal(options: CallOptions): CallSignal {
    const joined = callSignal(options, this.closing.signal);
    if (joined.signal?.aborted) throw new AbortError(joined.signal.reason);
    return joined;
  }

  private async measured<T extends object>(input: KtxGenerateTextInput, run: (clock: CallClock) => Promise<T>): Promise<T & { metrics: ReturnType<CallClock["metrics"]> }> {
    const clock = new CallClock();
    try {
      const outcome = await run(clock);
      const metrics = clock.metrics();
      if (input.onMetrics) notifyCaller("onMetrics", () => input.onMetrics?.(metrics), this.logger);
      return { ...outcome, metrics };
    } catch (error) {
      // A call that fails after the model answered (schema, budget) still cost time and tokens.
      if (clock.hasAnswer && input.onMetrics) {
        const metrics = clock.metrics();
        notifyCaller("onMetrics", () => input.onMetrics?.(metrics), this.logger);
      }
      throw error;
    }
  }
}
