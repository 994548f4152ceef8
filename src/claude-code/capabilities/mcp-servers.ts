/**
 * `capabilities.mcpServers` (issue 43): MCP servers the CLI runs itself, in the Agent SDK's `McpServerConfig`
 * shapes (stdio, http, sse), passed beside the library's own `ktx` server under `--strict-mcp-config`.
 *
 * What is checked: `init` must list exactly the servers asked for (and `ktx` when the call has tools), each
 * `connected`, and no tool outside the call's own, the opted-in built-ins and `mcp__<server>__<tool>` of those
 * servers. On the wire a tool of such a server is accepted only by a name the call's init listed (the host
 * tells the interceptor when init arrives; a request waits for them, session.ts `whenMcpTools`), with whatever
 * description and input schema the server gave: those are the user's, no recording can hold them.
 * Their results are the server's output (the CLI's reminders after them still checked). What the servers
 * themselves send, and to whom, is the user's choice: the interceptor sees only the CLI's API traffic.
 */
import { z } from "zod";
import { KTX_MCP_SERVER_NAME } from "../../mcp/tools.js";

const stringRecord = z.record(z.string(), z.string());

/** A server the CLI starts as a child process and talks to over stdin/stdout. */
const stdioServer = z.object({ type: z.literal("stdio").optional(), command: z.string().min(1), args: z.array(z.string()).optional(), env: stringRecord.optional() }).strict();
/** A server the CLI reaches over HTTP (streamable) or server-sent events. */
const remoteServer = (type: "http" | "sse") => z.object({ type: z.literal(type), url: z.string().url(), headers: stringRecord.optional() }).strict();

/** The hosts the CLI's API traffic goes to: a server there would take its requests around the interceptor. */
const API_HOSTS = ["api.anthropic.com", "platform.claude.com", "claude.ai", "console.anthropic.com"];

/** A server name as the CLI's tool ids carry it (`mcp__<name>__<tool>`): no `__`, and never the library's own. */
const SERVER_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_)){0,62}$/;

export const mcpServersSchema = z
  .record(z.string(), z.union([stdioServer, remoteServer("http"), remoteServer("sse")]))
  .superRefine((servers, context) => {
    for (const name of Object.keys(servers)) {
      if (name === KTX_MCP_SERVER_NAME) context.addIssue({ code: "custom", path: [name], message: `"${KTX_MCP_SERVER_NAME}" is the library's own server (the call's tools); choose another name` });
      else if (!SERVER_NAME.test(name)) context.addIssue({ code: "custom", path: [name], message: `a server name is letters, digits, "-" and single "_" (at most 63; it becomes part of mcp__${name}__<tool>)` });
      const server = servers[name]!;
      if ("url" in server && API_HOSTS.includes(hostOf(server.url))) context.addIssue({ code: "custom", path: [name, "url"], message: `${hostOf(server.url)} is a host of the Anthropic API, which the interceptor checks; an MCP server's traffic goes around it` });
    }
  });

export type McpServers = z.infer<typeof mcpServersSchema>;

/** The servers' entries of `--mcp-config`, each with its `type` written out. */
export function mcpConfigEntries(servers: McpServers | undefined): Record<string, Record<string, unknown>> {
  return Object.fromEntries(Object.entries(servers ?? {}).map(([name, server]) => [name, { type: server.type ?? "stdio", ...server }]));
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname.replace(/^\[|\]$/g, "").toLowerCase();
  } catch {
    return "";
  }
}

/** The hosts of the http and sse servers in a launch's `--mcp-config` (the library wrote it: isolation.ts). */
export function remoteServerHosts(args: readonly string[]): string[] {
  const config = args.find((arg) => arg.startsWith("--mcp-config="));
  if (!config) return [];
  const servers = (JSON.parse(config.slice("--mcp-config=".length)) as { mcpServers: Record<string, { type?: string; url?: string }> }).mcpServers;
  return [...new Set(Object.values(servers).filter((server) => (server.type === "http" || server.type === "sse") && server.url).map((server) => hostOf(server.url!)).filter(Boolean))];
}

/** The server names, sorted (the pool key and the launch are built from them). */
export function mcpServerNames(servers: McpServers | undefined): string[] {
  return Object.keys(servers ?? {}).sort();
}

export { isServerTool } from "./mcp-tool-names.js";

/** `--allowedTools` rules: every tool of an opted-in server (a server-wide rule). */
export function mcpAllowRules(names: readonly string[]): string[] {
  return names.map((name) => `mcp__${name}`);
}
