/**
 * Zod schemas for what the Claude Code CLI writes on stdout in stream-json mode.
 * Wire schemas are lenient: unknown fields are kept (`looseObject`) and only the fields the runtime
 * reads are typed. Types this library does not know are passed through as `unknown_message`.
 */
import { z } from "zod";
import { FAST_CHECKS } from "./fast-checks.js";

const nullishString = z.string().nullish();

export const usageSchema = z.looseObject({
  input_tokens: z.number().optional(),
  output_tokens: z.number().optional(),
  cache_creation_input_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
});
export type Usage = z.infer<typeof usageSchema>;

export const contentBlockSchema = z.looseObject({ type: z.string() });
export const textBlockSchema = z.looseObject({ type: z.literal("text"), text: z.string() });
export const toolUseBlockSchema = z.looseObject({
  type: z.literal("tool_use"),
  id: z.string(),
  name: z.string(),
  input: z.unknown(),
});
export const toolResultBlockSchema = z.looseObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  content: z.unknown().optional(),
  is_error: z.boolean().optional(),
});

export const mcpServerStatusSchema = z.looseObject({ name: z.string(), status: z.string().optional(), source: z.string().optional() });
export const pluginSchema = z.looseObject({ name: z.string(), path: z.string().optional(), source: z.string().optional() });

export const systemInitSchema = z.looseObject({
  type: z.literal("system"),
  subtype: z.literal("init"),
  session_id: z.string(),
  cwd: z.string().optional(),
  tools: z.array(z.string()),
  mcp_servers: z.array(mcpServerStatusSchema),
  model: z.string(),
  permissionMode: z.string().optional(),
  apiKeySource: z.string().optional(),
  claude_code_version: z.string().optional(),
  slash_commands: z.array(z.string()).optional(),
  skills: z.array(z.unknown()).optional(),
  agents: z.array(z.unknown()).optional(),
  plugins: z.array(pluginSchema).optional(),
});
export type SystemInitMessage = z.infer<typeof systemInitSchema>;

export const apiRetrySchema = z.looseObject({
  type: z.literal("system"),
  subtype: z.literal("api_retry"),
  attempt: z.number().optional(),
  max_retries: z.number().optional(),
  retry_delay_ms: z.number().optional(),
  error_status: z.number().nullish(),
  error: z.unknown().optional(),
});

/** What one `system/api_retry` line says, normalised. */
export interface ApiRetryInfo {
  attempt: number | undefined;
  maxRetries: number | undefined;
  delayMs: number | undefined;
  /** HTTP status of the failed request; undefined for a dropped connection. */
  status: number | undefined;
  /** The CLI's error label, e.g. "rate_limit", "authentication_failed", "server_error". */
  error: string | undefined;
}

export function apiRetryInfo(message: z.infer<typeof apiRetrySchema>): ApiRetryInfo {
  return {
    attempt: message.attempt,
    maxRetries: message.max_retries,
    delayMs: message.retry_delay_ms,
    status: message.error_status ?? undefined,
    error: typeof message.error === "string" ? message.error : undefined,
  };
}

/**
 * `rate_limit_event` (a subscriber's usage windows, from the `anthropic-ratelimit-unified-*` headers).
 * Informational, so every field is optional and a malformed one is dropped, never fatal.
 */
const optionalNumber = z.number().optional().catch(undefined);
const optionalString = z.string().optional().catch(undefined);
/**
 * Numbers up to this are Unix seconds, larger ones Unix milliseconds: 1e11 s is the year 5138, 1e11 ms
 * March 1973, so neither reading of a real reset time falls on the other side.
 */
export const RESET_SECONDS_BELOW = 1e11;

/**
 * A reset time as KTX's own backend accepts it, in epoch milliseconds: Unix seconds (what the CLI
 * writes), Unix milliseconds (decided by magnitude, `RESET_SECONDS_BELOW`), or an ISO date string.
 * Undefined for anything else.
 */
export function resetAtMs(value: unknown): number | undefined {
  if (typeof value === "string") {
    const text = value.trim();
    // A number written as text is a number; anything else must be a date string.
    if (/^\d+(\.\d+)?$/.test(text)) return resetAtMs(Number(text));
    const parsed = Date.parse(text);
    return Number.isFinite(parsed) ? parsed : undefined;
  }
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) return undefined;
  return value < RESET_SECONDS_BELOW ? value * 1000 : value;
}

/** A reset time (see `resetAtMs`), read as epoch milliseconds; a malformed one is dropped, never fatal. */
const resetMs = z
  .unknown()
  .transform((value) => resetAtMs(value))
  .optional()
  .catch(undefined);
export const rateLimitWindowSchema = z.looseObject({ utilization: optionalNumber, resetsAt: resetMs, status: optionalString });
export const rateLimitEventSchema = z.looseObject({
  type: z.literal("rate_limit_event"),
  rate_limit_info: z
    .looseObject({
      status: optionalString,
      /** Unix seconds as the CLI writes it (Unix milliseconds or an ISO date string are read too), parsed to epoch ms. */
      resetsAt: resetMs,
      rateLimitType: optionalString,
      utilization: optionalNumber,
      isUsingOverage: z.boolean().optional().catch(undefined),
      unifiedWindows: z.record(z.string(), rateLimitWindowSchema).optional().catch(undefined),
    })
    .optional()
    .catch(undefined),
});
export type RateLimitEventMessage = z.infer<typeof rateLimitEventSchema>;

export interface UsageWindowInfo {
  utilization?: number;
  resetsAt?: Date;
  status?: string;
}

/** What one `rate_limit_event` says, normalised: the representative window and every window reported. */
export interface RateLimitInfo {
  /** `allowed`, `allowed_warning` or `rejected` (other values are passed through). */
  status: string;
  /** The representative window (`rateLimitType`): `five_hour`, `seven_day`, `seven_day_opus`, … */
  window: string | undefined;
  resetsAt: Date | undefined;
  /** The representative window's utilization (0..1), when reported. */
  utilization: number | undefined;
  isUsingOverage: boolean;
  windows: Record<string, UsageWindowInfo>;
}

const fromEpochMs = (ms: number | undefined): Date | undefined => (ms === undefined || !Number.isFinite(ms) ? undefined : new Date(ms));

/** Undefined when the line carries no `rate_limit_info`. */
export function rateLimitInfo(message: RateLimitEventMessage): RateLimitInfo | undefined {
  const info = message.rate_limit_info;
  if (!info) return undefined;
  const windows: Record<string, UsageWindowInfo> = {};
  for (const [name, figures] of Object.entries(info.unifiedWindows ?? {})) {
    windows[name] = {
      ...(figures.utilization !== undefined ? { utilization: figures.utilization } : {}),
      ...(figures.resetsAt !== undefined ? { resetsAt: fromEpochMs(figures.resetsAt) } : {}),
      ...(figures.status !== undefined ? { status: figures.status } : {}),
    };
  }
  const window = info.rateLimitType;
  return {
    status: info.status ?? "allowed",
    window,
    resetsAt: fromEpochMs(info.resetsAt),
    utilization: info.utilization ?? (window ? windows[window]?.utilization : undefined),
    isUsingOverage: info.isUsingOverage === true,
    windows,
  };
}

/** Any other `system` subtype (status, session_state_changed, permission_denied, compact_boundary, task_*, …). */
export const systemOtherSchema = z.looseObject({ type: z.literal("system"), subtype: z.string() });

export const assistantMessageSchema = z.looseObject({
  type: z.literal("assistant"),
  message: z.looseObject({
    /** The CLI always writes it; hand-made streams (KTX's own fixtures) may not. steps.ts counts a line without one as a step of its own. */
    id: z.string().optional(),
    model: z.string().optional(),
    content: z.array(contentBlockSchema),
    stop_reason: nullishString,
    usage: usageSchema.nullish(),
  }),
  parent_tool_use_id: nullishString,
  session_id: z.string().optional(),
  /** Set on synthetic assistant lines the CLI writes for API failures, e.g. "authentication_failed". */
  error: z.string().optional(),
  is_api_error_message: z.boolean().optional(),
  api_error_status: z.number().nullish(),
});
export type AssistantMessage = z.infer<typeof assistantMessageSchema>;

export const userMessageSchema = z.looseObject({
  type: z.literal("user"),
  message: z.looseObject({ role: z.string().optional(), content: z.union([z.string(), z.array(contentBlockSchema)]) }),
  parent_tool_use_id: nullishString,
  isSynthetic: z.boolean().optional(),
});
export type UserMessage = z.infer<typeof userMessageSchema>;

export const RESULT_SUBTYPES = [
  "success",
  "error_during_execution",
  "error_max_turns",
  "error_max_budget_usd",
  "error_max_structured_output_retries",
] as const;

/** Values listed by the pinned CLI's types (2.1.330); new ones are accepted as plain strings. */
export const TERMINAL_REASONS = [
  "completed",
  "max_turns",
  "api_error",
  "blocking_limit",
  "rapid_refill_breaker",
  "prompt_too_long",
  "image_error",
  "model_error",
  "malformed_tool_use_exhausted",
  "aborted_streaming",
  "aborted_tools",
  "stop_hook_prevented",
  "hook_stopped",
  "tool_deferred",
  "background_requested",
  "budget_exhausted",
  "structured_output_retry_exhausted",
  "tool_deferred_unavailable",
  "turn_setup_failed",
] as const;

/** The Messages API's `stop_reason` values, which the result repeats from the last model response. */
export const STOP_REASONS = ["end_turn", "stop_sequence", "tool_use", "pause_turn", "max_tokens", "refusal", "model_context_window_exceeded"] as const;

export const resultMessageSchema = z.looseObject({
  type: z.literal("result"),
  subtype: z.string(),
  is_error: z.boolean().optional(),
  num_turns: z.number().optional(),
  session_id: z.string().optional(),
  result: z.string().optional(),
  structured_output: z.unknown().optional(),
  errors: z.array(z.unknown()).optional(),
  stop_reason: nullishString,
  terminal_reason: nullishString,
  total_cost_usd: z.number().nullish(),
  usage: usageSchema.nullish(),
  modelUsage: z.record(z.string(), z.unknown()).nullish(),
  permission_denials: z.array(z.unknown()).optional(),
  api_error_status: z.number().nullish(),
  duration_ms: z.number().optional(),
});
export type ResultMessage = z.infer<typeof resultMessageSchema>;

export const controlRequestSchema = z.looseObject({
  type: z.literal("control_request"),
  request_id: z.string(),
  request: z.looseObject({ subtype: z.string() }),
});
export type ControlRequest = z.infer<typeof controlRequestSchema>;

export const controlResponseSchema = z.looseObject({
  type: z.literal("control_response"),
  response: z.looseObject({
    subtype: z.enum(["success", "error"]),
    request_id: z.string(),
    response: z.unknown().optional(),
    error: z.unknown().optional(),
  }),
});
export type ControlResponse = z.infer<typeof controlResponseSchema>;

export const controlCancelRequestSchema = z.looseObject({
  type: z.literal("control_cancel_request"),
  request_id: z.string(),
});

export const streamEventSchema = z.looseObject({ type: z.literal("stream_event"), event: z.unknown() });
export const keepAliveSchema = z.looseObject({ type: z.literal("keep_alive") });

/** Top-level types that carry no protocol meaning for the runtime but are known and expected. */
export const INFORMATIONAL_TYPES = [
  "tool_progress",
  "auth_status",
  "prompt_suggestion",
  "tool_use_summary",
] as const;
const informationalSchema = z.looseObject({ type: z.enum(INFORMATIONAL_TYPES) });

export type CliMessage =
  | { kind: "system_init"; message: SystemInitMessage }
  | { kind: "api_retry"; message: z.infer<typeof apiRetrySchema> }
  | { kind: "rate_limit"; message: RateLimitEventMessage }
  | { kind: "system"; message: z.infer<typeof systemOtherSchema> }
  | { kind: "assistant"; message: AssistantMessage }
  | { kind: "user"; message: UserMessage }
  | { kind: "result"; message: ResultMessage }
  | { kind: "control_request"; message: ControlRequest }
  | { kind: "control_response"; message: ControlResponse }
  | { kind: "control_cancel_request"; message: z.infer<typeof controlCancelRequestSchema> }
  | { kind: "stream_event"; message: z.infer<typeof streamEventSchema> }
  | { kind: "keep_alive"; message: z.infer<typeof keepAliveSchema> }
  | { kind: "informational"; message: z.infer<typeof informationalSchema> }
  | { kind: "unknown_message"; message: Record<string, unknown> };

export type ParsedCliMessage = CliMessage | { kind: "invalid"; value: unknown; issues: string };

const schemaByType: Record<string, [CliMessage["kind"], z.ZodType]> = {
  assistant: ["assistant", assistantMessageSchema],
  user: ["user", userMessageSchema],
  result: ["result", resultMessageSchema],
  control_request: ["control_request", controlRequestSchema],
  control_response: ["control_response", controlResponseSchema],
  control_cancel_request: ["control_cancel_request", controlCancelRequestSchema],
  stream_event: ["stream_event", streamEventSchema],
  keep_alive: ["keep_alive", keepAliveSchema],
  rate_limit_event: ["rate_limit", rateLimitEventSchema],
  ...Object.fromEntries(INFORMATIONAL_TYPES.map((t) => [t, ["informational", informationalSchema] as const])),
};

function schemaFor(value: Record<string, unknown>): [CliMessage["kind"], z.ZodType] | undefined {
  // Own keys only: a line typed "constructor" or "toString" must not find an inherited function.
  if (value.type !== "system") return Object.hasOwn(schemaByType, String(value.type)) ? schemaByType[String(value.type)] : undefined;
  if (value.subtype === "init") return ["system_init", systemInitSchema];
  if (value.subtype === "api_retry") return ["api_retry", apiRetrySchema];
  return ["system", systemOtherSchema];
}

/**
 * Classifies one decoded stdout object. Never throws: a known type that fails its schema comes back as
 * `invalid` (the caller decides whether that is fatal); an unknown type as `unknown_message`.
 */
export function parseCliMessage(value: unknown): ParsedCliMessage {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { kind: "invalid", value, issues: "not a JSON object" };
  }
  const record = value as Record<string, unknown>;
  const entry = schemaFor(record);
  if (!entry) return { kind: "unknown_message", message: record };
  const [kind, schema] = entry;
  // The common types pass a hand-written check as they are; anything it turns down gets zod's verdict.
  if (FAST_CHECKS[kind]?.(record)) return { kind, message: record } as CliMessage;
  const parsed = schema.safeParse(record);
  if (!parsed.success) return { kind: "invalid", value, issues: z.prettifyError(parsed.error) };
  return { kind, message: parsed.data } as CliMessage;
}
