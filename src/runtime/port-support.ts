/** What both runtimes of the port share: input checks, signals, metrics, failure counting, error results. */
import { InvalidInputError } from "../errors/index.js";
import type { KtxCallMetrics, LlmTokenUsage, RunLoopMetrics } from "../port/ktx-port.js";
import type { Logger } from "../session/logger.js";
import type { CallOptions, RunLoopParams, RunLoopResult, RunUsage, ToolCallRecord } from "./types.js";

export function requirePrompt(prompt: unknown, field = "prompt"): void {
  if (typeof prompt === "string" && prompt.trim().length > 0) return;
  const shown = typeof prompt === "string" ? JSON.stringify(prompt.slice(0, 20)) : prompt === undefined ? "missing" : typeof prompt;
  const error = new InvalidInputError(`${field} is ${shown}; allowed: a non-empty string (not only whitespace).`);
  error.field = field;
  throw error;
}

export function requireStepBudget(stepBudget: unknown): void {
  if (Number.isInteger(stepBudget) && (stepBudget as number) >= 1) return;
  const error = new InvalidInputError(`stepBudget is ${String(stepBudget)}; allowed: a positive integer (model responses the loop may use).`);
  error.field = "stepBudget";
  throw error;
}

export function emptyUsage(): RunUsage {
  return { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
}

/**
 * KTX's token figures from ours. Input counts every prompt token the model read, cached or not (as
 * the AI SDK's `inputTokens` does), so the two backends profile alike.
 */
export function tokenUsage(usage: RunUsage): LlmTokenUsage {
  const inputTokens = usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;
  return { inputTokens, outputTokens: usage.outputTokens, totalTokens: inputTokens + usage.outputTokens };
}

/** A call's one signal, and `release()`, which unlinks it from the signals it was made of once the call has ended. */
export interface CallSignal {
  signal: AbortSignal | undefined;
  release(): void;
}

const nothingToRelease = (): void => undefined;

/**
 * The call's one signal: `abortSignal`, the older `signal`, and the runtime's own (close with abortInFlight).
 * Two or more are joined by listeners that `release()` takes off again. Not `AbortSignal.any`: Node 20
 * keeps an entry for each signal it made in the dependants of the long-lived runtime signal (nodejs/node#55351;
 * 200,000 calls left 200,000 entries after forced GCs, docs/performance.md).
 */
export function callSignal(options: CallOptions, runtimeSignal?: AbortSignal): CallSignal {
  const { abortSignal, signal } = options;
  // A call without a signal of its own has the runtime's alone: no array is made for it.
  if (abortSignal === undefined && signal === undefined) return { signal: runtimeSignal, release: nothingToRelease };
  const sources = [abortSignal, signal, runtimeSignal].filter((each): each is AbortSignal => each !== undefined);
  if (sources.length === 1) return { signal: sources[0], release: nothingToRelease };
  const joined = new AbortController();
  const aborted = sources.find((source) => source.aborted);
  if (aborted) {
    joined.abort(aborted.reason);
    return { signal: joined.signal, release: nothingToRelease };
  }
  const forwards = sources.map((source) => () => {
    release();
    joined.abort(source.reason);
  });
  const release = (): void => sources.forEach((source, index) => source.removeEventListener("abort", forwards[index]!));
  sources.forEach((source, index) => source.addEventListener("abort", forwards[index]!, { once: true }));
  return { signal: joined.signal, release };
}

/** Calls a caller's callback; one that throws (or rejects) is logged at warn and ignored. */
export function notifyCaller(what: string, callback: () => unknown, logger: Logger): void {
  const warn = (error: unknown) => logger.warn(`${what} threw; ignored: ${(error as Error)?.message ?? error}`);
  try {
    const pending = callback();
    if (pending && typeof (pending as Promise<void>).catch === "function") (pending as Promise<void>).catch(warn);
  } catch (error) {
    warn(error);
  }
}

/** Time and tokens of one text or object call; `answered` once the model answered. */
export class CallClock {
  private readonly started = performance.now();
  private usage: RunUsage | undefined;

  answered(usage: RunUsage): void {
    this.usage = usage;
  }

  get hasAnswer(): boolean {
    return this.usage !== undefined;
  }

  metrics(): KtxCallMetrics {
    return { totalMs: Math.round(performance.now() - this.started), usage: this.usage ? tokenUsage(this.usage) : {} };
  }
}

/**
 * Follows one agent loop for its metrics and for what must survive a failure: the steps that finished
 * (with their time from the loop's start) and the tool calls that settled.
 */
export class LoopTracker {
  private readonly started = performance.now();
  readonly stepBoundariesMs: number[] = [];
  readonly settled: ToolCallRecord[] = [];
  usage: RunUsage | undefined;

  constructor(private readonly onStep: (stepIndex: number) => void = () => undefined) {}

  step(stepIndex: number): void {
    this.stepBoundariesMs.push(Math.round(performance.now() - this.started));
    this.onStep(stepIndex);
  }

  get steps(): number {
    return this.stepBoundariesMs.length;
  }

  metrics(usage = this.usage): RunLoopMetrics {
    return {
      totalMs: Math.round(performance.now() - this.started),
      usage: usage ? tokenUsage(usage) : {},
      stepCount: this.steps,
      stepBoundariesMs: [...this.stepBoundariesMs],
    };
  }
}

/** Calls `onStepFinish`; a callback that throws (or rejects) is logged at warn and ignored. */
export function notifyStepFinish(params: RunLoopParams, stepIndex: number, logger: Logger): void {
  if (!params.onStepFinish) return;
  notifyCaller(`onStepFinish at step ${stepIndex}`, () => params.onStepFinish?.({ stepIndex, stepBudget: params.stepBudget }), logger);
}

/** Tool failures per `telemetryTags.unitKey`, for KTX's `toolFailureCount(unitKey)`. */
export class ToolFailureCounter {
  private readonly byUnit = new Map<string, number>();

  add(unitKey: string | undefined, failures: number): void {
    if (unitKey === undefined || failures === 0) return;
    this.byUnit.set(unitKey, (this.byUnit.get(unitKey) ?? 0) + failures);
  }

  count(unitKey: string): number {
    return this.byUnit.get(unitKey) ?? 0;
  }
}

/** The result of a loop that failed after it started. */
export function failedLoopResult(error: Error, fields: { tracker: LoopTracker; model: string; transcriptPath?: string }): RunLoopResult {
  const { tracker } = fields;
  const toolCalls = [...tracker.settled];
  return {
    stopReason: "error",
    error,
    metrics: tracker.metrics(),
    numTurns: tracker.steps,
    steps: tracker.steps,
    toolCalls,
    toolFailures: toolCalls.filter((call) => !call.ok).length,
    usage: tracker.usage ?? emptyUsage(),
    costUsd: 0,
    sessionId: "",
    model: fields.model,
    text: "",
    ...(fields.transcriptPath ? { transcriptPath: fields.transcriptPath } : {}),
  };
}
