/** What both runtimes of the port share: input checks, step notification, failure counting, error results. */
import { InvalidInputError } from "../errors/index.js";
import type { Logger } from "../session/logger.js";
import type { RunLoopParams, RunLoopResult, RunUsage, ToolCallRecord } from "./types.js";

export function requirePrompt(prompt: unknown): void {
  if (typeof prompt !== "string" || prompt.trim().length === 0) throw new InvalidInputError("The prompt must be a non-empty string.");
}

export function requireStepBudget(stepBudget: unknown): void {
  if (!Number.isInteger(stepBudget) || (stepBudget as number) < 1) {
    throw new InvalidInputError(`stepBudget must be a positive integer, got ${String(stepBudget)}.`);
  }
}

export function emptyUsage(): RunUsage {
  return { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
}

/** Calls `onStepFinish`; a callback that throws (or rejects) is logged at warn and ignored. */
export function notifyStepFinish(params: RunLoopParams, stepIndex: number, logger: Logger): void {
  const warn = (error: unknown) => logger.warn(`onStepFinish threw at step ${stepIndex}; ignored: ${(error as Error)?.message ?? error}`);
  try {
    const pending = params.onStepFinish?.({ stepIndex, stepBudget: params.stepBudget });
    if (pending && typeof (pending as Promise<void>).catch === "function") (pending as Promise<void>).catch(warn);
  } catch (error) {
    warn(error);
  }
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
export function failedLoopResult(error: Error, fields: { steps: number; model: string; toolCalls?: ToolCallRecord[]; transcriptPath?: string }): RunLoopResult {
  const toolCalls = fields.toolCalls ?? [];
  return {
    stopReason: "error",
    error,
    numTurns: fields.steps,
    steps: fields.steps,
    toolCalls,
    toolFailures: toolCalls.filter((call) => !call.ok).length,
    usage: emptyUsage(),
    costUsd: 0,
    sessionId: "",
    model: fields.model,
    text: "",
    ...(fields.transcriptPath ? { transcriptPath: fields.transcriptPath } : {}),
  };
}
