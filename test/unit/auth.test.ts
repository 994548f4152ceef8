/**
 * The `auth` option (src/transport/auth.ts): each kind's variables reach the child's environment and nothing
 * else of the caller's does; a missing credential fails with its advice before any process starts; the
 * contradictions are refused; the initialize reply must show the kind chosen.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ClaudeCodeHost } from "../../src/claude-code/host.js";
import { ClaudeCodeRuntime } from "../../src/claude-code/runtime.js";
import { interceptorState, loginAhead } from "../../src/claude-code/checks/billing.js";
import { checkAccount } from "../../src/claude-code/checks/isolation.js";
import { AuthConfigError, EnvNotAllowedError, InvalidInputError } from "../../src/errors/index.js";
import { type AuthOption, authEnv, authVariableNames } from "../../src/transport/auth.js";
import { createKtxClaudeCodeEnv } from "../../src/transport/env.js";
import { script, tempDir } from "../support.js";

/** A caller's environment holding every provider's variables and the user's own login token. */
const callerEnv = (): Record<string, string> => ({
  PATH: "/usr/bin:/bin",
  HOME: tempDir("home"),
  CLAUDE_CODE_OAUTH_TOKEN: "sk-ant-oat01-user-login",
  ANTHROPIC_API_KEY: "sk-ant-api03-caller",
  ANTHROPIC_BASE_URL: "https://gateway.example",
  AWS_REGION: "eu-west-1",
  AWS_ACCESS_KEY_ID: "AKIACALLER",
  AWS_SECRET_ACCESS_KEY: "caller-secret",
  AWS_PROFILE: "caller",
  CLOUD_ML_REGION: "us-east5",
  ANTHROPIC_VERTEX_PROJECT_ID: "caller-project",
  GOOGLE_APPLICATION_CREDENTIALS: "/caller/creds.json",
  ANTHROPIC_FOUNDRY_RESOURCE: "caller-resource",
  ANTHROPIC_FOUNDRY_API_KEY: "caller-foundry-key",
  CLAUDE_CODE_USE_BEDROCK: "1",
  DB_PASSWORD: "hunter2",
});

/** The variables a child gets beyond the login's (the library's own switches left out). */
function added(auth: AuthOption, env = callerEnv(), passEnv?: string[]): Record<string, string> {
  const base = createKtxClaudeCodeEnv(env, {});
  const child = createKtxClaudeCodeEnv(env, { auth, passEnv });
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(child)) if (base[name] !== value) out[name] = value;
  for (const name of Object.keys(base)) if (!(name in child)) out[name] = "(removed)";
  return out;
}

describe("each kind passes exactly its own variables", () => {
  it("login (the default) is today's environment", () => {
    const env = callerEnv();
    expect(createKtxClaudeCodeEnv(env, { auth: { kind: "login" } })).toEqual(createKtxClaudeCodeEnv(env, {}));
  });

  it("apiKey from the option: ANTHROPIC_API_KEY set, the login's token variable removed, the caller's key unused", () => {
    expect(added({ kind: "apiKey", apiKey: "sk-ant-api03-option" })).toEqual({ ANTHROPIC_API_KEY: "sk-ant-api03-option", CLAUDE_CODE_OAUTH_TOKEN: "(removed)" });
  });

  it("apiKey from env when named in passEnv", () => {
    expect(added({ kind: "apiKey" }, callerEnv(), ["ANTHROPIC_API_KEY"])).toEqual({ ANTHROPIC_API_KEY: "sk-ant-api03-caller", CLAUDE_CODE_OAUTH_TOKEN: "(removed)" });
  });

  it("oauthToken: only the token given", () => {
    expect(added({ kind: "oauthToken", token: "sk-ant-oat01-setup-token" })).toEqual({ CLAUDE_CODE_OAUTH_TOKEN: "sk-ant-oat01-setup-token" });
  });

  it("bedrock: the switch, region and credential; none of the caller's other AWS variables", () => {
    expect(added({ kind: "bedrock", region: "us-west-2", bearerToken: "bedrock-bearer" })).toEqual({
      CLAUDE_CODE_USE_BEDROCK: "1",
      AWS_REGION: "us-west-2",
      AWS_BEARER_TOKEN_BEDROCK: "bedrock-bearer",
      CLAUDE_CODE_OAUTH_TOKEN: "(removed)",
    });
    expect(added({ kind: "bedrock" }, callerEnv(), ["AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"])).toEqual({
      CLAUDE_CODE_USE_BEDROCK: "1",
      AWS_REGION: "eu-west-1",
      AWS_ACCESS_KEY_ID: "AKIACALLER",
      AWS_SECRET_ACCESS_KEY: "caller-secret",
      CLAUDE_CODE_OAUTH_TOKEN: "(removed)",
    });
  });

  it("vertex: the switch, region, project and credentials file", () => {
    expect(added({ kind: "vertex", region: "europe-west4", projectId: "p1", credentialsFile: "/k.json" })).toEqual({
      CLAUDE_CODE_USE_VERTEX: "1",
      CLOUD_ML_REGION: "europe-west4",
      ANTHROPIC_VERTEX_PROJECT_ID: "p1",
      GOOGLE_APPLICATION_CREDENTIALS: "/k.json",
      CLAUDE_CODE_OAUTH_TOKEN: "(removed)",
    });
  });

  it("vertex with gcloud's application-default credentials in HOME needs no credentials file", () => {
    const env = callerEnv();
    mkdirSync(join(env.HOME!, ".config", "gcloud"), { recursive: true });
    writeFileSync(join(env.HOME!, ".config", "gcloud", "application_default_credentials.json"), "{}");
    expect(added({ kind: "vertex", region: "us-east5", projectId: "p1" }, env)).toEqual({ CLAUDE_CODE_USE_VERTEX: "1", CLOUD_ML_REGION: "us-east5", ANTHROPIC_VERTEX_PROJECT_ID: "p1", CLAUDE_CODE_OAUTH_TOKEN: "(removed)" });
  });

  it("foundry: the switch, resource and key", () => {
    expect(added({ kind: "foundry", resource: "r1", apiKey: "foundry-key" })).toEqual({ CLAUDE_CODE_USE_FOUNDRY: "1", ANTHROPIC_FOUNDRY_RESOURCE: "r1", ANTHROPIC_FOUNDRY_API_KEY: "foundry-key", CLAUDE_CODE_OAUTH_TOKEN: "(removed)" });
  });

  it("skipAuth with a loopback base URL (a gateway or test endpoint): the skip switch, and loopback exempt from the proxy", () => {
    const env = { ...callerEnv(), HTTPS_PROXY: "http://proxy.example:8080" };
    const child = createKtxClaudeCodeEnv(env, { auth: { kind: "vertex", region: "us-east5", projectId: "p1", baseUrl: "http://127.0.0.1:9/v1", skipAuth: true } });
    expect(child).toMatchObject({ CLAUDE_CODE_USE_VERTEX: "1", CLAUDE_CODE_SKIP_VERTEX_AUTH: "1", ANTHROPIC_VERTEX_BASE_URL: "http://127.0.0.1:9/v1" });
    expect(child.NO_PROXY).toContain("127.0.0.1");
    expect(child.GOOGLE_APPLICATION_CREDENTIALS).toBeUndefined();
  });

  it("every variable a kind sets is read by the bundled CLI (names checked against the binary in docs/options.md)", () => {
    const all = (["apiKey", "oauthToken", "bedrock", "vertex", "foundry"] as const).flatMap((kind) => authVariableNames({ kind } as AuthOption));
    expect(all).toEqual(expect.arrayContaining(["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "AWS_REGION", "CLAUDE_CODE_USE_VERTEX", "CLOUD_ML_REGION", "ANTHROPIC_VERTEX_PROJECT_ID", "CLAUDE_CODE_USE_FOUNDRY", "ANTHROPIC_FOUNDRY_RESOURCE"]));
  });
});

describe("a missing credential fails before any process starts, with its advice", () => {
  const empty = () => ({ PATH: "/usr/bin:/bin", HOME: tempDir("home") });
  const cases: Array<[AuthOption, RegExp]> = [
    [{ kind: "apiKey" }, /an API key \(auth\.apiKey, or ANTHROPIC_API_KEY in env named in passEnv\)/],
    [{ kind: "oauthToken" }, /an OAuth token from `claude setup-token` \(auth\.token, or CLAUDE_CODE_OAUTH_TOKEN/],
    [{ kind: "bedrock", region: "us-east-1" }, /an AWS credential: auth\.bearerToken \(AWS_BEARER_TOKEN_BEDROCK\), auth\.profile \(AWS_PROFILE/],
    [{ kind: "bedrock", bearerToken: "t" }, /the AWS region \(auth\.region, or AWS_REGION named in passEnv\)/],
    [{ kind: "vertex", region: "us-east5" }, /the Google Cloud project \(auth\.projectId[\s\S]*a Google credential: auth\.credentialsFile/],
    [{ kind: "foundry", apiKey: "k" }, /the Foundry resource: auth\.resource/],
    [{ kind: "foundry", resource: "r" }, /a Foundry credential: auth\.apiKey \(ANTHROPIC_FOUNDRY_API_KEY\) or auth\.authToken/],
  ];
  for (const [auth, advice] of cases) {
    it(`${JSON.stringify(auth)}`, () => {
      const marker = join(tempDir("marker"), "started");
      const cliPath = script("claude", `touch '${marker}'\nexit 1`);
      let error: unknown;
      try {
        new ClaudeCodeRuntime({ projectDir: tempDir("project"), models: { default: "sonnet" }, cliPath, env: empty(), auth });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(AuthConfigError);
      expect((error as AuthConfigError).code).toBe("auth_config");
      expect((error as AuthConfigError).kind).toBe(auth.kind);
      expect((error as Error).message).toMatch(advice);
      expect((error as Error).message).toMatch(/no process was started[\s\S]*Nothing falls back to another login or provider/);
      expect(existsSync(marker)).toBe(false);
    });
  }

  it("the caller's variable is not taken unless named in passEnv", () => {
    expect(() => authEnv({ kind: "apiKey" }, { ANTHROPIC_API_KEY: "sk-ant-api03-caller" }, [])).toThrow(AuthConfigError);
  });

  it("the host refuses it at construction too", () => {
    expect(() => new ClaudeCodeHost({ projectDir: tempDir("project"), env: { PATH: "/bin" }, auth: { kind: "oauthToken" } })).toThrow(AuthConfigError);
  });

  it("skipAuth without a base URL", () => {
    expect(() => authEnv({ kind: "bedrock", region: "us-east-1", skipAuth: true }, {})).toThrow(/skipAuth is set without a base URL/);
  });
});

describe("option validation", () => {
  const base = { projectDir: tempDir("project"), models: { default: "sonnet" }, env: { PATH: "/bin" } };
  it("passEnv may name the chosen kind's own variables, and no other kind's", () => {
    expect(() => new ClaudeCodeRuntime({ ...base, env: { PATH: "/bin", ANTHROPIC_API_KEY: "k" }, auth: { kind: "apiKey" }, passEnv: ["ANTHROPIC_API_KEY"] })).not.toThrow();
    expect(() => new ClaudeCodeRuntime({ ...base, auth: { kind: "apiKey", apiKey: "k" }, passEnv: ["AWS_REGION"] })).toThrow(EnvNotAllowedError);
    expect(() => new ClaudeCodeRuntime({ ...base, passEnv: ["ANTHROPIC_API_KEY"] })).toThrow(EnvNotAllowedError);
  });

  it("requireSubscription with an API key or a cloud is a contradiction; with an OAuth token it is not", () => {
    for (const auth of [{ kind: "apiKey", apiKey: "k" }, { kind: "bedrock", region: "r", bearerToken: "t" }] as AuthOption[]) {
      const error = (() => {
        try {
          new ClaudeCodeRuntime({ ...base, auth, requireSubscription: true });
        } catch (caught) {
          return caught as InvalidInputError;
        }
      })();
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error!.field).toBe("requireSubscription");
      expect(error!.message).toMatch(/is never one; drop requireSubscription/);
    }
    expect(() => new ClaudeCodeRuntime({ ...base, auth: { kind: "oauthToken", token: "t" }, requireSubscription: true })).not.toThrow();
  });

  it("auth with an apiEndpoint is refused; unknown fields are refused by the schema", () => {
    expect(() => new ClaudeCodeRuntime({ ...base, auth: { kind: "apiKey", apiKey: "k" }, apiEndpoint: { baseUrl: "http://127.0.0.1:1", apiKey: "x" } })).toThrow(/both name a credential/);
    expect(() => new ClaudeCodeRuntime({ ...base, auth: { kind: "apiKey", key: "k" } as never })).toThrow(InvalidInputError);
  });
});

describe("the interceptor, the login read ahead and the account check follow the kind", () => {
  it("cloud kinds run without the interceptor (\"cloud\"); apiKey and oauthToken behind it", () => {
    expect(interceptorState({ auth: { kind: "bedrock" } })).toBe("cloud");
    expect(interceptorState({ auth: { kind: "vertex" } })).toBe("cloud");
    expect(interceptorState({ auth: { kind: "foundry" } })).toBe("cloud");
    expect(interceptorState({ auth: { kind: "apiKey" } })).toBe("on");
    expect(interceptorState({ auth: { kind: "oauthToken" } })).toBe("on");
  });

  it("the login read ahead names the kind", () => {
    expect(loginAhead({ HOME: tempDir("home") }, "apiKey", { kind: "apiKey" })).toEqual({ billing: "api-key", source: "ANTHROPIC_API_KEY", auth: "apiKey" });
    expect(loginAhead({ HOME: tempDir("home") }, "oauthToken", { kind: "oauthToken" })).toMatchObject({ billing: "subscription", source: "CLAUDE_CODE_OAUTH_TOKEN", auth: "oauthToken" });
    expect(loginAhead({ HOME: tempDir("home") }, undefined, { kind: "vertex" })).toEqual({ billing: "cloud", source: "vertex", auth: "vertex" });
  });

  const surface = { toolIds: [], structuredOutput: false, apiKeyAllowed: false, cwd: "/" };
  it("apiKey: the reply must show ANTHROPIC_API_KEY (a stored login key or the OAuth login is refused)", () => {
    const expected = { ...surface, apiKeyAllowed: true, explicitCredential: "apiKey" as const, auth: { kind: "apiKey" as const, provider: "firstParty", variables: ["ANTHROPIC_API_KEY"] } };
    expect(checkAccount({ account: { apiKeySource: "ANTHROPIC_API_KEY", apiProvider: "firstParty" } }, expected)).toEqual([]);
    expect(checkAccount({ account: { apiKeySource: "/login managed key", apiProvider: "firstParty" } }, expected).join()).toMatch(/not "ANTHROPIC_API_KEY"/);
    expect(checkAccount({ account: { tokenSource: "claude.ai", apiProvider: "firstParty" } }, expected).join()).toMatch(/not "ANTHROPIC_API_KEY"/);
  });

  it("oauthToken: the reply must show CLAUDE_CODE_OAUTH_TOKEN", () => {
    const expected = { ...surface, explicitCredential: "oauthToken" as const, auth: { kind: "oauthToken" as const, provider: "firstParty", variables: ["CLAUDE_CODE_OAUTH_TOKEN"] } };
    expect(checkAccount({ account: { tokenSource: "CLAUDE_CODE_OAUTH_TOKEN", apiProvider: "firstParty" } }, expected)).toEqual([]);
    expect(checkAccount({ account: { tokenSource: "claude.ai", apiProvider: "firstParty" } }, expected).join()).toMatch(/not "CLAUDE_CODE_OAUTH_TOKEN"/);
  });

  it("a cloud kind: the reply must show that provider, and its own key variable is not a leak", () => {
    const expected = { ...surface, auth: { kind: "foundry" as const, provider: "foundry", variables: ["ANTHROPIC_FOUNDRY_API_KEY"] } };
    expect(checkAccount({ account: { apiProvider: "foundry", apiKeySource: "ANTHROPIC_FOUNDRY_API_KEY" } }, expected)).toEqual([]);
    expect(checkAccount({ account: { apiProvider: "firstParty" } }, expected).join()).toMatch(/apiProvider was "firstParty", not "foundry"/);
    expect(checkAccount({ account: { apiProvider: "bedrock" } }, surface).join()).toMatch(/another provider than Anthropic/);
  });
});
