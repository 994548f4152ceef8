/** KTX's LLM runtime port, as this library implements it. */
import type { z } from "zod";
import type { KtxRuntimeToolSet } from "../mcp/tools.js";
import type { RunLoopStopReason } from "../claude-code/stop-reason.js";

export const MODEL_ROLES = ["default", "triage", "candidateExtraction", "curator", "reconcile", "repair"] as const;
export type ModelRole = (typeof MODEL_ROLES)[number];

/** Role → model alias (`sonnet`, `opus`, `haiku`, …) or full model id; only `default` is required. */
export type ModelMap = { default: string } & Partial<Record<ModelRole, string>>;

export interface RunUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
}

/** What every operation reports about the CLI run behind it. */
export interface RunInfo {
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
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Record this call's transcript into `dir` (overrides the runtime option); `name` fixes the file name. */
  transcript?: { dir: string; name?: string } | false;
}

export interface KtxGenerateTextInput extends CallOptions {
  role?: ModelRole;
  prompt: string;
  system?: string;
  /** Accepted for port compatibility; the Claude Code CLI has no temperature setting, so it is ignored. */
  temperature?: number;
  tools?: KtxRuntimeToolSet;
  /** Model responses allowed; default 1 without tools, 10 with tools. */
  maxTurns?: number;
}

export interface KtxGenerateTextResult extends RunInfo {
  text: string;
  toolCalls: ToolCallRecord[];
  toolFailures: number;
}

export interface KtxGenerateObjectInput<T> extends Omit<KtxGenerateTextInput, "temperature"> {
  schema: z.ZodType<T>;
  temperature?: number;
}

export interface KtxGenerateObjectResult<T> extends RunInfo {
  object: T;
  toolCalls: ToolCallRecord[];
  toolFailures: number;
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
  /** Set when the tool's text was cut to the limit the model gets (claude-code: 40,000 characters; docs/tool-boundary.md). */
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
  telemetryTags?: { unitKey?: string } & Record<string, unknown>;
  onStepFinish?(event: StepFinishEvent): void | Promise<void>;
}

export interface RunLoopResult {
  stopReason: RunLoopStopReason;
  error?: Error;
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
}

export interface KtxLlmRuntimePort {
  generateText(input: KtxGenerateTextInput): Promise<KtxGenerateTextResult>;
  generateObject<T>(input: KtxGenerateObjectInput<T>): Promise<KtxGenerateObjectResult<T>>;
  runAgentLoop(params: RunLoopParams): Promise<RunLoopResult>;
}
