/**
 * The library's own call types: KTX's port inputs (port/ktx-port.ts) plus options, and rich results
 * (model, usage, cost, tool calls, transcript) returned by `generateTextResult`, `generateObjectResult`
 * and `runAgentLoop`. Every input here accepts what KTX passes; every result is assignable to KTX's.
 */
import type { z } from "zod";
import type { KtxRuntimeToolSet } from "../mcp/tools.js";
import {
  type KtxCallMetrics,
  type KtxModelRole,
  MODEL_ROLES,
  type RunLoopMetrics,
  type RunLoopStopReason,
} from "../port/ktx-port.js";

export { MODEL_ROLES };
export type { KtxCallMetrics, LlmTokenUsage, RunLoopMetrics, RunLoopStopReason } from "../port/ktx-port.js";
export type ModelRole = KtxModelRole;

/** Role → model alias (`sonnet`, `opus`, `haiku`, …) or full model id; only `default` is required. */
export type ModelMap = { default: string } & Partial<Record<ModelRole, string>>;

export interface RunUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
}

/**
 * The login a call was billed to, from the CLI's initialize reply. `subscription`: an OAuth login
 * (`claude.ai`, `CLAUDE_CODE_OAUTH_TOKEN`). `api-key`: an API key (`/login managed key` is a Console
 * `/login` or a planted `primaryApiKey`; `ANTHROPIC_API_KEY` only ever from an explicit `apiEndpoint`).
 */
export interface CallLogin {
  /** `cloud`: a Bedrock, Vertex or Foundry account (the `auth` option), billed by that cloud. */
  billing: "subscription" | "api-key" | "cloud" | "none";
  /** The `auth` kind the call was made with (`login` unless the `auth` option chose another; docs/options.md, "Authentication"). */
  auth?: "login" | "apiKey" | "oauthToken" | "bedrock" | "vertex" | "foundry";
  /** The CLI's `apiKeySource` for a key, its `tokenSource` for OAuth, or the file a key was read from. */
  source: string;
  subscriptionType?: string;
  organization?: string;
  /** An API key the CLI holds but does not send (a subscriber's OAuth wins): a planted or stale `primaryApiKey`, for example. */
  unusedApiKey?: string;
}

/** Proxy, CA and client-certificate variables the CLI was given: what besides Anthropic's servers sees the traffic. */
export interface NetworkRoute {
  /** `HTTPS_PROXY` and friends, by name, with any user:password in the URL redacted. */
  proxies: Record<string, string>;
  /** Extra CA bundles or directories the CLI trusts (`NODE_EXTRA_CA_CERTS`, `SSL_CERT_FILE`, `SSL_CERT_DIR`). */
  trustedCa: Record<string, string>;
  /** Client-certificate variables set (mTLS), by name only. */
  clientCertificate: string[];
  /**
   * Whether the runtime's interceptor carried the CLI's requests (docs/isolation.md, "The wire check"):
   * `"on"` (each request checked on 127.0.0.1, then sent on the route above; other egress refused),
   * `"off"` (`wire: false`: requests go out on the route above unchecked), `"apiEndpoint"` (a base URL:
   * never intercepted), `"standIn"` (a stand-in CLI of `ktx-claude-code/testing`, which makes no request),
   * `"cloud"` (`auth` Bedrock, Vertex or Foundry: requests go to that cloud, which the interceptor does not know).
   * Absent where no runtime decided it (`networkRoute` of an environment alone).
   */
  interceptor?: InterceptorState;
}

/** Whether calls run behind the runtime's interceptor, and if not, why (`NetworkRoute.interceptor`). */
export type InterceptorState = "on" | "off" | "apiEndpoint" | "standIn" | "cloud";

/** What every operation reports about the CLI run behind it. */
export interface RunInfo {
  /** The login the CLI billed this call to (docs/isolation.md, "The login a call bills to"). */
  login?: CallLogin;
  /**
   * Proxies and CAs the CLI's requests went through (docs/environment.md, "What can route requests").
   * Every `ClaudeCodeRuntime` result has it (`generateTextResult` and `runAgentLoop` are typed so:
   * `Routed`; `generateObjectResult` keeps the overloads it shares with the AI SDK runtime); the AI SDK
   * runtime starts no CLI, and its results have none.
   */
  network?: NetworkRoute;
  /** Model id the CLI resolved (from `system/init`). */
  model: string;
  sessionId: string;
  numTurns: number;
  usage: RunUsage;
  costUsd: number;
  cliVersion: string;
  /** Host-discovered names in `init` (not part of the execution surface; diagnostic only). */
  hostDiscovery: { slashCommands: string[]; skills: string[]; agents: string[] };
  transcriptPath?: string;
  /** Whether a pre-started (warm) CLI process served the call. */
  warmStart: boolean;
}

export interface CallOptions {
  /** Cancels the call: it rejects with `AbortError` (name "AbortError"), its tools' signals fire, its CLI is interrupted and stopped. */
  abortSignal?: AbortSignal;
  /** @deprecated Earlier name of `abortSignal`; both are honoured. */
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Record this call's transcript into `dir` (overrides the runtime option); `name` fixes the file name. */
  transcript?: { dir: string; name?: string } | false;
}

export interface KtxGenerateTextInput extends CallOptions {
  /** Default `default`. */
  role?: ModelRole;
  prompt: string;
  system?: string;
  /** Accepted for port compatibility; the Claude Code CLI has no temperature setting, so it is ignored there. */
  temperature?: number;
  tools?: KtxRuntimeToolSet;
  /** Model responses allowed; default 1 without tools, 10 with tools. */
  maxTurns?: number;
  /** Called once with the call's time and tokens once the model answered, also when the call then fails. */
  onMetrics?: (metrics: KtxCallMetrics) => void;
}

export interface KtxGenerateTextResult extends RunInfo {
  text: string;
  toolCalls: ToolCallRecord[];
  toolFailures: number;
  metrics: KtxCallMetrics;
}

export interface KtxGenerateObjectInput<TOutput, TSchema extends z.ZodType<TOutput> = z.ZodType<TOutput>> extends KtxGenerateTextInput {
  schema: TSchema;
}

/** `generateObject`'s input when no type arguments are given: the result type is the schema's output. */
export interface KtxGenerateObjectSchemaInput<TSchema extends z.ZodType> extends KtxGenerateTextInput {
  schema: TSchema;
}

export interface KtxGenerateObjectResult<T> extends RunInfo {
  object: T;
  toolCalls: ToolCallRecord[];
  toolFailures: number;
  metrics: KtxCallMetrics;
}

/** One tool call the model made, as seen on the stream (our tools and denied ones alike). */
export interface ToolCallRecord {
  toolUseId: string;
  /** Full tool id the model used, e.g. `mcp__ktx__search`. */
  name: string;
  input: unknown;
  ok: boolean;
  /** The error text the model saw, when the call failed or was denied. */
  error?: string;
  /** Handler time, for calls our MCP server ran. */
  durationMs?: number;
  /** Set when the tool's text was cut to the limit the model gets (claude-code: 40,000 characters; docs/guides/agent-loops.md). */
  truncated?: { originalChars: number; keptChars: number };
}

export interface StepFinishEvent {
  stepIndex: number;
  stepBudget: number;
}

export interface RunLoopParams extends CallOptions {
  modelRole: ModelRole;
  systemPrompt: string;
  userPrompt: string;
  toolSet: KtxRuntimeToolSet;
  stepBudget: number;
  /** KTX passes `operationName`, `source`, `unitKey`, `jobId`; `unitKey` keys `toolFailureCount`. */
  telemetryTags?: Record<string, string>;
  /** Not in KTX's port any more (KTX reads `metrics.stepBoundariesMs`); kept for callers that want live progress. */
  /**
   * Its return value is ignored (a returned promise's rejection is logged at warn), so any function
   * fits: `(e) => seen.push(e.stepIndex)` as well as an async one.
   */
  onStepFinish?(event: StepFinishEvent): unknown;
}

export interface RunLoopResult {
  stopReason: RunLoopStopReason;
  error?: Error;
  metrics: RunLoopMetrics;
  numTurns: number;
  /** Model responses seen (what `onStepFinish` counted). */
  steps: number;
  toolCalls: ToolCallRecord[];
  toolFailures: number;
  usage: RunUsage;
  costUsd: number;
  sessionId: string;
  model: string;
  text: string;
  transcriptPath?: string;
  /** As in RunInfo. */
  login?: CallLogin;
  /** As in RunInfo: every `ClaudeCodeRuntime` loop result has it, a failed one's too. */
  network?: NetworkRoute;
}
