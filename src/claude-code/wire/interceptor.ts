/**
 * The runtime's own interceptor (docs/isolation.md, "The wire check"): every CLI the runtime starts
 * reaches the network only through this proxy on 127.0.0.1, authenticated by a per-runtime secret
 * and a per-process name in the proxy URL, trusting one CA made for the runtime (ca.ts; key in
 * memory, one day, constrained to the hosts it signs for). Each Messages request is checked against
 * the call running on its process (check.ts) and forwarded unchanged only when it passes; other
 * requests pass only when the version needs them (shape.ts); everything else is refused and named.
 */
import { randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IsolationError } from "../../errors/index.js";
import type { Env } from "../../transport/env.js";
import { createMemoryCa } from "./ca.js";
import { type CallExpectation, checkMessagesRequest, type WireRequest } from "./check.js";
import { type RequestRecord, RequestMeter } from "./records.js";
import { type WireShape, WIRE_HOSTS, wireShapeFor } from "./shape.js";
import { startTlsProxy, type TlsProxy } from "./tls-proxy.js";
import { type Upstream, type WireUpstream, callerCaPem, createUpstream } from "./upstream.js";

/** Advice for a request the check stopped. */
export const WIRE_ADVICE =
  "The CLI sent something the library did not build for this call, so the request was not forwarded and the CLI was retired. Look for what the named text comes from (a managed CLAUDE.md, a policy file, a wrapper); `wire: false` turns the check off (docs/isolation.md).";

/** Response headers that belong to one connection: the interceptor's own connection to the CLI writes its own. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-authorization", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer"]);
/** Request headers never sent on: a proxy's own (never part of a request inside a tunnel) and a protocol switch, which is not relayed. */
const NOT_FORWARDED = new Set(["proxy-authorization", "proxy-connection", "upgrade"]);

/** One CLI process's view of the interceptor: its proxy credentials, the call it runs, what it sent. */
export class WireSession {
  /** Refusals of anything but a call's Messages request (analytics, other hosts), kept for the transcript and status. */
  readonly refusals: string[] = [];
  private call: { expectation: CallExpectation; fail: (error: IsolationError) => void; forwarded: number; records: RequestRecord[] } | undefined;
  /** A Messages request checked outside any call, or a stopped one: the process must not serve a call. */
  private broken: IsolationError | undefined;

  constructor(
    readonly name: string,
    readonly env: Record<string, string>,
  ) {}

  /** The next call on this process: its expectation and how to stop it. Throws when the process is already compromised. */
  beginCall(expectation: CallExpectation, fail: (error: IsolationError) => void): void {
    if (this.broken) throw this.broken;
    this.call = { expectation, fail, forwarded: 0, records: [] };
  }

  /** Ends the call: how many of its Messages requests were checked and forwarded, and what each carried. */
  endCall(): { forwarded: number; records: RequestRecord[]; refusals: string[] } {
    const call = this.call;
    this.call = undefined;
    return { forwarded: call?.forwarded ?? 0, records: call?.records ?? [], refusals: this.refusals.splice(0) };
  }

  /** @internal the interceptor's side. */
  messages(): { expectation: CallExpectation; fail: (error: IsolationError) => void; forwarded: number; records: RequestRecord[] } | undefined {
    return this.call;
  }

  /** @internal */
  stop(error: IsolationError): void {
    this.broken ??= error;
    this.call?.fail(error);
  }
}

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
}

/** A request as the CLI sent it, for the shape recorder. */
export interface WireRecordedRequest extends WireRequest {
  /** Header lines in order, names with their case. */
  rawHeaders: string[];
}

export class WireInterceptor {
  private readonly sessions = new Map<string, WireSession>();
  private readonly secret = randomBytes(18).toString("base64url");
  private closed = false;

  private constructor(
    private readonly proxy: TlsProxy,
    private readonly dir: string,
    readonly caFile: string,
    private readonly upstream: Upstream,
    private readonly options: WireInterceptorOptions,
    private shape: WireShape | undefined,
  ) {}

  static async start(options: WireInterceptorOptions): Promise<WireInterceptor> {
    const ca = await createMemoryCa({ name: "ktx-claude-code runtime interceptor", hosts: options.record?.hosts ?? WIRE_HOSTS, validityMs: 24 * 3600_000 });
    // The child takes one CA file: the user's own extra CAs and ours, private to this runtime.
    const dir = mkdtempSync(join(tmpdir(), "ktx-wire-"));
    const caFile = join(dir, "ca.pem");
    const extra = callerCaPem(options.env);
    writeFileSync(caFile, `${extra}${extra && !extra.endsWith("\n") ? "\n" : ""}${ca.certPem}`, { mode: 0o600 });
    let interceptor: WireInterceptor | undefined;
    const proxy = await startTlsProxy<WireSession>({
      ca,
      onConnect: (target) => interceptor!.connect(target),
      onRequest: (request, response, connection) => interceptor!.request(request, response, connection.host, connection.tag),
      onPlainRequest: (request, response) => {
        const session = interceptor!.sessionFor(decodeBasic(request.headers["proxy-authorization"]));
        session?.refusals.push(`plain HTTP ${request.method} ${request.url}`);
        response.writeHead(session ? 403 : 407).end();
      },
    });
    interceptor = new WireInterceptor(proxy, dir, caFile, createUpstream(options.env, options.upstream), options, undefined);
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
    const name = randomUUID().slice(0, 8);
    const url = `http://${name}:${this.secret}@127.0.0.1:${this.proxy.port}`;
    const session = new WireSession(name, { HTTPS_PROXY: url, https_proxy: url, HTTP_PROXY: url, http_proxy: url, NODE_EXTRA_CA_CERTS: this.caFile });
    this.sessions.set(name, session);
    return session;
  }

  dropSession(session: WireSession): void {
    this.sessions.delete(session.name);
  }

  private sessionFor(credentials: string | undefined): WireSession | undefined {
    if (!credentials) return undefined;
    const colon = credentials.indexOf(":");
    // Compared in constant time: another local process must not learn the secret byte by byte.
    const given = Buffer.from(credentials.slice(colon + 1));
    const secret = Buffer.from(this.secret);
    if (given.length !== secret.length || !timingSafeEqual(given, secret)) return undefined;
    return this.sessions.get(credentials.slice(0, colon));
  }

  private connect(target: { host: string; port: number; credentials?: string }) {
    const session = this.sessionFor(target.credentials);
    if (!session) return { accept: false as const, status: 407, reason: "Proxy Authentication Required" };
    if (target.port === 443 && (this.options.record?.hosts ?? WIRE_HOSTS).includes(target.host)) return { accept: true as const, tag: session };
    session.refusals.push(`CONNECT ${target.host}:${target.port}`);
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
      const refuse = (why: string) => {
        response.writeHead(403, { "content-type": "application/json", "x-should-retry": "false" });
        response.end(JSON.stringify({ type: "error", error: { type: "permission_error", message: `ktx-claude-code interceptor: ${why}` } }));
      };
      if (this.options.record) {
        this.options.record.onRequest({ method, host, path, query, headers: incoming.headers, rawHeaders: incoming.rawHeaders, body: parseJson(raw) });
        return this.forward(incoming, raw, host, response, undefined);
      }
      const shape = this.shape;
      if (method === "POST" && path === "/v1/messages") {
        const call = session.messages();
        const body = parseJson(raw);
        const differences = !shape
          ? ["the CLI version has no recorded first-party shape, so its requests cannot be checked"]
          : !call
            ? ["a Messages request was sent while no call ran on the process"]
            : checkMessagesRequest({ method, host, path, query, headers: incoming.headers, body }, call.expectation, shape);
        if (differences.length > 0) {
          session.stop(new IsolationError(differences.map((difference) => `wire: ${difference}`), WIRE_ADVICE));
          return refuse("the request differs from what the library built for the call");
        }
        call!.forwarded += 1;
        const meter = new RequestMeter(raw, body, incoming.headers, started, this.options.bodies === true);
        call!.records.push(meter.record);
        return this.forward(incoming, raw, host, response, meter);
      }
      if (shape?.otherRequests.some((allowed) => allowed.method === method && allowed.host === host && allowed.path === path)) {
        return this.forward(incoming, raw, host, response, undefined);
      }
      session.refusals.push(`${method} ${host}${path}`);
      refuse(`${method} ${host}${path} is not a request this CLI version needs for a call`);
    });
  }

  /**
   * Sends the request on with the CLI's head as it came (request line, header lines in their case and
   * order) and its body bytes; only the proxy's own headers, which never belong past a proxy, and
   * `upgrade` are left out. The answer streams back as it arrives, its headers in the host's order.
   */
  private forward(incoming: IncomingMessage, body: Buffer, host: string, response: ServerResponse, meter: RequestMeter | undefined): void {
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
        upstream.body.on("data", (chunk: Buffer) => {
          meter?.chunk(chunk);
          if (!response.write(chunk)) {
            upstream.body.pause();
            response.once("drain", () => upstream.body.resume());
          }
        });
        upstream.body.on("end", () => {
          done = true;
          meter?.end();
          response.end();
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

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.proxy.close();
    await this.upstream.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function decodeBasic(header: string | string[] | undefined): string | undefined {
  const match = /^Basic\s+(\S+)$/i.exec(typeof header === "string" ? header : "");
  return match ? Buffer.from(match[1]!, "base64").toString("utf8") : undefined;
}

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch {
    return undefined;
  }
}
