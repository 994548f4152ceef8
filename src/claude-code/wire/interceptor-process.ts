/**
 * The runtime's side of its interceptor, which runs in a process of its own (process-main.ts): the
 * interceptor terminates TLS twice per request, so in the runtime's process it cost the host 1.2–2.5 ms
 * of CPU per request, more than the rest of a reused call (docs/performance.md). Here the host only
 * names the sessions (their proxy passwords come from a secret the two share), announces each call
 * with what the library built for it, and at the call's end asks what passed.
 *
 * The process is forked with an empty environment and no Node flags (the user's proxy and CA variables
 * cross in the start message), never keeps the host alive, and exits when the host's channel closes.
 */
import { type ChildProcess, fork } from "node:child_process";
import { rmSync } from "node:fs";
import { type AddressInfo, createServer, type Server } from "node:net";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { ClaudeCodeError, InterceptorError, PromptTooLongError } from "../../errors/index.js";
import type { Env } from "../../transport/env.js";
import { WIRE_ADVICE } from "./check.js";
import { HostWireSession } from "./host-session.js";
import { wireRefusal } from "./account-variants.js";
import { newCaDir, newWireSecret, sessionEnv, writeCaFile } from "./credentials.js";
import { interceptorCaOptions } from "./ca-options.js";
import { WIRE_HOSTS } from "./shape.js";
import { type FromProcess, type ToProcess, UNAUTHENTICATED_DEADLINE_MS, UNAUTHENTICATED_MAX, WAY_OUT_ENV_NAMES } from "./process-protocol.js";
import type { IssuedLeaves } from "./ca.js";
import type { WireUpstream } from "./upstream.js";

export { type CallEnd, HostWireSession } from "./host-session.js";

/** The process's script, built into dist/ (src/… and dist/… are both three levels down, as the shapes' root is). */
export const INTERCEPTOR_SCRIPT = fileURLToPath(new URL("../../../dist/claude-code/wire/process-main.js", import.meta.url));

/** How long the process may take to start: a Node start, its modules, a CA key. */
const START_TIMEOUT_MS = 15_000;
/**
 * How long the process may take to answer an exchange (a tool output in place, a call's end, a ping).
 * A healthy process answers from memory within a millisecond, and within tens of milliseconds behind a
 * large request's parse and check on a loaded 2-core machine; 3 s is far past that, yet short beside a
 * call (a failed call already spends up to 1 s on its interrupt and 2 s per stop step). Past it the
 * process is taken as stalled (stopped, hung, saturated): it is killed, the calls behind it fail, its
 * CLIs are retired (their proxy and CA settings point at it), and the next call starts a new one.
 */
export const EXCHANGE_DEADLINE_MS = 3_000;
/**
 * While calls run, the process is pinged this often, so a stall fails them within about
 * HEARTBEAT_MS + EXCHANGE_DEADLINE_MS instead of at their timeoutMs (an hour by default): a CLI whose
 * request waits on a stopped proxy says nothing until then. One IPC message each way per second.
 */
const HEARTBEAT_MS = 1_000;
const STDERR_TAIL = 4_000;

export interface InterceptorProcessOptions {
  /** The runtime's environment: only its proxy and CA variables reach the process (for the way out). */
  env: Env;
  bodies?: boolean;
  upstream?: WireUpstream;
  /** Told once if the process exits, or stalls and is killed, while the runtime still uses it. */
  onExit?(error: InterceptorError): void;
}


export class InterceptorProcess {
  private readonly sessions = new Map<string, HostWireSession>();
  private readonly replies = new Map<number, { resolve: (message: FromProcess) => void; reject: (error: Error) => void }>();
  /** Calls running behind the process, and the ping that runs while there are any. */
  private calls = 0;
  private heartbeat: NodeJS.Timeout | undefined;
  private pinging = false;
  private nextReply = 1;
  private nextCall = 1;
  private version: string | undefined;
  private gone: InterceptorError | undefined;
  private closing = false;
  private readonly exited: Promise<void>;
  /** Whether the process has taken its socket over (CLIs may be started at it before; its start has a timeout of its own). */
  isReady = false;
  private markReady!: () => void;
  /** Exchanges sent before the process is up wait for it: their deadline runs from then (the start timeout covers the boot). */
  private readonly ready = new Promise<void>((resolve) => (this.markReady = resolve));

  private constructor(
    private readonly child: ChildProcess,
    private readonly secret: string,
    readonly port: number,
    readonly caFile: string,
    private readonly stderr: () => string,
    private readonly options: InterceptorProcessOptions,
  ) {
    this.exited = new Promise((resolve) => child.once("exit", () => resolve()));
    child.on("message", (message: FromProcess) => this.receive(message));
    child.once("exit", (code, signal) => this.lost(code, signal));
    // Never keeps the host alive: a call in flight holds its CLI, which holds the host (ask() refs the channel while it waits).
    child.unref();
    child.channel?.unref();
  }

  /**
   * Forks the process and, while it boots, binds its listening socket and writes its CA file here, so the
   * runtime's first CLI can start at once (issue 45): its connections wait in the socket's backlog until
   * the process takes the socket over (node's handle passing), about as long as the CLI takes to boot.
   * A process that then fails to come up within the start timeout fails the calls behind it.
   */
  static async start(options: InterceptorProcessOptions): Promise<InterceptorProcess> {
    const secret = newWireSecret();
    const env: Record<string, string> = {};
    for (const name of WAY_OUT_ENV_NAMES) if (options.env[name] !== undefined) env[name] = options.env[name]!;
    // The CA file's directory is the process's from its start (its argument): whenever the runtime goes, even before
    // the process has read a message, the process removes it as it exits.
    const caDir = newCaDir();
    // An empty environment and no Node flags: nothing of the host (NODE_OPTIONS, a loader, --inspect) reaches the process.
    const child = fork(INTERCEPTOR_SCRIPT, [caDir], { env: {}, execArgv: [], stdio: ["ignore", "ignore", "pipe", "ipc"], serialization: "json" });
    let stderr = "";
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-STDERR_TAIL)));
    (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();
    child.on("error", () => {});
    const startError = (what: string) => new InterceptorError(`The runtime's interceptor could not start: ${what}.`, { stderrTail: stderr.trim() || undefined }, "start");
    // The CA and its leaves are made here (the X.509 code stays out of the process); the CA's key is dropped
    // once the leaves are signed. The CLI needs only the CA certificate, so it need not wait for the leaves.
    const issuing = import("./ca.js").then(({ issueCa }) => issueCa(interceptorCaOptions(WIRE_HOSTS)));
    let listener: Server | undefined;
    let caFile: string;
    let leaves: Promise<IssuedLeaves>;
    try {
      listener = await listenOnLoopback();
      const ca = await issuing;
      leaves = ca.leaves;
      caFile = writeCaFile(ca.certPem, options.env, caDir);
    } catch (error) {
      issuing.catch(() => {});
      listener?.close();
      child.kill("SIGKILL");
      rmSync(caDir, { recursive: true, force: true });
      throw startError(`its certificates or socket could not be made: ${(error as Error).message}`);
    }
    const port = (listener.address() as AddressInfo).port;
    // The raw handle crosses (the server's private `_handle`: a net.Server sent whole would start accepting in the
    // process before the interceptor is there to take the connections), so nothing accepts on it until the
    // process listens; once written, the process has its own copy and the runtime's is closed, before any CLI
    // is pointed at the port.
    const socket = listener;
    await new Promise<void>((resolve) => child.send({ type: "listen", caFile } satisfies ToProcess, (socket as unknown as { _handle: never })._handle, () => resolve()));
    socket.close();
    const started = new InterceptorProcess(child, secret, port, caFile, () => stderr, options);
    started.awaitReady(startError);
    leaves.then(
      (issued) => child.send({ type: "start", secret, env, bodies: options.bodies === true, issued, ...(options.upstream ? { upstream: options.upstream } : {}) } satisfies ToProcess),
      (error: Error) => started.failedToStart(startError(`its certificates could not be made: ${error.message}`)),
    );
    return started;
  }

  /** Until the process reports ready: a failure, an exit or the start timeout fails every call behind it, as a lost process does. */
  private awaitReady(startError: (what: string) => InterceptorError): void {
    const fail = (what: string) => {
      clearTimeout(timer);
      this.child.off("message", first);
      this.failedToStart(startError(what));
    };
    const timer = setTimeout(() => fail(`it did not report ready within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
    timer.unref();
    const first = (message: FromProcess) => {
      if (message.type === "ready") {
        clearTimeout(timer);
        this.child.off("message", first);
        this.isReady = true;
        this.markReady();
      } else if (message.type === "failed") fail(message.message);
    };
    this.child.on("message", first);
    this.child.once("exit", () => clearTimeout(timer));
  }

  /** @internal */
  failedToStart(error: InterceptorError): void {
    if (this.gone || this.closing) return;
    this.abandon(error);
    this.child.kill("SIGKILL");
  }

  /** The interceptor's process id (diagnostics; the bench reads its CPU). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The CLI version whose recorded shape requests are checked against. */
  useVersion(version: string): void {
    if (version === this.version) return;
    this.version = version;
    this.post({ type: "version", version });
  }

  /** A new process's session: the variables that point it at the interceptor (HTTPS_PROXY with its credentials, the CA file). */
  newSession(): HostWireSession {
    const { name, env } = sessionEnv(this.secret, this.port, this.caFile);
    const session = new HostWireSession(name, env, this);
    if (this.gone) session.stopped(undefined, this.gone);
    else this.sessions.set(name, session);
    return session;
  }

  dropSession(session: HostWireSession): void {
    if (this.sessions.delete(session.name)) this.post({ type: "drop", session: session.name });
  }

  /** @internal a call began (+1) or ended (-1) on one of the sessions: pings run while any call does. */
  running(change: 1 | -1): void {
    this.calls = Math.max(0, this.calls + change);
    if (this.calls > 0 && !this.heartbeat && !this.gone && !this.closing) {
      this.heartbeat = setInterval(() => this.ping(), HEARTBEAT_MS);
      // The calls' CLIs hold the host; the ping never does.
      this.heartbeat.unref();
    } else if (this.calls === 0) this.stopHeartbeat();
  }

  private ping(): void {
    if (this.pinging) return;
    this.pinging = true;
    this.ask((reply) => ({ type: "ping", reply })).then(
      () => (this.pinging = false),
      () => (this.pinging = false),
    );
  }

  private stopHeartbeat(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /** @internal */
  nextCallId(): number {
    return this.nextCall++;
  }

  /** @internal */
  post(message: ToProcess): void {
    if (this.gone || !this.child.connected) return;
    this.child.send(message);
  }

  /**
   * @internal sends a message that is answered, and waits for the answer (the channel holds the host
   * meanwhile). An answer later than the exchange deadline means a stalled process: it is replaced. The
   * caller may wait less (`waitMs`): it then gets InterceptorError, while the deadline still runs.
   */
  ask(make: (reply: number) => ToProcess, waitMs?: number): Promise<FromProcess> {
    if (this.gone) return Promise.reject(this.gone);
    const reply = this.nextReply++;
    const message = make(reply);
    return new Promise<FromProcess>((resolve, reject) => {
      let settled = false;
      let stall: NodeJS.Timeout | undefined;
      const armStall = () => {
        if (!settled) stall = setTimeout(() => this.stalled(message.type), EXCHANGE_DEADLINE_MS);
      };
      if (this.isReady) armStall();
      else void this.ready.then(armStall);
      const wait =
        waitMs !== undefined && waitMs < EXCHANGE_DEADLINE_MS
          ? setTimeout(
              () => reject(new InterceptorError(`The runtime's interceptor process (pid ${this.child.pid}) did not answer the call's ${message.type} within what was left of its timeoutMs (${Math.max(0, Math.round(waitMs))} ms).`, { stderrTail: this.stderr().trim() || undefined }, "stalled")),
              Math.max(0, waitMs),
            )
          : undefined;
      const settle = () => ((settled = true), clearTimeout(stall), clearTimeout(wait));
      this.replies.set(reply, {
        resolve: (answer) => (settle(), resolve(answer)),
        reject: (error) => (settle(), reject(error)),
      });
      if (this.replies.size === 1) this.child.channel?.ref();
      this.post(message);
    });
  }

  /** No answer within the exchange deadline: the process is killed (a stopped one too) and every call and CLI behind it let go. */
  private stalled(what: string): void {
    if (this.gone || this.closing) return;
    this.abandon(
      new InterceptorError(
        `The runtime's interceptor process (pid ${this.child.pid}) did not answer within ${EXCHANGE_DEADLINE_MS / 1000} s (a \`${what}\` message; the process is stopped, hung or saturated), so it was killed and its CLIs retired.`,
        { stderrTail: this.stderr().trim() || undefined },
        "stalled",
      ),
    );
    this.child.kill("SIGKILL");
  }

  private receive(message: FromProcess): void {
    if (message.type === "records") return this.sessions.get(message.session)?.recorded(message.call, message.records);
    if (message.type === "refused") return this.sessions.get(message.session)?.refused(message.what);
    if (message.type === "stop") {
      this.sessions.get(message.session)?.stopped(message.call, wireRefusal(message.differences, WIRE_ADVICE, "marked"));
      return;
    }
    if (message.type === "acked" || message.type === "ended") {
      const waiting = this.replies.get(message.reply);
      this.replies.delete(message.reply);
      if (this.replies.size === 0) this.child.channel?.unref();
      waiting?.resolve(message);
    }
  }

  private lost(code: number | null, signal: NodeJS.Signals | null): void {
    rmSync(dirname(this.caFile), { recursive: true, force: true });
    if (this.closing || this.gone) return;
    this.abandon(new InterceptorError(`The runtime's interceptor process (pid ${this.child.pid}) exited (${signal ?? `code ${code}`}) while the runtime used it.`, { stderrTail: this.stderr().trim() || undefined }));
  }

  /** The process is gone or stalled: every call behind it fails, every session breaks, and the runtime starts a new one next time. */
  private abandon(error: InterceptorError): void {
    this.gone = error;
    this.stopHeartbeat();
    this.calls = 0;
    for (const { reject } of this.replies.values()) reject(error);
    this.replies.clear();
    this.child.channel?.unref();
    for (const session of this.sessions.values()) session.stopped(undefined, error);
    this.sessions.clear();
    this.options.onExit?.(error);
  }

  async close(): Promise<void> {
    if (this.closing) return this.exited;
    this.closing = true;
    this.stopHeartbeat();
    for (const { reject } of this.replies.values()) reject(new InterceptorError("The runtime was closed while a call waited for its interceptor.", {}, "closed"));
    this.replies.clear();
    // The process exits when its channel closes; a process that does not is killed. close() is awaited: the wait holds the host.
    this.child.ref();
    if (this.child.connected) this.child.disconnect();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 2_000);
    timer.unref();
    await this.exited;
    clearTimeout(timer);
  }
}

/** A listening socket on 127.0.0.1 for the process to take over; a connection it takes itself meanwhile is dropped. */
function listenOnLoopback(): Promise<Server> {
  const server = createServer((socket) => socket.destroy());
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      server.unref();
      resolve(server);
    });
  });
}

/**
 * An API failure without an HTTP status (a refused, reset or dropped connection: the CLI's
 * `ApiRetryBudgetError` "dropped connection", or its `API Error: Connection error.` result) of a CLI
 * behind the interceptor: that CLI's one way out is the interceptor on 127.0.0.1, so the error names it
 * instead of the API. A failure with a status is the API's answer (or the interceptor's own, which says so).
 */
export function unreachableError(error: unknown, wire: { port: number }): InterceptorError | undefined {
  if (!(error instanceof ClaudeCodeError) || error instanceof PromptTooLongError) return undefined;
  const status = (error as { status?: number }).status;
  if ((error.code !== "api_retry_budget_exceeded" && error.code !== "api_error") || status !== undefined) return undefined;
  const retries = error as { attempts?: number; elapsedMs?: number };
  const seen =
    error.code === "api_retry_budget_exceeded"
      ? `the CLI retried ${retries.attempts} time(s) over ${Math.round((retries.elapsedMs ?? 0) / 1000)} s, each without an HTTP answer`
      : `the CLI reported no HTTP answer: ${error.message.slice(0, 300)}`;
  return new InterceptorError(
    `The Claude Code CLI could not reach the runtime's interceptor on 127.0.0.1:${wire.port}, or lost its connection to it (${seen}). ` +
      `It may be saturated (another local process holding connections to its port: it keeps at most ${UNAUTHENTICATED_MAX} that have not authenticated, each for at most ${UNAUTHENTICATED_DEADLINE_MS / 1000} s), ` +
      `or its way out to the API broke during an answer; look for what connects to that port.`,
    { cause: error, stderrTail: error.stderrTail },
    "unreachable",
  );
}
