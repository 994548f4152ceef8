/**
 * One call from start to finish, for every call: the pool decides which process serves it
 * (process-pool.ts), the call's tools are bound to that process's MCP server, the isolation surface
 * is checked (the account on a process's first call, `init` on every call), and the call's own result
 * comes back — or one typed error. A transcript gets the call's lines and, last, a `call` record with
 * the call's own cost, usage and how its process ended.
 */
import { AbortError, ClaudeCodeError, CliCrashError, IsolationError, ProtocolError } from "../../errors/index.js";
import type { ResolvedCli } from "../../binary/locate.js";
import { type PreparedTool, KTX_MCP_SERVER_NAME, ktxToolId } from "../../mcp/tools.js";
import type { AssistantMessage, CliMessage, ResultMessage, SystemInitMessage } from "../../protocol/messages.js";
import { initializeRequest } from "../../protocol/outbound.js";
import type { ToolCallRecord } from "../../runtime/types.js";
import type { WireDirection } from "../../session/control.js";
import type { Logger } from "../../session/logger.js";
import { PooledProcess } from "../../session/pooled-process.js";
import type { CliProcessOptions, ExitInfo } from "../../transport/process.js";
import { type AuthOption, authProvider, authVariableNames } from "../../transport/auth.js";
import { type CallLogin, accountFailure, checkBeforeStart, loginFor } from "../checks/billing.js";
import { cliArgsFor } from "../checks/isolation.js";
import { builtinPermission } from "../capabilities.js";
import { isServerTool, mcpServerNames } from "../capabilities/mcp-servers.js";
import { bashPermission } from "../capabilities-bash.js";
import { type CapabilityLaunch, capabilityTools } from "../capability-tools.js";
import { requireProjectDir } from "../checks/project-dir.js";
import { type PoolEntry, type ProcessPool, type Source } from "../pool/process-pool.js";
import { resultError } from "./result-errors.js";
import { RunState, followMessage } from "./run-state.js";
import { type CallPermissions, answerPermission, cliPermissionMode, preApproves } from "../permissions.js";
import { StepTracker } from "./steps.js";
import { ToolSwitch } from "../pool/tool-switch.js";
import { type CallEnd, type InterceptorProcess, unreachableError } from "../wire/interceptor-process.js";
import type { RequestRecord } from "../wire/records.js";
import { expectationOf, recordDenial, recordToolOutput, spawnBehind, uncheckedTurns, wireSessionOf } from "./wire-binding.js";

/** The last record of a call's transcript: what this call cost and how its process ended. */
export interface CallRecord {
  /** This call's own cost and tokens (a kept process's `result` line carries its running total). */
  costUsd: number | null;
  usage: { inputTokens: number; outputTokens: number; cacheCreationInputTokens: number; cacheReadInputTokens: number } | null;
  /** `kept for reuse`, `held for the retry` (a usage limit stopped it; it runs again on this process), `retired: <reason>`, `aborted`, `exited <code>` or `signal <SIG>`. */
  ending: string;
  /** The process launch this call ran on, and the call's number on it. */
  process: { launch: string; call: number; pid?: number };
  /** Set when the call failed. */
  error?: { name: string; message: string };
  /** What each of the call's Messages requests carried, as the runtime's interceptor saw it (wire/records.ts). */
  requests?: RequestRecord[];
  /** Requests and connections the interceptor refused while the call ran (analytics, other hosts). */
  refused?: string[];
}

export interface RunObserver {
  start?(info: {
    cliPath: string;
    cliVersion: string;
    args: readonly string[];
    cwd: string;
    env: Record<string, string>;
    /** The process: its pid, launch id, this call's number on it, and (later calls) the transcript of its launch. */
    process?: { pid?: number; launch: string; call: number; source: Source; launchTranscript?: string };
  }): void;
  wire?(direction: WireDirection, text: string): void;
  exit?(exit: ExitInfo): void;
  call?(record: CallRecord): void;
}

export interface RunSpec extends CapabilityLaunch {
  cli: ResolvedCli;
  projectDir: string;
  env: Record<string, string>;
  apiKeyAllowed: boolean;
  /** Kind of credential of an explicit apiEndpoint (see ExpectedSurface). */
  explicitCredential?: "apiKey" | "oauthToken";
  /** Refuse a call the CLI would bill to an API key (billing.ts). */
  requireSubscription?: boolean;
  /** The `auth` option (transport/auth.ts): the initialize reply must show its provider and credential. */
  auth?: AuthOption;
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
  /** Return at the result, while the process rewinds or exits in the background (`reaped`); off with a transcript. */
  reapInBackground?: boolean;
  /** This call's transcript file, when recorded (a process's later calls reference its first). */
  transcriptPath?: string;
  /** A call that runs again after a usage-limit reset: its process is held for that retry (with reuse on). */
  retry?: RetryHandoff;
  /** The runtime's interceptor (first-party path): every process is started behind it and every call checked by it. */
  wire?: InterceptorProcess;
  /** A conversation's turn: it runs on the conversation's process and leaves it unrewound for the next turn. */
  conversation?: Conversation;
  /** Who decides tool uses that reach a permission prompt (permissions.ts); absent: "deny". */
  permissions?: CallPermissions;
  /** The process runs with the CLI's auto-compaction (a session's `compaction`): the wire check admits its summary requests. */
  compaction?: boolean;
}

/**
 * A conversation's hold on one process: taken from the pool at its first turn, kept (outside the idle
 * list and its budget) between turns, given back by its owner (sessions/session.ts). `entry` is unset
 * again when the process is lost; `firstUuid` is the user line of its first turn still in the conversation.
 */
export interface Conversation {
  entry?: PoolEntry;
  /** The process running the conversation's current turn, while one runs (a mid-turn `setPermissionMode` goes to it). */
  running?: PooledProcess;
  firstUuid?: string;
  /** The user line of its latest turn still in the conversation. */
  lastUuid?: string;
}

/** What a call's attempts hand each other (runtime.ts keeps it for the whole call). */
export interface RetryHandoff {
  /** The process the call's previous attempt was stopped on, held for this attempt; taken once. */
  take(): PoolEntry | undefined;
  /** Whether this attempt's failure will run again (limits/call-limits.ts). */
  willRetry(error: unknown): boolean;
  /** The process, rewound, held for the next attempt. */
  keep(entry: PoolEntry): void;
}

export interface RunOutput {
  /** The call's result, its cost and usage made this call's own. */
  result: ResultMessage;
  stderrTail: string;
  /** Settles once the process is rewound and idle, or has exited. */
  reaped: Promise<unknown>;
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
  /** Whether a started process served the call (a warm spare or a reused one) rather than a new one. */
  warm: boolean;
  /** The login the CLI billed the call to (billing.ts). */
  login?: CallLogin;
  /** The process: its pid and this call's number on it. */
  reusedProcess?: { pid: number | undefined; call: number };
}

/** Runs the call on the process the pool gives it; one that failed before the call started is replaced once by a new one. */
export async function executeRun(spec: RunSpec, pool: ProcessPool): Promise<RunOutput> {
  if (spec.signal?.aborted) throw new AbortError(spec.signal.reason);
  // Before any process is started or reused: policy files (hooks, helpers, env) apply whatever flags we pass; a planted key bills.
  checkBeforeStart(spec);
  // Plan mode adds betas, a body field and a plan reminder no recorded first-party shape has: the wire check would stop it anyway, after a process started.
  if (spec.wire && spec.permissions && cliPermissionMode(spec.permissions.mode, spec.permissions.launch) === "plan") {
    throw new IsolationError(
      [`wire: permission mode "plan" makes the CLI send request parts (plan-mode betas, a "safeguards" body field, a plan-mode system reminder) that no recorded first-party shape has, so its requests cannot be checked`],
      'Use another permission mode, or run plan mode with `wire: false` (no wire check; docs/options.md, "Permissions").',
    );
  }
  const toolIds = spec.tools.map((tool) => ktxToolId(tool.name));
  const launch = launchSpec(spec, toolIds);
  const modelSwitch = spec.cli.facts.modelSwitch;
  const { launch: launchMatch, shape } = pool.keysFor(launch, modelSwitch !== undefined, spec);
  const spawn = () => spawnBehind(spec.wire, launch, (process) => new PooledProcess({ process, modelSwitch, controlTimeoutMs: pool.controlTimeoutMs, logger: spec.logger }));
  // The project directory is checked when a call needs a new CLI in it; a reused process runs there already (a stat per call was a measurable share of a reused loop's host CPU).
  const start = () => (requireProjectDir(spec.projectDir), spawn());
  const pinned = spec.conversation?.entry;
  if (pinned) return runOn(spec, pool, pinned, "reused", toolIds);
  const previous = spec.retry?.take();
  const held = previous && pool.takeHeld(previous, shape);
  const { entry, source } = held ? { entry: held, source: "held" as const } : await pool.acquire(launchMatch, shape, start);
  try {
    try {
      return await runOn(spec, pool, entry, source, toolIds);
    } catch (error) {
      // Nothing was asked of the model: a process that died idle, refused the model switch, or (a spare) failed isolation.
      const retry =
        source !== "cold" &&
        ((error instanceof CliCrashError && error.beforeInitialize) ||
          (error instanceof ProtocolError && (error.refusedRequest === "set_model" || error.refusedRequest === "apply_flag_settings")) ||
          (source === "warm" && error instanceof IsolationError));
      if (!retry || spec.signal?.aborted) throw error;
      spec.logger.warn(`a ${source === "warm" ? "warm" : "reused"} Claude Code process failed before the call started (${(error as Error).name}); retrying on a fresh process`);
      return await runOn(spec, pool, pool.adopt(launchMatch, shape, start()), "cold", toolIds);
    }
  } finally {
    // A spare started ahead of need pays off only while calls still miss processes of their shape.
    if (source === "warm" || source === "cold") pool.addSpare(launchMatch, spawn);
  }
}

export function launchSpec(spec: RunSpec, toolIds: readonly string[]): CliProcessOptions {
  return {
    path: spec.cli.path,
    args: cliArgsFor({
      facts: spec.cli.facts,
      model: spec.model,
      maxTurns: spec.maxTurns,
      toolIds,
      structuredOutput: spec.jsonSchema !== undefined,
      includePartialMessages: spec.includePartialMessages,
      builtinTools: spec.builtinTools,
      projectInstructions: spec.projectInstructions,
      mcpServers: spec.mcpServers,
      bash: spec.bash,
      webSearch: spec.webSearch,
      subagents: spec.subagents,
      ...(spec.permissions ? { permissionMode: cliPermissionMode(spec.permissions.launch), preApprove: preApproves(spec.permissions.launch) } : {}),
    }),
    cwd: spec.projectDir,
    env: spec.env,
    maxLineBytes: spec.maxLineBytes,
  };
}

async function runOn(spec: RunSpec, pool: ProcessPool, entry: PoolEntry, source: Source, toolIds: readonly string[]): Promise<RunOutput> {
  const allowed = new Set(toolIds);
  const userServers = mcpServerNames(spec.mcpServers);
  const deniedTools: string[] = [];
  const state = new RunState(new StepTracker((index) => spec.onStepFinish?.(index)), spec.onToolSettled);
  const expected = {
    toolIds,
    structuredOutput: spec.jsonSchema !== undefined,
    apiKeyAllowed: spec.apiKeyAllowed,
    explicitCredential: spec.explicitCredential,
    cwd: spec.projectDir,
    requireSubscription: spec.requireSubscription,
    permissionMode: spec.permissions ? cliPermissionMode(spec.permissions.mode, spec.permissions.launch) : "dontAsk",
    builtinTools: capabilityTools(spec, "init"),
    projectInstructions: spec.projectInstructions,
    mcpServers: userServers,
    subagents: spec.subagents,
    ...(spec.auth && spec.auth.kind !== "login" ? { auth: { kind: spec.auth.kind, provider: authProvider(spec.auth), variables: authVariableNames(spec.auth) } } : {}),
  };
  const tools = (entry.tools ??= new ToolSwitch(spec.tools, spec.toolTimeoutMs, spec.logger));
  const unbind = tools.bind(spec.tools, (event) => {
    if (event.toolUseId) state.durations.set(event.toolUseId, event.durationMs);
    if (event.toolUseId && event.truncated) state.truncations.set(event.toolUseId, event.truncated);
  });
  const { proc } = entry;
  const callIndex = proc.callCount + 1;
  if (callIndex === 1) entry.launchTranscript = spec.transcriptPath;
  // The process's exit belongs in this call's transcript when it ends during the call or right after it.
  let exit: ExitInfo | undefined;
  const recordExit = (info: ExitInfo) => {
    if (exit) return;
    exit = info;
    spec.observer?.exit?.(info);
  };
  spec.observer?.start?.({
    cliPath: spec.cli.path,
    cliVersion: spec.cli.version,
    args: proc.launchArgs,
    cwd: spec.projectDir,
    env: spec.env,
    process: { pid: proc.pid, launch: proc.launchId, call: callIndex, source, ...(callIndex > 1 && entry.launchTranscript ? { launchTranscript: entry.launchTranscript } : {}) },
  });
  const conversation = spec.conversation;
  const keep = pool.keepAfterCall(entry, conversation !== undefined);
  let result: ResultMessage | undefined;
  let failure: unknown;
  const session = wireSessionOf(proc);
  let wireEnd: CallEnd | undefined;
  try {
    if (spec.wire && !session) throw new IsolationError(["wire: the process was started without the runtime's interceptor"]);
    try {
      session?.beginCall(expectationOf(spec, conversation?.entry !== undefined && conversation.entry === entry), (error) => proc.failCall(error, "wire check"));
    } catch (error) {
      proc.failCall(error as IsolationError, "wire check");
      throw error;
    }
    const callStarted = performance.now();
    if (conversation) conversation.running = proc;
    const end = await proc.call({
      initialize: initializeRequest({ systemPrompt: spec.system, jsonSchema: spec.jsonSchema, mcpServers: tools.bridge ? [KTX_MCP_SERVER_NAME] : [] }),
      prompt: spec.prompt,
      model: spec.model,
      permissionMode: expected.permissionMode,
      keep: keep === true,
      continues: conversation !== undefined,
      endReason: keep === true ? undefined : keep,
      control: {
        // What the call's tools handed the CLI reaches the interceptor first: its check tells a tool's own text from reminders the CLI adds.
        mcpMessage: tools.bridge ? (server, message, cancel) => (session ? tools.bridge!.handleMcpMessage(server, message, cancel).then((answer) => recordToolOutput(session, message, answer)) : tools.bridge!.handleMcpMessage(server, message, cancel)) : undefined,
        canUseTool: (request, signal) => {
          // An opted-in built-in tool: allowed under the project dir (capabilities.ts), whatever the mode.
          const builtin = builtinPermission(request, spec.builtinTools ?? [], spec.projectDir);
          if (builtin) return Promise.resolve(builtin);
          // A refused Bash command that reaches the prompt anyway (the CLI's deny rules refuse it first).
          const bash = bashPermission(request, spec.bash);
          if (bash) return Promise.resolve(bash);
          // A tool of an opted-in MCP server the CLI runs is answered like the call's own (capabilities/mcp-servers.ts).
          const serverTool = isServerTool(String(request.tool_name), userServers);
          const answer = answerPermission(request, signal, { permissions: spec.permissions, allowed: serverTool ? new Set([...allowed, String(request.tool_name)]) : allowed, toolIds, deniedTools, logger: spec.logger });
          // A denial of one of the call's tools reaches the model as that tool's result: the interceptor's check must know its text first.
          return session ? answer.then((reply) => recordDenial(session, request, reply)) : answer;
        },
      },
      onInitialized: (response) => {
        // The account is checked once per process, at its first call; later calls report the login it gave.
        const failure = accountFailure(response, expected, proc);
        if (failure) throw failure;
      },
      onMessage: (message: CliMessage) => {
        const isolation = followMessage(message, state, spec, expected);
        if (isolation) throw isolation;
        // The interceptor lets the CLI-run servers' tools through as init listed them (checked just now).
        if (message.kind === "system_init" && session && userServers.length > 0) session.mcpTools(message.message.tools.filter((tool) => isServerTool(tool, userServers)));
      },
      onWire: spec.observer?.wire,
      onExit: recordExit,
      timeoutMs: spec.timeoutMs,
      idleTimeoutMs: spec.idleTimeoutMs,
      signal: spec.signal,
    });
    result = end.result;
    if (conversation) {
      conversation.firstUuid ??= end.uuid;
      conversation.lastUuid = end.uuid;
    }
    if (session) {
      // Within what is left of the call's timeoutMs: a stalled interceptor cannot hold the call past it.
      wireEnd = await session.endCall(state.steps.ids, spec.timeoutMs === undefined ? undefined : spec.timeoutMs - (performance.now() - callStarted));
      if (wireEnd.refusals.length > 0) spec.logger.warn(`the interceptor refused: ${wireEnd.refusals.join(", ")}`);
      const unchecked = uncheckedTurns(state.steps.ids, wireEnd.records);
      if (unchecked) {
        void proc.retire("wire check");
        throw unchecked;
      }
    }
    // A transcript is complete when the call returns: its rewind lines, or its exit, are in it.
    if (!spec.reapInBackground) await end.settled;
    const output = finish(end.result, end.stderrTail, end.settled, state, deniedTools, source !== "cold");
    return { ...output, login: loginFor(proc, state.init, spec.auth), reusedProcess: { pid: proc.pid, call: callIndex } };
  } catch (error) {
    // Behind the interceptor, a connection the CLI could not make or keep was to the interceptor, not the API.
    failure = (spec.wire && unreachableError(error, spec.wire)) || error;
    // A failed call returns only once its process is reaped (or rewound and idle): nothing outlives it unseen.
    await proc.settled;
    throw failure;
  } finally {
    unbind();
    if (conversation?.running === proc) conversation.running = undefined;
    // A call that failed still reports what its requests carried, when the interceptor can say.
    wireEnd ??= await session?.endCall().catch(() => undefined);
    // A call the usage limit stopped keeps its process (rewound) for its retry after the reset.
    const holding = conversation === undefined && failure !== undefined && pool.reuse && spec.retry?.willRetry(failure) === true;
    // A conversation keeps its process between turns, outside the idle list; a process it lost is forgotten by the pool as it exits.
    const kept = conversation ? pool.keepForConversation(entry).then((ok) => ((conversation.entry = ok ? entry : undefined), ok)) : holding ? pool.hold(entry) : pool.release(entry);
    if (holding && (await kept)) spec.retry!.keep(entry);
    // The conversation knows whether it still has its process before its turn returns.
    if (conversation) await kept;
    if (!spec.reapInBackground) {
      if (!(await kept)) recordExit(await proc.proc.exited);
      spec.observer?.call?.({ ...callRecord(entry, callIndex, result, await kept, holding, exit, failure), ...(wireEnd ? { requests: wireEnd.records, refused: wireEnd.refusals } : {}) });
    }
  }
}

function callRecord(entry: PoolEntry, call: number, result: ResultMessage | undefined, kept: boolean, held: boolean, exit: ExitInfo | undefined, failure: unknown): CallRecord {
  const reason = entry.proc.retired;
  const ending = kept
    ? held
      ? "held for the retry"
      : "kept for reuse"
    : reason === "aborted"
      ? "aborted"
      : reason && reason !== "single use" && reason !== "exited"
        ? `retired: ${reason}`
        : exit?.signal
          ? `signal ${exit.signal}`
          : `exited ${exit?.exitCode ?? "?"}`;
  const usage = result?.usage;
  return {
    costUsd: typeof result?.total_cost_usd === "number" ? result.total_cost_usd : null,
    usage: usage
      ? {
          inputTokens: usage.input_tokens ?? 0,
          outputTokens: usage.output_tokens ?? 0,
          cacheCreationInputTokens: usage.cache_creation_input_tokens ?? 0,
          cacheReadInputTokens: usage.cache_read_input_tokens ?? 0,
        }
      : null,
    ending,
    process: { launch: entry.proc.launchId, call, ...(entry.proc.pid !== undefined ? { pid: entry.proc.pid } : {}) },
    ...(failure ? { error: { name: (failure as Error).name ?? "Error", message: String((failure as Error).message ?? failure).slice(0, 500) } } : {}),
  };
}

function finish(result: ResultMessage, stderrTail: string, reaped: Promise<unknown>, state: RunState, deniedTools: string[], warm: boolean): Omit<RunOutput, "reusedProcess"> {
  const failure = resultError(result, state.errorLines, { stderrTail: stderrTail || undefined }, { apiRetries: state.apiRetries });
  if (failure && !isBudget(result)) throw failure;
  if (!state.init) {
    throw new IsolationError(["the CLI sent no system/init message, so the isolation surface could not be verified"]);
  }
  const toolCalls = [...state.toolCalls.values()];
  return {
    result,
    stderrTail,
    reaped,
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

