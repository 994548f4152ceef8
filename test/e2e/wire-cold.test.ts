/**
 * A cold call through the runtime's interceptor (issue 45, item 3): the interceptor's way out opens its
 * connection to the API while the new CLI boots, and the call's Messages request goes on that connection,
 * not on a handshake of its own after the CLI's request arrived. The CLI's OAuth profile request
 * (`Connection: close`) goes on a connection of its own and never takes it. A TCP relay stands as the
 * caller's proxy in front of the scripted API's first-party front, so the test sees each connection the
 * way out opens, in order, and which one stays open (kept alive) after the call.
 */
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { turn } from "../../src/testing/scripted-api.js";
import { cleanup, firstPartyApi, firstPartyRuntimeFor } from "../support.js";

afterEach(cleanup);

interface Relayed {
  url: string;
  /** Each connection opened through it, in order, and whether it is still open. */
  connections: Array<{ open: boolean }>;
  close(): Promise<void>;
}

async function relay(port: number): Promise<Relayed> {
  const connections: Relayed["connections"] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const entry = { open: true };
    connections.push(entry);
    const target = connect(port, "127.0.0.1");
    sockets.add(client).add(target);
    client.pipe(target).pipe(client);
    const end = () => {
      entry.open = false;
      client.destroy();
      target.destroy();
    };
    client.on("error", end).on("close", end);
    target.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe("a cold call through the interceptor", () => {
  it("sends its Messages request on the connection the way out opened while the CLI booted; the profile request's own connection closes", async () => {
    const api = await firstPartyApi([turn.text("cold"), turn.text("again")]);
    const front = await relay(Number(new URL(api.firstParty!.proxyUrl).port));
    // The relay is the caller's proxy: only the interceptor's way out uses it (the CLI's proxy is the interceptor).
    const runtime = firstPartyRuntimeFor(api, { reuse: false }, { HTTPS_PROXY: front.url });
    try {
      expect(runtime.interceptor).toBe("on");
      const result = await runtime.generateTextResult({ role: "default", prompt: "hello" });
      expect(result.text).toBe("cold");
      expect(result.network?.interceptor).toBe("on");
      expect(api.messageRequests).toHaveLength(1);
      // Two connections: the first opened ahead (before the CLI's first request), the second for the
      // profile request, which the host closed after its answer. The first carried the Messages request
      // and is kept alive for the next one.
      expect(front.connections).toHaveLength(2);
      expect(front.connections.map((connection) => connection.open)).toEqual([true, false]);

      // A second cold call within the idle time: a new CLI, and its Messages request still goes on the kept-alive connection.
      expect(await runtime.generateText({ role: "default", prompt: "again" })).toBe("again");
      expect(api.messageRequests).toHaveLength(2);
      expect(front.connections).toHaveLength(3);
      expect(front.connections.map((connection) => connection.open)).toEqual([true, false, false]);
    } finally {
      await runtime.close();
      await front.close();
    }
  });
});
