/**
 * The interceptor's way out: a checked request goes to its real host over the user's own proxy and
 * CA settings (the proxy and CA variables of the runtime's `env`), with the CLI's request head as the
 * CLI wrote it: the same request line and the same header lines, names in their case and order.
 *
 * Two maintained clients share the work, and nothing here writes HTTP, TLS or a proxy tunnel by hand:
 * - **undici** picks the way and opens the connection: `EnvHttpProxyAgent` (or `ProxyAgent` for an
 *   explicit `upstream`) decides proxy or direct by its `NO_PROXY` rules, sends the `CONNECT` with the
 *   proxy's credentials and its TLS, and opens TLS to the host trusting the caller's CAs. Its public
 *   `factory` option hands each origin's pool options to `OriginSockets`, whose `connect` is that
 *   connector; the connector is all that is used.
 * - **node:http** writes the request over those sockets: the CLI's `rawHeaders` as a flat array, so
 *   nothing is added, lower-cased or moved (undici's writer puts `host`, `connection` and
 *   `content-length` first, in lower case). A keep-alive `http.Agent` per origin reuses the connections.
 *
 * A SOCKS proxy (`socks5://` in `HTTPS_PROXY` or `ALL_PROXY`) opens its connections inside undici, out of
 * the factory's reach: through one, requests go by undici's own writer (the same headers and bytes,
 * `host`, `connection` and `content-length` first, in lower case).
 */
import { EventEmitter } from "node:events";
import { Agent as HttpAgent, type IncomingHttpHeaders, request as httpRequest, type RequestOptions } from "node:http";
import type { Socket } from "node:net";
import type { Readable } from "node:stream";
import { createSecureContext, rootCertificates } from "node:tls";
import { buildConnector, type Dispatcher, EnvHttpProxyAgent, ProxyAgent } from "undici";
import type { Env } from "../../transport/env.js";
import { callerCaPem } from "./credentials.js";

/** An explicit way out (tests): every checked request goes through this proxy, trusting this CA. Never taken from the environment. */
export interface WireUpstream {
  proxy: string;
  ca: string;
}

/** One request to forward: the CLI's head (method, target, raw header lines) and its body. */
export interface ForwardRequest {
  /** The CONNECT's host: the origin is `https://<host>`. */
  host: string;
  method: string;
  /** The request target as the CLI sent it (path and query). */
  path: string;
  /** Name, value, name, value…: exactly the header lines to write, in order. */
  rawHeaders: string[];
  body: Buffer;
}

export interface ForwardResponse {
  statusCode: number;
  statusMessage: string | undefined;
  /** Name, value, …: as the host sent them (node:http), or as undici parsed them (SOCKS). */
  rawHeaders: string[];
  /** Lower-case names (for the request record). */
  headers: IncomingHttpHeaders;
  body: Readable;
}

export interface Upstream {
  /** Sends one request. `cancel` drops it (the CLI went away): its connection is destroyed, never reused. */
  send(request: ForwardRequest): { response: Promise<ForwardResponse>; cancel(): void };
  /**
   * Opens a connection to `host` ahead of a request, unless one is idle or already being opened: a call
   * that begins (its CLI spawned, or a reused one given the prompt) sends its Messages request soon, and the handshake
   * to the API (TCP, the user's proxy, TLS) is then off the call's path. Nothing is sent on it until a
   * request is; failures are silent (the request then connects as before).
   */
  prepare(host: string): void;
  close(): Promise<void>;
}

/** How long an idle connection to a host is kept for the next request (undici's default, which the way out used before). */
const IDLE_MS = 4_000;

/** Every proxy name is read from the runtime's `env` only: an empty value means "none" to undici, so process.env is never consulted. */
export function createUpstream(env: Env, upstream?: WireUpstream): Upstream {
  const factory = (origin: string | URL, options: object) => new OriginSockets(String(origin), options) as unknown as Dispatcher;
  if (upstream) {
    const tls = { secureContext: createSecureContext({ ca: upstream.ca }) };
    return new RawUpstream(new ProxyAgent({ uri: upstream.proxy, requestTls: tls, proxyTls: tls, factory }));
  }
  const extra = callerCaPem(env);
  // One TLS context for every connection: given as `ca`, Node's ~150 roots plus the caller's CAs were
  // parsed again for each new connection: 35–45 ms of CPU each (`tls.createSecureContext`, Node 20 here).
  const tls = { secureContext: createSecureContext({ ca: extra ? [...rootCertificates, extra] : [...rootCertificates] }) };
  const httpsProxy = env.HTTPS_PROXY ?? env.https_proxy ?? env.ALL_PROXY ?? env.all_proxy ?? "";
  const options = {
    httpsProxy,
    httpProxy: env.HTTP_PROXY ?? env.http_proxy ?? env.ALL_PROXY ?? env.all_proxy ?? "",
    noProxy: env.NO_PROXY ?? env.no_proxy ?? "",
    connect: tls,
    requestTls: tls,
    proxyTls: tls,
  };
  // undici opens a SOCKS proxy's connections inside its own pools, never through `factory`.
  if (/^socks/i.test(httpsProxy)) return new UndiciUpstream(new EnvHttpProxyAgent(options));
  return new RawUpstream(new EnvHttpProxyAgent({ ...options, factory }));
}

/** Marks the routing dispatch that asks undici which `OriginSockets` serves an origin. */
const PICK = Symbol("ktx-claude-code wire: pick the origin's sockets");

type Connector = (options: { hostname: string; host?: string; protocol: string; port: string; servername?: string }, callback: (error: Error | null, socket: Socket | null) => void) => void;

type SocketCallback = (error: Error | null, socket?: Socket) => void;

/**
 * What undici's agents create for an origin instead of a pool: it keeps the connector they built for
 * it (direct, or through the proxy's tunnel) and node:http agents whose new connections come from that
 * connector: a keep-alive one, and one for requests that ask to close their connection (`oneOff`).
 * It takes no undici request: the only dispatch it answers is PICK's.
 */
class OriginSockets extends EventEmitter {
  readonly agent: HttpAgent;
  /**
   * For a request whose head says `Connection: close` (the CLI's OAuth profile request does): sent on
   * the keep-alive agent, it would take the idle connection the call's Messages request is about to
   * need and have the host close it after its answer, so that request paid a new handshake to the API.
   */
  readonly oneOff: HttpAgent;
  destroyed = false;
  closed = false;
  /** A connection opened ahead of a request (`prepare`), handed to the next keep-alive request that needs a new one. */
  private spare: { socket?: Socket; drop?: () => void; waiting?: SocketCallback } | undefined;
  private readonly connectNow: (callback: SocketCallback) => void;

  constructor(origin: string, options: { connect?: unknown }) {
    super();
    const connect: Connector = typeof options.connect === "function" ? (options.connect as Connector) : (buildConnector({ ...(options.connect as object) }) as unknown as Connector);
    const url = new URL(origin);
    const target = { hostname: url.hostname, host: url.host, protocol: url.protocol, port: url.port, servername: url.hostname };
    this.connectNow = (callback) => connect(target, (error, socket) => (error || !socket ? callback(error ?? new Error(`no connection to ${origin}`)) : callback(null, socket)));
    // node:http takes a connection made asynchronously when createConnection returns nothing and calls back.
    const withConnections = (agent: HttpAgent, make: (callback: SocketCallback) => void): HttpAgent => {
      (agent as unknown as { createConnection: (options: unknown, callback: SocketCallback) => undefined }).createConnection = (_options, callback) => (make(callback), undefined);
      return agent;
    };
    this.agent = withConnections(new HttpAgent({ keepAlive: true, timeout: IDLE_MS }), (callback) => this.takeSpare(callback) || this.connectNow(callback));
    this.oneOff = withConnections(new HttpAgent({ keepAlive: false }), this.connectNow);
  }

  prepare(): void {
    if (this.spare || this.destroyed || this.closed) return;
    if (Object.values(this.agent.freeSockets).some((sockets) => sockets && sockets.length > 0)) return;
    const spare: NonNullable<OriginSockets["spare"]> = {};
    this.spare = spare;
    const opened: SocketCallback = (error, socket) => {
      const waiting = spare.waiting;
      if (error || !socket) {
        if (this.spare === spare) this.spare = undefined;
        // A request that took it while it was being opened connects on its own.
        if (waiting) this.connectNow(waiting);
        return;
      }
      if (waiting) return waiting(null, socket);
      if (this.spare !== spare || this.destroyed || this.closed) return void socket.destroy();
      spare.socket = socket;
      // Unused for long (the CLI sent nothing), or closed by the host: dropped.
      const drop = () => {
        if (this.spare === spare) this.spare = undefined;
        socket.destroy();
      };
      socket.setTimeout(IDLE_MS, drop);
      socket.once("close", drop);
      // Idle, nothing else listens on it yet: a reset must not become an uncaught error.
      socket.on("error", drop);
      spare.drop = drop;
    };
    try {
      this.connectNow(opened);
    } catch (error) {
      opened(error as Error);
    }
  }

  /** Hands the spare (ready or still being opened) to a new keep-alive connection; false when there is none. */
  private takeSpare(callback: SocketCallback): boolean {
    const spare = this.spare;
    if (!spare) return false;
    this.spare = undefined;
    if (!spare.socket) {
      spare.waiting = callback;
      return true;
    }
    const { socket } = spare;
    socket.setTimeout(0);
    socket.off("close", spare.drop!);
    socket.off("error", spare.drop!);
    if (socket.destroyed) return false;
    callback(null, socket);
    return true;
  }

  dispatch(options: Record<PropertyKey, unknown>, handler: { onResponseError?: (controller: unknown, error: Error) => void }): boolean {
    const pick = options[PICK];
    if (typeof pick === "function") {
      pick(this);
      return true;
    }
    handler.onResponseError?.(null, new Error("ktx-claude-code wire: the way out takes no undici request"));
    return false;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.destroyAll();
  }

  async destroy(): Promise<void> {
    this.destroyed = true;
    this.destroyAll();
  }

  private destroyAll(): void {
    this.agent.destroy();
    this.oneOff.destroy();
    this.spare?.socket?.destroy();
    this.spare = undefined;
  }
}

const NO_RESPONSE = { onRequestStart() {}, onResponseStart() {}, onResponseData() {}, onResponseEnd() {}, onResponseError() {} };

class RawUpstream implements Upstream {
  private readonly origins = new Map<string, OriginSockets>();

  constructor(private readonly router: Dispatcher) {}

  /** The origin's sockets, as undici's routing (proxy or not, by NO_PROXY) picks them; the choice is fixed per runtime. */
  private socketsFor(origin: string): OriginSockets {
    let sockets = this.origins.get(origin);
    if (!sockets) {
      let picked: OriginSockets | undefined;
      this.router.dispatch({ origin, path: "/", method: "GET", headers: {}, [PICK]: (found: OriginSockets) => (picked = found) } as Dispatcher.DispatchOptions, NO_RESPONSE);
      if (!picked) throw new Error(`no way out to ${origin}`);
      sockets = picked;
      this.origins.set(origin, sockets);
    }
    return sockets;
  }

  send(request: ForwardRequest): { response: Promise<ForwardResponse>; cancel(): void } {
    let cancel = () => {};
    const response = new Promise<ForwardResponse>((resolve, reject) => {
      const sockets = this.socketsFor(`https://${request.host}`);
      const agent = closesConnection(request.rawHeaders) ? sockets.oneOff : sockets.agent;
      // `servername` given: node:http would otherwise work it out per request (an IP test on the host name).
      const options = { agent, host: request.host, servername: request.host, port: 443, method: request.method, path: request.path, headers: request.rawHeaders, setHost: false };
      const outgoing = httpRequest(options as RequestOptions);
      cancel = () => outgoing.destroy();
      outgoing.on("error", reject);
      outgoing.on("response", (incoming) => resolve({ statusCode: incoming.statusCode ?? 502, statusMessage: incoming.statusMessage, rawHeaders: incoming.rawHeaders, headers: incoming.headers, body: incoming }));
      outgoing.end(request.body.length > 0 ? request.body : undefined);
    });
    return { response, cancel: () => cancel() };
  }

  prepare(host: string): void {
    try {
      this.socketsFor(`https://${host}`).prepare();
    } catch {
      // No way out to that host: its request will say so.
    }
  }

  async close(): Promise<void> {
    await this.router.close().catch(() => {});
    for (const sockets of this.origins.values()) await sockets.destroy();
  }
}

/** Whether a request's head asks its connection to close after the answer (`Connection: close`). */
function closesConnection(rawHeaders: readonly string[]): boolean {
  for (let index = 0; index < rawHeaders.length; index += 2) {
    if (rawHeaders[index]!.toLowerCase() === "connection" && /(?:^|,)\s*close\s*(?:,|$)/i.test(rawHeaders[index + 1]!)) return true;
  }
  return false;
}

const UNDICI_WRITES = /^(?:connection|keep-alive|transfer-encoding|te|trailer|expect)$/i;

/** The SOCKS case: undici's own request writer. */
class UndiciUpstream implements Upstream {
  constructor(private readonly dispatcher: Dispatcher) {}

  send(request: ForwardRequest): { response: Promise<ForwardResponse>; cancel(): void } {
    const abort = new AbortController();
    // Hop-by-hop names undici refuses or writes itself; it puts `host` and `content-length` first.
    const kept: string[] = [];
    for (let index = 0; index < request.rawHeaders.length; index += 2) {
      if (!UNDICI_WRITES.test(request.rawHeaders[index]!)) kept.push(request.rawHeaders[index]!, request.rawHeaders[index + 1]!);
    }
    const response = this.dispatcher
      .request({ origin: `https://${request.host}`, path: request.path, method: request.method as Dispatcher.HttpMethod, headers: kept, body: request.body.length > 0 ? request.body : undefined, signal: abort.signal })
      .then((answer) => ({
        statusCode: answer.statusCode,
        statusMessage: undefined,
        rawHeaders: Object.entries(answer.headers).flatMap(([name, value]) => (value === undefined ? [] : Array.isArray(value) ? value.flatMap((one) => [name, one]) : [name, value])),
        headers: answer.headers as IncomingHttpHeaders,
        body: answer.body,
      }));
    return { response, cancel: () => abort.abort() };
  }

  /** undici opens SOCKS connections inside its pools: none is opened ahead. */
  prepare(): void {}

  close(): Promise<void> {
    return this.dispatcher.close().catch(() => {});
  }
}
