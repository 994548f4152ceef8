import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { isJSONRPCRequest, type CallToolResult, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { InvalidInputError, ProtocolError } from "../../src/errors/index.js";
import { TOOL_OUTPUT_LIMIT, createKtxMcpBridge, notificationAck, type KtxMcpBridge, type KtxMcpBridgeOptions, type KtxToolCallEvent } from "../../src/mcp/bridge.js";
import { defineKtxTool, prepareToolSet, type KtxRuntimeToolDescriptor } from "../../src/mcp/tools.js";

/** Stands in for the CLI: forwards each client message into handleMcpMessage and delivers request replies back. */
class BridgeClientTransport implements Transport {
  onmessage?: Transport["onmessage"];
  onclose?: Transport["onclose"];
  onerror?: Transport["onerror"];
  readonly notificationReplies: unknown[] = [];

  constructor(private readonly bridge: KtxMcpBridge) {}

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    // Not awaited: the CLI keeps several control requests in flight.
    void this.bridge.handleMcpMessage("ktx", message, new AbortController().signal).then(
      (reply) => {
        if (!isJSONRPCRequest(message)) this.notificationReplies.push(reply);
        else if (reply !== undefined) this.onmessage?.(reply);
      },
      (error: unknown) => this.onerror?.(error as Error),
    );
  }

  async close(): Promise<void> {
    this.onclose?.();
  }
}

function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function textOf(result: unknown): string {
  const content = (result as CallToolResult).content;
  expect(content).toHaveLength(1);
  const [block] = content;
  if (block?.type !== "text") throw new Error(`expected a text block, got ${JSON.stringify(block)}`);
  return block.text;
}

const echo = defineKtxTool({
  name: "echo",
  description: "Echo the text back.",
  inputSchema: z.object({ text: z.string(), times: z.number().int().min(1).default(1) }),
  execute: ({ text, times }) => text.repeat(times),
});
const table = defineKtxTool({
  name: "table",
  description: "Structured output.",
  inputSchema: z.object({}),
  execute: () => ({ rows: [{ id: 1 }] }),
});
const explode = defineKtxTool({
  name: "explode",
  description: "Always fails.",
  inputSchema: z.object({}),
  execute: () => {
    throw new Error("database is unreachable");
  },
});

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

interface Harness {
  bridge: KtxMcpBridge;
  events: KtxToolCallEvent[];
}

function makeBridge(tools: KtxRuntimeToolDescriptor[], options: KtxMcpBridgeOptions = {}): Harness {
  const events: KtxToolCallEvent[] = [];
  const bridge = createKtxMcpBridge(prepareToolSet(tools), { onToolCall: (e) => events.push(e), ...options });
  cleanups.push(() => bridge.close());
  return { bridge, events };
}

async function connectClient(harness: Harness): Promise<{ client: Client; transport: BridgeClientTransport }> {
  const client = new Client({ name: "test-cli", version: "0.0.0" });
  const transport = new BridgeClientTransport(harness.bridge);
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, transport };
}

const call = (id: number | string, name: string, args: unknown, toolUseId?: string): JSONRPCMessage =>
  ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: args, _meta: { ...(toolUseId ? { "claudecode/toolUseId": toolUseId } : {}), progressToken: 2 } },
  }) as JSONRPCMessage;

const initialize = (id: number): JSONRPCMessage => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "claude-code", version: "2.1.142" } },
});

const signal = (): AbortSignal => new AbortController().signal;

describe("ktx MCP bridge via the MCP SDK Client", () => {
  it("initializes and lists the tools with their JSON Schemas", async () => {
    const harness = makeBridge([echo, table]);
    const { client, transport } = await connectClient(harness);
    expect(client.getServerVersion()?.name).toBe("ktx");
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    // notifications/initialized was acked like the CLI expects
    expect(transport.notificationReplies).toEqual([{ jsonrpc: "2.0", result: {}, id: 0 }]);

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["echo", "table"]);
    expect(tools[0]).toMatchObject({
      description: "Echo the text back.",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    });
  });

  it("calls a tool: string output as markdown, structured output as fenced JSON, reported ok", async () => {
    const harness = makeBridge([echo, table]);
    const { client } = await connectClient(harness);

    const result = await client.callTool({ name: "echo", arguments: { text: "ab", times: 2 }, _meta: { "claudecode/toolUseId": "toolu_1" } });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe("abab");
    expect(result).not.toHaveProperty("structuredContent");

    expect(textOf(await client.callTool({ name: "table", arguments: {} }))).toBe('```json\n{\n  "rows": [\n    {\n      "id": 1\n    }\n  ]\n}\n```');

    expect(harness.events).toHaveLength(2);
    expect(harness.events[0]).toMatchObject({ name: "echo", toolUseId: "toolu_1", ok: true });
    expect(harness.events[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(harness.events[1]).toMatchObject({ name: "table", ok: true, structured: { rows: [{ id: 1 }] } });
  });

  it("answers invalid arguments with a readable tool error", async () => {
    const harness = makeBridge([echo]);
    const { client } = await connectClient(harness);
    const result = await client.callTool({ name: "echo", arguments: { text: 5, times: 0 } });
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toMatch(/^Invalid arguments for tool echo: /);
    expect(text).toContain("expected string, received number");
    expect(text).toContain("→ at text");
    expect(text).toContain("→ at times");
    expect(harness.events).toEqual([expect.objectContaining({ name: "echo", ok: false, error: text })]);
  });

  it("answers a throwing handler with its message", async () => {
    const harness = makeBridge([explode]);
    const { client } = await connectClient(harness);
    const result = await client.callTool({ name: "explode", arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("database is unreachable");
    expect(harness.events).toEqual([expect.objectContaining({ name: "explode", ok: false, error: "database is unreachable" })]);
  });

  it("times a slow handler out and aborts its signal", async () => {
    let handlerSignal: AbortSignal | undefined;
    const slow = defineKtxTool({
      name: "slow",
      description: "Never finishes.",
      inputSchema: z.object({}),
      execute: (_input, { signal }) => {
        handlerSignal = signal;
        return new Promise(() => {});
      },
    });
    const harness = makeBridge([slow], { toolTimeoutMs: 50 });
    const { client } = await connectClient(harness);
    const result = await client.callTool({ name: "slow", arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("Tool slow timed out after 50 ms");
    expect(handlerSignal?.aborted).toBe(true);
    expect(harness.events).toEqual([expect.objectContaining({ name: "slow", ok: false, timedOut: true })]);
  });

  it("answers an unknown tool with the list of available tools", async () => {
    const harness = makeBridge([echo, table]);
    const { client } = await connectClient(harness);
    const result = await client.callTool({ name: "nope", arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('Unknown tool "nope". Available tools: echo, table.');
    expect(harness.events).toEqual([expect.objectContaining({ name: "nope", ok: false })]);
  });

  it("runs several calls concurrently and keeps their results apart", async () => {
    const gates = new Map<string, ReturnType<typeof deferred<void>>>();
    let running = 0;
    let maxRunning = 0;
    const gated = defineKtxTool({
      name: "gated",
      description: "Waits for its gate.",
      inputSchema: z.object({ key: z.string() }),
      execute: async ({ key }) => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        await gates.get(key)!.promise;
        running--;
        return `result ${key}`;
      },
    });
    for (const key of ["a", "b", "c"]) gates.set(key, deferred());
    const harness = makeBridge([gated]);
    const { client } = await connectClient(harness);

    const calls = ["a", "b", "c"].map((key) => client.callTool({ name: "gated", arguments: { key } }));
    await vi_waitFor(() => running === 3);
    for (const key of ["c", "a", "b"]) gates.get(key)!.resolve();
    const results = await Promise.all(calls);
    expect(results.map(textOf)).toEqual(["result a", "result b", "result c"]);
    expect(maxRunning).toBe(3);
  });

  it("aborts the handler when the client cancels the request (notifications/cancelled)", async () => {
    let handlerSignal: AbortSignal | undefined;
    const started = deferred();
    const hang = defineKtxTool({
      name: "hang",
      description: "Waits for cancellation.",
      inputSchema: z.object({}),
      execute: (_input, { signal }) => {
        handlerSignal = signal;
        started.resolve();
        return new Promise(() => {});
      },
    });
    const harness = makeBridge([hang]);
    const { client } = await connectClient(harness);
    const controller = new AbortController();
    const pending = client.callTool({ name: "hang", arguments: {} }, undefined, { signal: controller.signal });
    await started.promise;
    controller.abort(new Error("user pressed escape"));
    await expect(pending).rejects.toThrow();
    await vi_waitFor(() => handlerSignal?.aborted === true);
    expect(harness.events).toEqual([expect.objectContaining({ name: "hang", ok: false, cancelled: true })]);
  });
});

describe("ktx MCP bridge, raw control-protocol messages", () => {
  it("answers a duplicated initialize (same id) twice, sequentially and concurrently", async () => {
    const { bridge } = makeBridge([echo]);
    const first = await bridge.handleMcpMessage("ktx", initialize(0), signal());
    const second = await bridge.handleMcpMessage("ktx", initialize(0), signal());
    for (const reply of [first, second]) {
      expect(reply).toMatchObject({ jsonrpc: "2.0", id: 0, result: { protocolVersion: "2025-06-18", serverInfo: { name: "ktx" }, capabilities: { tools: {} } } });
    }
    const both = await Promise.all([bridge.handleMcpMessage("ktx", initialize(0), signal()), bridge.handleMcpMessage("ktx", initialize(0), signal())]);
    expect(both).toEqual([first, first]);

    const initialized: JSONRPCMessage = { jsonrpc: "2.0", method: "notifications/initialized" };
    expect(await bridge.handleMcpMessage("ktx", initialized, signal())).toEqual({ jsonrpc: "2.0", result: {}, id: 0 });
    expect(await bridge.handleMcpMessage("ktx", initialized, signal())).toEqual(notificationAck());

    const list = await bridge.handleMcpMessage("ktx", { jsonrpc: "2.0", id: 1, method: "tools/list" }, signal());
    expect(list).toMatchObject({ id: 1, result: { tools: [{ name: "echo" }] } });
  });

  it("keeps concurrent requests with the same id apart", async () => {
    const gates = { slow: deferred(), fast: deferred() };
    const gated = defineKtxTool({
      name: "gated",
      description: "d",
      inputSchema: z.object({ key: z.enum(["slow", "fast"]) }),
      execute: async ({ key }) => {
        await gates[key].promise;
        return key;
      },
    });
    const { bridge } = makeBridge([gated]);
    const slow = bridge.handleMcpMessage("ktx", call(7, "gated", { key: "slow" }), signal());
    const fast = bridge.handleMcpMessage("ktx", call(7, "gated", { key: "fast" }), signal());
    gates.fast.resolve();
    expect(await fast).toMatchObject({ id: 7, result: { content: [{ type: "text", text: "fast" }] } });
    gates.slow.resolve();
    expect(await slow).toMatchObject({ id: 7, result: { content: [{ type: "text", text: "slow" }] } });
  });

  it("cancels through the per-request signal: handler aborted, no reply", async () => {
    let handlerSignal: AbortSignal | undefined;
    const started = deferred();
    let finish!: (value: string) => void;
    const hang = defineKtxTool({
      name: "hang",
      description: "d",
      inputSchema: z.object({}),
      execute: (_input, context) => {
        handlerSignal = context.signal;
        started.resolve();
        return new Promise<string>((resolve) => (finish = resolve));
      },
    });
    const harness = makeBridge([hang]);
    const controller = new AbortController();
    const reply = harness.bridge.handleMcpMessage("ktx", call("req-1", "hang", {}, "toolu_9"), controller.signal);
    await started.promise;
    controller.abort();
    expect(await reply).toBeUndefined();
    expect(handlerSignal?.aborted).toBe(true);
    finish("too late"); // a handler that ignores its signal cannot produce a reply
    await new Promise((r) => setTimeout(r, 10));
    expect(harness.events).toEqual([expect.objectContaining({ name: "hang", toolUseId: "toolu_9", ok: false, cancelled: true })]);

    // An already-aborted signal never starts the handler.
    const before = harness.events.length;
    const aborted = new AbortController();
    aborted.abort();
    expect(await harness.bridge.handleMcpMessage("ktx", call(3, "echo", { text: "x" }), aborted.signal)).toBeUndefined();
    expect(harness.events).toHaveLength(before);
  });

  it("rejects an unknown server name and non-JSON-RPC messages", async () => {
    const { bridge } = makeBridge([echo]);
    await expect(bridge.handleMcpMessage("other", initialize(0), signal())).rejects.toThrow(ProtocolError);
    await expect(bridge.handleMcpMessage("other", initialize(0), signal())).rejects.toThrow(/server "other"/);
    await expect(bridge.handleMcpMessage("ktx", "hello", signal())).rejects.toThrow(/not JSON-RPC 2\.0/);
    expect(await bridge.handleMcpMessage("ktx", { id: 4, method: 12 }, signal())).toMatchObject({ jsonrpc: "2.0", id: 4, error: { code: -32600 } });
  });

  it("answers an unsupported method with a JSON-RPC error carrying the original id", async () => {
    const { bridge } = makeBridge([echo]);
    expect(await bridge.handleMcpMessage("ktx", { jsonrpc: "2.0", id: "p1", method: "prompts/list" }, signal())).toMatchObject({
      jsonrpc: "2.0",
      id: "p1",
      error: { code: -32601 },
    });
  });

  it("turns unserialisable output into a tool error", async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const bad = defineKtxTool({ name: "bad", description: "d", inputSchema: z.object({ kind: z.enum(["bigint", "cycle"]) }), execute: ({ kind }) => (kind === "bigint" ? { n: 1n } : cyclic) });
    const harness = makeBridge([bad]);
    for (const kind of ["bigint", "cycle"]) {
      const reply = (await harness.bridge.handleMcpMessage("ktx", call(1, "bad", { kind }), signal())) as unknown as { result: CallToolResult };
      expect(reply.result.isError).toBe(true);
      expect(textOf(reply.result)).toMatch(/^Tool bad returned output that cannot be sent to the model: Tool output cannot be serialised to JSON/);
    }
    expect(harness.events.map((e) => e.ok)).toEqual([false, false]);
  });

  it("cuts 50 MiB of output to the limit the CLI keeps inline, with a note, without trouble", async () => {
    const big = "x".repeat(50 * 1024 * 1024);
    const huge = defineKtxTool({ name: "huge", description: "d", inputSchema: z.object({}), execute: () => big });
    const { bridge, events } = makeBridge([huge]);
    const started = performance.now();
    const reply = (await bridge.handleMcpMessage("ktx", call(1, "huge", {}), signal())) as unknown as { result: CallToolResult };
    expect(textOf(reply.result).startsWith("x".repeat(TOOL_OUTPUT_LIMIT))).toBe(true);
    expect(textOf(reply.result)).toMatch(/\[ktx: tool output truncated: showing the first 40,000 of 52,428,800 characters/);
    expect(events[0]?.truncated).toEqual({ originalChars: big.length, keptChars: TOOL_OUTPUT_LIMIT });
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("keeps working when onToolCall throws", async () => {
    const warnings: string[] = [];
    const bridge = createKtxMcpBridge(prepareToolSet([echo]), {
      onToolCall: () => {
        throw new Error("listener bug");
      },
      logger: { warn: (m) => warnings.push(m) },
    });
    cleanups.push(() => bridge.close());
    expect(await bridge.handleMcpMessage("ktx", call(1, "echo", { text: "ok" }), signal())).toMatchObject({ result: { content: [{ text: "ok" }] } });
    expect(warnings).toEqual([expect.stringContaining("listener bug")]);
  });

  it("close() aborts in-flight handlers, settles their requests with no reply, and refuses new messages", async () => {
    let handlerSignal: AbortSignal | undefined;
    const started = deferred();
    const hang = defineKtxTool({
      name: "hang",
      description: "d",
      inputSchema: z.object({}),
      execute: (_input, context) => {
        handlerSignal = context.signal;
        started.resolve();
        return new Promise(() => {});
      },
    });
    const { bridge } = makeBridge([hang]);
    const reply = bridge.handleMcpMessage("ktx", call(1, "hang", {}), signal());
    await started.promise;
    await bridge.close();
    expect(await reply).toBeUndefined();
    expect(handlerSignal?.aborted).toBe(true);
    await expect(bridge.handleMcpMessage("ktx", call(2, "hang", {}), signal())).rejects.toThrow(/closed/);
  });

  it("validates toolTimeoutMs", () => {
    expect(() => createKtxMcpBridge([], { toolTimeoutMs: 0 })).toThrow(InvalidInputError);
    expect(() => createKtxMcpBridge([], { toolTimeoutMs: Number.NaN })).toThrow(InvalidInputError);
  });
});

describe("ktx MCP bridge, tools/call answered without the SDK's Server", () => {
  /** The same call routed to the SDK's Server: an extra `_meta` key (which the SDK accepts) keeps it off the direct path. */
  const viaSdk = (message: JSONRPCMessage): JSONRPCMessage => {
    const request = structuredClone(message) as { params: { _meta?: Record<string, unknown> } };
    request.params._meta = { ...request.params._meta, "x-route": "sdk" };
    return request as unknown as JSONRPCMessage;
  };
  const withoutDurations = (events: KtxToolCallEvent[]) => events.map(({ durationMs: _, ...event }) => event);

  it("gives the reply and the onToolCall event the SDK's Server gives, byte for byte", async () => {
    const calls: JSONRPCMessage[] = [
      call(1, "echo", { text: "ab", times: 2 }, "toolu_1"),
      call("s-2", "echo", { text: "x" }),
      call(3, "table", {}, "toolu_3"),
      call(4, "explode", {}, "toolu_4"),
      call(5, "echo", { text: 5 }, "toolu_5"),
      call(6, "nope", {}, "toolu_6"),
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "table" } },
      { jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "echo", arguments: { text: "t" }, _meta: { "claudecode/toolUseId": "toolu_8" } } },
    ];
    const direct = makeBridge([echo, table, explode]);
    const sdk = makeBridge([echo, table, explode]);
    for (const message of calls) {
      const mine = await direct.bridge.handleMcpMessage("ktx", message, signal());
      const theirs = await sdk.bridge.handleMcpMessage("ktx", viaSdk(message), signal());
      expect(JSON.stringify(mine)).toBe(JSON.stringify(theirs));
    }
    expect(withoutDurations(direct.events)).toEqual(withoutDurations(sdk.events));
    expect(direct.events.map((event) => event.ok)).toEqual([true, true, true, false, false, false, true, true]);
  });

  it("leaves a malformed or unusual tools/call to the SDK, which answers with its errors", async () => {
    const { bridge, events } = makeBridge([echo]);
    // The SDK's own verdicts: its request parse throws (an internal error), or the message is no JSON-RPC request.
    const invalidParams = { jsonrpc: "2.0", error: { code: expect.any(Number), message: expect.stringMatching(/invalid/i) } };
    expect(await bridge.handleMcpMessage("ktx", { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: 12 } }, signal())).toMatchObject({ ...invalidParams, id: 1 });
    expect(await bridge.handleMcpMessage("ktx", { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: ["x"] } }, signal())).toMatchObject({ ...invalidParams, id: 2 });
    expect(await bridge.handleMcpMessage("ktx", { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: { text: "x" }, _meta: { progressToken: 1.5 } } }, signal())).toMatchObject({ ...invalidParams, id: 3 });
    // The SDK's JSON-RPC request schema is strict: an extra envelope key makes it no request.
    expect(await bridge.handleMcpMessage("ktx", { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "echo", arguments: { text: "x" } }, extra: true } as JSONRPCMessage, signal())).toMatchObject({
      jsonrpc: "2.0",
      id: 4,
      error: { code: -32600 },
    });
    expect(events).toEqual([]);
  });

  it("cancels a direct call on notifications/cancelled and on close(), with the SDK path's reasons", async () => {
    const signals: AbortSignal[] = [];
    const hang = defineKtxTool({
      name: "hang",
      description: "d",
      inputSchema: z.object({}),
      execute: (_input, context) => {
        signals.push(context.signal);
        return new Promise(() => {});
      },
    });
    for (const route of ["direct", "sdk"] as const) {
      signals.length = 0;
      const { bridge, events } = makeBridge([hang]);
      const message = (id: number) => (route === "direct" ? call(id, "hang", {}, `toolu_${id}`) : viaSdk(call(id, "hang", {}, `toolu_${id}`)));
      const cancelled = bridge.handleMcpMessage("ktx", message(5), signal());
      const closed = bridge.handleMcpMessage("ktx", message(6), signal());
      await vi_waitFor(() => signals.length === 2);
      expect(await bridge.handleMcpMessage("ktx", { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 5 } }, signal())).toEqual(notificationAck());
      expect(await cancelled).toBeUndefined();
      expect(signals[0]!.reason).toBe("Cancelled by the Claude Code CLI");
      expect(signals[1]!.aborted).toBe(false);
      await bridge.close();
      expect(await closed).toBeUndefined();
      expect(signals[1]!.aborted).toBe(true);
      expect((signals[1]!.reason as Error).name).toBe("AbortError");
      await vi_waitFor(() => events.length === 2);
      expect(events.map((event) => [event.toolUseId, event.cancelled])).toEqual([
        ["toolu_5", true],
        ["toolu_6", true],
      ]);
    }
  });

  it("abortRunning aborts the running handlers' signals and still answers what they return", async () => {
    let handlerSignal: AbortSignal | undefined;
    const started = deferred();
    const polite = defineKtxTool({
      name: "polite",
      description: "d",
      inputSchema: z.object({}),
      execute: async (_input, context) => {
        handlerSignal = context.signal;
        started.resolve();
        await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
        return "stopped early";
      },
    });
    const { bridge } = makeBridge([polite]);
    const reply = bridge.handleMcpMessage("ktx", call(1, "polite", {}), signal());
    await started.promise;
    bridge.abortRunning(() => new Error("the call ended"));
    expect(handlerSignal?.reason).toEqual(new Error("the call ended"));
    expect(await reply).toMatchObject({ id: 1, result: { content: [{ type: "text", text: "stopped early" }] } });
    // Nothing runs now: a second abort touches nothing, and makes no reason.
    bridge.abortRunning(() => expect.unreachable("no reason is made when nothing runs"));
    expect(handlerSignal?.reason).toEqual(new Error("the call ended"));
  });
});

async function vi_waitFor(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}
