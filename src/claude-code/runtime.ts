/**
 * `ClaudeCodeRuntime`: KTX's LLM runtime port over the local Claude Code CLI. Each call is one
 * isolated CLI run (see run.ts); this class resolves the CLI, models, environment and options.
 */
import { availableParallelism } from "node:os";
import { z } from "zod";
import { type ResolvedCli, resolveCli } from "../binary/locate.js";
import { AbortError, ClaudeCodeError, InvalidInputError, IsolationError } from "../errors/index.js";
import { type KtxRuntimeToolSet, type PreparedTool, prepareToolSet } from "../mcp/tools.js";
import type { ResultMessage } from "../protocol/messages.js";
import { RunLimiter } from "../runtime/limiter.js";
import { planObjectSchema, validateObject } from "../runtime/object-schema.js";
import { type CloseOptions, type LoopOutcome, type ObjectOutcome, PortRuntime, type TextOutcome } from "../runtime/port-runtime.js";
import type { CallClock, LoopTracker } from "../runtime/port-support.js";
import type { ExperimentalTelemetry } from "../runtime/spans.js";
import { type AttemptHooks, type CallLimits, DEFAULT_CALL_TIMEOUT_MS, DEFAULT_TOOL_TIMEOUT_MS, armedTimeout, createCallLimits } from "../limits/index.js";
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
import { openRunTranscript, secretValues } from "../transcripts/recorder.js";
import { createKtxClaudeCodeEnv } from "../transport/env.js";
import { InterceptorProcess } from "./wire/interceptor-process.js";
import { WIRE_VERSIONS, wireShapeFor, wireShapeProblem } from "./wire/shape.js";
import { interceptorState, loginAhead, networkRoute } from "./checks/billing.js";
import { type PoolStats, ProcessPool } from "./pool/process-pool.js";
import { requireProjectDir } from "./checks/project-dir.js";
import { RetryHold } from "./run/retry-hold.js";
import { executeRun } from "./run/run.js";
import { mapStopReason } from "./run/stop-reason.js";
import { type CallOutput, runInfo, runUsage, throwOnBudget } from "./run/call-output.js";
import { thinkingEnv, thinkingFor } from "./thinking.js";
import { type ClaudeCodeRuntimeOptions, parseRuntimeOptions } from "./options.js";

export { type ClaudeCodeRuntimeOptions, parseRuntimeOptions } from "./options.js";

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
  readonly options: ClaudeCodeRuntimeOptions;
  /** Each role's pinned model id, resolved at construction (see models.ts). */
  readonly models: ResolvedModels;
  protected readonly logger: Logger;
  private readonly limiter: RunLimiter;
  private cliPromise: Promise<ResolvedCli> | undefined;
  private wirePromise: Promise<InterceptorProcess> | undefined;
  private wireProcess: InterceptorProcess | undefined;
  private readonly limits: CallLimits;
  private readonly pool: ProcessPool;

  constructor(options: ClaudeCodeRuntimeOptions) {
    super();
    this.options = parseRuntimeOptions(options);
    this.models = resolveRoleModels(this.options.models, { aliases: options.modelAliases, source: options.modelsSource });
    this.logger = options.logger ?? silentLogger;
    this.limits = createCallLimits(this.options, this.logger);
    this.limiter = new RunLimiter(options.maxConcurrentRuns ?? Math.max(1, availableParallelism()));
    this.pool = new ProcessPool(options.reuse ?? {}, options.warm ?? {}, this.logger, () => this.limiter.queued > 0);
  }

  /**
   * Ends every idle process and resolves once every CLI of this runtime is reaped; calls made
   * afterwards start processes that end with their call. Calls in flight finish (their process is
   * retired when the call ends), unless `abortInFlight` (they then reject with `AbortError` and their
   * CLIs are interrupted, then stopped). While it waits, the CLIs keep the host alive, so the code
   * after `await close()` runs even when nothing else is left in the host.
   */
  override async close(options: CloseOptions = {}): Promise<void> {
    // The pool closes first (synchronously), so a process whose call ends during close() is retired, not kept.
    const pool = this.pool.close();
    await super.close(options);
    await pool;
    const wire = this.wirePromise;
    this.wirePromise = undefined;
    this.wireProcess = undefined;
    await wire?.then((interceptor) => interceptor.close(), () => {});
  }

  /**
   * Whether calls run behind the runtime's interceptor: opt-in (`wire: true`) on the first-party path,
   * off otherwise; an `apiEndpoint` (a base URL) is never intercepted.
   */
  get interceptor(): InterceptorState {
    return interceptorState(this.options);
  }

  /**
   * The route every CLI of this runtime gets: the proxy, CA and client-certificate variables of its
   * environment, and whether its interceptor is on (the same for every role). Every result of this
   * runtime carries it as `network` — a failed loop's too, which ended before any CLI said more.
   */
  get network(): NetworkRoute {
    const env = createKtxClaudeCodeEnv(this.options.env ?? process.env, {
      apiEndpoint: this.options.apiEndpoint,
      disableNonessentialTraffic: this.options.disableNonessentialTraffic,
      passEnv: this.options.passEnv,
      telemetry: this.options.telemetry,
    });
    return networkRoute(env, this.interceptor);
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

  /** The runtime's interceptor (opt-in: `wire`), started with its first call on the first-party path; never with an `apiEndpoint`. */
  private wire(cli: ResolvedCli): Promise<InterceptorProcess> | undefined {
    if (this.interceptor !== "on") return undefined;
    // Refused before any process starts: requests of a version whose first-party shape nobody recorded cannot be checked.
    if (!wireShapeFor(cli.version)) {
      throw new IsolationError(
        [`wire: Claude Code ${cli.version} has no recorded first-party request shape (recorded: ${WIRE_VERSIONS.join(", ")}${wireShapeProblem(cli.version) ? `; its shape file did not load: ${wireShapeProblem(cli.version)}` : ""}), so its requests cannot be checked`],
        "Use a verified CLI version (npm ci installs one), record this one's shape (ktx-claude-code fixtures verify), or run it without `wire` (no wire check; docs/isolation.md, \"The wire check\"). If this is a stand-in CLI that answers without any request (a cliPath from createScriptedCli or createReplayCli, a test script), run it without `wire`: it could not pass the check on any version.",
      );
    }
    return this.startWire()!.then((interceptor) => (interceptor.useVersion(cli.version), interceptor));
  }

  /** Starts the interceptor's process once (again after it exited); undefined when calls run without one. */
  private startWire(): Promise<InterceptorProcess> | undefined {
    if (this.interceptor !== "on") return undefined;
    if (!this.wirePromise) {
      const wire = typeof this.options.wire === "object" ? this.options.wire : {};
      const started = InterceptorProcess.start({
        env: this.options.env ?? process.env,
        bodies: wire.bodies === true,
        upstream: wire.upstream,
        // Its calls have failed and its processes are retired; the next call starts a new one.
        onExit: () => {
          if (this.wirePromise !== started) return;
          this.wirePromise = undefined;
          this.wireProcess = undefined;
        },
      });
      this.wirePromise = started;
      started.then(
        (process) => (this.wireProcess = process),
        () => {
          if (this.wirePromise === started) this.wirePromise = undefined;
        },
      );
    }
    return this.wirePromise;
  }

  /** The process id of the runtime's interceptor, once started (diagnostics; the bench reads its CPU). */
  get interceptorPid(): number | undefined {
    return this.wireProcess?.pid;
  }

  /** Process ids of live processes that served a call (idle or serving one); diagnostics, tests. */
  get reusePids(): number[] {
    return this.pool.pids;
  }

  /** Counters of the pool (processes started, reused calls, retirements by reason); undefined with `reuse: false`. */
  get reuseStats(): PoolStats | undefined {
    return this.pool.reuse ? this.pool.stats : undefined;
  }

  /** Counters of the pool, whatever `reuse` says (the bench). */
  get poolStats(): PoolStats {
    return this.pool.stats;
  }

  /** Process ids of idle spares right now (diagnostics, tests). */
  get warmIdlePids(): number[] {
    return this.pool.sparePids;
  }

  /** Resident memory of every idle process (diagnostics, the bench). */
  idleMemory(): Array<{ pid: number | undefined; rssMiB: number }> {
    return this.pool.idleMemory();
  }

  /** The pinned model id for `role` (falls back to `default`); what the CLI is given. */
  resolveModel(role: ModelRole = "default"): string {
    return (this.models[role] ?? this.models.default).id;
  }

  /** Resolves and checks the CLI once per runtime (a failure is retried on the next call). */
  cli(): Promise<ResolvedCli> {
    if (!this.cliPromise) {
      this.cliPromise = resolveCli(this.options);
      this.cliPromise.catch(() => (this.cliPromise = undefined));
    }
    return this.cliPromise;
  }

  protected async runText(input: KtxGenerateTextInput, signal: AbortSignal | undefined, clock: CallClock): Promise<TextOutcome> {
    if (input.temperature !== undefined) this.logger.debug("temperature is ignored: the Claude Code CLI has no temperature setting");
    const tools = input.tools ? prepareToolSet(input.tools) : [];
    const maxTurns = input.maxTurns ?? (tools.length > 0 ? 10 : 1);
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
    const maxTurns = input.maxTurns ?? (tools.length > 0 ? 16 : 8);
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

  /** Rate limits (src/limits/): every attempt waits for the governor; one a limit stopped before anything acted runs again. */
  private call(spec: CallSpec): Promise<CallOutput> {
    const unitKey = (spec as { telemetryTags?: { unitKey?: string } }).telemetryTags?.unitKey;
    const hold = new RetryHold(this.pool, this.limiter);
    return this.limits.run({ signal: spec.signal, unitKey }, (hooks) => this.attempt(spec, hooks, hold)).finally(() => hold.drop());
  }

  private async attempt(spec: CallSpec, hooks: AttemptHooks, hold: RetryHold): Promise<CallOutput> {
    const role = spec.role;
    if (!MODEL_ROLES.includes(role)) throw new InvalidInputError(`Unknown model role ${JSON.stringify(role)}; use one of ${MODEL_ROLES.join(", ")}.`);
    // An aborted call starts nothing, not even the once-per-path version check.
    if (spec.signal?.aborted) throw new AbortError(spec.signal.reason);
    // Before the CLI is looked for, while no process runs in the project dir; later a call needing a new CLI checks it (run.ts).
    if (!this.pool.servesCalls) requireProjectDir(this.options.projectDir);
    // The interceptor's process (a Node start and a CA key) starts while the CLI is looked for.
    this.startWire();
    const cli = await this.cli();
    const wire = await this.wire(cli);
    if (spec.signal?.aborted) throw new AbortError(spec.signal.reason);
    const transcriptDir = spec.transcript === false ? undefined : (spec.transcript?.dir ?? this.options.transcript?.dir);
    const transcriptName = spec.transcript ? spec.transcript.name : undefined;
    const env = createKtxClaudeCodeEnv(this.options.env ?? process.env, {
      apiEndpoint: this.options.apiEndpoint,
      disableNonessentialTraffic: this.options.disableNonessentialTraffic,
      passEnv: this.options.passEnv,
      telemetry: this.options.telemetry,
      launchSettings: thinkingEnv(thinkingFor(this.options.thinking, role)),
    });
    // The slot is held until the child is reaped, so no more than maxConcurrentRuns calls have a live CLI;
    // idle warm processes (at most warm.size) come on top, and are not started while calls are queued.
    // A retry after a usage-limit reset has the slot its rejected attempt kept (retry-hold.ts).
    if (!hold.takeSlot()) await this.limiter.acquire(spec.signal);
    let released = false;
    const release = () => {
      if (!released) this.limiter.release();
      released = true;
    };
    await hooks.admit(spec.signal).catch((error: unknown) => {
      release();
      throw error;
    });
    const transcript = transcriptDir
      ? await openRunTranscript(transcriptDir, {
          name: transcriptName,
          secrets: secretValues(this.options.env ?? process.env, this.options.apiEndpoint),
          login: loginAhead(env, this.options.apiEndpoint && (this.options.apiEndpoint.apiKey !== undefined ? "apiKey" : "oauthToken")),
          network: networkRoute(env, this.interceptor),
        }).catch((error: unknown) => {
          release();
          throw error;
        })
      : undefined;
    try {
      const output = await executeRun({
        cli,
        projectDir: this.options.projectDir,
        env,
        apiKeyAllowed: this.options.apiEndpoint?.apiKey !== undefined,
        explicitCredential: this.options.apiEndpoint && (this.options.apiEndpoint.apiKey !== undefined ? "apiKey" : "oauthToken"),
        requireSubscription: this.options.requireSubscription,
        model: this.resolveModel(role),
        maxTurns: spec.maxTurns,
        system: spec.system,
        prompt: spec.prompt,
        jsonSchema: spec.jsonSchema,
        tools: spec.tools,
        toolTimeoutMs: armedTimeout(this.options.toolTimeoutMs, DEFAULT_TOOL_TIMEOUT_MS),
        timeoutMs: armedTimeout(spec.timeoutMs ?? this.options.timeoutMs, DEFAULT_CALL_TIMEOUT_MS),
        includePartialMessages: this.options.includePartialMessages,
        onCliMessage: (message) => hooks.onCliMessage(message),
        idleTimeoutMs: this.options.idleTimeoutMs,
        maxLineBytes: this.options.maxLineBytes,
        signal: spec.signal,
        logger: this.logger,
        observer: transcript?.observer,
        onStepFinish: (stepIndex) => (hooks.onStepFinish(stepIndex), spec.onStepFinish?.(stepIndex)),
        onToolSettled: (call) => (hooks.onToolSettled(call), spec.onToolSettled?.(call)),
        onResult: spec.onResult,
        // A transcript is complete (exit included) when the call returns; without one the exit is not awaited.
        reapInBackground: transcript === undefined,
        transcriptPath: transcript?.path,
        retry: hold.forAttempt(hooks),
        wire,
      }, this.pool);
      void output.reaped.finally(release);
      await transcript?.close();
      return { ...output, transcriptPath: transcript?.path, network: networkRoute(env, this.interceptor) };
    } catch (error) {
      // A call that runs again after the reset keeps its place: its slot waits for the retry.
      if (hooks.willRetry(error)) {
        released = true;
        hold.keepSlot();
      } else release();
      await transcript?.close();
      if (ClaudeCodeError.isInstance(error) && transcript) error.transcriptPath = transcript.path;
      throw unknownModelError(error, this.models[role], this.options.modelsSource);
    }
  }
}

export type { KtxRuntimeToolSet };
