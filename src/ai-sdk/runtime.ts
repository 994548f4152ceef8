/**
 * `AiSdkKtxLlmRuntime`: KTX's LLM runtime port over the AI SDK (`ai` v6) and any `LanguageModel`
 * factory, e.g. KTX's own provider for the anthropic, vertex or gateway backend. It behaves like
 * `ClaudeCodeRuntime` wherever the two can behave alike (test/parity/ is the evidence, and
 * docs/parity.md lists every deliberate difference):
 * - the same `KtxRuntimeToolDescriptor`s, prepared by `prepareToolSet` (same JSON Schema to the
 *   model, tools in name order), the same output normalisation (only markdown reaches the model),
 *   and a throwing tool or invalid arguments become an error result the model sees (same text);
 * - one `onStepFinish` per model response, a throwing callback is logged and ignored;
 * - stop reasons natural / budget / error, `toolFailureCount(unitKey)`, typed errors.
 * On top, KTX's prompt-caching markers (`llm.promptCaching`) are applied to Anthropic models.
 */
import {
  type LanguageModel,
  Output,
  type StepResult,
  type SystemModelMessage,
  type ToolCallRepairFunction,
  type ToolSet,
  generateText,
  jsonSchema,
  stepCountIs,
  tool,
} from "ai";
import { z } from "zod";
import {
  AbortError,
  InvalidInputError,
  MaxTurnsError,
  StructuredOutputError,
  TimeoutError,
} from "../errors/index.js";
import { type KtxToolOutput, type PreparedTool, errorMessage, normalizeToolOutput, prepareToolSet } from "../mcp/tools.js";
import { type Logger, silentLogger } from "../session/logger.js";
import { DEFAULT_PROMPT_CACHING, type KtxLlmBackend, type KtxPromptCacheTtl, type KtxPromptCachingConfig } from "../config/schema.js";
import { planObjectSchema, validateObject } from "../runtime/object-schema.js";
import type { RunLoopStopReason } from "../port/ktx-port.js";
import { type CloseOptions, type LoopOutcome, type ObjectOutcome, PortRuntime, type TextOutcome } from "../runtime/port-runtime.js";
import type { CallClock, LoopTracker } from "../runtime/port-support.js";
import { type CacheMarker, definedOnly, isAnthropicProtocolModel, markLast, modelIdOf, runInfo, toRuntimeError, toolCallRecords } from "./results.js";

export { AiSdkCallError, isAnthropicProtocolModel, modelIdOf } from "./results.js";
import { type ExperimentalTelemetry, resolveTelemetry } from "../runtime/spans.js";
import {
  type KtxGenerateObjectInput,
  type KtxGenerateTextInput,
  MODEL_ROLES,
  type ModelRole,
  type RunInfo,
  type RunLoopParams,
  type ToolCallRecord,
} from "../runtime/types.js";

export interface AiSdkKtxLlmRuntimeOptions {
  /** The model for a KTX role (KTX's `KtxLlmProvider.getModel`, or `createAnthropic(...)(id)`). */
  getModel(role: ModelRole): LanguageModel;
  /** Which backend the models come from; only decides `vertexFallbackTo5m`. Default "anthropic". */
  backend?: KtxLlmBackend;
  /** KTX's `llm.promptCaching`; omitted fields take KTX's defaults. `{ enabled: false }` sends no markers. */
  promptCaching?: Partial<KtxPromptCachingConfig>;
  /**
   * Same-step repair of a tool call with unknown name or invalid arguments (`experimental_repairToolCall`,
   * KTX's repair handler). When set, tool arguments are validated by the AI SDK so the hook can run;
   * without it they are validated like the claude-code bridge does (same error text to the model).
   */
  repairToolCall?: ToolCallRepairFunction<ToolSet>;
  /**
   * Passed as `experimental_telemetry` to every call (OTEL spans): the AI SDK's settings, or KTX's factory
   * `(telemetryTags) => TelemetrySettings`, called with a loop's tags (`{}` for text and object calls).
   */
  telemetry?: ExperimentalTelemetry;
  /** AI SDK retries of failed API calls (default 2, the AI SDK's). */
  maxRetries?: number;
  timeoutMs?: number;
  toolTimeoutMs?: number;
  logger?: Logger;
}

interface CallSpec {
  role: ModelRole;
  system: string;
  prompt: string;
  maxTurns: number;
  tools: PreparedTool[];
  temperature?: number;
  signal?: AbortSignal;
  timeoutMs?: number;
  output?: ReturnType<typeof Output.object>;
  /** A loop's tags, for a telemetry factory. */
  telemetryTags?: Record<string, string>;
  onStep?(step: StepResult<ToolSet>, stepIndex: number): void;
}

interface CallOutcome {
  steps: Array<StepResult<ToolSet>>;
  text: string;
  output?: () => unknown;
  toolCalls: ToolCallRecord[];
  toolFailures: number;
  info: RunInfo;
  /** Step budget used up while the model still asked for tools. */
  budget: boolean;
}

export class AiSdkKtxLlmRuntime extends PortRuntime {
  readonly backend: KtxLlmBackend;
  readonly promptCaching: KtxPromptCachingConfig;
  protected readonly logger: Logger;

  constructor(private readonly options: AiSdkKtxLlmRuntimeOptions) {
    super();
    if (typeof options?.getModel !== "function") throw new InvalidInputError("AiSdkKtxLlmRuntime needs getModel(role) returning an AI SDK LanguageModel.");
    this.backend = options.backend ?? "anthropic";
    this.promptCaching = { ...DEFAULT_PROMPT_CACHING, ...definedOnly(options.promptCaching ?? {}) };
    this.logger = options.logger ?? silentLogger;
  }

  /** Nothing to release (no processes) beyond the calls in flight when `abortInFlight`. */
  override async close(options: CloseOptions = {}): Promise<void> {
    await super.close(options);
  }

  protected async runText(input: KtxGenerateTextInput, signal: AbortSignal | undefined, clock: CallClock): Promise<TextOutcome> {
    const tools = input.tools ? prepareToolSet(input.tools) : [];
    const outcome = await this.call({
      role: input.role ?? "default",
      system: input.system ?? "",
      prompt: input.prompt,
      maxTurns: input.maxTurns ?? (tools.length > 0 ? 10 : 1),
      tools,
      temperature: input.temperature,
      signal,
      timeoutMs: input.timeoutMs,
    });
    clock.answered(outcome.info.usage);
    if (outcome.budget) throw new MaxTurnsError(outcome.steps.length);
    return { ...outcome.info, text: outcome.text, toolCalls: outcome.toolCalls, toolFailures: outcome.toolFailures };
  }

  protected async runObject<T>(input: KtxGenerateObjectInput<T, z.ZodType<T>>, signal: AbortSignal | undefined, clock: CallClock): Promise<ObjectOutcome<T>> {
    // The same JSON Schema the claude-code runtime gives the CLI (non-objects wrapped as { value }).
    const plan = planObjectSchema(input.schema);
    const tools = input.tools ? prepareToolSet(input.tools) : [];
    const outcome = await this.call({
      role: input.role ?? "default",
      system: input.system ?? "",
      prompt: input.prompt,
      maxTurns: input.maxTurns ?? (tools.length > 0 ? 16 : 8),
      tools,
      temperature: input.temperature,
      signal,
      timeoutMs: input.timeoutMs,
      output: Output.object({ schema: jsonSchema(plan.jsonSchema as Parameters<typeof jsonSchema>[0]) }),
    });
    clock.answered(outcome.info.usage);
    if (outcome.budget) throw new MaxTurnsError(outcome.steps.length);
    let received: unknown;
    try {
      received = outcome.output?.();
    } catch (error) {
      throw new StructuredOutputError(
        `The model's answer is not a JSON object${outcome.text ? `: ${JSON.stringify(outcome.text.slice(0, 300))}` : " (it was empty)"}. Retry, or make the prompt ask for the structured answer explicitly.`,
        outcome.text,
        [],
        { cause: error },
      );
    }
    const object = validateObject(input.schema, plan, received, outcome.text);
    return { ...outcome.info, object, toolCalls: outcome.toolCalls, toolFailures: outcome.toolFailures };
  }

  protected async runLoop(params: RunLoopParams, tools: PreparedTool[], signal: AbortSignal | undefined, tracker: LoopTracker): Promise<LoopOutcome> {
    const outcome = await this.call({
      role: params.modelRole,
      telemetryTags: params.telemetryTags,
      system: params.systemPrompt,
      prompt: params.userPrompt,
      maxTurns: params.stepBudget,
      tools,
      signal,
      timeoutMs: params.timeoutMs,
      onStep: (step, stepIndex) => {
        // As on the claude-code runtime: tool calls of the steps that finished count even if the loop fails later.
        tracker.settled.push(...toolCallRecords([step], new Map()));
        tracker.step(stepIndex);
      },
    });
    const stopReason: RunLoopStopReason = outcome.budget ? "budget" : "natural";
    return {
      stopReason,
      numTurns: outcome.info.numTurns,
      steps: outcome.steps.length,
      toolCalls: outcome.toolCalls,
      toolFailures: outcome.toolFailures,
      usage: outcome.info.usage,
      costUsd: outcome.info.costUsd,
      sessionId: outcome.info.sessionId,
      model: outcome.info.model,
      text: outcome.text,
    };
  }

  protected loopModel(role: ModelRole): string {
    return this.safeModelId(role);
  }

  private safeModelId(role: ModelRole): string {
    try {
      return modelIdOf(this.options.getModel(role));
    } catch {
      return "";
    }
  }


  private async call(spec: CallSpec): Promise<CallOutcome> {
    if (!MODEL_ROLES.includes(spec.role)) {
      throw new InvalidInputError(`Unknown model role ${JSON.stringify(spec.role)}; use one of ${MODEL_ROLES.join(", ")}.`);
    }
    const model = this.options.getModel(spec.role);
    const timeoutMs = spec.timeoutMs ?? this.options.timeoutMs;
    const controller = new AbortController();
    const onAbort = () => controller.abort(spec.signal?.reason);
    if (spec.signal?.aborted) throw new AbortError(spec.signal.reason);
    spec.signal?.addEventListener("abort", onAbort, { once: true });
    let timedOut = false;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            controller.abort(new Error(`timed out after ${timeoutMs} ms`));
          }, timeoutMs);
    timer?.unref?.();

    const durations = new Map<string, number>();
    const marker = (ttl: KtxPromptCacheTtl) => this.cacheMarker(model, ttl);
    const ttls = this.ttls();
    const toolSet = this.toolSet(spec.tools, { durations, marker: this.promptCaching.cacheTools ? marker(ttls.toolsTtl) : undefined });
    let stepIndex = 0;
    try {
      const result = await generateText({
        model,
        ...(spec.system ? { system: this.systemMessage(spec.system, marker(ttls.systemTtl)) } : {}),
        messages: [{ role: "user", content: spec.prompt }],
        ...(spec.tools.length > 0 ? { tools: toolSet } : {}),
        stopWhen: stepCountIs(spec.maxTurns),
        ...(spec.temperature === undefined ? {} : { temperature: spec.temperature }),
        ...(spec.output ? { output: spec.output } : {}),
        ...(this.options.maxRetries === undefined ? {} : { maxRetries: this.options.maxRetries }),
        ...(this.options.repairToolCall ? { experimental_repairToolCall: this.options.repairToolCall } : {}),
        ...(this.options.telemetry ? { experimental_telemetry: resolveTelemetry(this.options.telemetry, spec.telemetryTags) } : {}),
        abortSignal: controller.signal,
        prepareStep: ({ stepNumber, messages }) => {
          // History breakpoint: from the second step on, the latest message (the tool results) is history.
          const history = this.promptCaching.cacheHistory ? marker(ttls.historyTtl) : undefined;
          return history && stepNumber > 0 ? { messages: markLast(messages, history) } : undefined;
        },
        onStepFinish: (step) => {
          stepIndex += 1;
          spec.onStep?.(step as StepResult<ToolSet>, stepIndex);
        },
      });
      const steps = result.steps as Array<StepResult<ToolSet>>;
      const toolCalls = toolCallRecords(steps, durations);
      const last = steps.at(-1);
      return {
        steps,
        text: result.text,
        output: spec.output ? () => result.output : undefined,
        toolCalls,
        toolFailures: toolCalls.filter((call) => !call.ok).length,
        info: runInfo(steps, model),
        budget: steps.length >= spec.maxTurns && last?.finishReason === "tool-calls",
      };
    } catch (error) {
      if (timedOut && timeoutMs !== undefined) throw new TimeoutError("overall", timeoutMs, { cause: error });
      if (controller.signal.aborted) throw new AbortError(spec.signal?.reason ?? error);
      throw toRuntimeError(error);
    } finally {
      if (timer) clearTimeout(timer);
      spec.signal?.removeEventListener("abort", onAbort);
    }
  }

  private ttls(): { systemTtl: KtxPromptCacheTtl; toolsTtl: KtxPromptCacheTtl; historyTtl: KtxPromptCacheTtl } {
    const cfg = this.promptCaching;
    if (cfg.vertexFallbackTo5m && this.backend === "vertex") return { systemTtl: "5m", toolsTtl: "5m", historyTtl: "5m" };
    return { systemTtl: cfg.systemTtl, toolsTtl: cfg.toolsTtl, historyTtl: cfg.historyTtl };
  }

  /** KTX's cache-control marker, only for Anthropic-protocol models and when caching is on. */
  private cacheMarker(model: LanguageModel, ttl: KtxPromptCacheTtl): CacheMarker | undefined {
    if (!this.promptCaching.enabled || !isAnthropicProtocolModel(model)) return undefined;
    return { anthropic: { cacheControl: { type: "ephemeral", ttl } } };
  }

  private systemMessage(system: string, marker: CacheMarker | undefined): SystemModelMessage {
    return this.promptCaching.cacheSystem && marker ? { role: "system", content: system, providerOptions: marker } : { role: "system", content: system };
  }

  /** AI SDK tools from prepared descriptors, sorted by name; the last one carries the tools breakpoint. */
  private toolSet(tools: PreparedTool[], context: { durations: Map<string, number>; marker: CacheMarker | undefined }): ToolSet {
    const sorted = [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const validateInSdk = this.options.repairToolCall !== undefined;
    const entries = sorted.map((prepared, index) => {
      const isLast = index === sorted.length - 1;
      const schema = jsonSchema<unknown>(prepared.inputJsonSchema as Parameters<typeof jsonSchema>[0], {
        validate: validateInSdk
          ? (value) => {
              const parsed = z.safeParse(prepared.inputSchema, value ?? {});
              return parsed.success ? { success: true, value: parsed.data } : { success: false, error: new Error(z.prettifyError(parsed.error)) };
            }
          : (value) => ({ success: true, value }),
      });
      const definition = tool<unknown, KtxToolOutput>({
        description: prepared.description,
        inputSchema: schema,
        ...(isLast && context.marker ? { providerOptions: context.marker } : {}),
        execute: (input, { toolCallId, abortSignal }) => this.runTool(prepared, input, { toolCallId, abortSignal, validate: !validateInSdk, durations: context.durations }),
        toModelOutput: ({ output }) => ({ type: "text", value: output.markdown === "" ? `(${prepared.name} completed with no output)` : output.markdown }),
      });
      return [prepared.name, definition] as const;
    });
    return Object.fromEntries(entries) as ToolSet;
  }

  /** Runs one tool like the claude-code MCP bridge: the same validation, timeout, normalisation and error texts. */
  private async runTool(
    prepared: PreparedTool,
    input: unknown,
    context: { toolCallId: string; abortSignal?: AbortSignal; validate: boolean; durations: Map<string, number> },
  ): Promise<KtxToolOutput> {
    const started = performance.now();
    try {
      let value = input;
      if (context.validate) {
        const parsed = z.safeParse(prepared.inputSchema, input ?? {});
        if (!parsed.success) throw new Error(`Invalid arguments for tool ${prepared.name}: ${z.prettifyError(parsed.error)}`);
        value = parsed.data;
      }
      const controller = new AbortController();
      const onAbort = () => controller.abort(context.abortSignal?.reason);
      context.abortSignal?.addEventListener("abort", onAbort, { once: true });
      const toolTimeoutMs = this.options.toolTimeoutMs;
      let timer: NodeJS.Timeout | undefined;
      try {
        const run = Promise.resolve().then(() => prepared.execute(value, { signal: controller.signal, toolUseId: context.toolCallId }));
        const outcome = await (toolTimeoutMs === undefined
          ? run
          : Promise.race([
              run,
              new Promise<never>((_resolve, reject) => {
                timer = setTimeout(() => {
                  controller.abort(new Error("tool timeout"));
                  reject(new Error(`Tool ${prepared.name} timed out after ${toolTimeoutMs} ms`));
                }, toolTimeoutMs);
              }),
            ]));
        try {
          return normalizeToolOutput(outcome);
        } catch (error) {
          throw new Error(`Tool ${prepared.name} returned output that cannot be sent to the model: ${errorMessage(error)}`);
        }
      } catch (error) {
        const message = errorMessage(error);
        throw message === "" ? new Error(`Tool ${prepared.name} failed without an error message.`) : error instanceof Error ? error : new Error(message);
      } finally {
        if (timer) clearTimeout(timer);
        context.abortSignal?.removeEventListener("abort", onAbort);
      }
    } finally {
      context.durations.set(context.toolCallId, Math.round(performance.now() - started));
    }
  }
}
