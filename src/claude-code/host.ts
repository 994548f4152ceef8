/**
 * `ClaudeCodeHost`: what every caller of the CLI shares — the process pool and its one idle budget, the
 * concurrency limit (`maxConcurrentRuns`), the rate-limit governor, the interceptor, transcripts and the
 * checks before a CLI starts. A caller (an adapter: KTX's `ClaudeCodeRuntime` today) brings the model,
 * the prompt and its listeners, and runs each call through `run`, the one run path.
 */
import { availableParallelism } from "node:os";
import { type ResolvedCli, resolveCli } from "../binary/locate.js";
import { noReuseWarning } from "../binary/versions.js";
import { AbortError, ClaudeCodeError, IsolationError } from "../errors/index.js";
import { type AttemptHooks, CallLimits, DEFAULT_API_RETRY_BUDGET_MS, DEFAULT_CALL_TIMEOUT_MS, DEFAULT_TOOL_TIMEOUT_MS, armedTimeout, processRateLimitGovernor } from "../limits/index.js";
import type { ProgressListener } from "../limits/events.js";
import type { RateLimitGovernorPort } from "../limits/governor.js";
import type { PreparedTool } from "../mcp/tools.js";
import type { CliMessage, ResultMessage } from "../protocol/messages.js";
import { RunLimiter } from "../runtime/limiter.js";
import type { CloseOptions } from "../runtime/port-runtime.js";
import type { InterceptorState, NetworkRoute, ToolCallRecord } from "../runtime/types.js";
import { type Logger, silentLogger } from "../session/logger.js";
import { type SessionTranscript, openRunTranscript, openSessionTranscript, secretValues } from "../transcripts/recorder.js";
import { authSecrets } from "../transport/auth.js";
import { createKtxClaudeCodeEnv } from "../transport/env.js";
import { interceptorState, loginAhead, networkRoute } from "./checks/billing.js";
import { requireProjectDir } from "./checks/project-dir.js";
import type { Capabilities } from "./capabilities.js";
import { resolveCapabilityLaunch } from "./capabilities/launch.js";
import { subagentsEnv } from "./capabilities-subagents.js";
import { type ClaudeCodeHostOptions, parseHostOptions } from "./host-options.js";
import { type PoolStats, ProcessPool } from "./pool/process-pool.js";
import type { CallOutput } from "./run/call-output.js";
import { RetryHold } from "./run/retry-hold.js";
import { type Conversation, type RunObserver, executeRun } from "./run/run.js";
import type { CallPermissions } from "./permissions.js";
import { ClaudeCodeSession, type SessionOptions } from "../sessions/session.js";
import { InterceptorProcess } from "./wire/interceptor-process.js";
import { WIRE_VERSIONS, wireShapeFor, wireShapeProblem } from "./wire/shape.js";

export type { ClaudeCodeHostOptions } from "./host-options.js";

/** One call as a caller asks the host for it: the caller has chosen the model and built the prompt and tools. */
export interface HostCall {
  model: string;
  system: string;
  prompt: string;
  maxTurns: number;
  tools: PreparedTool[];
  jsonSchema?: Record<string, unknown>;
  /** Variables the caller adds to the CLI's launch (its `thinking`); part of the pool key, as the launch is. */
  launchSettings?: Record<string, string>;
  /** The CLI's auto-compaction (a session's `compaction`); part of the launch and so of the pool key. Off when absent. */
  compaction?: { windowTokens?: number };
  /** Ask the CLI for `stream_event` lines (the caller's `text_delta` events); part of the pool key. */
  includePartialMessages?: boolean;
  signal?: AbortSignal;
  /** This call's timeout (else the host's `timeoutMs`). */
  timeoutMs?: number;
  /** This call's transcript: `false` for none, a dir (and name) to record it there; else the host's `transcript`. */
  transcript?: { dir: string; name?: string } | false;
  /** A transcript the caller keeps open across calls (a session's, from `openSessionTranscript`): this call records into it; `transcript` is then ignored. */
  recordInto?: { path: string; observer: RunObserver };
  /** The work unit a call belongs to (progress events and rate-limit bookkeeping). */
  unitKey?: string;
  /** Where the run's own log lines go (the caller's logger). */
  logger?: Logger;
  onStepFinish?(stepIndex: number): void;
  onToolSettled?(call: ToolCallRecord): void;
  onResult?(result: ResultMessage): void;
  /** Every CLI message of the call, after the limits saw it (the AI SDK provider maps them to stream parts). */
  onCliMessage?(message: CliMessage): void;
  /** The caller's reading of a failure (KTX's: an unknown model named by its role), before the limits decide on a retry. */
  mapError?(error: unknown): unknown;
  /** A session's turn: it runs on the session's process and leaves it unrewound (run.ts). */
  conversation?: Conversation;
  /** Who decides tool uses that reach a permission prompt (permissions.ts); its launch mode is part of the pool key. */
  permissions?: CallPermissions;
  /** Opt-in capabilities (capabilities.ts), parsed; part of the launch and so of the pool key. */
  capabilities?: Capabilities;
}

export class ClaudeCodeHost {
  readonly options: ClaudeCodeHostOptions;
  readonly logger: Logger;
  /** The governor every call of every caller waits for and reports to: `rateLimitGovernor`, else the process's own. */
  readonly governor: RateLimitGovernorPort;
  private readonly limiter: RunLimiter;
  private readonly pool: ProcessPool;
  private cliPromise: Promise<ResolvedCli> | undefined;
  private wirePromise: Promise<InterceptorProcess> | undefined;
  private wireProcess: InterceptorProcess | undefined;
  /** Each caller's way to abort its calls in flight (`close({ abortInFlight })`). */
  private readonly callers = new Set<() => void>();

  constructor(options: ClaudeCodeHostOptions) {
    this.options = parseHostOptions(options);
    this.logger = options.logger ?? silentLogger;
    this.governor = options.rateLimitGovernor ?? processRateLimitGovernor(options.rateLimit);
    this.limiter = new RunLimiter(options.maxConcurrentRuns ?? Math.max(1, availableParallelism()));
    this.pool = new ProcessPool(options.reuse ?? {}, options.warm ?? {}, this.logger, () => this.limiter.queued > 0);
  }

  /**
   * Ends every idle process and resolves once every CLI of this host is reaped, whichever caller started
   * it; calls made afterwards start processes that end with their call. Calls in flight finish (their
   * process is retired when the call ends), unless `abortInFlight` (every caller's calls then reject with
   * `AbortError` and their CLIs are interrupted, then stopped). While it waits, the CLIs keep the host
   * process alive, so the code after `await close()` runs even when nothing else is left.
   */
  async close(options: CloseOptions = {}): Promise<void> {
    // The pool closes first (synchronously), so a process whose call ends during close() is retired, not kept.
    const pool = this.pool.close();
    if (options.abortInFlight) for (const abort of [...this.callers]) abort();
    await pool;
    const wire = this.wirePromise;
    this.wirePromise = undefined;
    this.wireProcess = undefined;
    await wire?.then((interceptor) => interceptor.close(), () => {});
  }

  /**
   * @internal A caller registers how to abort its calls in flight, for `close({ abortInFlight })`;
   * returns the function that unregisters it.
   */
  attach(abortInFlight: () => void): () => void {
    this.callers.add(abortInFlight);
    return () => void this.callers.delete(abortInFlight);
  }

  /**
   * A multi-turn conversation on one process of this host's pool (sessions/session.ts): each `send` is
   * a turn that continues it; `close()` gives the process back to the pool, rewound to before the first turn.
   */
  createSession<T = unknown>(options: SessionOptions<T>): ClaudeCodeSession<T> {
    return new ClaudeCodeSession<T>(this, options);
  }

  /** @internal A session's end: its process back to the pool, rewound to before its first turn; resolves once it is idle or retired. */
  async endConversation(conversation: Conversation): Promise<void> {
    const entry = conversation.entry;
    conversation.entry = undefined;
    if (entry) await this.pool.giveBack(entry, conversation.firstUuid, conversation.lastUuid);
    conversation.firstUuid = undefined;
    conversation.lastUuid = undefined;
  }

  /**
   * @internal One transcript for a session's turns (recorder.ts, `openSessionTranscript`): in `transcript.dir`
   * (the session's, else the host's), redacted with the host's secrets as every call's; undefined without a dir.
   */
  async openSessionTranscript(transcript: { dir: string; name?: string } | false | undefined): Promise<SessionTranscript | undefined> {
    const dir = transcript === false ? undefined : (transcript?.dir ?? this.options.transcript?.dir);
    if (!dir) return undefined;
    return openSessionTranscript(dir, { name: transcript ? transcript.name : undefined, ...this.transcriptContext() });
  }

  /** What a transcript of this host's calls is redacted with and says about the login and route. */
  private transcriptContext(launchSettings?: Record<string, string>): { secrets: string[]; login: ReturnType<typeof loginAhead>; network: NetworkRoute } {
    const endpoint = this.options.apiEndpoint;
    const auth = this.options.auth;
    const env = this.callEnv(launchSettings);
    return {
      secrets: [...secretValues(this.options.env ?? process.env, endpoint), ...authSecrets(auth)],
      login: loginAhead(env, this.explicitCredential, auth),
      network: networkRoute(env, this.interceptor),
    };
  }

  /** The kind of credential an explicit endpoint or `auth` names, if any. */
  private get explicitCredential(): "apiKey" | "oauthToken" | undefined {
    const endpoint = this.options.apiEndpoint;
    const auth = this.options.auth;
    return endpoint ? (endpoint.apiKey !== undefined ? "apiKey" : "oauthToken") : auth?.kind === "apiKey" || auth?.kind === "oauthToken" ? auth.kind : undefined;
  }

  /** The environment every CLI of this host gets, with a call's launch settings. */
  private callEnv(launchSettings?: Record<string, string>, telemetry?: ClaudeCodeHostOptions["telemetry"], compaction?: HostCall["compaction"]): Record<string, string> {
    return createKtxClaudeCodeEnv(this.options.env ?? process.env, {
      apiEndpoint: this.options.apiEndpoint,
      disableNonessentialTraffic: this.options.disableNonessentialTraffic,
      passEnv: this.options.passEnv,
      telemetry: telemetry ?? this.options.telemetry,
      launchSettings,
      compaction,
      auth: this.options.auth,
    });
  }

  /** @internal A caller's side of the limits: the host's governor and retry budget, the caller's own listener. */
  limitsFor(onEvent: ProgressListener | undefined, logger: Logger): CallLimits {
    return new CallLimits({ governor: this.governor, onEvent, logger, apiRetryBudgetMs: this.options.apiRetryBudgetMs ?? DEFAULT_API_RETRY_BUDGET_MS });
  }

  /**
   * Whether calls run behind the host's interceptor: on by default on the first-party path, off with
   * `wire: false`; an `apiEndpoint` (a base URL) and a stand-in CLI of the testing helpers never are (billing.ts).
   */
  get interceptor(): InterceptorState {
    return interceptorState(this.options);
  }

  /**
   * The route every CLI of this host gets: the proxy, CA and client-certificate variables of its
   * environment, and whether the interceptor is on. Every result carries it as `network`.
   */
  get network(): NetworkRoute {
    const env = createKtxClaudeCodeEnv(this.options.env ?? process.env, {
      apiEndpoint: this.options.apiEndpoint,
      disableNonessentialTraffic: this.options.disableNonessentialTraffic,
      passEnv: this.options.passEnv,
      telemetry: this.options.telemetry,
      auth: this.options.auth,
    });
    return networkRoute(env, this.interceptor);
  }

  /** The process id of the host's interceptor, once started (diagnostics; the bench reads its CPU). */
  get interceptorPid(): number | undefined {
    return this.wireProcess?.pid;
  }

  /** Process ids of live processes that served a call (idle or serving one), whichever caller made it; diagnostics, tests. */
  get reusePids(): number[] {
    return this.pool.pids;
  }

  /** Counters of the pool (processes started, reused calls, retirements by reason); undefined with `reuse: false`. */
  get reuseStats(): PoolStats | undefined {
    return this.pool.reuse ? this.pool.stats : undefined;
  }

  /** Counters of the pool, whatever `reuse` says (the bench). */
  get poolStats(): PoolStats {
    return this.pool.stats;
  }

  /** Calls of every caller waiting for a slot under `maxConcurrentRuns` (diagnostics, tests). */
  get waitingCalls(): number {
    return this.limiter.queued;
  }

  /** Process ids of idle spares right now (diagnostics, tests). */
  get warmIdlePids(): number[] {
    return this.pool.sparePids;
  }

  /** Resident memory of every idle process (diagnostics, the bench). */
  idleMemory(): Array<{ pid: number | undefined; rssMiB: number }> {
    return this.pool.idleMemory();
  }

  /** Resolves and checks the CLI once per host (a failure is retried on the next call). */
  cli(): Promise<ResolvedCli> {
    if (!this.cliPromise) {
      this.cliPromise = resolveCli(this.options);
      this.cliPromise.then((cli) => announceNoReuse(cli, this.options.reuse !== false, this.logger)).catch(() => (this.cliPromise = undefined));
    }
    return this.cliPromise;
  }

  /**
   * @internal One call, start to finish, under `limits` (the caller's: rate limits, progress events; a
   * call a usage limit stopped before anything acted runs again after the reset).
   */
  run(call: HostCall, limits: CallLimits): Promise<CallOutput> {
    const hold = new RetryHold(this.pool, this.limiter);
    return limits.run({ signal: call.signal, unitKey: call.unitKey }, (hooks) => this.attempt(call, hooks, hold)).finally(() => hold.drop());
  }

  /** The host's interceptor (on unless `wire: false`), started with its first call on the first-party path; never with an `apiEndpoint`. */
  private wire(cli: ResolvedCli): Promise<InterceptorProcess> | undefined {
    if (this.interceptor !== "on") return undefined;
    // Refused before any process starts: requests of a version whose first-party shape nobody recorded cannot be checked.
    if (!wireShapeFor(cli.version)) {
      throw new IsolationError(
        [`wire: Claude Code ${cli.version} has no recorded first-party request shape (recorded: ${WIRE_VERSIONS.join(", ")}${wireShapeProblem(cli.version) ? `; its shape file did not load: ${wireShapeProblem(cli.version)}` : ""}), so its requests cannot be checked`],
        "Use a verified CLI version (npm ci installs one), record this one's shape (ktx-claude-code fixtures verify), or run it with `wire: false` (no wire check; docs/isolation.md, \"The wire check\"). If this is a stand-in CLI that answers without any request (a test script at cliPath), run it with `wire: false`: it could not pass the check on any version (createScriptedCli and createReplayCli are recognised and run without it).",
      );
    }
    return this.startWire()!.then((interceptor) => (interceptor.useVersion(cli.version), interceptor));
  }

  /** Starts the interceptor's process once (again after it exited); undefined when calls run without one. */
  private startWire(): Promise<InterceptorProcess> | undefined {
    if (this.interceptor !== "on") return undefined;
    if (!this.wirePromise) {
      const wire = typeof this.options.wire === "object" ? this.options.wire : {};
      const started = InterceptorProcess.start({
        env: this.options.env ?? process.env,
        bodies: wire.bodies === true,
        upstream: wire.upstream,
        // Its calls have failed and its processes are retired; the next call starts a new one.
        onExit: () => {
          if (this.wirePromise !== started) return;
          this.wirePromise = undefined;
          this.wireProcess = undefined;
        },
      });
      this.wirePromise = started;
      started.then(
        (process) => (this.wireProcess = process),
        () => {
          if (this.wirePromise === started) this.wirePromise = undefined;
        },
      );
    }
    return this.wirePromise;
  }

  private async attempt(call: HostCall, hooks: AttemptHooks, hold: RetryHold): Promise<CallOutput> {
    // An aborted call starts nothing, not even the once-per-path version check.
    if (call.signal?.aborted) throw new AbortError(call.signal.reason);
    // Before the CLI is looked for, while no process runs in the project dir; later a call needing a new CLI checks it (run.ts).
    if (!this.pool.servesCalls) requireProjectDir(this.options.projectDir);
    // The interceptor's process (a Node start and a CA key) starts while the CLI is looked for.
    this.startWire();
    const cli = await this.cli();
    const wire = await this.wire(cli);
    const capabilities = resolveCapabilityLaunch(call.capabilities, cli, { projectDir: this.options.projectDir, path: (this.options.env ?? process.env).PATH ?? "", wire: wire !== undefined });
    const { subagents } = capabilities;
    if (call.signal?.aborted) throw new AbortError(call.signal.reason);
    const transcriptDir = call.transcript === false || call.recordInto ? undefined : (call.transcript?.dir ?? this.options.transcript?.dir);
    const transcriptName = call.transcript ? call.transcript.name : undefined;
    const endpoint = this.options.apiEndpoint;
    const auth = this.options.auth;
    const explicitCredential = this.explicitCredential;
    // capabilities.telemetry: this call's export (its variables are in the launch, so the pool key); else the host's option.
    const env = this.callEnv(subagents ? { ...call.launchSettings, ...subagentsEnv(subagents) } : call.launchSettings, call.capabilities?.telemetry, call.compaction);
    // The slot is held until the child is reaped, so no more than maxConcurrentRuns calls have a live CLI;
    // idle warm processes (at most warm.size) come on top, and are not started while calls are queued.
    // A retry after a usage-limit reset has the slot its rejected attempt kept (retry-hold.ts).
    if (!hold.takeSlot()) await this.limiter.acquire(call.signal);
    let released = false;
    const release = () => {
      if (!released) this.limiter.release();
      released = true;
    };
    await hooks.admit(call.signal).catch((error: unknown) => {
      release();
      throw error;
    });
    // A session's turn records into the session's transcript, which stays open after the call.
    const own = call.recordInto
      ? undefined
      : transcriptDir
        ? await openRunTranscript(transcriptDir, { name: transcriptName, ...this.transcriptContext(call.launchSettings) }).catch((error: unknown) => {
            release();
            throw error;
          })
        : undefined;
    const transcript = call.recordInto ?? own;
    const logger = call.logger ?? this.logger;
    try {
      const output = await executeRun({
        cli,
        projectDir: this.options.projectDir,
        env,
        apiKeyAllowed: endpoint?.apiKey !== undefined || auth?.kind === "apiKey",
        explicitCredential,
        auth,
        requireSubscription: this.options.requireSubscription,
        model: call.model,
        maxTurns: call.maxTurns,
        system: call.system,
        prompt: call.prompt,
        jsonSchema: call.jsonSchema,
        tools: call.tools,
        toolTimeoutMs: armedTimeout(this.options.toolTimeoutMs, DEFAULT_TOOL_TIMEOUT_MS),
        timeoutMs: armedTimeout(call.timeoutMs ?? this.options.timeoutMs, DEFAULT_CALL_TIMEOUT_MS),
        includePartialMessages: call.includePartialMessages,
        onCliMessage: call.onCliMessage ? (message) => (hooks.onCliMessage(message), call.onCliMessage!(message)) : (message) => hooks.onCliMessage(message),
        idleTimeoutMs: this.options.idleTimeoutMs,
        maxLineBytes: this.options.maxLineBytes,
        signal: call.signal,
        logger,
        observer: transcript?.observer,
        onStepFinish: (stepIndex) => (hooks.onStepFinish(stepIndex), call.onStepFinish?.(stepIndex)),
        onToolSettled: (settled) => (hooks.onToolSettled(settled), call.onToolSettled?.(settled)),
        onResult: call.onResult,
        // A transcript is complete (exit included) when the call returns; without one the exit is not awaited.
        reapInBackground: transcript === undefined,
        transcriptPath: transcript?.path,
        retry: hold.forAttempt(hooks),
        wire,
        conversation: call.conversation,
        permissions: call.permissions,
        ...capabilities,
        compaction: call.compaction !== undefined,
      }, this.pool);
      void output.reaped.finally(release);
      await own?.close();
      return { ...output, transcriptPath: transcript?.path, network: networkRoute(env, this.interceptor) };
    } catch (error) {
      // A call that runs again after the reset keeps its place: its slot waits for the retry.
      if (hooks.willRetry(error)) {
        released = true;
        hold.keepSlot();
      } else release();
      await own?.close();
      if (ClaudeCodeError.isInstance(error) && transcript) error.transcriptPath = transcript.path;
      throw call.mapError ? call.mapError(error) : error;
    }
  }
}

/** Versions whose lack of reuse this process has already announced with a process warning. */
const announcedNoReuse = new Set<string>();

/** Says once per host (logger) and once per process (a `KTX_CC_NO_REUSE` process warning) that the CLI cannot be reused. */
function announceNoReuse(cli: ResolvedCli, reuseWanted: boolean, logger: Logger): void {
  const message = noReuseWarning(cli.facts, reuseWanted);
  if (message === undefined) return;
  logger.warn(message);
  if (announcedNoReuse.has(cli.version)) return;
  announcedNoReuse.add(cli.version);
  process.emitWarning(message, { code: "KTX_CC_NO_REUSE" });
}
