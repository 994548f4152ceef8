/**
 * `capabilities.mcpServers` on the real CLI behind the interceptor (first-party path, scripted API): a stdio MCP
 * server the CLI runs (test/fixtures/mcp-notes-server.mjs) answers a tool call in a host call and in KTX's
 * runAgentLoop beside the library's own tools; init lists exactly the servers asked for, connected; the wire
 * check lets their tools through by name; a server that fails to connect ends in a typed error, not a hang.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ClaudeCodeHost, InvalidInputError, IsolationError } from "../../src/index.js";
import { RateLimitGovernor } from "../../src/limits/governor.js";
import type { RecordedRequest, ScriptedTurn } from "../../src/testing/scripted-api.js";
import { turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, cleanup, cliOption, firstPartyApi, firstPartyEnv, firstPartyRuntimeFor, tempDir, toolResultsIn } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const SERVER = resolve(import.meta.dirname, "../fixtures/mcp-notes-server.mjs");

/** The model calls `tool` once with `{ key: "grain" }`, then answers with what came back. */
const callOnce =
  (tool: string) =>
  (request: RecordedRequest): ScriptedTurn => {
    const results = toolResultsIn(request.body);
    if (results.length === 0) return { toolCalls: [{ name: tool, input: { key: "grain" }, id: "toolu_notes1" }] };
    return turn.text(`answer: ${results.map((result) => (result.is_error ? `error ${result.text}` : result.text)).join(" | ")}`);
  };

function hostFor(api: Awaited<ReturnType<typeof firstPartyApi>>, projectDir: string): ClaudeCodeHost {
  return new ClaudeCodeHost({ projectDir, env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, wire: true, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
}

describe("capabilities: mcpServers", () => {
  it("a stdio server the CLI runs answers a tool call through the interceptor; init lists it connected with its tool", { timeout: 120_000 }, async () => {
    const api = await firstPartyApi(callOnce("mcp__notes__lookup"));
    const projectDir = tempDir("caps-mcp");
    const log = join(tempDir("caps-mcp-log"), "calls.log");
    const host = hostFor(api, projectDir);
    try {
      expect(host.interceptor).toBe("on");
      const output = await host.run(
        { model: "claude-sonnet-4-6", system: "", prompt: "what is the grain?", maxTurns: 3, tools: [], capabilities: { mcpServers: { notes: { command: process.execPath, args: [SERVER], env: { NOTES_SERVER_LOG: log } } } } },
        host.limitsFor(undefined, host.logger),
      );
      expect(output.init.mcp_servers.map((server) => [server.name, server.status])).toEqual([["notes", "connected"]]);
      expect(output.init.tools).toEqual(["mcp__notes__lookup"]);
      expect(output.result.result).toBe("answer: note grain: one row per order line");
      // The server itself answered (its log), and both requests passed the wire check (a refused one never reaches the API).
      expect(readFileSync(log, "utf8")).toBe("grain\n");
      expect(api.messageRequests).toHaveLength(2);
      const offered = api.messageRequests[0]!.body.tools.map((tool: { name: string }) => tool.name);
      expect(offered).toEqual(["mcp__notes__lookup"]);
      expect(toolResultsIn(api.messageRequests[1]!.body)[0]!.text).toBe("note grain: one row per order line");
    } finally {
      await host.close();
    }
  });

  it("runAgentLoop with the library's own tools and a CLI-run server: both answer, behind the interceptor", { timeout: 120_000 }, async () => {
    // First the server's tool, then the loop's own tool, then the answer.
    const api = await firstPartyApi((request) => {
      const results = toolResultsIn(request.body);
      if (results.length === 0) return { toolCalls: [{ name: "mcp__notes__lookup", input: { key: "units" }, id: "toolu_n" }] };
      if (results.length === 1) return { toolCalls: [{ name: "mcp__ktx__double", input: { n: 21 }, id: "toolu_d" }] };
      return turn.text(`done: ${results.map((result) => result.text).join(" | ")}`);
    });
    const runtime = firstPartyRuntimeFor(api, { projectDir: tempDir("caps-mcp"), capabilities: { mcpServers: { notes: { type: "stdio", command: process.execPath, args: [SERVER] } } } });
    try {
      expect(runtime.interceptor).toBe("on");
      const double = { description: "Doubles a number.", inputSchema: z.object({ n: z.number() }), execute: async ({ n }: { n: number }) => String(n * 2) };
      const result = await runtime.runAgentLoop({ modelRole: "default", systemPrompt: "", userPrompt: "go", toolSet: { double } as never, stepBudget: 5, telemetryTags: {} });
      expect(result.text).toBe("done: note units: metric | 42");
      expect(api.messageRequests).toHaveLength(3);
      expect(api.messageRequests[0]!.body.tools.map((tool: { name: string }) => tool.name).sort()).toEqual(["mcp__ktx__double", "mcp__notes__lookup"]);
    } finally {
      await runtime.close();
    }
  });

  it("an http server on loopback (streamable HTTP) answers a tool call behind the interceptor", { timeout: 120_000 }, async () => {
    const { McpServer } = await import("@modelcontextprotocol/sdk/server/mcp.js");
    const { StreamableHTTPServerTransport } = await import("@modelcontextprotocol/sdk/server/streamableHttp.js");
    const calls: string[] = [];
    // Stateless: a server and transport per request, as the SDK's example does.
    const server = createServer(async (request, response) => {
      const mcp = new McpServer({ name: "remote", version: "1.0.0" });
      mcp.registerTool("lookup", { description: "Look up a project note by key.", inputSchema: { key: z.string() } }, async ({ key }) => (calls.push(key), { content: [{ type: "text" as const, text: `remote note ${key}` }] }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      response.on("close", () => void transport.close());
      await mcp.connect(transport);
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      request.on("end", () => void transport.handleRequest(request, response, body ? JSON.parse(body) : undefined));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
    const api = await firstPartyApi(callOnce("mcp__remote__lookup"));
    const host = hostFor(api, tempDir("caps-mcp"));
    try {
      const output = await host.run(
        { model: "claude-sonnet-4-6", system: "", prompt: "what is the grain?", maxTurns: 3, tools: [], capabilities: { mcpServers: { remote: { type: "http", url } } } },
        host.limitsFor(undefined, host.logger),
      );
      expect(output.init.mcp_servers.map((entry) => [entry.name, entry.status])).toEqual([["remote", "connected"]]);
      expect(output.result.result).toBe("answer: remote note grain");
      expect(calls).toEqual(["grain"]);
    } finally {
      await host.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("a server that fails to connect ends the call with IsolationError naming it, before any request", { timeout: 120_000 }, async () => {
    const api = await firstPartyApi(() => turn.text("ok"));
    const host = hostFor(api, tempDir("caps-mcp"));
    try {
      const started = Date.now();
      const error = await host
        .run({ model: "claude-sonnet-4-6", system: "", prompt: "hello", maxTurns: 1, tools: [], capabilities: { mcpServers: { broken: { command: process.execPath, args: ["-e", "process.exit(3)"] } } } }, host.limitsFor(undefined, host.logger))
        .then(() => undefined, (caught: unknown) => caught);
      expect(error).toBeInstanceOf(IsolationError);
      expect((error as Error).message).toMatch(/MCP server "broken" \(capabilities\.mcpServers\) reported status "failed"/);
      expect((error as Error).message).toMatch(/a stdio server's command must start and answer MCP initialize/);
      expect(Date.now() - started).toBeLessThan(60_000);
      expect(api.messageRequests).toHaveLength(0);
    } finally {
      await host.close();
    }
  });

  it('a session with permissions "ask": the server\'s tool goes to canUseTool; allowed it runs, denied the model sees the denial (default turns as with tools)', { timeout: 180_000 }, async () => {
    const api = await firstPartyApi((request) => {
      const results = toolResultsIn(request.body);
      const prompts = (request.body.messages as Array<{ role: string }>).filter((message) => message.role === "assistant").length;
      // Each turn: one lookup, then an answer with its result.
      const last = results.at(-1);
      if (results.length === 0 || (prompts === 2 && results.length === 1)) return { toolCalls: [{ name: "mcp__notes__lookup", input: { key: "grain" }, id: `toolu_ask${prompts}` }] };
      return turn.text(last?.is_error ? `denied: ${last.text}` : `answer: ${last?.text}`);
    });
    const log = join(tempDir("caps-mcp-log"), "calls.log");
    const host = hostFor(api, tempDir("caps-mcp"));
    const asked: string[] = [];
    let allow = true;
    try {
      const session = host.createSession({
        model: "sonnet",
        capabilities: { mcpServers: { notes: { command: process.execPath, args: [SERVER], env: { NOTES_SERVER_LOG: log } } } },
        permissions: { mode: "ask", canUseTool: (request) => (asked.push(request.toolName), allow ? { behavior: "allow" } : { behavior: "deny", message: "Not now." }) },
      });
      const first = await session.send("what is the grain?").result;
      expect(first.text).toBe("answer: note grain: one row per order line");
      allow = false;
      const second = await session.send("and again?").result;
      expect(second.text).toBe("denied: Not now.");
      expect(asked).toEqual(["mcp__notes__lookup", "mcp__notes__lookup"]);
      // The server ran only the allowed call.
      expect(readFileSync(log, "utf8")).toBe("grain\n");
      await session.close();
    } finally {
      await host.close();
    }
  });

  it("refuses the library's own server name and a malformed server before any process starts", () => {
    const api = { baseUrl: "http://127.0.0.1:9" };
    const host = new ClaudeCodeHost({ projectDir: tempDir("caps-mcp"), env: { PATH: process.env.PATH ?? "" }, apiEndpoint: { baseUrl: api.baseUrl, apiKey: "sk-test" }, ...cliOption(), warm: false });
    try {
      expect(() => host.createSession({ model: "sonnet", capabilities: { mcpServers: { ktx: { command: "node" } } } })).toThrow(/"ktx" is the library's own server/);
      expect(() => host.createSession({ model: "sonnet", capabilities: { mcpServers: { "a__b": { command: "node" } } } })).toThrow(InvalidInputError);
      expect(() => host.createSession({ model: "sonnet", capabilities: { mcpServers: { web: { type: "http", url: "not a url" } } } })).toThrow(/capabilities\.mcpServers\.web/);
      expect(() => host.createSession({ model: "sonnet", capabilities: { mcpServers: { web: { type: "sse", url: "https://mcp.example/sse", command: "x" } as never } } })).toThrow(InvalidInputError);
    } finally {
      void host.close();
    }
  });
});
