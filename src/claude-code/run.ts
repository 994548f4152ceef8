/**
 * Executes one CLI run for any operation: builds the isolated surface, hosts the call's tools,
 * checks `init`, follows steps and tool calls, and returns the result or throws one typed error.
 */
import { AbortError, ClaudeCodeError, CliCrashError, IsolationError, ProtocolError } from "../errors/index.js";
import type { ResolvedCli } from "../binary/locate.js";
import { createKtxMcpBridge } from "../mcp/bridge.js";
import { type PreparedTool, KTX_MCP_SERVER_NAME, ktxToolId } from "../mcp/tools.js";
import type { AssistantMessage, CliMessage, ResultMessage, SystemInitMessage, UserMessage } from "../protocol/messages.js";
import { initializeRequest } from "../protocol/outbound.js";
import type { Logger } from "../session/logger.js";
import { type SessionEnd, type WireDirection, Session } from "../session/session.js";
import type { CliProcess, CliProcessOptions, ExitInfo } from "../transport/process.js";
import { type WarmPool, warmKey } from "./warm-pool.js";
import { type CallLogin, accountFailure, checkBeforeStart, loginFor } from "./billing.js";
import { buildCliArgs, checkInit, hookDifference } from "./isolation.js";
import { MANAGED_POLICY_ADVICE } from "./managed-policy.js";
import { resultError } from "./result-errors.js";
import { StepTracker, isSyntheticError } from "./steps.js";
import type { ToolCallRecord } from "../runtime/types.js";

export interface RunObserver {
  start?(info: {
    cliPath: string;
    cliVersion: string;
    args: readonly string[];
    cwd: string;
    env: Record<string, string>;
    /** On a reused process: its pid, this call's number on it, and the transcript of its launch (call 1). */
    process?: { pid?: number; call: number; launchTranscript?: string };
  }): void;
  wire?(direction: WireDirection, text: string): void;
  exit?(exit: ExitInfo): void;
}

export interface RunSpec {
  cli: ResolvedCli;
  projectDir: string;
  env: Record<string, string>;
  apiKeyAllowed: boolean;
  /** Kind of credential of an explicit apiEndpoint (see ExpectedSurface). */
  explicitCredential?: "apiKey" | "oauthToken";
  /** Refuse a call the CLI would bill to an API key (billing.ts). */
  requireSubscription?: boolean;
  model: string;
  maxTurns: number;
  system: string;
  prompt: string;
  jsonSchema?: Record<string, unknown>;
  tools: PreparedTool[];
  toolTimeoutMs?: number;
  timeoutMs?: number;
  idleTimeoutMs?: number;
  maxLineBytes?: number;
  signal?: AbortSignal;
  logger: Logger;
  observer?: RunObserver;
  onStepFinish?(stepIndex: number): void;
  /** Each tool call once its result is in the stream, so a run that fails later still accounts for it. */
  onToolSettled?(call: ToolCallRecord): void;
  /** Every CLI message, before the run interprets it (limits and progress, src/limits/); may throw to stop the run. */
  onCliMessage?(message: CliMessage): void;
  /** Ask the CLI for `stream_event` lines (text deltas for progress). */
  includePartialMessages?: boolean;
  /** The CLI's result line, as soon as it arrives (before any error is derived from it). */
  onResult?(result: ResultMessage): void;
  /** Pre-started processes to take from, and to refill after the run. */
  warmPool?: WarmPool;
  /** Return at the result and reap the child in the background (see SessionOptions). */
  reapInBackground?: boolean;
  /** This call's transcript file, when recorded (a reused process's later calls reference its first). */
  transcriptPath?: string;
}

export interface RunOutput extends SessionEnd {
  init: SystemInitMessage;
  steps: number;
  toolCalls: ToolCallRecord[];
  toolFailures: number;
  /** Synthetic assistant lines the CLI wrote for API failures. */
  errorLines: AssistantMessage[];
  /** Text of the last top-level model response. */
  lastText: string;
  /** Permission requests we denied (hostile or unknown tool asks). */
  deniedTools: string[];
  /** Whether a pre-started (warm) or reused process served the run. */
  warm: boolean;
  /** The login the CLI billed the call to (billing.ts). */
  login?: CallLogin;
  /** Set when a pooled, reusable process served the run (reused-run.ts): its pid and this call's number on it. */
  reusedProcess?: { pid: number | undefined; call: number };
}

/** Follows the stream for one run (pure bookkeeping, no I/O). */
export class RunState {
  init: SystemInitMessage | undefined;
  readonly errorLines: AssistantMessage[] = [];
  readonly toolCalls = new Map<string, ToolCallRecord>();
  readonly durations = new Map<string, number>();
  readonly truncations = new Map<string, { originalChars: number; keptChars: number }>();
  lastText = "";
  private lastTextId: string | undefined;

  constructor(
    readonly steps: StepTracker,
    private readonly onToolSettled?: (call: ToolCallRecord) => void,
  ) {}

  assistant(message: AssistantMessage): void {
    if (isSyntheticError(message)) {
      this.errorLines.push(message);
      return;
    }
    if (message.parent_tool_use_id != null) return;
    this.steps.assistant(message);
    for (const block of message.message.content) {
      if (block.type === "text") this.appendText(message.message.id, String((block as { text?: unknown }).text ?? ""));
      if (block.type === "tool_use") {
        const use = block as unknown as { id: string; name: string; input: unknown };
        this.toolCalls.set(use.id, { toolUseId: use.id, name: use.name, input: use.input, ok: true });
      }
    }
  }

  user(message: UserMessage): void {
    if (message.parent_tool_use_id != null || typeof message.message.content === "string") return;
    for (const block of message.message.content) {
      if (block.type !== "tool_result") continue;
      const result = block as unknown as { tool_use_id: string; is_error?: boolean; content?: unknown };
      const call = this.toolCalls.get(result.tool_use_id);
      if (!call) continue;
      call.durationMs = this.durations.get(result.tool_use_id);
      const truncated = this.truncations.get(result.tool_use_id);
      if (truncated) call.truncated = truncated;
      if (result.is_error) {
        call.ok = false;
        call.error = toolResultText(result.content);
      }
      this.onToolSettled?.(call);
    }
  }

  private appendText(messageId: string, text: string): void {
    this.lastText = this.lastTextId === messageId ? this.lastText + text : text;
    this.lastTextId = messageId;
  }
}

/**
 * What a run does with each CLI message, on a fresh or a reused process alike: the stream is followed
 * in `state`, `init` is checked against the surface asked for, and any hook the CLI runs is refused.
 * Returns the isolation failure, if any, for the caller to stop the run with.
 */
export function followMessage(
  message: CliMessage,
  state: RunState,
  spec: Pick<RunSpec, "onCliMessage" | "onResult">,
  expected: Parameters<typeof checkInit>[1],
): IsolationError | undefined {
  spec.onCliMessage?.(message);
  switch (message.kind) {
    case "system_init": {
      // A reused process sends init at every call's start: the surface is re-checked each time.
      state.init = message.message;
      const differences = checkInit(message.message, expected);
      return differences.length > 0 ? new IsolationError(differences) : undefined;
    }
    case "system": {
      const hook = hookDifference(message.message);
      return hook ? new IsolationError([hook], MANAGED_POLICY_ADVICE) : undefined;
    }
    case "assistant":
      state.assistant(message.message);
      return undefined;
    case "user":
      state.user(message.message);
      return undefined;
    case "result":
      state.steps.end();
      // Usage in the result line is per call (also on a reused process).
      spec.onResult?.(message.message);
      return undefined;
    default:
      return undefined;
  }
}

/** Deny-by-default permission answer: only the call's own `mcp__ktx__` tools are allowed. */
export function permissionAnswer(request: Record<string, unknown>, allowed: ReadonlySet<string>, toolIds: readonly string[], deniedTools: string[]): Record<string, unknown> {
  const name = String(request.tool_name);
  if (allowed.has(name)) return { behavior: "allow", updatedInput: request.input ?? {} };
  deniedTools.push(name);
  return { behavior: "deny", message: `Tool ${name} is not available in this KTX run. Only these tools exist: ${toolIds.join(", ") || "(none)"}.` };
}

function toolResultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => String((part as { text?: unknown }).text ?? "")).join("");
  return JSON.stringify(content ?? "");
}

/**
 * Runs the call, on a warm process when the pool has one for this launch. A warm process that died
 * while idle (before answering initialize), refused `set_model`, or fails the isolation check is
 * dropped and the call is run again on a fresh process.
 */
export async function executeRun(spec: RunSpec): Promise<RunOutput> {
  if (spec.signal?.aborted) throw new AbortError(spec.signal.reason);
  // Before any process starts: policy files (hooks, helpers, env) apply whatever flags we pass; a planted key bills.
  checkBeforeStart(spec);
  const launch = launchSpec(spec);
  const poolKey = warmKey(launch, spec.cli.facts.hasSetModel);
  const warm = spec.warmPool?.take(poolKey);
  try {
    if (!warm) return await runOnce(spec, launch, undefined);
    try {
      return await runOnce(spec, launch, warm);
    } catch (error) {
      // The model was asked nothing in the first two cases; after an init failure nothing was acted upon.
      const retryCold =
        error instanceof IsolationError || (error instanceof CliCrashError && error.beforeInitialize) || (error instanceof ProtocolError && error.refusedRequest === "set_model");
      if (!retryCold) throw error;
      spec.logger.warn(`a warm Claude Code process failed before the call started (${(error as Error).name}); retrying on a fresh process`);
      return await runOnce(spec, launch, undefined);
    }
  } finally {
    // Idempotent: ends a taken process that failed before its session adopted it.
    if (warm) void warm.stop(true);
    spec.warmPool?.replenish(poolKey, launch);
  }
}

export function launchSpec(spec: RunSpec): CliProcessOptions {
  const toolIds = spec.tools.map((tool) => ktxToolId(tool.name));
  return {
    path: spec.cli.path,
    args: buildCliArgs({ facts: spec.cli.facts, model: spec.model, maxTurns: spec.maxTurns, toolIds, structuredOutput: spec.jsonSchema !== undefined, includePartialMessages: spec.includePartialMessages }),
    cwd: spec.projectDir,
    env: spec.env,
    maxLineBytes: spec.maxLineBytes,
  };
}

async function runOnce(spec: RunSpec, launch: CliProcessOptions, warmProcess: CliProcess | undefined): Promise<RunOutput> {
  if (spec.signal?.aborted) throw new AbortError(spec.signal.reason);
  const toolIds = spec.tools.map((tool) => ktxToolId(tool.name));
  const allowed = new Set(toolIds);
  const deniedTools: string[] = [];
  const bridge = spec.tools.length > 0 ? createKtxMcpBridge(spec.tools, {
    toolTimeoutMs: spec.toolTimeoutMs,
    onToolCall: (event) => {
      if (event.toolUseId) state.durations.set(event.toolUseId, event.durationMs);
      if (event.toolUseId && event.truncated) state.truncations.set(event.toolUseId, event.truncated);
    },
  }) : undefined;
  const state = new RunState(new StepTracker((index) => spec.onStepFinish?.(index)), spec.onToolSettled);
  const expected = { toolIds, structuredOutput: spec.jsonSchema !== undefined, apiKeyAllowed: spec.apiKeyAllowed, explicitCredential: spec.explicitCredential, cwd: spec.projectDir, requireSubscription: spec.requireSubscription };

  // A warm process may have been started for another role's model: it is switched before the prompt.
  const launchArgs = warmProcess?.launchArgs ?? launch.args;
  const setup = launchArgs.includes(`--model=${spec.model}`) ? [] : [{ subtype: "set_model", model: spec.model }];
  spec.observer?.start?.({ cliPath: spec.cli.path, cliVersion: spec.cli.version, args: launchArgs, cwd: spec.projectDir, env: spec.env });
  const session: Session = new Session({
    process: launch,
    warmProcess,
    control: {
      mcpMessage: bridge ? (server, message, signal) => bridge.handleMcpMessage(server, message, signal) : undefined,
      canUseTool: async (request) => permissionAnswer(request, allowed, toolIds, deniedTools),
    },
    onInitialized: (response) => {
      const failure = accountFailure(response, expected, state);
      if (failure) session.fail(failure);
    },
    onMessage: (message: CliMessage) => {
      const failure = followMessage(message, state, spec, expected);
      if (failure) session.fail(failure);
    },
    onWire: spec.observer?.wire,
    onExit: spec.observer?.exit,
    timeoutMs: spec.timeoutMs,
    idleTimeoutMs: spec.idleTimeoutMs,
    signal: spec.signal,
    logger: spec.logger,
    reapInBackground: spec.reapInBackground,
  });

  try {
    const end = await session.run(
      initializeRequest({
        systemPrompt: spec.system,
        jsonSchema: spec.jsonSchema,
        mcpServers: bridge ? [KTX_MCP_SERVER_NAME] : [],
      }),
      spec.prompt,
      setup,
    );
    return { ...finish(end, state, deniedTools, warmProcess !== undefined), login: loginFor(state, state.init) };
  } finally {
    await bridge?.close();
  }
}

export function finish(end: SessionEnd, state: RunState, deniedTools: string[], warm: boolean): RunOutput {
  const failure = resultError(end.result, state.errorLines, { stderrTail: end.stderrTail || undefined });
  if (failure && !isBudget(end.result)) throw failure;
  if (!state.init) {
    throw new IsolationError(["the CLI sent no system/init message, so the isolation surface could not be verified"]);
  }
  const toolCalls = [...state.toolCalls.values()];
  return {
    ...end,
    init: state.init,
    steps: state.steps.steps,
    toolCalls,
    toolFailures: toolCalls.filter((call) => !call.ok).length,
    errorLines: state.errorLines,
    lastText: state.lastText,
    deniedTools,
    warm,
  };
}

/** A max-turns end is an outcome for loops (`budget`), decided by the caller, not an exception here. */
export function isBudget(result: ResultMessage): boolean {
  return result.subtype === "error_max_turns" || result.terminal_reason === "max_turns" || result.stop_reason === "max_turns";
}

export function isClaudeCodeError(error: unknown): error is ClaudeCodeError {
  return ClaudeCodeError.isInstance(error);
}
