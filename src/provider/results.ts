/** What a turn's end gives the AI SDK: usage in V3's shape, the finish reason, `providerMetadata["claude-code"]`. */
import type { JSONObject, LanguageModelV3FinishReason, LanguageModelV3Usage } from "@ai-sdk/provider";
import type { ResultMessage } from "../protocol/messages.js";
import type { CallOutput } from "../claude-code/run/call-output.js";
import { isBudget } from "../claude-code/run/run.js";
import type { ResponseUsage } from "./stream-map.js";

export const PROVIDER_ID = "claude-code";

/** V3 usage from token counts; output splits into text and reasoning only when no reasoning was seen. */
export function v3Usage(tokens: ResponseUsage, reasoningSeen: boolean, raw?: unknown): LanguageModelV3Usage {
  return {
    inputTokens: { total: tokens.input + tokens.cacheRead + tokens.cacheWrite, noCache: tokens.input, cacheRead: tokens.cacheRead, cacheWrite: tokens.cacheWrite },
    outputTokens: { total: tokens.output, text: reasoningSeen ? undefined : tokens.output, reasoning: reasoningSeen ? undefined : 0 },
    ...(raw && typeof raw === "object" ? { raw: raw as JSONObject } : {}),
  };
}

export function sumUsage(usages: Iterable<ResponseUsage>): ResponseUsage {
  const sum = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
  for (const usage of usages) {
    sum.input += usage.input;
    sum.cacheRead += usage.cacheRead;
    sum.cacheWrite += usage.cacheWrite;
    sum.output += usage.output;
  }
  return sum;
}

/** The result line's tokens (the call's own). */
export function resultUsage(result: ResultMessage): ResponseUsage {
  const usage = result.usage ?? {};
  return { input: usage.input_tokens ?? 0, cacheRead: usage.cache_read_input_tokens ?? 0, cacheWrite: usage.cache_creation_input_tokens ?? 0, output: usage.output_tokens ?? 0 };
}

export function finishReason(result: ResultMessage): LanguageModelV3FinishReason {
  if (isBudget(result)) return { unified: "length", raw: "max_turns" };
  const raw = result.stop_reason ?? undefined;
  switch (raw) {
    case "end_turn":
    case "stop_sequence":
      return { unified: "stop", raw };
    case "max_tokens":
    case "model_context_window_exceeded":
      return { unified: "length", raw };
    case "refusal":
      return { unified: "content-filter", raw };
    default:
      return { unified: result.subtype === "success" ? "stop" : "other", raw: raw ?? result.subtype };
  }
}

/** How the call's process was had: a reused process, a spare started ahead of need, or a new one. */
export function poolSource(output: CallOutput): "reused" | "spare" | "cold" {
  if ((output.reusedProcess?.call ?? 1) > 1) return "reused";
  return output.warm ? "spare" : "cold";
}

/** `providerMetadata["claude-code"]` at a turn's end (JSON only: undefined fields dropped). */
export function endMetadata(output: CallOutput): Record<string, JSONObject> {
  return {
    [PROVIDER_ID]: jsonObject({
      sessionId: output.result.session_id ?? output.init.session_id,
      costUsd: output.result.total_cost_usd ?? undefined,
      numTurns: output.result.num_turns,
      cliVersion: output.init.claude_code_version,
      login: output.login,
      network: output.network,
      pool: poolSource(output),
      pid: output.reusedProcess?.pid,
      processCall: output.reusedProcess?.call,
      transcriptPath: output.transcriptPath,
    }),
  };
}

/** `providerMetadata["claude-code"]` of a step that stopped at the app's tool calls (the turn goes on). */
export function parkedMetadata(sessionId: string | undefined, pending: readonly string[]): Record<string, JSONObject> {
  return { [PROVIDER_ID]: jsonObject({ sessionId, parked: true, pendingToolCalls: [...pending] }) };
}

export function jsonObject(value: Record<string, unknown>): JSONObject {
  return JSON.parse(JSON.stringify(value)) as JSONObject;
}
