/**
 * The isolation surface of every run: the CLI arguments that build it, and the check of the CLI's
 * `system/init` message against it. docs/isolation.md explains each flag and check.
 */
import { realpathSync } from "node:fs";
import type { CliVersionFacts } from "../../binary/versions.js";
import type { SystemInitMessage } from "../../protocol/messages.js";
import { isScrubbedEnvName } from "../../transport/env.js";
import type { AuthKind } from "../../transport/auth.js";
import { ORGANISATION_PLUGIN_ADVICE, isOrganisationPlugin } from "./managed-policy.js";
import { KTX_MCP_SERVER_NAME } from "../../mcp/tools.js";
import { builtinAllowRules } from "../capabilities.js";
import { PROJECT_FLAG_SETTINGS } from "../capabilities/project.js";
import { isServerTool, mcpAllowRules, mcpConfigEntries, mcpServerNames } from "../capabilities/mcp-servers.js";
import { bashDenyRules, bashKey, bashSandboxSettings } from "../capabilities-bash.js";
import { WEB_SEARCH_TOOL } from "../capabilities-web-search.js";
import { type CapabilityLaunch, capabilityTools } from "../capability-tools.js";
import { type SubagentsLaunch, agentsFlag, agentsProblems, cliAgentDenyRules } from "../capabilities-subagents.js";

export const STRUCTURED_OUTPUT_TOOL = "StructuredOutput";

export interface SurfaceSpec extends CapabilityLaunch {
  facts: CliVersionFacts;
  model: string;
  maxTurns: number;
  /** Exact `mcp__ktx__<name>` ids of this call; empty for a call without tools. */
  toolIds: readonly string[];
  structuredOutput: boolean;
  /** Stream the model's output as `stream_event` lines (progress text deltas). */
  includePartialMessages?: boolean;
  /** The CLI's `--permission-mode` (default `dontAsk`) and whether the call's tools are pre-approved (default true): permissions.ts. */
  permissionMode?: string;
  preApprove?: boolean;
}

/**
 * `buildCliArgs`, remembered per CLI version for recent specs: every call builds its launch, and a reused
 * loop's calls all have the same one (docs/performance.md). The array is frozen; it is shared.
 */
export function cliArgsFor(spec: SurfaceSpec): readonly string[] {
  let memo = argsMemo.get(spec.facts);
  if (!memo) argsMemo.set(spec.facts, (memo = new Map()));
  const key = `${spec.model}\n${spec.maxTurns}\n${spec.structuredOutput}\n${spec.includePartialMessages === true}\n${spec.permissionMode ?? ""}\n${spec.preApprove !== false}\n${spec.toolIds.join(",")}\n${(spec.builtinTools ?? []).join(",")}\n${spec.projectInstructions === true}\n${spec.mcpServers ? JSON.stringify(spec.mcpServers) : ""}\n${bashKey(spec.bash)}\n${spec.webSearch === true}\n${spec.subagents ? agentsFlag(spec.subagents) : ""}`;
  let args = memo.get(key);
  if (!args) {
    if (memo.size >= ARGS_MEMO_SIZE) memo.clear();
    memo.set(key, (args = Object.freeze(buildCliArgs(spec))));
  }
  return args;
}

const ARGS_MEMO_SIZE = 64;
const argsMemo = new WeakMap<CliVersionFacts, Map<string, readonly string[]>>();

/** Value flags are written `--flag=value`: an empty value or one starting with `-` stays one argument. */
export function buildCliArgs(spec: SurfaceSpec): string[] {
  const { facts, toolIds } = spec;
  const builtin = [...(capabilityTools(spec) ?? [])];
  const args = [
    "-p",
    "--output-format=stream-json",
    "--input-format=stream-json",
    "--verbose",
    // projectInstructions: the project source (CLAUDE.md, rules; what else it loads is refused or switched off: capabilities/project.ts).
    `--setting-sources=${spec.projectInstructions ? "project" : ""}`,
    `--tools=${builtin.join(",")}`,
    "--strict-mcp-config",
    `--permission-mode=${spec.permissionMode ?? "dontAsk"}`,
    "--permission-prompt-tool=stdio",
    "--no-session-persistence",
    // Every hook the CLI runs is announced on stdout, so one that still runs (managed policy) stops the run.
    "--include-hook-events",
    // Agent's other name ("Task") stays allowed with it; the CLI's own agents are denied by name.
    `--disallowedTools=${[...facts.builtinTools.filter((name) => !builtin.includes(name) && !(spec.subagents && name === "Task")), ...bashDenyRules(spec.bash), ...cliAgentDenyRules(spec.subagents)].join(",")}`,
    `--max-turns=${spec.maxTurns}`,
    `--model=${spec.model}`,
  ];
  if (facts.hasDisableSlashCommands) args.push("--disable-slash-commands");
  if (spec.includePartialMessages) args.push("--include-partial-messages");
  // disableAllHooks turns off settings and plugin hooks (verified on 2.1.142 and 2.1.330); managed hooks still run.
  const settings: Record<string, unknown> = { disableAllHooks: true, ...(spec.projectInstructions ? PROJECT_FLAG_SETTINGS : {}) };
  if (facts.builtinPlugins.length > 0) {
    settings.enabledPlugins = Object.fromEntries(facts.builtinPlugins.map((name) => [`${name}@builtin`, false]));
  }
  // Bash's sandbox settings go in the flag settings, never a file (capabilities-bash.ts).
  if (spec.bash) settings.sandbox = bashSandboxSettings(spec.bash);
  args.push(`--settings=${JSON.stringify(settings)}`);
  if (spec.subagents) args.push(`--agents=${agentsFlag(spec.subagents)}`);
  const servers = mcpConfigEntries(spec.mcpServers);
  if (toolIds.length > 0 || Object.keys(servers).length > 0) {
    const own = toolIds.length > 0 ? { [KTX_MCP_SERVER_NAME]: { type: "sdk", name: KTX_MCP_SERVER_NAME } } : {};
    args.push(`--mcp-config=${JSON.stringify({ mcpServers: { ...own, ...servers } })}`);
  }
  // Pre-approved tools never reach a prompt: a mode that asks must leave them out (permissions.ts). An opted-in
  // file tool is allowed only under the project dir; the permission answers scope it again (capabilities.ts).
  const userServers = mcpServerNames(spec.mcpServers);
  const allowed = [...(spec.preApprove !== false ? [...toolIds, ...mcpAllowRules(userServers)] : []), ...builtinAllowRules(spec.builtinTools ?? []), ...(spec.bash ? ["Bash"] : []), ...(spec.webSearch ? [WEB_SEARCH_TOOL] : []), ...(spec.subagents ? ["Agent"] : [])];
  if (allowed.length > 0) args.push(`--allowedTools=${allowed.join(",")}`);
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
  /** The `auth` kind chosen (absent: login), the provider it routes to and its own variables, which may show as sources. */
  auth?: { kind: AuthKind; provider: string; variables: readonly string[] };
  cwd: string;
  /** The CLI permission mode `init` must report (permissions.ts); unchecked when absent. */
  permissionMode?: string;
  /** Built-in tools opted into (Bash included, with `capabilities.bash`): init must list exactly these besides the call's own. */
  builtinTools?: readonly string[];
  /** `capabilities.projectInstructions`: init must report the default output style and no skills. */
  projectInstructions?: boolean;
  /** `capabilities.mcpServers` names: init must list exactly these (and ktx with tools), connected, and only their tools besides the call's. */
  mcpServers?: readonly string[];
  /** The agent definitions asked for (`capabilities.subagents`): init must list them, and no agent but the CLI's own besides. */
  subagents?: SubagentsLaunch;
}

export function expectedTools(expected: Pick<ExpectedSurface, "toolIds" | "structuredOutput" | "builtinTools">): string[] {
  return [...expected.toolIds, ...(expected.builtinTools ?? []), ...(expected.structuredOutput ? [STRUCTURED_OUTPUT_TOOL] : [])].sort();
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  // The usual case, the same names in the same order, needs no sorted copies (this runs on every call's init).
  let inOrder = true;
  for (let i = 0; i < a.length && inOrder; i += 1) inOrder = a[i] === b[i];
  if (inOrder) return true;
  const sortedB = [...b].sort();
  return [...a].sort().every((value, index) => value === sortedB[index]);
}

function canonicalPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** A key from a helper program is never the user's session, whatever the endpoint. */
const HELPER = "apiKeyHelper";

function credentialLeak(keySource: string | undefined, expected: ExpectedSurface): string | undefined {
  if (!keySource) return undefined;
  if (keySource === HELPER) {
    return `apiKeySource was "apiKeyHelper": a key from a helper program (settings or managed policy) reached the CLI instead of your Claude Code session`;
  }
  if (expected.apiKeyAllowed || !isScrubbedEnvName(keySource) || expected.auth?.variables.includes(keySource)) return undefined;
  return `apiKeySource was ${JSON.stringify(keySource)}: an API credential reached the CLI although the environment was scrubbed`;
}

/** Token sources of the user's own session ("claude.ai" login, `claude setup-token`) and "none". */
const SESSION_TOKEN_SOURCES = new Set(["none", "claude.ai", "CLAUDE_CODE_OAUTH_TOKEN"]);

function tokenLeak(tokenSource: string | undefined): string | undefined {
  if (tokenSource === undefined || SESSION_TOKEN_SOURCES.has(tokenSource)) return undefined;
  return `tokenSource was ${JSON.stringify(tokenSource)}: a bearer token other than your Claude Code login (a helper, a managed env key or a token variable) reached the CLI`;
}

/**
 * Checks the `account` block of the CLI's initialize reply, which arrives before the prompt is sent:
 * a credential or provider other than the local session is refused before any API request.
 */
export function checkAccount(initializeResponse: Record<string, unknown>, expected: ExpectedSurface): string[] {
  const account = initializeResponse.account as { apiKeySource?: unknown; tokenSource?: unknown; apiProvider?: unknown } | undefined;
  if (!account) return [];
  const differences: string[] = [];
  const leak = credentialLeak(typeof account.apiKeySource === "string" ? account.apiKeySource : undefined, expected);
  if (leak) differences.push(leak);
  const token = tokenLeak(typeof account.tokenSource === "string" ? account.tokenSource : undefined);
  if (token) differences.push(token);
  const tokenSource = (account as { tokenSource?: unknown }).tokenSource;
  if (expected.explicitCredential === "apiKey" && tokenSource === "CLAUDE_CODE_OAUTH_TOKEN") {
    differences.push(`tokenSource was "CLAUDE_CODE_OAUTH_TOKEN": an OAuth token reached the CLI although the explicit apiEndpoint gave an API key`);
  }
  const provider = expected.auth?.provider ?? "firstParty";
  if (typeof account.apiProvider === "string" && account.apiProvider !== provider) {
    differences.push(
      provider === "firstParty"
        ? `apiProvider was ${JSON.stringify(account.apiProvider)}: the CLI would route to another provider than Anthropic`
        : `apiProvider was ${JSON.stringify(account.apiProvider)}, not ${JSON.stringify(provider)}: the CLI would route elsewhere than the auth kind chosen`,
    );
  }
  // The chosen kind's own credential, and no other: nothing falls back to the login or a stored key.
  if (expected.auth?.kind === "apiKey" && account.apiKeySource !== "ANTHROPIC_API_KEY") {
    differences.push(`apiKeySource was ${JSON.stringify(account.apiKeySource ?? null)}, not "ANTHROPIC_API_KEY": the CLI would not use the API key auth gave`);
  }
  if (expected.auth?.kind === "oauthToken" && tokenSource !== "CLAUDE_CODE_OAUTH_TOKEN") {
    differences.push(`tokenSource was ${JSON.stringify(tokenSource ?? null)}, not "CLAUDE_CODE_OAUTH_TOKEN": the CLI would not use the OAuth token auth gave`);
  }
  return differences;
}

/** Returns what differs between the init message and the surface we asked for (empty when isolated). */
export function checkInit(init: SystemInitMessage, expected: ExpectedSurface): string[] {
  const differences: string[] = [];
  const userServers = expected.mcpServers ?? [];
  const wantTools = expectedTools(expected);
  // A user server's tools are its own (their names come from it): init may list any of them, and nothing else.
  const listed = userServers.length > 0 ? init.tools.filter((tool) => !isServerTool(tool, userServers)) : init.tools;
  if (!sameSet(listed, wantTools)) {
    differences.push(`tools were ${JSON.stringify([...init.tools].sort())}, expected ${JSON.stringify(wantTools)}`);
  }
  const wantServers = [...(expected.toolIds.length > 0 ? [KTX_MCP_SERVER_NAME] : []), ...userServers];
  const servers = init.mcp_servers.map((server) => server.name);
  if (!sameSet(servers, wantServers)) {
    differences.push(`mcp_servers were ${JSON.stringify(servers)}, expected ${JSON.stringify(wantServers)}`);
  }
  for (const server of init.mcp_servers) {
    if (server.name === KTX_MCP_SERVER_NAME && server.status !== undefined && server.status !== "connected") {
      differences.push(`the ktx MCP server reported status ${JSON.stringify(server.status)}`);
    }
    // An opted-in server that did not connect (a command that fails, an unreachable URL) ends the call, named.
    if (userServers.includes(server.name) && server.status !== "connected") {
      differences.push(`the MCP server ${JSON.stringify(server.name)} (capabilities.mcpServers) reported status ${JSON.stringify(server.status ?? null)}, not "connected"`);
    }
  }
  if (expected.projectInstructions) differences.push(...projectSurfaceDifferences(init));
  const plugins = (init.plugins ?? []).map((plugin) => plugin.name);
  if (plugins.length > 0) {
    const organisation = (init.plugins ?? []).filter(isOrganisationPlugin).map((plugin) => plugin.source ?? `${plugin.name}@builtin`);
    const them = organisation.length > 1 ? "them" : "it";
    const why = organisation.length > 0 ? ` (${organisation.join(", ")}: built into the CLI, which turns ${them} on for a Team or Enterprise login and --settings cannot turn off; no settings file asked for ${them})` : "";
    differences.push(`plugins were ${JSON.stringify(plugins)}, expected none${why}`);
  }
  const leak = credentialLeak(init.apiKeySource, expected);
  if (leak) differences.push(leak);
  differences.push(...agentsProblems((init as { agents?: unknown[] }).agents?.map((agent) => (typeof agent === "string" ? agent : String((agent as { name?: unknown }).name ?? ""))), expected.subagents));
  // A mode that differs would approve (or deny) tool uses other than the caller asked for.
  if (expected.permissionMode !== undefined && init.permissionMode !== undefined && init.permissionMode !== expected.permissionMode) {
    differences.push(`permissionMode was ${JSON.stringify(init.permissionMode)}, expected ${JSON.stringify(expected.permissionMode)}`);
  }
  // Equal strings name the same directory; only different ones are resolved (two realpath walks per call otherwise).
  if (init.cwd && init.cwd !== expected.cwd && canonicalPath(init.cwd) !== canonicalPath(expected.cwd)) {
    differences.push(`cwd was ${JSON.stringify(init.cwd)}, expected ${JSON.stringify(expected.cwd)}`);
  }
  return differences;
}

/**
 * What init shows of the project source with projectInstructions (capabilities/project.ts): the output style the
 * flag settings pin, and none of the skills the project may hold (its commands and agents are refused before spawn).
 */
function projectSurfaceDifferences(init: SystemInitMessage): string[] {
  const differences: string[] = [];
  const raw = init as unknown as { output_style?: unknown; skills?: unknown[] };
  if (raw.output_style !== undefined && raw.output_style !== "default") differences.push(`output_style was ${JSON.stringify(raw.output_style)}, not "default" (projectInstructions does not opt into the project's output style)`);
  if ((raw.skills ?? []).length > 0) differences.push(`skills were ${JSON.stringify(raw.skills)}, expected none (projectInstructions does not opt into the project's skills)`);
  return differences;
}

/** What to do when a server of `capabilities.mcpServers` did not connect. */
export const MCP_SERVER_ADVICE =
  "Check the server of capabilities.mcpServers named above: a stdio server's command must start and answer MCP initialize on stdin/stdout (it gets the CLI's scrubbed environment plus its own env); an http or sse server's URL must answer without authentication the CLI cannot give (docs/guides/capabilities.md).";

/** The advice for an init check's differences: a built-in plugin's own, else the default (a CLI version or default that changed). */
export function initAdvice(init: SystemInitMessage, expected?: Pick<ExpectedSurface, "mcpServers">): string | undefined {
  if ((init.plugins ?? []).some(isOrganisationPlugin)) return ORGANISATION_PLUGIN_ADVICE;
  // An opted-in server that did not connect is the server's problem, not the CLI version's.
  const servers = expected?.mcpServers ?? [];
  if (init.mcp_servers.some((server) => servers.includes(server.name) && server.status !== "connected")) return MCP_SERVER_ADVICE;
  return undefined;
}

/** Host-discovered names the init message may list; diagnostic only (seed 000). */
export function hostDiscovery(init: SystemInitMessage) {
  const names = (values: unknown[] | undefined) =>
    (values ?? []).map((value) => (typeof value === "string" ? value : String((value as { name?: unknown }).name ?? "")));
  return { slashCommands: init.slash_commands ?? [], skills: names(init.skills), agents: names(init.agents) };
}

/**
 * A hook the CLI started (`system/hook_started`, `hook_progress` or `hook_response`, announced because of
 * `--include-hook-events`). Settings and plugin hooks are off (`disableAllHooks`), so one that still
 * runs comes from managed settings (an organisation's policy) or a plugin they install.
 */
export function hookDifference(message: { subtype?: unknown; hook_event?: unknown; hook_name?: unknown; origin?: unknown }): string | undefined {
  if (message.subtype !== "hook_started" && message.subtype !== "hook_response" && message.subtype !== "hook_progress") return undefined;
  const event = String(message.hook_event ?? "unknown event");
  const name = message.hook_name !== undefined && message.hook_name !== event ? ` (${String(message.hook_name)})` : "";
  const source =
    typeof message.origin === "string"
      ? `from ${message.origin}`
      : "from managed settings or a plugin they install (settings and plugin hooks are turned off with disableAllHooks)";
  return `a ${event} hook${name} ran ${source}; a hook may receive the prompt and run any program, so the run was stopped`;
}
