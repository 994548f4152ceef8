/**
 * Managed settings (an organisation's policy) apply to every CLI run whatever flags we pass: their
 * hooks run even under `disableAllHooks` and receive the prompt, their `env` and `apiKeyHelper`
 * route requests elsewhere, and `managed-mcp.json` makes the CLI refuse `--strict-mcp-config`.
 * The files are read before any process starts; what would breach isolation stops the call with
 * `IsolationError`. docs/isolation.md ("Managed settings") says what is still allowed.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { isScrubbedEnvName } from "../transport/env.js";

/** Where the CLI reads managed files (from the 2.1.330 binary; 2.1.142 uses the same paths). */
export function managedPolicyDir(platform: NodeJS.Platform = process.platform): string {
  if (platform === "darwin") return "/Library/Application Support/ClaudeCode";
  if (platform === "win32") return "C:\\Program Files\\ClaudeCode";
  return "/etc/claude-code";
}

export const MANAGED_POLICY_ADVICE =
  "Your organisation's managed Claude Code settings apply to every CLI run and cannot be turned off by ktx-claude-code; ask your administrator to exempt this machine or account, or run KTX with another backend. See docs/isolation.md, \"Managed settings\".";

/** Settings keys that run a program to obtain a credential. */
const CREDENTIAL_HELPERS = ["apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "gcpAuthRefresh", "otelHeadersHelper"];

function settingsProblems(file: string, text: string): string[] {
  let settings: unknown;
  try {
    settings = JSON.parse(text);
  } catch {
    return [`${file} is not valid JSON, so what the CLI makes of it cannot be checked`];
  }
  if (typeof settings !== "object" || settings === null) return [];
  const record = settings as Record<string, unknown>;
  const problems: string[] = [];
  const hooks = record.hooks;
  if (hooks && typeof hooks === "object" && Object.keys(hooks).length > 0) {
    problems.push(`${file} adds hooks (${Object.keys(hooks).join(", ")}), which run even with hooks turned off and may receive the prompt`);
  }
  for (const helper of CREDENTIAL_HELPERS) {
    if (record[helper] !== undefined) problems.push(`${file} sets ${helper}, a program whose output becomes a credential or request header`);
  }
  const env = record.env;
  if (env && typeof env === "object") {
    const routed = Object.keys(env).filter(isScrubbedEnvName);
    if (routed.length > 0) {
      problems.push(`${file} sets ${routed.join(", ")} in env, which route, authenticate, inject code or export telemetry outside your Claude Code session`);
    }
  }
  return problems;
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** What in the managed files would breach isolation; empty when nothing does (or there are none). */
export function checkManagedPolicy(dir: string = managedPolicyDir()): string[] {
  const problems: string[] = [];
  const mcp = join(dir, "managed-mcp.json");
  if (existsSync(mcp)) {
    problems.push(
      `${mcp} exists: your organisation's MCP policy gives every Claude Code session its managed MCP servers, and the CLI then refuses --strict-mcp-config, which KTX runs need so that only KTX's own tools exist`,
    );
  }
  const main = join(dir, "managed-settings.json");
  const mainText = read(main);
  if (mainText !== undefined) problems.push(...settingsProblems(main, mainText));
  const dropIn = join(dir, "managed-settings.d");
  let entries: string[] = [];
  try {
    entries = readdirSync(dropIn);
  } catch {
    entries = [];
  }
  // The CLI reads the drop-ins' *.json files, hidden files excluded, in sorted order.
  for (const name of entries.filter((entry) => entry.endsWith(".json") && !entry.startsWith(".")).sort()) {
    const text = read(join(dropIn, name));
    if (text !== undefined) problems.push(...settingsProblems(join(dropIn, name), text));
  }
  return problems;
}
