/**
 * Settings the CLI applies whatever flags we pass: an organisation's managed files (their hooks run
 * even under `disableAllHooks`, their `env`, helpers and wrappers route or rewrite requests,
 * `managed-mcp.json` makes the CLI refuse `--strict-mcp-config`) and, in the user's own mode,
 * `remote-settings.json` in the config dir (a user-writable cache that 2.1.330 reads as if
 * server-managed, even with `--setting-sources=`). All are read before any process starts, as an
 * **allowlist**: only keys known to be harmless for an isolated run pass; any other key, including
 * one a future CLI version adds, stops the call. docs/isolation.md ("Policy read ahead") lists them.
 */
import { existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Env } from "../../transport/env.js";
import { PASSABLE_CLI_KNOBS, passEnvRefusal } from "../../transport/pass-env.js";
import { memoryProblems, read } from "./managed-memory.js";

/** Where the CLI reads managed files (from the 2.1.330 binary; 2.1.142 uses the same paths). */
export function managedPolicyDir(platform: NodeJS.Platform = process.platform): string {
  if (platform === "darwin") return "/Library/Application Support/ClaudeCode";
  if (platform === "win32") return "C:\\Program Files\\ClaudeCode";
  return "/etc/claude-code";
}

let managedDirForTests: string | undefined;

/**
 * Test seam: where the read-ahead looks for the managed files instead of the real path (the suite
 * never writes `/etc/claude-code`). Deliberately not an option or variable: nothing a caller or the
 * environment sets may point the read-ahead away from the path the CLI reads. Not exported by the package.
 */
export function setManagedPolicyDirForTests(dir: string | undefined): void {
  managedDirForTests = dir;
}

export const MANAGED_POLICY_ADVICE =
  "Your organisation's managed Claude Code settings apply to every CLI run and cannot be turned off by ktx-claude-code; ask your administrator to exempt this machine or account (or to drop the named keys), or run KTX with another backend. See docs/isolation.md, \"Policy read ahead\".";

export const USER_POLICY_ADVICE =
  "remote-settings.json is a cache the CLI keeps of your organisation's server-managed settings and reads whatever flags are passed; anyone who can write your Claude Code config dir can plant it. If your organisation manages Claude Code from the server, ask the administrator to drop the named keys; otherwise delete the file (the CLI fetches it again if it is real). See docs/isolation.md, \"Policy read ahead\".";

/**
 * Built-in plugins the CLI turns on for a Team or Enterprise login (the credentials' subscription type),
 * even when our `--settings` turns them off: measured on 2.1.330 with no settings fetched and no settings
 * file, so they come from the organisation, not from any file read ahead. Other built-in plugins are
 * off through `--settings` (binary/versions.ts); one of them on means a changed default.
 */
const ORGANISATION_PLUGINS = new Set(["cc-plugin-sec-default"]);
export const isOrganisationPlugin = (plugin: { name: string }): boolean => ORGANISATION_PLUGINS.has(plugin.name);

export const ORGANISATION_PLUGIN_ADVICE =
  "A plugin's hooks and servers would join every run, so ktx-claude-code runs none, and it cannot turn this one off. Ask your administrator whether it can be turned off for this account, log in with an account outside the organisation, or run KTX with another backend. See docs/isolation.md, \"Policy read ahead\".";

/**
 * Top-level keys that pass: each restricts, pins or only displays, and none runs a program, adds a
 * hook, a server, a plugin or an output style, or routes a request. Everything else is refused.
 */
const HARMLESS_KEYS = new Set([
  "$schema",
  // Restrictions: fewer permissions, models, MCP servers, marketplaces; an org or login pinned.
  "availableModels",
  "allowedMcpServers",
  "deniedMcpServers",
  "allowManagedHooksOnly",
  "allowManagedPermissionRulesOnly",
  "allowManagedMcpServersOnly",
  "strictKnownMarketplaces",
  "forceLoginMethod",
  "forceLoginOrgUUID",
  "disableAllHooks",
  // A model pinned (the result reports init.model) and display-only texts.
  "model",
  "companyAnnouncements",
  "cleanupPeriodDays",
  "spinnerTipsEnabled",
  "includeCoAuthoredBy",
  // Checked key by key below.
  "permissions",
  "enabledPlugins",
  "env",
]);

/** `permissions` sub-keys that pass: rules (only `mcp__ktx__` tools exist) and the bypass switch off. */
const HARMLESS_PERMISSION_KEYS = new Set(["allow", "deny", "ask", "disableBypassPermissionsMode"]);

/**
 * `env` names that pass: locale, time zone, the retry/timeout/caching knobs and the CLI knobs passEnv
 * allows. Proxy and CA names are refused here: from the environment they pass and are shown
 * (docs/environment.md), from a settings file they would route every request unseen.
 */
const HARMLESS_ENV = new Set([
  "LANG",
  "LANGUAGE",
  "TZ",
  "CLAUDE_CODE_MAX_RETRIES",
  "API_TIMEOUT_MS",
  "CLAUDE_CODE_PROMPT_CACHE_TTL",
  "ENABLE_PROMPT_CACHING_1H",
  ...PASSABLE_CLI_KNOBS,
]);
const harmlessEnvName = (name: string) => HARMLESS_ENV.has(name) || name.startsWith("LC_") || name.startsWith("DISABLE_PROMPT_CACHING");

/**
 * Variables the library sets itself for every run or from its own options (transport/env.ts,
 * thinking.ts, telemetry.ts). A policy `env` that sets, unsets (an empty value) or changes one would
 * undo the library's choice, e.g. `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: ""` turned the CLI's
 * analytics and bootstrap calls back on (issue 32). Compared case-insensitively, as Windows does.
 */
export const LIBRARY_SET_ENV: readonly string[] = [
  "DISABLE_AUTOUPDATER",
  "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
  "CLAUDE_CODE_TOTAL_TOKENS_REMINDER",
  "CLAUDE_CODE_DISABLE_LEGACY_MODEL_REMAP",
  "DISABLE_AUTO_COMPACT",
  "MAX_THINKING_TOKENS",
  "CLAUDE_CODE_DISABLE_ADAPTIVE_THINKING",
  "CLAUDE_CODE_DISABLE_THINKING",
];
// The library's other variables (the endpoint's ANTHROPIC_*, the OAuth token, telemetry) are refused in a policy env whatever their value, as routing, credential or telemetry names.
const librarySet = new Set(LIBRARY_SET_ENV);
const isLibrarySet = (name: string) => librarySet.has(name.toUpperCase());

/** Why a key is dangerous, for the keys we know; an unknown key gets the fail-closed reason. */
const KNOWN_DANGER: Record<string, string> = {
  hooks: "programs that run on CLI events even with hooks turned off and may receive the prompt",
  apiKeyHelper: "a program whose output becomes the API key",
  awsAuthRefresh: "a program that refreshes cloud credentials",
  awsCredentialExport: "a program whose output becomes cloud credentials",
  gcpAuthRefresh: "a program that refreshes cloud credentials",
  otelHeadersHelper: "a program whose output becomes telemetry headers",
  policyHelper: "a program run at every CLI start whose output becomes policy (env, hooks, …) applied to the run",
  policyHelpers: "programs run at every CLI start whose output becomes policy applied to the run",
  proxyAuthHelper: "a program whose output authenticates to a proxy the requests go through",
  processWrapper: "a program the CLI runs itself or its tools under",
  statusLine: "a program the CLI runs to draw a status line",
  fileSuggestion: "a program the CLI runs for file suggestions",
  outputStyle: "an output style that rewrites the system prompt",
  extraKnownMarketplaces: "plugin marketplaces whose plugins may add hooks and servers",
  enableAllProjectMcpServers: "MCP servers from project files",
  enabledMcpjsonServers: "MCP servers from project files",
  mcpServers: "MCP servers started beside KTX's own",
};

/**
 * Why each refused policy `env` name is refused, names grouped by reason: passEnv's reasons (credential,
 * routing, code, TLS, logs; docs/environment.md), else that it is not known to be harmless.
 */
function envRefusals(file: string, names: string[]): string[] {
  const byReason = new Map<string, string[]>();
  for (const name of names) {
    // Telemetry first: an exporter's name reads as routing to passEnv's word rules, but what it sends is the prompt.
    const refusal = /^OTEL_|TELEMETRY/i.test(name) ? "it may export telemetry or logs, prompts among them, to a collector" : passEnvRefusal(name);
    // A case variant of a knob is refused for its spelling: passEnv's advice ("pass the exact name") does not fit a file.
    const reason = refusal && !refusal.startsWith("it is a case variant") ? refusal : "it is not a locale, time zone or request knob, the only names known to be harmless here";
    byReason.set(reason, [...(byReason.get(reason) ?? []), name]);
  }
  return [...byReason].map(([reason, group]) => `${file} sets ${group.join(", ")} in env: ${reason.replace(/^it /, group.length > 1 ? "each " : "it ")}`);
}

function keyProblem(file: string, key: string, value: unknown, childEnv: Env | undefined): string | undefined {
  if (key === "permissions") {
    if (typeof value !== "object" || value === null) return `${file} sets permissions to a non-object, which cannot be checked`;
    const extra = Object.keys(value).filter((sub) => !HARMLESS_PERMISSION_KEYS.has(sub));
    return extra.length > 0 ? `${file} sets permissions.${extra.join(", permissions.")}, which may change how tools are approved (only allow, deny, ask and disableBypassPermissionsMode pass)` : undefined;
  }
  if (key === "enabledPlugins") {
    const on = typeof value === "object" && value !== null ? Object.entries(value).filter(([, enabled]) => enabled !== false).map(([name]) => name) : ["(not an object)"];
    return on.length > 0 ? `${file} turns on plugins (${on.join(", ")}), whose hooks, agents and servers would join the run` : undefined;
  }
  if (key === "env") {
    if (typeof value !== "object" || value === null) return `${file} sets env to a non-object, which cannot be checked`;
    // The very value the library gives the run changes nothing (an organisation's DISABLE_AUTOUPDATER=1).
    const ours = Object.entries(value).filter(([name, set]) => isLibrarySet(name) && !(childEnv && typeof set === "string" && childEnv[name] === set)).map(([name]) => name);
    const names = Object.keys(value).filter((name) => !isLibrarySet(name) && !harmlessEnvName(name));
    const found = [
      ...(ours.length > 0 ? [`${file} sets ${ours.map((name) => `${name}=${JSON.stringify((value as Record<string, unknown>)[name])}`).join(", ")} in env, which ktx-claude-code sets itself for every run (a policy value would override it: an empty one unsets it)`] : []),
      ...envRefusals(file, names),
    ];
    return found.length > 0 ? found.join("; ") : undefined;
  }
  if (HARMLESS_KEYS.has(key)) return undefined;
  const why = KNOWN_DANGER[key];
  return why ? `${file} sets ${key}: ${why}` : `${file} sets ${key}, a key not known to be harmless for an isolated run (unknown keys are refused, so a new CLI setting cannot slip through)`;
}

function settingsProblems(file: string, text: string, childEnv: Env | undefined): string[] {
  let settings: unknown;
  try {
    settings = JSON.parse(text);
  } catch {
    return [`${file} is not valid JSON, so what the CLI makes of it cannot be checked`];
  }
  if (typeof settings !== "object" || settings === null || Array.isArray(settings)) return [`${file} is not a JSON object, so what the CLI makes of it cannot be checked`];
  return Object.entries(settings).flatMap(([key, value]) => keyProblem(file, key, value, childEnv) ?? []);
}

/** What in the managed files would breach isolation; empty when nothing does (or there are none). */
export function checkManagedPolicy(dir: string = managedDirForTests ?? managedPolicyDir(), childEnv?: Env): string[] {
  const problems: string[] = [];
  // Without the directory (the usual case) none of its files exists: one check instead of three, before every call.
  if (!existsSync(dir)) return problems;
  const mcp = join(dir, "managed-mcp.json");
  if (existsSync(mcp)) {
    problems.push(
      `${mcp} exists: your organisation's MCP policy gives every Claude Code session its managed MCP servers, and the CLI then refuses --strict-mcp-config, which KTX runs need so that only KTX's own tools exist`,
    );
  }
  const main = join(dir, "managed-settings.json");
  const mainText = read(main, problems);
  if (mainText !== undefined) problems.push(...settingsProblems(main, mainText, childEnv));
  const dropIn = join(dir, "managed-settings.d");
  let entries: string[] = [];
  try {
    if (existsSync(dropIn)) entries = readdirSync(dropIn);
  } catch {
    entries = [];
  }
  // The CLI reads the drop-ins' *.json files, hidden files excluded, in sorted order.
  for (const name of entries.filter((entry) => entry.endsWith(".json") && !entry.startsWith(".")).sort()) {
    const text = read(join(dropIn, name), problems);
    if (text !== undefined) problems.push(...settingsProblems(join(dropIn, name), text, childEnv));
  }
  problems.push(...memoryProblems(dir));
  return problems;
}

/** The CLI's config dir for this environment: `$CLAUDE_CONFIG_DIR`, else `~/.claude`. */
export function claudeConfigDir(env: Env): string {
  return env.CLAUDE_CONFIG_DIR || join(env.HOME || env.USERPROFILE || homedir(), ".claude");
}

/**
 * What in the settings the CLI reads in the user's own mode would breach isolation (`remote-settings.json`).
 * `env` is the child's environment: where the file is, and what the library set in it.
 */
export function checkUserPolicy(env: Env): string[] {
  const file = join(claudeConfigDir(env), "remote-settings.json");
  const problems: string[] = [];
  const text = read(file, problems);
  return text === undefined ? problems : settingsProblems(file, text, env);
}
