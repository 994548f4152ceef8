/**
 * An HTTP CONNECT proxy on 127.0.0.1 that terminates TLS with a CA of its own (ca.ts) and hands each
 * decrypted request to a handler. Shared by the runtime's interceptor (interceptor.ts) and the test
 * harness's first-party mode (src/testing/first-party.ts). TLS is node:tls; requests are parsed by
 * node:http (an inner server fed the decrypted sockets), so nothing here parses HTTP or TLS by hand.
 *
 * Any local user can connect to a port on 127.0.0.1 (the CLI's proxy, HTTPS_PROXY, is a host and port,
 * not a socket file only this user could open), so connections that have not yet authenticated (an
 * accepted CONNECT) are capped and given a deadline: a flood of idle connections cannot take the
 * descriptors real sessions need.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { TLSSocket } from "node:tls";
import type { MemoryCa } from "./ca.js";
import { UNAUTHENTICATED_DEADLINE_MS, UNAUTHENTICATED_MAX } from "./process-protocol.js";

export { UNAUTHENTICATED_DEADLINE_MS, UNAUTHENTICATED_MAX };

export interface ConnectTarget {
  host: string;
  port: number;
  /** The `Proxy-Authorization` credentials, decoded (`user:password`), when sent. */
  credentials?: string;
}

export type ConnectDecision<Tag> = { accept: true; tag: Tag } | { accept: false; status: number; reason: string };

export interface TlsProxyOptions<Tag> {
  ca: MemoryCa;
  /** Decides each CONNECT before anything is answered: intercept it (with a tag for its requests) or refuse it. */
  onConnect(target: ConnectTarget): ConnectDecision<Tag>;
  /** Each decrypted request, with the CONNECT's host and tag. */
  onRequest(request: IncomingMessage, response: ServerResponse, connection: { host: string; port: number; tag: Tag }): void;
  /** A plain (non-CONNECT) proxy request: `http://…` through the proxy, with its decoded `Proxy-Authorization`. Default: 403. */
  onPlainRequest?(request: IncomingMessage, response: ServerResponse, credentials: string | undefined): void;
  /**
   * A listening socket made by someone else, as a raw handle (the runtime binds it and hands it to its
   * interceptor's process, so its CLIs can be pointed at the port before that process is up; connections
   * wait in its backlog until this listens on it); default: a new one on 127.0.0.1.
   */
  listenOn?: unknown;
}

export interface TlsProxy {
  readonly port: number;
  /** Frees the port and destroys every open connection. */
  close(): Promise<void>;
}

const decodeCredentials = (header: string | undefined): string | undefined => {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? "");
  return match ? Buffer.from(match[1]!, "base64").toString("utf8") : undefined;
};

export async function startTlsProxy<Tag>(options: TlsProxyOptions<Tag>): Promise<TlsProxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    // Streamed answers go out in small writes: Nagle's algorithm would hold each behind the peer's delayed ACK.
    socket.setNoDelay(true);
    socket.unref();
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
  };
  // Connections without an accepted CONNECT, oldest first (a Map keeps insertion order), each with its deadline.
  const unauthenticated = new Map<Socket, NodeJS.Timeout>();
  const authenticated = (socket: Socket) => {
    clearTimeout(unauthenticated.get(socket));
    unauthenticated.delete(socket);
  };
  const admit = (socket: Socket) => {
    while (unauthenticated.size >= UNAUTHENTICATED_MAX) {
      const [oldest] = unauthenticated.keys();
      authenticated(oldest!);
      oldest!.destroy();
    }
    const timer = setTimeout(() => {
      unauthenticated.delete(socket);
      socket.destroy();
    }, UNAUTHENTICATED_DEADLINE_MS);
    timer.unref();
    unauthenticated.set(socket, timer);
    socket.once("close", () => authenticated(socket));
  };
  const connections = new WeakMap<Socket, { host: string; port: number; tag: Tag }>();
  const inner = createServer({ keepAlive: true }, (request, response) => {
    const connection = connections.get(request.socket);
    if (!connection) return void response.writeHead(500).end();
    options.onRequest(request, response, connection);
  });
  const outer = createServer((request, response) => {
    if (options.onPlainRequest) return options.onPlainRequest(request, response, decodeCredentials(request.headers["proxy-authorization"]));
    response.writeHead(403).end("plain HTTP is not proxied\n");
  });
  outer.on("connection", (socket: Socket) => {
    track(socket);
    admit(socket);
  });
  // Never keeps the host alive: a call in flight holds its CLI, which holds the host.
  outer.unref();
  outer.on("connect", (request: IncomingMessage, socket: Socket, head: Buffer) => {
    const [host = "", portText = "443"] = (request.url ?? "").replace(/^\[(.*)\](?=:)/, "$1").split(/:(?=\d+$)/);
    const target: ConnectTarget = { host: host.toLowerCase(), port: Number(portText), credentials: decodeCredentials(request.headers["proxy-authorization"] as string | undefined) };
    const decision = options.onConnect(target);
    if (!decision.accept) {
      // Still unauthenticated (or refused): its deadline runs on, and it closes with this answer.
      socket.end(`HTTP/1.1 ${decision.status} ${decision.reason.replace(/[\r\n]/g, " ")}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      return;
    }
    authenticated(socket);
    options.ca.contextFor(target.host).then(
      (secureContext) => {
        if (socket.destroyed) return;
        socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        if (head.length > 0) socket.unshift(head);
        const secure = new TLSSocket(socket, { isServer: true, secureContext, ALPNProtocols: ["http/1.1"] });
        track(secure);
        connections.set(secure, { host: target.host, port: target.port, tag: decision.tag });
        inner.emit("connection", secure);
      },
      () => socket.end("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
    );
  });
  await new Promise<void>((resolve, reject) => {
    outer.once("error", reject);
    const listening = () => {
      outer.off("error", reject);
      resolve();
    };
    // node's listen takes a raw handle as it is (`listen(handle)`: the object its TCP wrap is).
    if (options.listenOn) outer.listen(options.listenOn as never, listening);
    else outer.listen(0, "127.0.0.1", listening);
  });
  let closed: Promise<void> | undefined;
  return {
    port: (outer.address() as AddressInfo).port,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        outer.close(() => resolve());
        for (const timer of unauthenticated.values()) clearTimeout(timer);
        unauthenticated.clear();
        for (const socket of sockets) socket.destroy();
        outer.closeAllConnections();
        inner.closeAllConnections();
      })),
  };
}
