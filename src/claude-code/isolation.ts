/**
 * The isolation surface of every run: the CLI arguments that build it, and the check of the CLI's
 * `system/init` message against it. docs/isolation.md explains each flag and check.
 */
import { realpathSync } from "node:fs";
import type { CliVersionFacts } from "../binary/versions.js";
import type { SystemInitMessage } from "../protocol/messages.js";
import { isScrubbedEnvName } from "../transport/env.js";
import { KTX_MCP_SERVER_NAME } from "../mcp/tools.js";

export const STRUCTURED_OUTPUT_TOOL = "StructuredOutput";

export interface SurfaceSpec {
  facts: CliVersionFacts;
  model: string;
  maxTurns: number;
  /** Exact `mcp__ktx__<name>` ids of this call; empty for a call without tools. */
  toolIds: readonly string[];
  structuredOutput: boolean;
  /** Stream the model's output as `stream_event` lines (progress text deltas). */
  includePartialMessages?: boolean;
}

/** Value flags are written `--flag=value`: an empty value or one starting with `-` stays one argument. */
export function buildCliArgs(spec: SurfaceSpec): string[] {
  const { facts, toolIds } = spec;
  const args = [
    "-p",
    "--output-format=stream-json",
    "--input-format=stream-json",
    "--verbose",
    "--setting-sources=",
    "--tools=",
    "--strict-mcp-config",
    "--permission-mode=dontAsk",
    "--permission-prompt-tool=stdio",
    "--no-session-persistence",
    `--disallowedTools=${facts.builtinTools.join(",")}`,
    `--max-turns=${spec.maxTurns}`,
    `--model=${spec.model}`,
  ];
  if (facts.hasDisableSlashCommands) args.push("--disable-slash-commands");
  if (spec.includePartialMessages) args.push("--include-partial-messages");
  if (facts.builtinPlugins.length > 0) {
    const enabledPlugins = Object.fromEntries(facts.builtinPlugins.map((name) => [`${name}@builtin`, false]));
    args.push(`--settings=${JSON.stringify({ enabledPlugins })}`);
  }
  if (toolIds.length > 0) {
    args.push(`--mcp-config=${JSON.stringify({ mcpServers: { [KTX_MCP_SERVER_NAME]: { type: "sdk", name: KTX_MCP_SERVER_NAME } } })}`);
    args.push(`--allowedTools=${toolIds.join(",")}`);
  }
  return args;
}

export interface ExpectedSurface {
  toolIds: readonly string[];
  structuredOutput: boolean;
  /** True only when the caller gave an explicit `apiEndpoint` with an API key. */
  apiKeyAllowed: boolean;
  /**
   * The credential of an explicit `apiEndpoint`, if any. With an API-key endpoint an OAuth token in the
   * child is a leak; with a subscription endpoint (`oauthToken`) it is the one we gave.
   */
  explicitCredential?: "apiKey" | "oauthToken";
  cwd: string;
}

export function expectedTools(expected: Pick<ExpectedSurface, "toolIds" | "structuredOutput">): string[] {
  return [...expected.toolIds, ...(expected.structuredOutput ? [STRUCTURED_OUTPUT_TOOL] : [])].sort();
}

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().every((value, index) => value === [...b].sort()[index]);

function canonicalPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function credentialLeak(keySource: string | undefined, expected: ExpectedSurface): string | undefined {
  if (!keySource || expected.apiKeyAllowed) return undefined;
  if (!isScrubbedEnvName(keySource) && keySource !== "apiKeyHelper") return undefined;
  return `apiKeySource was ${JSON.stringify(keySource)}: an API credential reached the CLI although the environment was scrubbed`;
}

/**
 * Checks the `account` block of the CLI's initialize reply, which arrives before the prompt is sent:
 * a credential or provider other than the local session is refused before any API request.
 */
export function checkAccount(initializeResponse: Record<string, unknown>, expected: ExpectedSurface): string[] {
  const account = initializeResponse.account as { apiKeySource?: unknown; apiProvider?: unknown } | undefined;
  if (!account) return [];
  const differences: string[] = [];
  const leak = credentialLeak(typeof account.apiKeySource === "string" ? account.apiKeySource : undefined, expected);
  if (leak) differences.push(leak);
  const tokenSource = (account as { tokenSource?: unknown }).tokenSource;
  if (expected.explicitCredential === "apiKey" && tokenSource === "CLAUDE_CODE_OAUTH_TOKEN") {
    differences.push(`tokenSource was "CLAUDE_CODE_OAUTH_TOKEN": an OAuth token reached the CLI although the explicit apiEndpoint gave an API key`);
  }
  if (typeof account.apiProvider === "string" && account.apiProvider !== "firstParty") {
    differences.push(`apiProvider was ${JSON.stringify(account.apiProvider)}: the CLI would route to another provider than Anthropic`);
  }
  return differences;
}

/** Returns what differs between the init message and the surface we asked for (empty when isolated). */
export function checkInit(init: SystemInitMessage, expected: ExpectedSurface): string[] {
  const differences: string[] = [];
  const wantTools = expectedTools(expected);
  if (!sameSet(init.tools, wantTools)) {
    differences.push(`tools were ${JSON.stringify([...init.tools].sort())}, expected ${JSON.stringify(wantTools)}`);
  }
  const wantServers = expected.toolIds.length > 0 ? [KTX_MCP_SERVER_NAME] : [];
  const servers = init.mcp_servers.map((server) => server.name);
  if (!sameSet(servers, wantServers)) {
    differences.push(`mcp_servers were ${JSON.stringify(servers)}, expected ${JSON.stringify(wantServers)}`);
  }
  for (const server of init.mcp_servers) {
    if (server.name === KTX_MCP_SERVER_NAME && server.status !== undefined && server.status !== "connected") {
      differences.push(`the ktx MCP server reported status ${JSON.stringify(server.status)}`);
    }
  }
  const plugins = (init.plugins ?? []).map((plugin) => plugin.name);
  if (plugins.length > 0) differences.push(`plugins were ${JSON.stringify(plugins)}, expected none`);
  const leak = credentialLeak(init.apiKeySource, expected);
  if (leak) differences.push(leak);
  if (init.cwd && canonicalPath(init.cwd) !== canonicalPath(expected.cwd)) {
    differences.push(`cwd was ${JSON.stringify(init.cwd)}, expected ${JSON.stringify(expected.cwd)}`);
  }
  return differences;
}

/** Host-discovered names the init message may list; diagnostic only (seed 000). */
export function hostDiscovery(init: SystemInitMessage) {
  const names = (values: unknown[] | undefined) =>
    (values ?? []).map((value) => (typeof value === "string" ? value : String((value as { name?: unknown }).name ?? "")));
  return { slashCommands: init.slash_commands ?? [], skills: names(init.skills), agents: names(init.agents) };
}
