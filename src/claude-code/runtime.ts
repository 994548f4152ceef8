/**
 * `ClaudeCodeRuntime`: KTX's LLM runtime port over the local Claude Code CLI, an adapter on a
 * `ClaudeCodeHost` (host.ts: the pool, limits, interceptor and transcripts every caller shares). This
 * class maps KTX's calls (roles, models, thinking, the port's results) onto the host's one run path.
 * Given no `host`, it builds its own from its options and closes it with itself.
 */
import { z } from "zod";
import type { ResolvedCli } from "../binary/locate.js";
import { InvalidInputError } from "../errors/index.js";
import { type KtxRuntimeToolSet, type PreparedTool, prepareToolSet } from "../mcp/tools.js";
import type { ResultMessage } from "../protocol/messages.js";
import { planObjectSchema, validateObject } from "../runtime/object-schema.js";
import { type CloseOptions, type LoopOutcome, type ObjectOutcome, PortRuntime, type TextOutcome } from "../runtime/port-runtime.js";
import type { CallClock, LoopTracker } from "../runtime/port-support.js";
import type { ExperimentalTelemetry } from "../runtime/spans.js";
import type { CallLimits } from "../limits/index.js";
import { type ResolvedModels, resolveRoleModels, unknownModelError } from "./models.js";
import {
  type CallOptions,
  type KtxGenerateObjectInput,
  type KtxGenerateTextInput,
  type KtxGenerateTextResult,
  MODEL_ROLES,
  type ModelRole,
  type NetworkRoute,
  type RunLoopParams,
  type RunLoopResult,
  type ToolCallRecord,
  type InterceptorState,
} from "../runtime/types.js";
import { type Logger, silentLogger } from "../session/logger.js";
import type { PoolStats } from "./pool/process-pool.js";
import { mapStopReason } from "./run/stop-reason.js";
import { type CallOutput, runInfo, runUsage, throwOnBudget } from "./run/call-output.js";
import { thinkingEnv, thinkingFor } from "./thinking.js";
import { type ClaudeCodeRuntimeOptions, parseRuntimeOptions } from "./options.js";
import { type Capabilities, parseCapabilities } from "./capabilities.js";
import { ClaudeCodeHost } from "./host.js";
import { type CallerOptionName, hostPart, parseCallerOptions } from "./host-options.js";

export { type ClaudeCodeRuntimeOptions, parseRuntimeOptions } from "./options.js";

/**
 * `new ClaudeCodeRuntime({ host, models, … })`: KTX's runtime on a host it was given (shared with other
 * callers), with only the caller's own options; the host's owner closes the host.
 */
export type ClaudeCodeRuntimeOnHostOptions = Partial<Pick<ClaudeCodeRuntimeOptions, CallerOptionName | "logger">> &
  Pick<ClaudeCodeRuntimeOptions, "models"> & { host: ClaudeCodeHost };

interface CallSpec extends CallOptions {
  role: ModelRole;
  system: string;
  prompt: string;
  maxTurns: number;
  tools: PreparedTool[];
  jsonSchema?: Record<string, unknown>;
  onStepFinish?(stepIndex: number): void;
  onToolSettled?(call: ToolCallRecord): void;
  onResult?(result: ResultMessage): void;
}

/** What every result of `ClaudeCodeRuntime` carries: the route its CLI's requests took. */
export type Routed = { network: NetworkRoute };

export class ClaudeCodeRuntime extends PortRuntime {
  /** The runtime's options; on a host it was given, the host's options together with the runtime's own. */
  readonly options: ClaudeCodeRuntimeOptions;
  /** Each role's pinned model id, resolved at construction (see models.ts). */
  readonly models: ResolvedModels;
  /** The host its calls run on: the one it was given, or its own (built from its options). */
  readonly host: ClaudeCodeHost;
  protected readonly logger: Logger;
  private readonly limits: CallLimits;
  /** Whether this runtime built its host (then its close() closes the host). */
  private readonly ownsHost: boolean;
  /** Unregisters this runtime from its host's `close({ abortInFlight })`; set while registered. */
  private detach: (() => void) | undefined;
  /** Calls in flight of a runtime on a host it was given: its close() waits for them, and it is registered with the host while there are any. */
  private readonly inFlight = new Set<Promise<void>>();
  /** `capabilities`, checked (a tool that cannot be opted into is refused at construction). */
  private readonly capabilities: Capabilities | undefined;

  constructor(options: ClaudeCodeRuntimeOptions | ClaudeCodeRuntimeOnHostOptions) {
    super();
    const given = typeof options === "object" && options !== null ? (options as { host?: unknown }).host : undefined;
    if (given !== undefined) {
      if (!(given instanceof ClaudeCodeHost)) {
        const error = new InvalidInputError("Invalid ClaudeCodeRuntime options: host must be a ClaudeCodeHost (new ClaudeCodeHost({ projectDir, … })).");
        error.field = "host";
        throw error;
      }
      const { host: _host, ...own } = parseCallerOptions(options as ClaudeCodeRuntimeOnHostOptions, "ClaudeCodeRuntime");
      this.options = { ...given.options, ...own, logger: own.logger ?? given.logger } as ClaudeCodeRuntimeOptions;
    } else {
      const { host: _host, ...full } = options as ClaudeCodeRuntimeOptions & { host?: undefined };
      this.options = parseRuntimeOptions(full);
    }
    this.capabilities = parseCapabilities(this.options.capabilities);
    this.models = resolveRoleModels(this.options.models, { aliases: this.options.modelAliases, source: this.options.modelsSource });
    this.logger = this.options.logger ?? silentLogger;
    this.ownsHost = given === undefined;
    this.host = given ?? new ClaudeCodeHost(hostPart(this.options));
    this.limits = this.host.limitsFor(this.options.onEvent, this.logger);
    // A runtime with its own host lives as long as it; one on a shared host registers while it has calls, so a dropped one leaves nothing behind.
    if (this.ownsHost) this.attach();
  }

  /** The host's `close({ abortInFlight })` aborts this runtime's calls as its own close would. */
  private attach(): void {
    this.detach ??= this.host.attach(() => void super.close({ abortInFlight: true }));
  }

  /**
   * Ends every idle process and resolves once every CLI of this runtime is reaped; calls made
   * afterwards start processes that end with their call. Calls in flight finish (their process is
   * retired when the call ends), unless `abortInFlight` (they then reject with `AbortError` and their
   * CLIs are interrupted, then stopped). While it waits, the CLIs keep the host alive, so the code
   * after `await close()` runs even when nothing else is left in the host.
   *
   * On a host it was given, the host stays open (its owner closes it, `host.close()`): this aborts the
   * runtime's own calls when asked and resolves once they have ended; their processes stay in the
   * host's pool, and the runtime's later calls still run on the host.
   */
  override async close(options: CloseOptions = {}): Promise<void> {
    if (this.ownsHost) return this.host.close(options);
    await super.close(options);
    await Promise.all(this.inFlight);
  }

  /**
   * Whether calls run behind the host's interceptor: on by default on the first-party path, off with
   * `wire: false`; an `apiEndpoint` (a base URL) and a stand-in CLI of the testing helpers never are.
   */
  get interceptor(): InterceptorState {
    return this.host.interceptor;
  }

  /**
   * The route every CLI of this runtime gets: the proxy, CA and client-certificate variables of its
   * environment, and whether its interceptor is on (the same for every role). Every result of this
   * runtime carries it as `network` — a failed loop's too, which ended before any CLI said more.
   */
  get network(): NetworkRoute {
    return this.host.network;
  }

  // Text and loop results typed with `network` always there (the AI SDK runtime's results have none).
  // generateObjectResult keeps the base overloads, so a call on `ClaudeCodeRuntime | AiSdkKtxLlmRuntime`
  // (ktx-claude-code/ai-sdk's factory) still type-checks; its results carry `network` all the same.
  override async generateTextResult(input: KtxGenerateTextInput): Promise<KtxGenerateTextResult & Routed> {
    return this.routed(await super.generateTextResult(input));
  }

  override async runAgentLoop(params: RunLoopParams): Promise<RunLoopResult & Routed> {
    return this.routed(await super.runAgentLoop(params));
  }

  private routed<T extends { network?: NetworkRoute | undefined }>(result: T): T & Routed {
    return result.network ? (result as T & Routed) : { ...result, network: this.network };
  }

  /** The process id of the host's interceptor, once started (diagnostics; the bench reads its CPU). */
  get interceptorPid(): number | undefined {
    return this.host.interceptorPid;
  }

  /** Process ids of the host's live processes that served a call (idle or serving one); diagnostics, tests. */
  get reusePids(): number[] {
    return this.host.reusePids;
  }

  /** Counters of the host's pool (processes started, reused calls, retirements by reason); undefined with `reuse: false`. */
  get reuseStats(): PoolStats | undefined {
    return this.host.reuseStats;
  }

  /** Counters of the host's pool, whatever `reuse` says (the bench). */
  get poolStats(): PoolStats {
    return this.host.poolStats;
  }

  /** Process ids of idle spares right now (diagnostics, tests). */
  get warmIdlePids(): number[] {
    return this.host.warmIdlePids;
  }

  /** Resident memory of every idle process (diagnostics, the bench). */
  idleMemory(): Array<{ pid: number | undefined; rssMiB: number }> {
    return this.host.idleMemory();
  }

  /** The pinned model id for `role` (falls back to `default`); what the CLI is given. */
  resolveModel(role: ModelRole = "default"): string {
    return (this.models[role] ?? this.models.default).id;
  }

  /** Resolves and checks the CLI once per host (a failure is retried on the next call). */
  cli(): Promise<ResolvedCli> {
    return this.host.cli();
  }

  protected async runText(input: KtxGenerateTextInput, signal: AbortSignal | undefined, clock: CallClock): Promise<TextOutcome> {
    if (input.temperature !== undefined) this.logger.debug("temperature is ignored: the Claude Code CLI has no temperature setting");
    const tools = input.tools ? prepareToolSet(input.tools) : [];
    const maxTurns = input.maxTurns ?? (tools.length > 0 || this.capabilities?.builtinTools !== undefined || this.capabilities?.mcpServers !== undefined || this.capabilities?.bash !== undefined || this.capabilities?.webSearch === true || this.capabilities?.subagents !== undefined ? 10 : 1);
    const output = await this.call({
      ...input,
      signal,
      role: input.role ?? "default",
      system: input.system ?? "",
      maxTurns,
      tools,
      onResult: (result) => clock.answered(runUsage(result)),
    });
    throwOnBudget(output, maxTurns);
    return { ...runInfo(output), text: output.result.result ?? output.lastText, toolCalls: output.toolCalls, toolFailures: output.toolFailures };
  }

  protected async runObject<T>(input: KtxGenerateObjectInput<T, z.ZodType<T>>, signal: AbortSignal | undefined, clock: CallClock): Promise<ObjectOutcome<T>> {
    const plan = planObjectSchema(input.schema);
    const tools = input.tools ? prepareToolSet(input.tools) : [];
    // The model's answer plus the CLI's 5 schema retries and its one prose nudge.
    const maxTurns = input.maxTurns ?? (tools.length > 0 || this.capabilities?.builtinTools !== undefined || this.capabilities?.mcpServers !== undefined || this.capabilities?.bash !== undefined || this.capabilities?.webSearch === true || this.capabilities?.subagents !== undefined ? 16 : 8);
    const output = await this.call({
      ...input,
      signal,
      role: input.role ?? "default",
      system: input.system ?? "",
      maxTurns,
      tools,
      jsonSchema: plan.jsonSchema,
      onResult: (result) => clock.answered(runUsage(result)),
    });
    throwOnBudget(output, maxTurns);
    const object = validateObject(input.schema, plan, output.result.structured_output, output.result.result ?? output.lastText);
    return { ...runInfo(output), object, toolCalls: output.toolCalls, toolFailures: output.toolFailures };
  }

  protected async runLoop(params: RunLoopParams, tools: PreparedTool[], signal: AbortSignal | undefined, tracker: LoopTracker): Promise<LoopOutcome> {
    const output = await this.call({
      ...params,
      signal,
      role: params.modelRole,
      system: params.systemPrompt,
      prompt: params.userPrompt,
      maxTurns: params.stepBudget,
      tools,
      onStepFinish: (stepIndex) => tracker.step(stepIndex),
      onToolSettled: (call) => tracker.settled.push(call),
      onResult: (result) => (tracker.usage = runUsage(result)),
    });
    const info = runInfo(output);
    return {
      stopReason: mapStopReason(output.result),
      numTurns: info.numTurns,
      steps: output.steps,
      toolCalls: output.toolCalls,
      toolFailures: output.toolFailures,
      usage: info.usage,
      costUsd: info.costUsd,
      sessionId: info.sessionId,
      model: info.model,
      text: output.result.result ?? output.lastText,
      transcriptPath: info.transcriptPath,
      login: info.login,
      network: info.network,
    };
  }

  protected loopModel(role: ModelRole): string {
    return this.resolveModel(role);
  }

  protected override portTelemetry(): { option: ExperimentalTelemetry; provider: string } | undefined {
    return this.options.experimentalTelemetry ? { option: this.options.experimentalTelemetry, provider: "claude-code" } : undefined;
  }

  /** One call on the host: the role's model and thinking, KTX's reading of an unknown model. */
  private call(spec: CallSpec): Promise<CallOutput> {
    const role = spec.role;
    if (!MODEL_ROLES.includes(role)) return Promise.reject(new InvalidInputError(`Unknown model role ${JSON.stringify(role)}; use one of ${MODEL_ROLES.join(", ")}.`));
    if (!this.ownsHost) this.attach();
    const output = this.host.run(
      {
        model: this.resolveModel(role),
        launchSettings: thinkingEnv(thinkingFor(this.options.thinking, role)),
        includePartialMessages: this.options.includePartialMessages,
        ...(this.options.permissions ? { permissions: { mode: this.options.permissions.mode ?? "deny", launch: this.options.permissions.mode ?? "deny", canUseTool: this.options.permissions.canUseTool } } : {}),
        capabilities: this.capabilities,
        system: spec.system,
        prompt: spec.prompt,
        maxTurns: spec.maxTurns,
        tools: spec.tools,
        jsonSchema: spec.jsonSchema,
        signal: spec.signal,
        timeoutMs: spec.timeoutMs,
        transcript: spec.transcript,
        unitKey: (spec as { telemetryTags?: { unitKey?: string } }).telemetryTags?.unitKey,
        logger: this.logger,
        onStepFinish: spec.onStepFinish,
        onToolSettled: spec.onToolSettled,
        onResult: spec.onResult,
        mapError: (error) => unknownModelError(error, this.models[role], this.options.modelsSource),
      },
      this.limits,
    );
    if (!this.ownsHost) {
      const settled = output.then(
        () => {},
        () => {},
      );
      this.inFlight.add(settled);
      void settled.then(() => {
        this.inFlight.delete(settled);
        if (this.inFlight.size > 0) return;
        this.detach?.();
        this.detach = undefined;
      });
    }
    return output;
  }
}

export type { KtxRuntimeToolSet };
