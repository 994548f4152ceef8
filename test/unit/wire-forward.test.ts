/**
 * The interceptor's way out (src/claude-code/wire/upstream.ts): the request head goes on as given,
 * over the caller's proxy and CA, with NO_PROXY as undici's EnvHttpProxyAgent reads it, on kept-alive
 * connections; an upstream failure is a 502 to the CLI. Everything stays on 127.0.0.1: "direct"
 * connections are only ever tried to `localhost`.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createUpstream, type ForwardRequest } from "../../src/claude-code/wire/upstream.js";
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

/** A CONNECT proxy on loopback that refuses everything and records what was asked. */
async function refusingProxy(): Promise<{ url: string; connects: string[] }> {
  const connects: string[] = [];
  const server = createServer((_request, response) => response.writeHead(403).end());
  server.on("connect", (request: IncomingMessage, socket: Socket) => {
    connects.push(request.url ?? "");
    socket.on("error", () => {});
    socket.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connects };
}

const body = Buffer.from(JSON.stringify({ model: "claude-sonnet-4-6", max_tokens: 16, stream: false, messages: [{ role: "user", content: "hi" }] }));
/** Odd case and order on purpose: undici's own writer would put host, connection and content-length first, in lower case. */
const rawHeaders = ["Accept", "application/json", "X-Mixed-Case", "1", "Content-Type", "application/json", "Connection", "keep-alive", "Host", "api.anthropic.com", "content-LENGTH", String(body.length), "x-last", "z"];
const messages = (host = "api.anthropic.com"): ForwardRequest => ({ host, method: "POST", path: "/v1/messages?beta=true", rawHeaders, body });

async function text(request: ReturnType<ReturnType<typeof createUpstream>["send"]>): Promise<{ status: number; text: string }> {
  const response = await request.response;
  const chunks: Buffer[] = [];
  for await (const chunk of response.body) chunks.push(chunk as Buffer);
  return { status: response.statusCode, text: Buffer.concat(chunks).toString("utf8") };
}

describe("the interceptor's way out", () => {
  it("writes the head as given (names, case, order, values) over the caller's proxy and CA, on one kept-alive connection", async () => {
    const api = await front();
    const upstream = createUpstream({ HTTPS_PROXY: api.firstParty!.proxyUrl, NODE_EXTRA_CA_CERTS: api.firstParty!.caFile });
    closers.push(() => upstream.close());
    for (let index = 0; index < 3; index += 1) {
      const answer = await text(upstream.send(messages()));
      expect(answer.status).toBe(200);
      expect(answer.text).toContain("forwarded");
    }
    expect(api.messageRequests).toHaveLength(3);
    for (const request of api.messageRequests) {
      expect(request.rawHeaders).toEqual(rawHeaders);
      expect(request.rawBody).toBe(body.toString("utf8"));
    }
    // Three requests, one CONNECT through the caller's proxy: the connection was reused.
    expect(api.firstParty!.connects).toBe(1);
  });

  it("the explicit upstream (tests) takes the same way", async () => {
    const api = await front();
    const upstream = createUpstream({}, { proxy: api.firstParty!.proxyUrl, ca: api.firstParty!.caPem });
    closers.push(() => upstream.close());
    expect((await text(upstream.send(messages()))).status).toBe(200);
    expect(api.messageRequests[0]!.rawHeaders).toEqual(rawHeaders);
  });

  it("trusts only the caller's CAs: without NODE_EXTRA_CA_CERTS the proxy's certificate is refused", async () => {
    const api = await front();
    const upstream = createUpstream({ HTTPS_PROXY: api.firstParty!.proxyUrl });
    closers.push(() => upstream.close());
    await expect(upstream.send(messages()).response).rejects.toThrow(/certificate/i);
    expect(api.requests).toHaveLength(0);
  });

  it("reads NO_PROXY as undici's EnvHttpProxyAgent does: an exempt host goes direct, any other through the proxy", async () => {
    const proxy = await refusingProxy();
    for (const env of [
      { HTTPS_PROXY: proxy.url, NO_PROXY: "localhost" },
      { https_proxy: proxy.url, no_proxy: ".localhost,example.invalid" },
      { ALL_PROXY: proxy.url, NO_PROXY: "localhost:443" },
    ]) {
      const upstream = createUpstream(env);
      closers.push(() => upstream.close());
      // Exempt: a direct connection to localhost:443 (nothing listens there, or not our TLS): it fails without the proxy seeing it.
      await expect(upstream.send(messages("localhost")).response).rejects.toThrow(/:443\b|certificate|socket/i);
      expect(proxy.connects).toEqual([]);
      // Not exempt: the CONNECT goes to the proxy, which refuses it.
      await expect(upstream.send(messages()).response).rejects.toThrow(/403/);
      expect(proxy.connects).toEqual(["api.anthropic.com:443"]);
      proxy.connects.length = 0;
    }
    // NO_PROXY=* exempts every host: nothing reaches the proxy (only localhost is tried, so nothing leaves the machine).
    const all = createUpstream({ HTTPS_PROXY: proxy.url, NO_PROXY: "*" });
    closers.push(() => all.close());
    await expect(all.send(messages("localhost")).response).rejects.toThrow();
    expect(proxy.connects).toEqual([]);
  });

  it("a SOCKS proxy takes undici's own writer, which still reaches the proxy", async () => {
    const upstream = createUpstream({ ALL_PROXY: "socks5://127.0.0.1:1" });
    closers.push(() => upstream.close());
    await expect(upstream.send(messages()).response).rejects.toThrow(/127\.0\.0\.1:1\b/);
  });

  it("answers the CLI 502 naming the host when the way out fails", async () => {
    const { WireInterceptor } = await import("../../src/claude-code/wire/interceptor.js");
    const { ProxyAgent } = await import("undici");
    const { readFileSync } = await import("node:fs");
    const proxy = await refusingProxy();
    const interceptor = await WireInterceptor.start({ env: { HTTPS_PROXY: proxy.url } });
    closers.push(() => interceptor.close());
    interceptor.useVersion("2.1.330");
    const session = interceptor.newSession();
    const client = new ProxyAgent({ uri: session.env.HTTPS_PROXY!, requestTls: { ca: readFileSync(interceptor.caFile, "utf8") } });
    closers.push(() => client.close());
    // The OAuth profile passes without a call; the caller's proxy refuses the way out.
    const response = await client.request({ origin: "https://api.anthropic.com", path: "/api/oauth/profile", method: "GET" });
    expect(response.statusCode).toBe(502);
    expect(await response.body.text()).toMatch(/interceptor could not reach api\.anthropic\.com: .*403/);
    expect(proxy.connects).toEqual(["api.anthropic.com:443"]);
  });
});
