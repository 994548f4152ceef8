/**
 * What the AI SDK runtime makes of the AI SDK's answers: tool-call records, run info, typed errors,
 * and which models take Anthropic cache-control markers. Kept apart from the runtime's call flow.
 */
import { randomUUID } from "node:crypto";
import { APICallError, type LanguageModel, type ModelMessage, RetryError, type StepResult, type ToolSet } from "ai";
import { ClaudeCodeApiError, ClaudeCodeError } from "../errors/index.js";
import type { KtxPromptCacheTtl } from "../config/schema.js";
import { errorMessage } from "../mcp/tools.js";
import { emptyUsage } from "../runtime/port-support.js";
import type { RunInfo, ToolCallRecord } from "../runtime/types.js";

/** A failure of an AI SDK call that is neither an API error, a timeout nor an abort. */
export class AiSdkCallError extends ClaudeCodeError {
  override readonly code = "llm_call_failed";
}

export type CacheMarker = { anthropic: { cacheControl: { type: "ephemeral"; ttl: KtxPromptCacheTtl } } };

export function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export function modelIdOf(model: LanguageModel): string {
  return typeof model === "string" ? model : ((model as { modelId?: string }).modelId ?? "");
}

/** Whether Anthropic cache-control markers apply to this model (Anthropic, Vertex Anthropic, or a claude id through a gateway). */
export function isAnthropicProtocolModel(model: LanguageModel): boolean {
  const id = modelIdOf(model);
  const provider = typeof model === "string" ? "" : String((model as { provider?: unknown }).provider ?? "");
  return provider.includes("anthropic") || id.startsWith("claude-") || id.startsWith("anthropic/") || id.includes("/claude-");
}

export function markLast(messages: ModelMessage[], marker: CacheMarker): ModelMessage[] {
  if (messages.length === 0) return messages;
  const out = [...messages];
  out[out.length - 1] = { ...out[out.length - 1]!, providerOptions: marker } as ModelMessage;
  return out;
}

/** One record per tool call, in the order the model made them; failures carry the text the model saw. */
export function toolCallRecords(steps: Array<StepResult<ToolSet>>, durations: Map<string, number>): ToolCallRecord[] {
  const records = new Map<string, ToolCallRecord>();
  for (const step of steps) {
    for (const part of step.content) {
      if (part.type === "tool-call") {
        const record: ToolCallRecord = { toolUseId: part.toolCallId, name: part.toolName, input: part.input, ok: true };
        records.set(part.toolCallId, record);
      } else if (part.type === "tool-error") {
        const record = records.get(part.toolCallId);
        if (!record) continue;
        record.ok = false;
        record.error = errorMessage(part.error);
      }
    }
  }
  for (const record of records.values()) {
    const duration = durations.get(record.toolUseId);
    if (duration !== undefined) record.durationMs = duration;
  }
  return [...records.values()];
}

export function runInfo(steps: Array<StepResult<ToolSet>>, model: LanguageModel): RunInfo {
  const usage = emptyUsage();
  for (const step of steps) {
    const details = step.usage.inputTokenDetails;
    usage.inputTokens += details?.noCacheTokens ?? step.usage.inputTokens ?? 0;
    usage.outputTokens += step.usage.outputTokens ?? 0;
    usage.cacheReadInputTokens += details?.cacheReadTokens ?? 0;
    usage.cacheCreationInputTokens += details?.cacheWriteTokens ?? 0;
  }
  const last = steps.at(-1);
  return {
    model: last?.response.modelId ?? modelIdOf(model),
    // The AI SDK has no session; the first response id identifies the call in provider logs.
    sessionId: steps[0]?.response.id ?? randomUUID(),
    numTurns: steps.length,
    usage,
    // Pricing is the provider's business; the AI SDK does not report cost.
    costUsd: 0,
    cliVersion: "",
    hostDiscovery: { slashCommands: [], skills: [], agents: [] },
    warmStart: false,
  };
}

/** Maps AI SDK errors onto the library's typed errors (API status kept). */
export function toRuntimeError(error: unknown): ClaudeCodeError {
  if (ClaudeCodeError.isInstance(error)) return error;
  if (RetryError.isInstance(error)) {
    const last = error.lastError;
    if (APICallError.isInstance(last)) return apiError(last, `after ${error.errors.length} attempts`, error);
    return new AiSdkCallError(`The model call failed after ${error.errors.length} attempts: ${errorMessage(last)}`, { cause: error });
  }
  if (APICallError.isInstance(error)) return apiError(error, undefined, error);
  return new AiSdkCallError(`The model call failed: ${errorMessage(error)}`, { cause: error });
}

function apiError(error: APICallError, attempts: string | undefined, cause: unknown): ClaudeCodeApiError {
  const status = error.statusCode;
  return new ClaudeCodeApiError(
    `The model API answered${status === undefined ? "" : ` ${status}`}${attempts ? ` ${attempts}` : ""}: ${error.message}`,
    status,
    undefined,
    { cause },
  );
}
