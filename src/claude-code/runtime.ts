/**
 * `ClaudeCodeRuntime`: KTX's LLM runtime port over the local Claude Code CLI. Each call is one
 * isolated CLI run (see run.ts); this class resolves the CLI, models, environment and options.
 */
import { availableParallelism } from "node:os";
import { ToolFailureCounter, failedLoopResult, notifyStepFinish, requirePrompt, requireStepBudget } from "../runtime/port-support.js";
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { type ResolvedCli, resolveCli } from "../binary/locate.js";
import { AbortError, ClaudeCodeError, InvalidInputError, MaxTurnsError } from "../errors/index.js";
import { type PreparedTool, prepareToolSet } from "../mcp/tools.js";
import type { KtxRuntimeToolSet } from "../mcp/tools.js";
import { type Logger, silentLogger } from "../session/logger.js";
import { type ApiEndpoint, type Env, createKtxClaudeCodeEnv } from "../transport/env.js";
import { openRunTranscript, secretValues } from "../transcripts/recorder.js";
import { hostDiscovery } from "./isolation.js";
import { RunLimiter } from "../runtime/limiter.js";
import { type WarmOptions, WarmPool } from "./warm-pool.js";
import { planObjectSchema, validateObject } from "../runtime/object-schema.js";
import { type RunOutput, executeRun } from "./run.js";
import { type AttemptHooks, type CallLimits, type LimitsRuntimeOptions, DEFAULT_CALL_TIMEOUT_MS, DEFAULT_TOOL_TIMEOUT_MS, armedTimeout, createCallLimits, rateLimitOptionsSchema, timeoutSchema } from "../limits/index.js";
import { mapStopReason } from "./stop-reason.js";
import {
  type CallOptions,
  type KtxGenerateObjectInput,
  type KtxGenerateObjectResult,
  type KtxGenerateTextInput,
  type KtxGenerateTextResult,
  type KtxLlmRuntimePort,
  MODEL_ROLES,
  type ModelMap,
  type ModelRole,
  type RunInfo,
  type RunLoopParams,
  type RunLoopResult,
  type ToolCallRecord,
} from "../runtime/types.js";

export interface ClaudeCodeRuntimeOptions extends LimitsRuntimeOptions {
  projectDir: string;
  models: ModelMap;
  cliPath?: string;
  allowUnverifiedCli?: boolean;
  /** Base environment for the CLI (default `process.env`); always scrubbed. */
  env?: Env;
  /** Explicit Messages API endpoint (tests, recording). Never read from the environment. */
  apiEndpoint?: ApiEndpoint;
  /** Default true; false lets the CLI make its non-essential calls (telemetry, error reports). */
  disableNonessentialTraffic?: boolean;
  /** Whole call, every turn and tool of it; default 60 min (DEFAULT_CALL_TIMEOUT_MS), `Infinity` for none. */
  timeoutMs?: number;
  idleTimeoutMs?: number;
  /** Each tool handler; default 5 min (DEFAULT_TOOL_TIMEOUT_MS), `Infinity` for none. */
  toolTimeoutMs?: number;
  /** Stream the model's text to `onEvent` as `text_delta` events (the CLI's --include-partial-messages). */
  includePartialMessages?: boolean;
  maxLineBytes?: number;
  /** CLI processes allowed at once; more calls wait. Default: the machine's available parallelism. */
  maxConcurrentRuns?: number;
  /** Record every run's transcript into this directory. */
  transcript?: { dir: string };
  /**
   * Pre-started CLI processes for repeated calls of the same shape (default on: `{ size: 2, idleMs: 30000 }`;
   * `false` turns it off). Call `close()` to end idle processes early; they never keep the host alive.
   */
  warm?: WarmOptions | false;
  logger?: Logger;
}

const modelSchema = z.string().trim().min(1).regex(/^[A-Za-z0-9][A-Za-z0-9._:\-[\]/@]*$/, "not a model alias or id");

const optionsSchema = z.strictObject({
  projectDir: z.string().min(1),
  models: z.strictObject(Object.fromEntries(MODEL_ROLES.map((role) => [role, role === "default" ? modelSchema : modelSchema.optional()]))),
  cliPath: z.string().min(1).optional(),
  allowUnverifiedCli: z.boolean().optional(),
  env: z.record(z.string(), z.string().optional()).optional(),
  apiEndpoint: z
    .union([z.strictObject({ baseUrl: z.url(), apiKey: z.string().min(1) }), z.strictObject({ baseUrl: z.url(), oauthToken: z.string().min(1) })])
    .optional(),
  disableNonessentialTraffic: z.boolean().optional(),
  timeoutMs: timeoutSchema.optional(),
  idleTimeoutMs: z.number().int().nonnegative().optional(),
  toolTimeoutMs: timeoutSchema.optional(),
  includePartialMessages: z.boolean().optional(),
  rateLimit: rateLimitOptionsSchema.optional(),
  rateLimitGovernor: z
    .custom<LimitsRuntimeOptions["rateLimitGovernor"]>((value) => ["waitForReady", "report", "maxRetryAttempts"].every((name) => typeof (value as Record<string, unknown>)?.[name] === "function"), "needs waitForReady, report and maxRetryAttempts (KTX's governor shape)")
    .optional(),
  onEvent: z.custom<LimitsRuntimeOptions["onEvent"]>((value) => typeof value === "function", "must be a function").optional(),
  apiRetryBudgetMs: timeoutSchema.optional(),
  maxLineBytes: z.number().int().positive().optional(),
  maxConcurrentRuns: z.number().int().positive().optional(),
  transcript: z.strictObject({ dir: z.string().min(1) }).optional(),
  warm: z.union([z.literal(false), z.strictObject({ size: z.number().int().nonnegative().optional(), idleMs: z.number().int().positive().optional() })]).optional(),
  logger: z.custom<Logger>((value) => typeof value === "object" && value !== null).optional(),
});

export function parseRuntimeOptions(options: ClaudeCodeRuntimeOptions): ClaudeCodeRuntimeOptions {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) throw new InvalidInputError(`Invalid ClaudeCodeRuntime options: ${z.prettifyError(parsed.error)}`);
  const projectDir = resolve(options.projectDir);
  let isDir = false;
  try {
    isDir = statSync(projectDir).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new InvalidInputError(`projectDir ${projectDir} is not an existing directory; pass the KTX project directory.`);
  return { ...options, projectDir };
}

interface CallSpec extends CallOptions {
  role: ModelRole;
  system: string;
  prompt: string;
  maxTurns: number;
  tools: PreparedTool[];
  jsonSchema?: Record<string, unknown>;
  onStepFinish?(stepIndex: number): void;
  onToolSettled?(call: ToolCallRecord): void;
}

export class ClaudeCodeRuntime implements KtxLlmRuntimePort {
  readonly options: ClaudeCodeRuntimeOptions;
  private readonly logger: Logger;
  private readonly limiter: RunLimiter;
  private readonly failures = new ToolFailureCounter();
  private cliPromise: Promise<ResolvedCli> | undefined;
  private readonly warmPool: WarmPool | undefined;
  private readonly limits: CallLimits;

  constructor(options: ClaudeCodeRuntimeOptions) {
    this.options = parseRuntimeOptions(options);
    this.logger = options.logger ?? silentLogger;
    this.limits = createCallLimits(this.options, this.logger);
    this.limiter = new RunLimiter(options.maxConcurrentRuns ?? Math.max(1, availableParallelism()));
    this.warmPool = options.warm === false ? undefined : new WarmPool(options.warm ?? {}, this.logger, () => this.limiter.queued > 0);
  }

  /** Ends idle warm processes; calls made afterwards start cold processes. */
  async close(): Promise<void> {
    await this.warmPool?.close();
  }

  /** Process ids of idle warm processes right now (diagnostics, tests). */
  get warmIdlePids(): number[] {
    return this.warmPool?.idlePids ?? [];
  }

  /** The model configured for `role` (falls back to `default`). */
  resolveModel(role: ModelRole = "default"): string {
    return this.options.models[role] ?? this.options.models.default;
  }

  /** Resolves and checks the CLI once per runtime (a failure is retried on the next call). */
  cli(): Promise<ResolvedCli> {
    if (!this.cliPromise) {
      this.cliPromise = resolveCli(this.options);
      this.cliPromise.catch(() => (this.cliPromise = undefined));
    }
    return this.cliPromise;
  }

  /** Failures of the tool calls of loops tagged with `telemetryTags.unitKey`. */
  toolFailureCount(unitKey: string): number {
    return this.failures.count(unitKey);
  }

  async generateText(input: KtxGenerateTextInput): Promise<KtxGenerateTextResult> {
    requirePrompt(input.prompt);
    if (input.temperature !== undefined) this.logger.debug("temperature is ignored: the Claude Code CLI has no temperature setting");
    const tools = input.tools ? prepareToolSet(input.tools) : [];
    const output = await this.call({
      ...input,
      role: input.role ?? "default",
      system: input.system ?? "",
      maxTurns: input.maxTurns ?? (tools.length > 0 ? 10 : 1),
      tools,
    });
    throwOnBudget(output);
    return { ...this.info(output), text: output.result.result ?? output.lastText, toolCalls: output.toolCalls, toolFailures: output.toolFailures };
  }

  async generateObject<T>(input: KtxGenerateObjectInput<T>): Promise<KtxGenerateObjectResult<T>> {
    requirePrompt(input.prompt);
    if (!input.schema || typeof (input.schema as { safeParse?: unknown }).safeParse !== "function") {
      throw new InvalidInputError("generateObject needs a zod schema in `schema`.");
    }
    const plan = planObjectSchema(input.schema);
    const tools = input.tools ? prepareToolSet(input.tools) : [];
    const output = await this.call({
      ...input,
      role: input.role ?? "default",
      system: input.system ?? "",
      // The model's answer plus the CLI's 5 schema retries and its one prose nudge.
      maxTurns: input.maxTurns ?? (tools.length > 0 ? 16 : 8),
      tools,
      jsonSchema: plan.jsonSchema,
    });
    throwOnBudget(output);
    const object = validateObject(input.schema, plan, output.result.structured_output, output.result.result ?? output.lastText);
    return { ...this.info(output), object, toolCalls: output.toolCalls, toolFailures: output.toolFailures };
  }

  /**
   * Runs a tool loop under `stepBudget` model responses. Invalid input and tool definitions throw;
   * every failure after the run started is returned as `stopReason: "error"` with `error`.
   */
  async runAgentLoop(params: RunLoopParams): Promise<RunLoopResult> {
    requirePrompt(params.userPrompt);
    requireStepBudget(params.stepBudget);
    const tools = prepareToolSet(params.toolSet);
    const unitKey = params.telemetryTags?.unitKey;
    let steps = 0;
    const settled: ToolCallRecord[] = [];
    try {
      const output = await this.call({
        ...params,
        role: params.modelRole,
        system: params.systemPrompt,
        prompt: params.userPrompt,
        maxTurns: params.stepBudget,
        tools,
        onStepFinish: (stepIndex) => {
          steps = stepIndex;
          notifyStepFinish(params, stepIndex, this.logger);
        },
        onToolSettled: (call) => settled.push(call),
      });
      this.failures.add(unitKey, output.toolFailures);
      const info = this.info(output);
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
      };
    } catch (error) {
      if (!ClaudeCodeError.isInstance(error) || error instanceof InvalidInputError) throw error;
      // Tool calls that settled before the failure happened: they count for the unit like any others.
      const failed = failedLoopResult(error, { steps, toolCalls: settled, model: this.resolveModel(params.modelRole), transcriptPath: error.transcriptPath });
      this.failures.add(unitKey, failed.toolFailures);
      return failed;
    }
  }



  /** Rate limits (src/limits/): every attempt waits for the governor; one a limit stopped before anything acted runs again. */
  private call(spec: CallSpec): Promise<RunOutput & { transcriptPath?: string }> {
    const unitKey = (spec as { telemetryTags?: { unitKey?: string } }).telemetryTags?.unitKey;
    return this.limits.run({ signal: spec.signal, unitKey }, (hooks) => this.attempt(spec, hooks));
  }

  private async attempt(spec: CallSpec, hooks: AttemptHooks): Promise<RunOutput & { transcriptPath?: string }> {
    const role = spec.role;
    if (!MODEL_ROLES.includes(role)) throw new InvalidInputError(`Unknown model role ${JSON.stringify(role)}; use one of ${MODEL_ROLES.join(", ")}.`);
    // An aborted call starts nothing, not even the once-per-path version check.
    if (spec.signal?.aborted) throw new AbortError(spec.signal.reason);
    const cli = await this.cli();
    const transcriptDir = spec.transcript === false ? undefined : (spec.transcript?.dir ?? this.options.transcript?.dir);
    const transcriptName = spec.transcript ? spec.transcript.name : undefined;
    const env = createKtxClaudeCodeEnv(this.options.env ?? process.env, {
      apiEndpoint: this.options.apiEndpoint,
      disableNonessentialTraffic: this.options.disableNonessentialTraffic,
    });
    // The slot is held until the child is reaped, so no more than maxConcurrentRuns calls have a live CLI;
    // idle warm processes (at most warm.size) come on top, and are not started while calls are queued.
    await this.limiter.acquire(spec.signal);
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
      ? await openRunTranscript(transcriptDir, { name: transcriptName, secrets: secretValues(this.options.env ?? process.env, this.options.apiEndpoint) }).catch((error: unknown) => {
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
        warmPool: this.warmPool,
        // A transcript is complete (exit included) when the call returns; without one the exit is not awaited.
        reapInBackground: transcript === undefined,
      });
      void output.reaped.finally(release);
      await transcript?.close();
      return { ...output, transcriptPath: transcript?.path };
    } catch (error) {
      release();
      await transcript?.close();
      if (ClaudeCodeError.isInstance(error) && transcript) error.transcriptPath = transcript.path;
      throw error;
    }
  }

  private info(output: RunOutput & { transcriptPath?: string }): RunInfo {
    const usage = output.result.usage ?? {};
    return {
      model: output.init.model,
      sessionId: output.result.session_id ?? output.init.session_id,
      numTurns: output.result.num_turns ?? output.steps,
      usage: {
        inputTokens: usage.input_tokens ?? 0,
        outputTokens: usage.output_tokens ?? 0,
        cacheReadInputTokens: usage.cache_read_input_tokens ?? 0,
        cacheCreationInputTokens: usage.cache_creation_input_tokens ?? 0,
      },
      costUsd: output.result.total_cost_usd ?? 0,
      cliVersion: output.init.claude_code_version ?? "",
      hostDiscovery: hostDiscovery(output.init),
      transcriptPath: output.transcriptPath,
      warmStart: output.warm,
    };
  }
}


/** For text and object calls a max-turns end means the work did not finish. */
function throwOnBudget(output: RunOutput): void {
  if (mapStopReason(output.result) === "budget") throw new MaxTurnsError(output.result.num_turns);
}

export type { KtxRuntimeToolSet };
