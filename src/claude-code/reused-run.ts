/**
 * Runs a call on a pooled, reusable CLI process (session-pool.ts): takes one of the call's shape or
 * starts one (adopting a warm process when there is one), binds the call's tool handlers, checks the
 * isolation surface (the account once per process, `system/init` on every call) and returns the
 * call's own result. See run.ts for the one-process-per-call path it mirrors.
 */
import { CliCrashError, IsolationError, ProtocolError } from "../errors/index.js";
import { KTX_MCP_SERVER_NAME, ktxToolId } from "../mcp/tools.js";
import type { CliMessage } from "../protocol/messages.js";
import { initializeRequest } from "../protocol/outbound.js";
import { ReusableProcess } from "../session/reusable-process.js";
import type { ExitInfo } from "../transport/process.js";
import { accountFailure, checkBeforeStart, loginFor } from "./billing.js";
import { type RunOutput, type RunSpec, RunState, finish, followMessage, launchSpec, permissionAnswer } from "./run.js";
import { type PooledSession, type SessionPool, sessionKey } from "./session-pool.js";
import { StepTracker } from "./steps.js";
import { ToolSwitch } from "./tool-switch.js";
import { warmKey } from "./warm-pool.js";

type Source = "pool" | "warm" | "spawn";

export async function executeReusedRun(spec: RunSpec, pool: SessionPool): Promise<RunOutput> {
  // Before any process is started or reused: policy files apply whatever flags we pass; a planted key bills.
  checkBeforeStart(spec);
  const launch = launchSpec(spec);
  const modelFree = spec.cli.facts.hasSetModel;
  const key = sessionKey(launch, modelFree, spec);
  const launchKey = warmKey(launch, modelFree);
  const pooled = await pool.take(key);
  const warm = pooled ? undefined : spec.warmPool?.take(launchKey);
  const first: Source = pooled ? "pool" : warm ? "warm" : "spawn";
  try {
    const entry = pooled ?? start(spec, pool, key, warm);
    try {
      return await runOn(spec, pool, entry, first);
    } catch (error) {
      // Nothing was asked of the model: a process that died idle, refused set_model, or (fresh) failed isolation.
      const retry =
        first !== "spawn" &&
        ((error instanceof CliCrashError && error.beforeInitialize) ||
          (error instanceof ProtocolError && error.refusedRequest === "set_model") ||
          (first === "warm" && error instanceof IsolationError));
      if (!retry || spec.signal?.aborted) throw error;
      spec.logger.warn(`a ${first === "pool" ? "reused" : "warm"} Claude Code process failed before the call started (${(error as Error).name}); retrying on a fresh process`);
      return await runOn(spec, pool, start(spec, pool, key, undefined), "spawn");
    }
  } finally {
    // Starting a spare ahead of need pays off only while calls still miss the pool.
    if (first !== "pool") spec.warmPool?.replenish(launchKey, launch);
  }
}

function start(spec: RunSpec, pool: SessionPool, key: string, warmProcess: ReusableProcess["proc"] | undefined): PooledSession {
  const proc = new ReusableProcess({
    process: launchSpec(spec),
    warmProcess,
    initialize: initializeRequest({ systemPrompt: spec.system, jsonSchema: spec.jsonSchema, mcpServers: spec.tools.length > 0 ? [KTX_MCP_SERVER_NAME] : [] }),
    controlTimeoutMs: pool.controlTimeoutMs,
    logger: spec.logger,
  });
  const entry: PooledSession = { key, proc, tools: new ToolSwitch(spec.tools, spec.toolTimeoutMs, spec.logger), launchTranscript: spec.transcriptPath };
  pool.add(entry);
  return entry;
}

async function runOn(spec: RunSpec, pool: SessionPool, entry: PooledSession, source: Source): Promise<RunOutput> {
  const toolIds = spec.tools.map((tool) => ktxToolId(tool.name));
  const allowed = new Set(toolIds);
  const deniedTools: string[] = [];
  const state = new RunState(new StepTracker((index) => spec.onStepFinish?.(index)), spec.onToolSettled);
  const expected = { toolIds, structuredOutput: spec.jsonSchema !== undefined, apiKeyAllowed: spec.apiKeyAllowed, explicitCredential: spec.explicitCredential, cwd: spec.projectDir, requireSubscription: spec.requireSubscription };
  const unbind = entry.tools.bind(spec.tools, (event) => {
    if (event.toolUseId) state.durations.set(event.toolUseId, event.durationMs);
    if (event.toolUseId && event.truncated) state.truncations.set(event.toolUseId, event.truncated);
  });
  // The process's exit belongs in this call's transcript when it ends during the call or is retired right after it.
  let exitRecorded = false;
  const recordExit = (exit: ExitInfo) => {
    if (exitRecorded) return;
    exitRecorded = true;
    spec.observer?.exit?.(exit);
  };
  const bridge = entry.tools.bridge;
  const callIndex = entry.proc.callCount + 1;
  spec.observer?.start?.({
    cliPath: spec.cli.path,
    cliVersion: spec.cli.version,
    args: entry.proc.launchArgs,
    cwd: spec.projectDir,
    env: spec.env,
    process: { pid: entry.proc.pid, call: callIndex, ...(callIndex > 1 && entry.launchTranscript ? { launchTranscript: entry.launchTranscript } : {}) },
  });
  try {
    const end = await entry.proc.call({
      prompt: spec.prompt,
      model: spec.model,
      control: {
        mcpMessage: bridge ? (server, message, signal) => bridge.handleMcpMessage(server, message, signal) : undefined,
        canUseTool: async (request) => permissionAnswer(request, allowed, toolIds, deniedTools),
      },
      onInitialized: (response) => {
        const failure = accountFailure(response, expected, entry.proc);
        if (failure) throw failure;
      },
      onMessage: (message: CliMessage) => {
        const failure = followMessage(message, state, spec, expected);
        if (failure) throw failure;
      },
      onWire: spec.observer?.wire,
      onExit: recordExit,
      timeoutMs: spec.timeoutMs,
      idleTimeoutMs: spec.idleTimeoutMs,
      signal: spec.signal,
    });
    // A transcript is complete when the call returns: its rewind lines are in it.
    if (!spec.reapInBackground) await end.settled;
    const reaped: Promise<ExitInfo> = end.settled.then(() => ({ exitCode: undefined, signal: undefined }));
    const output = finish({ result: end.result, stderrTail: end.stderrTail, reaped }, state, deniedTools, source !== "spawn");
    return { ...output, login: loginFor(entry.proc, state.init), reusedProcess: { pid: entry.proc.pid, call: callIndex } };
  } catch (error) {
    if (!spec.reapInBackground) await entry.proc.settled;
    throw error;
  } finally {
    unbind();
    const kept = pool.release(entry);
    if (!spec.reapInBackground && !(await kept)) recordExit(await entry.proc.proc.exited);
  }
}
