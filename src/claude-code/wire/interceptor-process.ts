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
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { InterceptorError, IsolationError } from "../../errors/index.js";
import type { Env } from "../../transport/env.js";
import { WIRE_ADVICE } from "./check.js";
import { newWireSecret, sessionEnv } from "./credentials.js";
import { interceptorCaOptions } from "./ca-options.js";
import { WIRE_HOSTS } from "./shape.js";
import { type FromProcess, type SentExpectation, type ToProcess, WAY_OUT_ENV_NAMES } from "./process-protocol.js";
import type { RequestRecord } from "./records.js";
import type { WireUpstream } from "./upstream.js";

/** The process's script, built into dist/ (src/… and dist/… are both three levels down, as the shapes' root is). */
export const INTERCEPTOR_SCRIPT = fileURLToPath(new URL("../../../dist/claude-code/wire/process-main.js", import.meta.url));

/** How long the process may take to start: a Node start, its modules, a CA key. */
const START_TIMEOUT_MS = 15_000;
const STDERR_TAIL = 4_000;

export interface InterceptorProcessOptions {
  /** The runtime's environment: only its proxy and CA variables reach the process (for the way out). */
  env: Env;
  bodies?: boolean;
  upstream?: WireUpstream;
  /** Told once if the process exits while the runtime still uses it. */
  onExit?(error: InterceptorError): void;
}

export interface CallEnd {
  forwarded: number;
  records: RequestRecord[];
  refusals: string[];
}

/** One CLI process's session on the interceptor, as the runtime sees it. */
export class HostWireSession {
  private call: { id: number; fail: (error: IsolationError | InterceptorError) => void; records: RequestRecord[] } | undefined;
  /** Refusals pushed by the process since the last call's end. */
  private readonly refusals: string[] = [];
  private broken: IsolationError | InterceptorError | undefined;
  /** Told when the session breaks while no call runs on it (its process must then not serve one). */
  onIdleBreak?: () => void;

  constructor(
    readonly name: string,
    readonly env: Record<string, string>,
    private readonly owner: InterceptorProcess,
  ) {}

  /** The next call on this process. Throws when the process is already compromised or the interceptor is gone. */
  beginCall(expectation: SentExpectation, fail: (error: IsolationError | InterceptorError) => void): void {
    if (this.broken) throw this.broken;
    const id = this.owner.nextCallId();
    this.call = { id, fail, records: [] };
    this.owner.post({ type: "begin", session: this.name, call: id, expectation });
  }

  /**
   * What one of the call's tools handed the CLI, whole and waited for (its arrival must come before the
   * CLI's next request is checked): the check compares each tool result with it (check-turns.ts).
   */
  toolOutput(id: string, texts: string[]): Promise<void> | undefined {
    const call = this.call;
    if (!call) return undefined;
    return this.owner.ask((reply) => ({ type: "tool", session: this.name, call: call.id, id, texts, ack: reply })).then(() => undefined);
  }

  /**
   * Ends the call: how many of its Messages requests passed, what each carried, and what was refused.
   * The process pushes the call's records when an answer ends the model's turn, before the CLI can
   * have read that answer, so with `responses` (the model responses the call got) already matched by
   * records, the end needs no round trip. Otherwise (a failed call, records still on their way, a
   * response that went around the interceptor) the process is asked, and its answer is the whole list:
   * pushed messages come before it on the one channel.
   */
  async endCall(responses?: number | ReadonlyArray<string | undefined>): Promise<CallEnd> {
    const call = this.call;
    if (!call) return { forwarded: 0, records: [], refusals: this.refusals.splice(0) };
    // Matched by message id when the ids are given (wire-binding.ts), else by count.
    const matched = () => (typeof responses === "number" ? call.records.length >= responses : responses !== undefined && responses.every((id) => id !== undefined && call.records.some((record) => record.messageId === id)));
    // The last record left the process as the CLI got its answer, but may be read after the CLI's result: one turn to read it.
    if (responses !== undefined && !matched()) await new Promise((resolve) => setImmediate(resolve));
    if (this.call === call) this.call = undefined;
    if (responses !== undefined && matched()) {
      this.owner.post({ type: "end", session: this.name, call: call.id });
      return { forwarded: call.records.length, records: call.records, refusals: this.refusals.splice(0) };
    }
    const ended = await this.owner.ask((reply) => ({ type: "end", session: this.name, call: call.id, reply }));
    if (ended.type !== "ended") throw new InterceptorError(`The runtime's interceptor answered a call's end with ${ended.type}.`);
    return { forwarded: ended.forwarded, records: ended.records, refusals: this.refusals.splice(0) };
  }

  /** @internal pushed by the process: finished requests of `call`. */
  recorded(call: number, records: RequestRecord[]): void {
    if (this.call?.id === call) this.call.records.push(...records);
  }

  /** @internal pushed by the process: a request that no call needs was refused. */
  refused(what: string): void {
    this.refusals.push(what);
  }

  /** @internal the process stopped this session (`call`: the call it ran, when it knew of one). */
  stopped(call: number | undefined, error: IsolationError | InterceptorError): void {
    this.broken ??= error;
    if (this.call && (call === undefined || call === this.call.id)) this.call.fail(error);
    else if (!this.call) this.onIdleBreak?.();
  }
}

export class InterceptorProcess {
  private readonly sessions = new Map<string, HostWireSession>();
  private readonly replies = new Map<number, { resolve: (message: FromProcess) => void; reject: (error: Error) => void }>();
  private nextReply = 1;
  private nextCall = 1;
  private version: string | undefined;
  private gone: InterceptorError | undefined;
  private closing = false;
  private readonly exited: Promise<void>;

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

  static async start(options: InterceptorProcessOptions): Promise<InterceptorProcess> {
    const secret = newWireSecret();
    const env: Record<string, string> = {};
    for (const name of WAY_OUT_ENV_NAMES) if (options.env[name] !== undefined) env[name] = options.env[name]!;
    // An empty environment and no Node flags: nothing of the host (NODE_OPTIONS, a loader, --inspect) reaches the process.
    const child = fork(INTERCEPTOR_SCRIPT, [], { env: {}, execArgv: [], stdio: ["ignore", "ignore", "pipe", "ipc"], serialization: "json" });
    // While the process boots: the CA and its leaves, made here (the X.509 code stays out of the process); the CA's key is dropped.
    const issued = import("./ca.js").then(({ issueLeaves }) => issueLeaves(interceptorCaOptions(WIRE_HOSTS)));
    issued.catch(() => {});
    let stderr = "";
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-STDERR_TAIL)));
    (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();
    const ready = await new Promise<{ port: number; caFile: string }>((resolve, reject) => {
      const fail = (what: string) => {
        clearTimeout(timer);
        child.kill("SIGKILL");
        reject(new InterceptorError(`The runtime's interceptor could not start: ${what}.`, { stderrTail: stderr.trim() || undefined }));
      };
      const timer = setTimeout(() => fail(`it did not report ready within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
      child.once("error", (error) => fail(error.message));
      child.once("exit", (code, signal) => fail(`its process exited (${signal ?? `code ${code}`})`));
      child.on("message", function first(message: FromProcess) {
        if (message.type === "ready") {
          clearTimeout(timer);
          child.off("message", first);
          child.removeAllListeners("exit");
          child.removeAllListeners("error");
          resolve({ port: message.port, caFile: message.caFile });
        } else if (message.type === "failed") fail(message.message);
      });
      issued.then(
        (leaves) => child.send({ type: "start", secret, env, bodies: options.bodies === true, issued: leaves, ...(options.upstream ? { upstream: options.upstream } : {}) } satisfies ToProcess),
        (error: Error) => fail(`its certificates could not be made: ${error.message}`),
      );
    });
    child.on("error", () => {});
    return new InterceptorProcess(child, secret, ready.port, ready.caFile, () => stderr, options);
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

  /** @internal */
  nextCallId(): number {
    return this.nextCall++;
  }

  /** @internal */
  post(message: ToProcess): void {
    if (this.gone || !this.child.connected) return;
    this.child.send(message);
  }

  /** @internal sends a message that is answered, and waits for the answer (the channel holds the host meanwhile). */
  ask(make: (reply: number) => ToProcess): Promise<FromProcess> {
    if (this.gone) return Promise.reject(this.gone);
    const reply = this.nextReply++;
    return new Promise<FromProcess>((resolve, reject) => {
      this.replies.set(reply, { resolve, reject });
      if (this.replies.size === 1) this.child.channel?.ref();
      this.post(make(reply));
    });
  }

  private receive(message: FromProcess): void {
    if (message.type === "records") return this.sessions.get(message.session)?.recorded(message.call, message.records);
    if (message.type === "refused") return this.sessions.get(message.session)?.refused(message.what);
    if (message.type === "stop") {
      this.sessions.get(message.session)?.stopped(message.call, new IsolationError(message.differences, WIRE_ADVICE));
      return;
    }
    if (message.type === "acked" || message.type === "ended") {
      const waiting = this.replies.get(message.reply);
      this.replies.delete(message.reply);
      if (this.replies.size === 0) this.child.channel?.unref();
      waiting?.resolve(message);
    }
  }

  /** The process is gone: every call behind it fails, every session breaks, and the runtime starts a new one next time. */
  private lost(code: number | null, signal: NodeJS.Signals | null): void {
    rmSync(dirname(this.caFile), { recursive: true, force: true });
    if (this.closing) return;
    const error = new InterceptorError(`The runtime's interceptor process (pid ${this.child.pid}) exited (${signal ?? `code ${code}`}) while the runtime used it.`, { stderrTail: this.stderr().trim() || undefined });
    this.gone = error;
    for (const { reject } of this.replies.values()) reject(error);
    this.replies.clear();
    for (const session of this.sessions.values()) session.stopped(undefined, error);
    this.sessions.clear();
    this.options.onExit?.(error);
  }

  async close(): Promise<void> {
    if (this.closing) return this.exited;
    this.closing = true;
    for (const { reject } of this.replies.values()) reject(new InterceptorError("The runtime was closed while a call waited for its interceptor."));
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
