/**
 * The runtime's own interceptor (docs/isolation.md, "The wire check"), run in a process of its own
 * (process-main.ts; the shape recorder runs it in the recorder's process): every CLI the runtime starts
 * reaches the network only through this proxy on 127.0.0.1, authenticated by a per-process name and a
 * password made from the runtime's secret, trusting one CA made for the runtime (ca.ts; key in
 * memory, one day, constrained to the hosts it signs for). Each Messages request is checked against
 * the call running on its process (check.ts) and forwarded unchanged only when it passes; other
 * requests pass only when the version needs them (shape.ts); everything else is refused and named.
 */
import { timingSafeEqual } from "node:crypto";
import { rmSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { dirname } from "node:path";
import type { Env } from "../../transport/env.js";
import type { IssuedLeaves } from "./ca.js";
import { interceptorCaOptions } from "./ca-options.js";
import { isAccountRequest, wireRefusal } from "./account-variants.js";
import { checkMessagesRequest, WIRE_ADVICE, type WireRequest } from "./check.js";
import { isCompactionRequest, summariesOf } from "./compaction.js";
import { newWireSecret, sessionEnv, sessionPassword, writeCaFile } from "./credentials.js";
import { issuedCa } from "./issued.js";
import { RequestMeter } from "./records.js";
import { parseStrictJson } from "./strict-json.js";
import { type SessionEvents, WireSession } from "./session.js";
import { type WireShape, WIRE_HOSTS, wireShapeFor } from "./shape.js";
import { MESSAGES_REQUEST } from "./shape-file.js";
import { startTlsProxy, type TlsProxy } from "./tls-proxy.js";
import type { Upstream, WireUpstream } from "./upstream.js";

export { WireSession };

/** Response headers that belong to one connection: the interceptor's own connection to the CLI writes its own. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-authorization", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer"]);
/** Request headers never sent on: a proxy's own (never part of a request inside a tunnel) and a protocol switch, which is not relayed. */
const NOT_FORWARDED = new Set(["proxy-authorization", "proxy-connection", "upgrade"]);

export interface WireInterceptorOptions {
  /** The runtime's environment: the user's proxy and CA settings for the way out. */
  env: Env;
  /** Keep full request bodies in the records (off: sizes only). */
  bodies?: boolean;
  /** An explicit way out instead of the `env`'s proxy settings (tests: the scripted API's first-party front). */
  upstream?: WireUpstream;
  /**
   * Record mode (the shape recorder, src/testing/wire-recorder.ts): nothing is checked; every request to
   * `hosts` is handed to `onRequest` and forwarded. Never used by a runtime.
   */
  record?: { hosts: readonly string[]; onRequest(request: WireRecordedRequest): void };
  /** Certificates its runtime made (the interceptor's process); without them, a CA is made here. */
  issued?: IssuedLeaves;
  /** The secret each session's proxy password is made from (default: made here); the interceptor's process gets its host's. */
  secret?: string;
  /** What happens on each session, as it happens (the interceptor's process passes it on to its host). */
  events?(session: string): SessionEvents;
  /** The CA file its runtime already wrote (with `issued`; default: written here) and the listening socket it bound (a raw handle). */
  caFile?: string;
  listenOn?: unknown;
}

/** A request as the CLI sent it, for the shape recorder. */
export interface WireRecordedRequest extends WireRequest {
  /** Header lines in order, names with their case. */
  rawHeaders: string[];
}

/** The host every checked Messages request goes to. */
const MESSAGES_HOST = MESSAGES_REQUEST.split(" ")[1]!.split("/")[0]!;

export class WireInterceptor {
  private readonly sessions = new Map<string, WireSession>();
  private readonly secret: string;
  private closed = false;
  private upstream: Upstream | undefined;
  private readonly upstreamLoading: Promise<Upstream>;

  private constructor(
    private readonly proxy: TlsProxy,
    private readonly dir: string,
    readonly caFile: string,
    private readonly options: WireInterceptorOptions,
    private shape: WireShape | undefined,
  ) {
    this.secret = options.secret ?? newWireSecret();
    // The way out (undici) loads once the proxy is up, after its start is reported: a CLI takes longer
    // to boot than that, and the interceptor's start is on its runtime's first call.
    this.upstreamLoading = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => import("./upstream.js"))
      .then(({ createUpstream }) => (this.upstream = createUpstream(options.env, options.upstream)));
    this.upstreamLoading.catch(() => {});
  }

  static async start(options: WireInterceptorOptions): Promise<WireInterceptor> {
    const ca = options.issued
      ? issuedCa(options.issued)
      : await import("./ca.js").then(({ createMemoryCa }) => createMemoryCa(interceptorCaOptions(options.record?.hosts ?? WIRE_HOSTS)));
    const caFile = options.caFile ?? writeCaFile(ca.certPem, options.env);
    const dir = dirname(caFile);
    let interceptor: WireInterceptor | undefined;
    const proxy = await startTlsProxy<WireSession>({
      ca,
      listenOn: options.listenOn,
      onConnect: (target) => interceptor!.connect(target),
      onRequest: (request, response, connection) => interceptor!.request(request, response, connection.host, connection.tag),
      onPlainRequest: (request, response, credentials) => {
        const session = interceptor!.sessionFor(credentials);
        session?.refuse(`plain HTTP ${request.method} ${request.url}`);
        response.writeHead(session ? 403 : 407).end();
      },
    });
    interceptor = new WireInterceptor(proxy, dir, caFile, options, undefined);
    return interceptor;
  }

  /** The CLI version whose recorded shape requests are checked against. */
  useVersion(version: string): void {
    this.shape = wireShapeFor(version);
  }

  get port(): number {
    return this.proxy.port;
  }

  /** A new process's session: the variables that point it at this proxy (HTTPS_PROXY with its credentials, the CA file). */
  newSession(): WireSession {
    const { name, env } = sessionEnv(this.secret, this.proxy.port, this.caFile);
    return this.openSession(name, env);
  }

  /** The session named in a process's proxy URL, made when first seen (the interceptor's process learns of its host's sessions that way). */
  openSession(name: string, env: Record<string, string> = {}): WireSession {
    let session = this.sessions.get(name);
    if (!session) {
      session = new WireSession(name, env, this.options.events?.(name) ?? {});
      this.sessions.set(name, session);
    }
    return session;
  }

  /**
   * A call begins on a session (the interceptor's process hears of it as its CLI is spawned, or before a
   * reused one is handed the prompt): when that CLI has reached the API before (a reused one), the connection
   * to the Messages host opens while it writes its request, so the handshake to the API is off the call's path.
   * A new CLI's connection opens at its CONNECT (connect()): a CLI that never gets that far (no login, stopped
   * before any request) makes no connection to the API at all.
   */
  callBegins(name: string): void {
    if (this.shape && this.sessions.get(name)?.reachedApi) this.upstream?.prepare(MESSAGES_HOST);
  }

  /** A session by name, when it exists (the interceptor's process). */
  sessionNamed(name: string): WireSession | undefined {
    return this.sessions.get(name);
  }

  dropSession(session: WireSession | string): void {
    this.sessions.delete(typeof session === "string" ? session : session.name);
  }

  private sessionFor(credentials: string | undefined): WireSession | undefined {
    if (!credentials) return undefined;
    const colon = credentials.indexOf(":");
    if (colon <= 0) return undefined;
    const name = credentials.slice(0, colon);
    // Compared in constant time: another local process must not learn a password byte by byte.
    const given = Buffer.from(credentials.slice(colon + 1));
    const expected = Buffer.from(sessionPassword(this.secret, name));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    return this.openSession(name);
  }

  private connect(target: { host: string; port: number; credentials?: string }) {
    const session = this.sessionFor(target.credentials);
    if (!session) return { accept: false as const, status: 407, reason: "Proxy Authentication Required" };
    if (target.port === 443 && (this.options.record?.hosts ?? WIRE_HOSTS).includes(target.host)) {
      // A call's CLI on its way to the API: its Messages request follows its OAuth profile request, and the
      // connection for it opens meanwhile. A spare's CONNECT at boot, with no call yet, opens none.
      if (target.host === MESSAGES_HOST && !session.reachedApi) {
        session.reachedApi = true;
        if (this.shape && session.messages()) this.upstream?.prepare(MESSAGES_HOST);
      }
      return { accept: true as const, tag: session };
    }
    session.refuse(`CONNECT ${target.host}:${target.port}`);
    return { accept: false as const, status: 403, reason: "Forbidden by the ktx-claude-code interceptor" };
  }

  private request(incoming: IncomingMessage, response: ServerResponse, host: string, session: WireSession): void {
    const started = performance.now();
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("error", () => response.destroy());
    incoming.on("end", () => {
      const raw = Buffer.concat(chunks);
      const [path = "/", query = ""] = (incoming.url ?? "/").split(/\?(.*)/s);
      const method = incoming.method ?? "GET";
      const request: Received = { incoming, response, raw, method, host, path, query, started };
      if (this.options.record) {
        this.options.record.onRequest({ method, host, path, query, headers: incoming.headers, rawHeaders: incoming.rawHeaders, body: parseJson(raw) });
        return this.forward(request, undefined);
      }
      if (method === "POST" && path === "/v1/messages") return session.whenCall(() => session.whenMcpTools(() => this.checkMessages(request, session)));
      if (this.shape?.otherRequests.some((allowed) => allowed.method === method && allowed.host === host && allowed.path === path)) return this.forward(request, undefined);
      // Essential for Console, Team and Enterprise logins (account-variants.ts).
      if (this.shape && isAccountRequest(method, host, path)) return this.forward(request, undefined);
      session.refuse(`${method} ${host}${path}`);
      refuse(response, `${method} ${host}${path} is not a request this CLI version needs for a call`);
    });
  }

  /** A Messages request: forwarded only when it is what the library built for the call running on its process. */
  private checkMessages(request: Received, session: WireSession): void {
    const { incoming, raw, method, host, path, query } = request;
    const shape = this.shape;
    const call = session.messages();
    // The request after a summary request may come before that answer's record is complete (the CLI reads the
    // answer's end from the stream before it ends here): it is checked once the summary is known.
    if (call?.summarizing) {
      void call.summarizing.then(() => this.checkMessages(request, session));
      return;
    }
    const parsed = parseStrictJson(raw);
    const body = "value" in parsed ? parsed.value : undefined;
    const differences = !shape
      ? ["the CLI version has no recorded first-party shape, so its requests cannot be checked"]
      : !call
        ? ["a Messages request was sent while no call ran on the process"]
        : "problem" in parsed
          ? [parsed.problem]
          : checkMessagesRequest({ method, host, path, query, headers: incoming.headers, body }, call.expectation, shape, call);
    if (!call || differences.length > 0) {
      session.stop(wireRefusal(differences.map((difference) => `wire: ${difference}`), WIRE_ADVICE, shape));
      return refuse(request.response, "the request differs from what the library built for the call");
    }
    call.forwarded += 1;
    // A summary request's answer is no turn of the conversation: later requests hold it as the continuation text's summary.
    const compaction = call.expectation.compaction === true && isCompactionRequest((body as { messages?: unknown } | undefined)?.messages, shape);
    let summarized: (() => void) | undefined;
    if (compaction) call.summarizing = new Promise<void>((resolve) => (summarized = resolve));
    const meter = new RequestMeter(raw, body, incoming.headers, request.started, this.options.bodies === true, (endsTurn, response) => {
      if (compaction) {
        if (response) call.summaries.push(...summariesOf(response));
        call.summarizing = undefined;
        summarized?.();
      } else if (response) call.responses.push(response);
      session.recorded(call, endsTurn);
    });
    if (compaction) meter.record.compaction = true;
    call.records.push(meter.record);
    this.forward(request, meter);
  }

  /**
   * Sends the request on with the CLI's head as it came (request line, header lines in their case and
   * order) and its body bytes; only the proxy's own headers, which never belong past a proxy, and
   * `upgrade` are left out. The answer streams back as it arrives, its headers in the host's order.
   */
  private forward(request: Received, meter: RequestMeter | undefined): void {
    const { incoming, raw: body, host, response } = request;
    if (!this.upstream) {
      this.upstreamLoading.then(
        () => this.forward(request, meter),
        (error: Error) => {
          meter?.fail(error.message);
          response.writeHead(502, { "content-type": "application/json" }).end(JSON.stringify({ type: "error", error: { type: "api_error", message: `ktx-claude-code interceptor has no way out: ${error.message}` } }));
        },
      );
      return;
    }
    const rawHeaders: string[] = [];
    for (let index = 0; index < incoming.rawHeaders.length; index += 2) {
      if (!NOT_FORWARDED.has(incoming.rawHeaders[index]!.toLowerCase())) rawHeaders.push(incoming.rawHeaders[index]!, incoming.rawHeaders[index + 1]!);
    }
    const sent = this.upstream.send({ host, method: incoming.method ?? "GET", path: incoming.url ?? "/", rawHeaders, body });
    let done = false;
    response.on("close", () => {
      if (!done) sent.cancel();
    });
    sent.response.then(
      (upstream) => {
        meter?.headers(upstream.statusCode, upstream.headers);
        const headers: string[] = [];
        for (let index = 0; index < upstream.rawHeaders.length; index += 2) {
          if (!HOP_BY_HOP.has(upstream.rawHeaders[index]!.toLowerCase())) headers.push(upstream.rawHeaders[index]!, upstream.rawHeaders[index + 1]!);
        }
        if (upstream.statusMessage) response.writeHead(upstream.statusCode, upstream.statusMessage, headers);
        else response.writeHead(upstream.statusCode, headers);
        // What arrives in one turn of the event loop goes out in one write, and the answer's last piece
        // with the end of the chunked body: each write is a TLS record and a system call that, on
        // loopback, also delivers to the reader (the profile's largest item); the bytes are the same.
        let pending: Buffer[] = [];
        let scheduled: NodeJS.Immediate | undefined;
        const take = () => {
          const bytes = pending.length === 1 ? pending[0]! : Buffer.concat(pending);
          pending = [];
          return bytes;
        };
        const flush = () => {
          scheduled = undefined;
          if (pending.length > 0 && !response.write(take())) {
            upstream.body.pause();
            response.once("drain", () => upstream.body.resume());
          }
        };
        upstream.body.on("data", (chunk: Buffer) => {
          meter?.chunk(chunk);
          pending.push(chunk);
          scheduled ??= setImmediate(flush);
        });
        upstream.body.on("end", () => {
          done = true;
          if (scheduled) clearImmediate(scheduled);
          // The last piece goes out first; the record is made once the CLI has its answer. Corked, so
          // the end of the chunked body goes in one write with what is left (end() uncorks it fully).
          response.socket?.cork();
          if (pending.length > 0) response.end(take());
          else response.end();
          meter?.end();
        });
        upstream.body.on("error", (error: Error) => {
          meter?.fail(error.message);
          response.destroy();
        });
      },
      (error: Error) => {
        meter?.fail(error.message);
        if (!response.headersSent) response.writeHead(502, { "content-type": "application/json" }).end(JSON.stringify({ type: "error", error: { type: "api_error", message: `ktx-claude-code interceptor could not reach ${host}: ${error.message}` } }));
        else response.destroy();
      },
    );
  }

  /** Removes the CA file at once (the interceptor's process, exiting). */
  removeFiles(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.proxy.close();
    await (await this.upstreamLoading.catch(() => undefined))?.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A request as it came, whole. */
interface Received {
  incoming: IncomingMessage;
  response: ServerResponse;
  raw: Buffer;
  method: string;
  host: string;
  path: string;
  query: string;
  started: number;
}

function refuse(response: ServerResponse, why: string): void {
  response.writeHead(403, { "content-type": "application/json", "x-should-retry": "false" });
  response.end(JSON.stringify({ type: "error", error: { type: "permission_error", message: `ktx-claude-code interceptor: ${why}` } }));
}

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch {
    return undefined;
  }
}
