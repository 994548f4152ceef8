import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { PASSABLE_CLI_KNOBS } from "../../src/transport/pass-env.js";
import { EnvNotAllowedError } from "../../src/errors/index.js";
import { ALLOWED_ENV_NAMES, KEPT_CREDENTIALS, SCRUBBED_ENV_NAMES, createKtxClaudeCodeEnv, isAllowedEnvName, isScrubbedEnvName } from "../../src/transport/env.js";

describe("createKtxClaudeCodeEnv", () => {
  const seeded = Object.fromEntries(SCRUBBED_ENV_NAMES.map((name) => [name, `value-of-${name}`]));

  it("removes every denylisted variable and keeps PATH and HOME", () => {
    const env = createKtxClaudeCodeEnv({ ...seeded, PATH: "/usr/bin", HOME: "/home/u" }, {});
    for (const name of SCRUBBED_ENV_NAMES) expect(env, name).not.toHaveProperty(name);
    expect(env.PATH).toBe("/usr/bin");
    expect(env.HOME).toBe("/home/u");
  });

  it("removes whole provider families by prefix, including names it has never seen", () => {
    const env = createKtxClaudeCodeEnv({
      ANTHROPIC_SOMETHING_NEW: "x",
      AWS_CONTAINER_CREDENTIALS_FULL_URI: "x",
      AZURE_CLIENT_SECRET: "x",
      VERTEX_REGION_CLAUDE_5_5_SONNET: "x",
      CLAUDE_CODE_USE_SOMETHING: "1",
      CLAUDE_CODE_SKIP_BEDROCK_AUTH: "1",
      CLAUDE_GATEWAY_LOG_LEVEL: "x",
    });
    expect(Object.keys(env).sort()).toEqual(["CLAUDE_CODE_DISABLE_LEGACY_MODEL_REMAP", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "CLAUDE_CODE_TOTAL_TOKENS_REMINDER", "DISABLE_AUTOUPDATER", "DISABLE_AUTO_COMPACT"]);
  });

  it("passes only allowlisted names: preloads, request rewriting, plugins, telemetry and unknown names are dropped", () => {
    const env = createKtxClaudeCodeEnv({
      PATH: "/usr/bin",
      HOME: "/home/u",
      LANG: "C.UTF-8",
      LC_TIME: "de_DE.UTF-8",
      HTTPS_PROXY: "http://proxy:3128",
      CLAUDE_CODE_MAX_RETRIES: "2",
      DISABLE_PROMPT_CACHING_HAIKU: "1",
      BUN_OPTIONS: "--preload /tmp/x.js",
      BUN_INSPECT_PRELOAD: "/tmp/x.js",
      LD_PRELOAD: "/tmp/x.so",
      CLAUDE_CODE_EXTRA_BODY: '{"model":"other"}',
      CLAUDE_CODE_PLUGIN_DIRS: "/tmp/plug",
      CLAUDE_CODE_ENABLE_TELEMETRY: "1",
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector",
      MY_SERVICE_TOKEN: "t",
      SOMETHING_ELSE: "x",
    });
    expect(Object.keys(env).sort()).toEqual(
      ["CLAUDE_CODE_DISABLE_LEGACY_MODEL_REMAP", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "CLAUDE_CODE_MAX_RETRIES", "CLAUDE_CODE_TOTAL_TOKENS_REMINDER", "DISABLE_AUTOUPDATER", "DISABLE_AUTO_COMPACT", "DISABLE_PROMPT_CACHING_HAIKU", "HOME", "HTTPS_PROXY", "LANG", "LC_TIME", "PATH"].sort(),
    );
  });

  it("passes extra names only through passEnv, and refuses a denylisted one naming it", () => {
    expect(createKtxClaudeCodeEnv({ MY_FLAG: "1" })).not.toHaveProperty("MY_FLAG");
    expect(createKtxClaudeCodeEnv({ MY_FLAG: "1" }, { passEnv: ["MY_FLAG"] }).MY_FLAG).toBe("1");
    expect(createKtxClaudeCodeEnv({ MAX_THINKING_TOKENS: "1024" }, { passEnv: ["MAX_THINKING_TOKENS"] }).MAX_THINKING_TOKENS).toBe("1024");
    for (const name of ["ANTHROPIC_BASE_URL", "BUN_OPTIONS", "NODE_OPTIONS", "LD_PRELOAD", "CLAUDE_CODE_EXTRA_BODY", "OTEL_LOGS_EXPORTER", "AWS_PROFILE", "CLAUDE_CODE_USE_VERTEX"]) {
      const error = refusal(name);
      expect(error, name).toBeInstanceOf(EnvNotAllowedError);
      expect((error as EnvNotAllowedError).variable).toBe(name);
      expect((error as Error).message).toContain(name);
    }
  });

  it("refuses every name of issue 20 item 6, case variants included, each with its reason", () => {
    const reasons: Record<string, RegExp> = {
      CLAUDE_CODE_SESSIONS_OAUTH_TOKEN: /credential/,
      CLAUDE_CODE_RUNNER_MODEL_SOCKET: /route requests/,
      CLAUDE_CODE_CUSTOM_OAUTH_URL: /credential|route/,
      CLAUDE_CODE_OAUTH_CLIENT_ID: /credential/,
      CLAUDE_CODE_PROCESS_WRAPPER: /run code/,
      NODE_TLS_REJECT_UNAUTHORIZED: /TLS/,
      SSL_KEYLOG_FILE: /TLS/,
      CLAUDE_CODE_DEBUG_LOGS_DIR: /logs/,
      CLAUDE_ENV_FILE: /namespace/,
      CLAUDE_CODE_SHELL_PREFIX: /run code/,
      anthropic_api_key: /credential/,
      Bun_Options: /run code/,
      max_thinking_tokens: /case variant of MAX_THINKING_TOKENS/,
      HOME: /namespace/,
      CLAUDE_CODE_OAUTH_TOKEN: /credential/,
      HTTPS_PROXY: /route/,
      "A-B": /plain variable name/,
    };
    for (const [name, reason] of Object.entries(reasons)) {
      const error = refusal(name);
      expect(error, name).toBeInstanceOf(EnvNotAllowedError);
      expect((error as EnvNotAllowedError).reason, name).toMatch(reason);
      expect((error as Error).message, name).toContain(name);
    }
  });

  it("passEnv passes only allowlisted names: every listed knob, and application names outside the reserved namespaces", () => {
    fc.assert(
      fc.property(fc.constantFrom(...PASSABLE_CLI_KNOBS), (name) => {
        expect(refusal(name)).toBeUndefined();
      }),
    );
    // Any name with a credential, routing, TLS, code or logging word is refused, whatever surrounds it.
    const word = fc.constantFrom("KEY", "TOKEN", "SECRET", "PASSWORD", "AUTH", "URL", "HOST", "PROXY", "SOCKET", "TLS", "CERT", "PRELOAD", "WRAPPER", "LOG", "DEBUG");
    const part = fc.stringMatching(/^[A-Z]{0,6}$/);
    fc.assert(
      fc.property(part, word, part, fc.boolean(), (before, middle, after, lower) => {
        const name = `APP_${before}${middle}${after}`;
        expect(refusal(lower ? name.toLowerCase() : name)).toBeInstanceOf(EnvNotAllowedError);
      }),
    );
  });

  it("no allowlisted name is also denylisted", () => {
    for (const name of ALLOWED_ENV_NAMES) expect(isScrubbedEnvName(name), name).toBe(false);
    expect(isAllowedEnvName("LC_ALL")).toBe(true);
    expect(isAllowedEnvName("NODE_OPTIONS")).toBe(false);
  });

  it("keeps the user's own Claude Code OAuth token", () => {
    expect(KEPT_CREDENTIALS).toContain("CLAUDE_CODE_OAUTH_TOKEN");
    const env = createKtxClaudeCodeEnv({ CLAUDE_CODE_OAUTH_TOKEN: "oauth-token-value" });
    expect(env.CLAUDE_CODE_OAUTH_TOKEN).toBe("oauth-token-value");
  });

  it("removes the nested-session guard and NODE_OPTIONS", () => {
    const env = createKtxClaudeCodeEnv({ CLAUDECODE: "1", NODE_OPTIONS: "--inspect", CLAUDE_CODE_ENTRYPOINT: "cli" });
    expect(env).not.toHaveProperty("CLAUDECODE");
    expect(env).not.toHaveProperty("NODE_OPTIONS");
    expect(env).not.toHaveProperty("CLAUDE_CODE_ENTRYPOINT");
  });

  it("always disables the autoupdater and by default non-essential traffic, with an opt-out for the latter", () => {
    expect(createKtxClaudeCodeEnv({ DISABLE_AUTOUPDATER: "0" }).DISABLE_AUTOUPDATER).toBe("1");
    expect(createKtxClaudeCodeEnv({}).CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC).toBe("1");
    expect(createKtxClaudeCodeEnv({}, { disableNonessentialTraffic: false })).not.toHaveProperty("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC");
  });

  it("turns legacy Opus remapping and auto-compaction off, whatever the caller's environment says", () => {
    const env = createKtxClaudeCodeEnv({ CLAUDE_CODE_DISABLE_LEGACY_MODEL_REMAP: "0", DISABLE_AUTO_COMPACT: "" });
    expect([env.CLAUDE_CODE_DISABLE_LEGACY_MODEL_REMAP, env.DISABLE_AUTO_COMPACT]).toEqual(["1", "1"]);
    expect(() => createKtxClaudeCodeEnv({}, { passEnv: ["DISABLE_AUTO_COMPACT"] })).toThrow(EnvNotAllowedError);
  });

  it("leaves auto-compaction on only for a session's compaction, its window only from the option", () => {
    const caller = { DISABLE_AUTO_COMPACT: "1", DISABLE_COMPACT: "1", CLAUDE_CODE_AUTO_COMPACT_WINDOW: "5000", CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: "1" };
    const auto = createKtxClaudeCodeEnv(caller, { compaction: {} });
    expect([auto.DISABLE_AUTO_COMPACT, auto.DISABLE_COMPACT, auto.CLAUDE_CODE_AUTO_COMPACT_WINDOW, auto.CLAUDE_AUTOCOMPACT_PCT_OVERRIDE]).toEqual([undefined, undefined, undefined, undefined]);
    expect(createKtxClaudeCodeEnv(caller, { compaction: { windowTokens: 100_000 } }).CLAUDE_CODE_AUTO_COMPACT_WINDOW).toBe("100000");
    expect(createKtxClaudeCodeEnv(caller).DISABLE_AUTO_COMPACT).toBe("1");
  });

  it("turns the CLI's token-budget reminder off, and sets the library's launch settings last", () => {
    expect(createKtxClaudeCodeEnv({ CLAUDE_CODE_TOTAL_TOKENS_REMINDER: "padded-countdown" }).CLAUDE_CODE_TOTAL_TOKENS_REMINDER).toBe("off");
    // The reminder switch cannot come from the caller's environment; a passed MAX_THINKING_TOKENS yields to the `thinking` option.
    expect(() => createKtxClaudeCodeEnv({}, { passEnv: ["CLAUDE_CODE_TOTAL_TOKENS_REMINDER"] })).toThrow(EnvNotAllowedError);
    const env = createKtxClaudeCodeEnv({ MAX_THINKING_TOKENS: "9" }, { passEnv: ["MAX_THINKING_TOKENS"], launchSettings: { MAX_THINKING_TOKENS: "0" } });
    expect(env.MAX_THINKING_TOKENS).toBe("0");
  });

  it("sets a base URL and key only from an explicit apiEndpoint, never from the environment", () => {
    const fromEnv = createKtxClaudeCodeEnv({ ANTHROPIC_BASE_URL: "http://127.0.0.1:1", ANTHROPIC_API_KEY: "sk-parent" });
    expect(fromEnv).not.toHaveProperty("ANTHROPIC_BASE_URL");
    const explicit = createKtxClaudeCodeEnv(
      { ANTHROPIC_BASE_URL: "http://127.0.0.1:1", ANTHROPIC_API_KEY: "sk-parent" },
      { apiEndpoint: { baseUrl: "http://127.0.0.1:2", apiKey: "sk-test" } },
    );
    expect(explicit.ANTHROPIC_BASE_URL).toBe("http://127.0.0.1:2");
    expect(explicit.ANTHROPIC_API_KEY).toBe("sk-test");
  });

  it("drops undefined values and does not mutate its input", () => {
    const input = { A: "1", B: undefined, ANTHROPIC_API_KEY: "k" };
    const env = createKtxClaudeCodeEnv(input, { passEnv: ["A", "B"] });
    expect(env.A).toBe("1");
    expect(env).not.toHaveProperty("B");
    expect(input.ANTHROPIC_API_KEY).toBe("k");
  });

  it("classifies names", () => {
    expect(isScrubbedEnvName("ANTHROPIC_AUTH_TOKEN")).toBe(true);
    expect(isScrubbedEnvName("AI_GATEWAY_API_KEY")).toBe(true);
    expect(isScrubbedEnvName("HOME")).toBe(false);
    expect(isScrubbedEnvName("CLAUDE_CODE_OAUTH_TOKEN")).toBe(false);
  });
});

function refusal(name: string): unknown {
  try {
    createKtxClaudeCodeEnv({ [name]: "x" }, { passEnv: [name] });
    return undefined;
  } catch (caught) {
    return caught;
  }
}
