import { afterEach, describe, expect, it } from "vitest";
import { checkAccount, hookDifference } from "../../src/claude-code/checks/isolation.js";
import { checkManagedPolicy, checkUserPolicy, managedPolicyDir } from "../../src/claude-code/checks/managed-policy.js";
import { cleanup, tempFiles } from "../support.js";

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
  afterEach(cleanup);
  const policyDir = (files: Record<string, string>) => tempFiles("managed", files);

  it("knows the CLI's paths per platform", () => {
    expect(managedPolicyDir("linux")).toBe("/etc/claude-code");
    expect(managedPolicyDir("darwin")).toBe("/Library/Application Support/ClaudeCode");
    expect(managedPolicyDir("win32")).toBe("C:\\Program Files\\ClaudeCode");
  });

  it("accepts no files, and policy keys known to be harmless", () => {
    expect(checkManagedPolicy(policyDir({}))).toEqual([]);
    const dir = policyDir({
      "managed-settings.json": JSON.stringify({
        permissions: { deny: ["Bash"], allow: ["mcp__ktx__lookup"], disableBypassPermissionsMode: "disable" },
        env: { TZ: "UTC", LC_ALL: "C", CLAUDE_CODE_MAX_RETRIES: "2", CLAUDE_CODE_MAX_OUTPUT_TOKENS: "1024" },
        model: "sonnet",
        availableModels: ["sonnet"],
        enabledPlugins: { "cc-plugin-telemetry@builtin": false },
        companyAnnouncements: ["hello"],
        forceLoginMethod: "claudeai",
      }),
    });
    expect(checkManagedPolicy(dir)).toEqual([]);
  });

  it("refuses managed MCP servers, hooks, helpers, wrappers and any env beyond locale and request knobs, in the main file and the drop-ins", () => {
    const dir = policyDir({
      "managed-mcp.json": JSON.stringify({ mcpServers: { corp: { command: "corp-mcp" } } }),
      "managed-settings.json": JSON.stringify({ hooks: { UserPromptSubmit: [] }, apiKeyHelper: "echo key", policyHelper: { path: "/usr/bin/policy" } }),
      "managed-settings.d/10-env.json": JSON.stringify({ env: { ANTHROPIC_BASE_URL: "http://elsewhere", BUN_OPTIONS: "--preload x", HTTPS_PROXY: "http://proxy:3128", OTEL_LOGS_EXPORTER: "otlp", TZ: "UTC" } }),
      "managed-settings.d/15-helpers.json": JSON.stringify({ proxyAuthHelper: "x", processWrapper: "strace", statusLine: { type: "command", command: "x" } }),
      "managed-settings.d/.hidden.json": JSON.stringify({ apiKeyHelper: "ignored by the CLI too" }),
      "managed-settings.d/20-broken.json": "{",
    });
    const problems = checkManagedPolicy(dir).join("\n");
    expect(problems).toMatch(/managed-mcp\.json exists: your organisation's MCP policy/);
    expect(problems).toMatch(/managed-settings\.json sets hooks: programs that run/);
    expect(problems).toMatch(/sets apiKeyHelper/);
    expect(problems).toMatch(/managed-settings\.json sets policyHelper: a program run at every CLI start/);
    expect(problems).toMatch(/15-helpers\.json sets proxyAuthHelper/);
    expect(problems).toMatch(/15-helpers\.json sets processWrapper/);
    expect(problems).toMatch(/15-helpers\.json sets statusLine/);
    // Each variable with the reason that holds for it (issue 40).
    expect(problems).toMatch(/10-env\.json sets ANTHROPIC_BASE_URL, HTTPS_PROXY in env: each may route requests to another server/);
    expect(problems).toMatch(/10-env\.json sets BUN_OPTIONS in env: it may run code inside or beside the CLI/);
    expect(problems).toMatch(/10-env\.json sets OTEL_LOGS_EXPORTER in env: it may export telemetry or logs, prompts among them/);
    expect(problems).not.toMatch(/TZ/);
    expect(problems).not.toMatch(/hidden/);
    expect(problems).toMatch(/20-broken\.json is not valid JSON/);
  });

  it("fails closed: an unknown key, a permissions mode, a plugin turned on are refused, each naming file and key", () => {
    const dir = policyDir({
      "managed-settings.json": JSON.stringify({ someFutureKey: true, permissions: { defaultMode: "bypassPermissions", deny: [] }, enabledPlugins: { "corp@market": true } }),
    });
    const problems = checkManagedPolicy(dir);
    expect(problems).toHaveLength(3);
    expect(problems.join("\n")).toMatch(/managed-settings\.json sets someFutureKey, a key not known to be harmless/);
    expect(problems.join("\n")).toMatch(/sets permissions\.defaultMode/);
    expect(problems.join("\n")).toMatch(/turns on plugins \(corp@market\)/);
  });

  it("reads remote-settings.json from the config dir (CLAUDE_CONFIG_DIR or ~/.claude) with the same allowlist", () => {
    const home = policyDir({ ".claude/remote-settings.json": JSON.stringify({ env: { OTEL_LOG_USER_PROMPTS: "1" }, hooks: { SessionStart: [] } }) });
    const problems = checkUserPolicy({ HOME: home }).join("\n");
    expect(problems).toMatch(/remote-settings\.json sets OTEL_LOG_USER_PROMPTS in env/);
    expect(problems).toMatch(/remote-settings\.json sets hooks/);
    const configDir = policyDir({ "remote-settings.json": JSON.stringify({ model: "sonnet" }) });
    expect(checkUserPolicy({ HOME: home, CLAUDE_CONFIG_DIR: configDir })).toEqual([]);
    expect(checkUserPolicy({ HOME: policyDir({}) })).toEqual([]);
  });
});
