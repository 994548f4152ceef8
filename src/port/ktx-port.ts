/**
 * KTX's LLM runtime port as KTX 0.12.0 defines it (packages/cli/src/context/llm/runtime-port.ts in
 * KTX), restated here field by field so a reader can compare the two files line by line. Both runtimes
 * of this library implement `KtxLlmRuntimePort`; their own input and result types (runtime/types.ts)
 * accept and return more, and stay assignable to these. test/ktx/ checks that against a copy of KTX's
 * port written independently.
 */
import type { z } from "zod";
import type { KtxRuntimeToolSet } from "../mcp/tools.js";

export const MODEL_ROLES = ["default", "triage", "candidateExtraction", "curator", "reconcile", "repair"] as const;
export type KtxModelRole = (typeof MODEL_ROLES)[number];

export type RunLoopStopReason = "budget" | "natural" | "error";

export interface LlmTokenUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
}

/** What `onMetrics` receives once per text or object call. */
export interface KtxCallMetrics {
  totalMs: number;
  usage: LlmTokenUsage;
}

/** Timing and token figures of one agent loop (KTX's ingest profiling reads them). */
export interface RunLoopMetrics {
  /** Wall-clock time of the whole loop, in milliseconds. */
  totalMs: number;
  /** Tokens over all steps. */
  usage: LlmTokenUsage;
  /** Model responses that ran. */
  stepCount: number;
  /** Milliseconds from the loop's start at which each step finished. */
  stepBoundariesMs: number[];
}

export interface KtxRunLoopParams {
  modelRole: KtxModelRole;
  systemPrompt: string;
  userPrompt: string;
  toolSet: KtxRuntimeToolSet;
  stepBudget: number;
  telemetryTags: Record<string, string>;
  abortSignal?: AbortSignal;
}

export interface KtxRunLoopResult {
  stopReason: RunLoopStopReason;
  error?: Error;
  metrics?: RunLoopMetrics;
}

export interface KtxGenerateTextPortInput {
  role: KtxModelRole;
  prompt: string;
  system?: string;
  tools?: KtxRuntimeToolSet;
  temperature?: number;
  onMetrics?: (metrics: KtxCallMetrics) => void;
  abortSignal?: AbortSignal;
}

export interface KtxGenerateObjectPortInput<TOutput, TSchema extends z.ZodType<TOutput>> extends KtxGenerateTextPortInput {
  schema: TSchema;
}

export interface KtxLlmRuntimePort {
  generateText(input: KtxGenerateTextPortInput): Promise<string>;
  generateObject<TOutput, TSchema extends z.ZodType<TOutput>>(input: KtxGenerateObjectPortInput<TOutput, TSchema>): Promise<TOutput>;
  runAgentLoop(params: KtxRunLoopParams): Promise<KtxRunLoopResult>;
}

/** KTX's `AgentRunnerPort`: what ingest stages call; KTX builds it as a one-line adapter over the port. */
export interface KtxAgentRunnerPort {
  runLoop(params: KtxRunLoopParams): Promise<KtxRunLoopResult>;
}

/** How KTX recognises a cancellation (`isAbortError`): by name or by DOMException code. */
export function isAbortError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { name, code } = error as { name?: unknown; code?: unknown };
  return name === "AbortError" || code === "ABORT_ERR";
}
