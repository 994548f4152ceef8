/**
 * The way out's connection opened ahead (src/claude-code/wire/upstream.ts, `prepare`): a cold call's
 * Messages request goes on a connection to the API opened while its CLI booted, not on a handshake of its
 * own; a `Connection: close` request (the CLI's OAuth profile request) never takes the kept-alive one. A
 * TCP relay in front of the scripted API's first-party front counts the connections the way out opens and
 * sees each one close. Everything stays on 127.0.0.1.
 */
import { createServer as createHttpServer, type IncomingMessage } from "node:http";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createUpstream, type ForwardRequest, type Upstream } from "../../src/claude-code/wire/upstream.js";
import { startScriptedMessagesApi, turn, type ScriptedMessagesApi } from "../../src/testing/scripted-api.js";

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function front(): Promise<ScriptedMessagesApi> {
  const api = await startScriptedMessagesApi([turn.text("forwarded")], { firstParty: true, onExhausted: "repeat-last" });
  closers.push(() => api.close());
  return api;
}

/** A TCP relay to `port`: how many connections were opened through it, and how many are still open. */
async function relay(port: number): Promise<{ url: string; opened: number; open: number }> {
  const state = { url: "", opened: 0, open: 0 };
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    state.opened += 1;
    state.open += 1;
    const target = connect(port, "127.0.0.1");
    sockets.add(client).add(target);
    client.pipe(target).pipe(client);
    const end = () => {
      client.destroy();
      target.destroy();
    };
    client.on("error", end).on("close", end);
    target.on("error", end).on("close", end);
    client.once("close", () => (state.open -= 1));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(resolve);
      }),
  );
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

/** The front behind a counting relay, and a way out through it (the caller's proxy and CA, as a runtime's env gives them). */
async function wayOut(): Promise<{ api: ScriptedMessagesApi; counts: Awaited<ReturnType<typeof relay>>; upstream: Upstream }> {
  const api = await front();
  const counts = await relay(Number(new URL(api.firstParty!.proxyUrl).port));
  const upstream = createUpstream({ HTTPS_PROXY: counts.url, NODE_EXTRA_CA_CERTS: api.firstParty!.caFile });
  closers.push(() => upstream.close());
  return { api, counts, upstream };
}

const body = Buffer.from(JSON.stringify({ model: "claude-sonnet-4-6", max_tokens: 16, stream: false, messages: [{ role: "user", content: "hi" }] }));
const messages: ForwardRequest = {
  host: "api.anthropic.com",
  method: "POST",
  path: "/v1/messages?beta=true",
  rawHeaders: ["Content-Type", "application/json", "Connection", "keep-alive", "Host", "api.anthropic.com", "Content-Length", String(body.length)],
  body,
};
/** As the CLI sends its OAuth profile request: it asks for its connection to be closed after the answer. */
const profile: ForwardRequest = { host: "api.anthropic.com", method: "GET", path: "/api/oauth/profile", rawHeaders: ["Accept", "application/json", "Host", "api.anthropic.com", "Connection", "close"], body: Buffer.alloc(0) };

async function answer(request: ReturnType<Upstream["send"]>): Promise<{ status: number; text: string }> {
  const response = await request.response;
  const chunks: Buffer[] = [];
  for await (const chunk of response.body) chunks.push(chunk as Buffer);
  return { status: response.statusCode, text: Buffer.concat(chunks).toString("utf8") };
}

async function until(what: () => boolean, ms = 3_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("the way out's connection opened ahead (prepare)", () => {
  it("opens one connection ahead, sends nothing on it, and the Messages request goes on it", async () => {
    const { api, counts, upstream } = await wayOut();
    upstream.prepare("api.anthropic.com");
    upstream.prepare("api.anthropic.com");
    // Twice asked, one opened: its CONNECT and TLS are done, and no request was sent.
    await until(() => api.firstParty!.connects === 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(counts.opened).toBe(1);
    expect(api.messageRequests).toHaveLength(0);
    const got = await answer(upstream.send(messages));
    expect(got.status).toBe(200);
    expect(got.text).toContain("forwarded");
    expect(api.messageRequests).toHaveLength(1);
    // No second handshake: the request took the connection opened ahead.
    expect(counts.opened).toBe(1);
    expect(api.firstParty!.connects).toBe(1);
  });

  it("a request that comes while the connection is still being opened waits for it instead of opening another", async () => {
    const { api, counts, upstream } = await wayOut();
    upstream.prepare("api.anthropic.com");
    expect((await answer(upstream.send(messages))).status).toBe(200);
    expect(counts.opened).toBe(1);
    expect(api.firstParty!.connects).toBe(1);
  });

  it("opens none when a kept-alive connection is idle: the next request reuses that one", async () => {
    const { api, counts, upstream } = await wayOut();
    expect((await answer(upstream.send(messages))).status).toBe(200);
    upstream.prepare("api.anthropic.com");
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(counts.opened).toBe(1);
    expect((await answer(upstream.send(messages))).status).toBe(200);
    expect(counts.opened).toBe(1);
    expect(api.messageRequests).toHaveLength(2);
  });

  it("a `Connection: close` request does not consume the kept-alive connection (nor the one opened ahead)", async () => {
    const { api, counts, upstream } = await wayOut();
    expect((await answer(upstream.send(messages))).status).toBe(200);
    expect(counts.opened).toBe(1);
    // The profile request opens a connection of its own, which the host closes after its answer.
    const got = await answer(upstream.send(profile));
    expect(got.status).toBe(200);
    expect(JSON.parse(got.text).account.email).toBe("scripted@example.invalid");
    expect(counts.opened).toBe(2);
    await until(() => counts.open === 1);
    // The Messages request that follows still finds the kept-alive connection.
    expect((await answer(upstream.send(messages))).status).toBe(200);
    expect(counts.opened).toBe(2);
    expect(api.firstParty!.connects).toBe(2);

    // Likewise with a connection opened ahead and no kept-alive one: the profile request leaves it to the Messages request.
    const next = await wayOut();
    next.upstream.prepare("api.anthropic.com");
    await until(() => next.counts.opened === 1);
    expect((await answer(next.upstream.send(profile))).status).toBe(200);
    expect((await answer(next.upstream.send(messages))).status).toBe(200);
    expect(next.counts.opened).toBe(2);
    expect(next.api.messageRequests).toHaveLength(1);
  });

  it("drops a connection opened ahead that no request takes within the idle time (4 s)", async () => {
    const { counts, upstream } = await wayOut();
    upstream.prepare("api.anthropic.com");
    await until(() => counts.open === 1);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(counts.open).toBe(1);
    await until(() => counts.open === 0, 3_000);
    // Dropped, not kept: the next request opens a new one.
    expect((await answer(upstream.send(messages))).status).toBe(200);
    expect(counts.opened).toBe(2);
  }, 15_000);

  it("close() destroys a connection opened ahead, ready or still being opened", async () => {
    const { counts, upstream } = await wayOut();
    upstream.prepare("api.anthropic.com");
    await until(() => counts.open === 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await upstream.close();
    await until(() => counts.open === 0);

    const next = await wayOut();
    next.upstream.prepare("api.anthropic.com");
    await next.upstream.close();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(next.counts.open).toBe(0);
  });

  it("failures are silent: a way out that refuses leaves the request to fail as before (502 path), with no error thrown", async () => {
    const connects: string[] = [];
    const server = createHttpServer((_request, response) => response.writeHead(403).end());
    server.on("connect", (request: IncomingMessage, socket: Socket) => {
      connects.push(request.url ?? "");
      socket.on("error", () => {});
      socket.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    const upstream = createUpstream({ HTTPS_PROXY: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    closers.push(() => upstream.close());
    // Refused ahead: nothing thrown, nothing left pending.
    expect(() => upstream.prepare("api.anthropic.com")).not.toThrow();
    await until(() => connects.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await expect(upstream.send(messages).response).rejects.toThrow();
    // The request tried on its own after the failed one ahead.
    expect(connects).toEqual(["api.anthropic.com:443", "api.anthropic.com:443"]);

    // A request that took the connection while it was being opened tries again on its own when it fails.
    upstream.prepare("api.anthropic.com");
    await expect(upstream.send(messages).response).rejects.toThrow();
    expect(connects).toHaveLength(4);
  });
});
