import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkAccount, hookDifference } from "../../src/claude-code/isolation.js";
import { checkManagedPolicy, managedPolicyDir } from "../../src/claude-code/managed-policy.js";

const expected = (apiKeyAllowed: boolean) => ({ toolIds: [], structuredOutput: false, apiKeyAllowed, cwd: "/tmp" });
const account = (fields: Record<string, string>) => ({ account: { apiProvider: "firstParty", ...fields } });

describe("the account check covers every credential source", () => {
  it("accepts the user's own session and an explicit test endpoint", () => {
    expect(checkAccount(account({ tokenSource: "claude.ai", apiKeySource: "none" }), expected(false))).toEqual([]);
    expect(checkAccount(account({ tokenSource: "CLAUDE_CODE_OAUTH_TOKEN", apiKeySource: "none" }), expected(false))).toEqual([]);
    expect(checkAccount(account({ tokenSource: "none", apiKeySource: "ANTHROPIC_API_KEY" }), expected(true))).toEqual([]);
  });

  it("refuses an apiKeyHelper token, with or without an explicit endpoint", () => {
    // Recorded on 2.1.330 with a managed apiKeyHelper and our endpoint: {"tokenSource":"apiKeyHelper","apiKeySource":"ANTHROPIC_API_KEY"}.
    for (const allowed of [false, true]) {
      const differences = checkAccount(account({ tokenSource: "apiKeyHelper", apiKeySource: "ANTHROPIC_API_KEY" }), expected(allowed));
      expect(differences.join("\n")).toMatch(/tokenSource was "apiKeyHelper"/);
    }
    expect(checkAccount(account({ tokenSource: "none", apiKeySource: "apiKeyHelper" }), expected(true)).join("\n")).toMatch(/apiKeySource was "apiKeyHelper"/);
  });

  it("refuses a bearer token from a variable or a managed env key", () => {
    for (const tokenSource of ["ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR", "CCR_OAUTH_TOKEN_FILE", "something-new"]) {
      expect(checkAccount(account({ tokenSource, apiKeySource: "none" }), expected(true)), tokenSource).toHaveLength(1);
    }
  });
});

describe("hook events", () => {
  it("names the event, the hook and its source", () => {
    const started = { type: "system", subtype: "hook_started", hook_id: "h", hook_name: "SessionStart:startup", hook_event: "SessionStart" };
    expect(hookDifference(started)).toMatch(/a SessionStart hook \(SessionStart:startup\) ran from managed settings or a plugin/);
    expect(hookDifference({ ...started, subtype: "hook_response" })).toBeDefined();
    expect(hookDifference({ ...started, origin: "policy_settings" })).toMatch(/ran from policy_settings/);
    expect(hookDifference({ subtype: "status" })).toBeUndefined();
  });
});

describe("managed settings", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const policyDir = (files: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), "ktx-managed-"));
    dirs.push(dir);
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(join(dir, name, ".."), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    return dir;
  };

  it("knows the CLI's paths per platform", () => {
    expect(managedPolicyDir("linux")).toBe("/etc/claude-code");
    expect(managedPolicyDir("darwin")).toBe("/Library/Application Support/ClaudeCode");
    expect(managedPolicyDir("win32")).toBe("C:\\Program Files\\ClaudeCode");
  });

  it("accepts no files, and policy that cannot widen the surface or route elsewhere", () => {
    expect(checkManagedPolicy(policyDir({}))).toEqual([]);
    const dir = policyDir({ "managed-settings.json": JSON.stringify({ permissions: { deny: ["Bash"] }, env: { HTTPS_PROXY: "http://proxy:3128" }, model: "sonnet" }) });
    expect(checkManagedPolicy(dir)).toEqual([]);
  });

  it("refuses managed MCP servers, hooks, credential helpers and routing env, in the main file and the drop-ins", () => {
    const dir = policyDir({
      "managed-mcp.json": JSON.stringify({ mcpServers: { corp: { command: "corp-mcp" } } }),
      "managed-settings.json": JSON.stringify({ hooks: { UserPromptSubmit: [] }, apiKeyHelper: "echo key" }),
      "managed-settings.d/10-env.json": JSON.stringify({ env: { ANTHROPIC_BASE_URL: "http://elsewhere", BUN_OPTIONS: "--preload x", TZ: "UTC" } }),
      "managed-settings.d/.hidden.json": JSON.stringify({ apiKeyHelper: "ignored by the CLI too" }),
      "managed-settings.d/20-broken.json": "{",
    });
    const problems = checkManagedPolicy(dir).join("\n");
    expect(problems).toMatch(/managed-mcp\.json exists: your organisation's MCP policy/);
    expect(problems).toMatch(/adds hooks \(UserPromptSubmit\)/);
    expect(problems).toMatch(/sets apiKeyHelper/);
    expect(problems).toMatch(/10-env\.json sets ANTHROPIC_BASE_URL, BUN_OPTIONS in env/);
    expect(problems).not.toMatch(/TZ/);
    expect(problems).not.toMatch(/hidden/);
    expect(problems).toMatch(/20-broken\.json is not valid JSON/);
  });
});
