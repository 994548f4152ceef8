import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { accountFailure, callLogin, checkBeforeStart, describeRoute, loginAhead, loginFor, networkRoute } from "../../src/claude-code/checks/billing.js";
import { InvalidInputError, IsolationError, SubscriptionRequiredError, TranscriptWriteError } from "../../src/errors/index.js";
import { openRunTranscript } from "../../src/transcripts/recorder.js";
import { cleanup, tempFiles } from "../support.js";

const temp = (files: Record<string, string> = {}) => tempFiles("billing", files);
afterAll(cleanup);

const expected = { toolIds: [], structuredOutput: false, apiKeyAllowed: false, cwd: "/" };

describe("the login a call bills to", () => {
  it("tells a subscription, a Console /login key and no login apart from the account block", () => {
    // A claude.ai subscriber: the CLI reports subscriptionType, not tokenSource.
    expect(callLogin({ apiKeySource: "none", subscriptionType: "max", organization: "Acme" })).toEqual({ billing: "subscription", source: "claude.ai", subscriptionType: "max", organization: "Acme" });
    expect(callLogin({ tokenSource: "CLAUDE_CODE_OAUTH_TOKEN" })).toEqual({ billing: "subscription", source: "CLAUDE_CODE_OAUTH_TOKEN" });
    // A subscriber's OAuth wins over a key the CLI also holds: the key is shown, not billed.
    expect(callLogin({ tokenSource: "CLAUDE_CODE_OAUTH_TOKEN", apiKeySource: "/login managed key" })).toEqual({ billing: "subscription", source: "CLAUDE_CODE_OAUTH_TOKEN", unusedApiKey: "/login managed key" });
    expect(callLogin({ subscriptionType: "pro", apiKeySource: "/login managed key" })).toMatchObject({ billing: "subscription", unusedApiKey: "/login managed key" });
    // No subscriber login: the key is what the requests carry.
    expect(callLogin({ tokenSource: "none", apiKeySource: "/login managed key" })).toEqual({ billing: "api-key", source: "/login managed key" });
    expect(callLogin({ tokenSource: "none" })).toEqual({ billing: "none", source: "none" });
    // A later call of a reused process: only init.apiKeySource is new.
    expect(callLogin(undefined, { apiKeySource: "/login managed key" }).billing).toBe("api-key");
  });

  it("refuses API-key billing in the initialize reply only when the caller requires the subscription", () => {
    const response = { account: { tokenSource: "none", apiKeySource: "/login managed key", apiProvider: "firstParty" } };
    const key = {};
    expect(accountFailure(response, expected, key)).toBeUndefined();
    expect(loginFor(key, undefined)).toEqual({ billing: "api-key", source: "/login managed key" });
    const failure = accountFailure(response, { ...expected, requireSubscription: true }, {});
    expect(failure).toBeInstanceOf(SubscriptionRequiredError);
    expect(failure?.code).toBe("subscription_required");
    expect(failure?.message).toMatch(/\/login managed key, found in the initialize reply.*claude \/logout/);
    expect(accountFailure({ account: { tokenSource: "claude.ai" } }, { ...expected, requireSubscription: true }, {})).toBeUndefined();
    // A credential leak stays an isolation failure.
    expect(accountFailure({ account: { apiKeySource: "apiKeyHelper" } }, { ...expected, requireSubscription: true }, {})).toBeInstanceOf(IsolationError);
  });

  it("reads a planted primaryApiKey ahead, from ~/.claude.json or $CLAUDE_CONFIG_DIR/.claude.json, and refuses it before any process when required", () => {
    const home = temp({ ".claude.json": JSON.stringify({ primaryApiKey: "sk-ant-planted" }) });
    expect(loginAhead({ HOME: home })).toEqual({ billing: "api-key", source: `primaryApiKey in ${join(home, ".claude.json")}` });
    const configDir = temp({ ".claude.json": JSON.stringify({ primaryApiKey: "sk-ant-planted" }) });
    expect(loginAhead({ HOME: temp(), CLAUDE_CONFIG_DIR: configDir })?.source).toBe(`primaryApiKey in ${join(configDir, ".claude.json")}`);
    expect(loginAhead({ HOME: temp(), CLAUDE_CODE_OAUTH_TOKEN: "t" })).toEqual({ billing: "subscription", source: "CLAUDE_CODE_OAUTH_TOKEN" });
    // Beside an OAuth login the key is not sent, but it is shown and, when the subscription is required, refused.
    expect(loginAhead({ HOME: home, CLAUDE_CODE_OAUTH_TOKEN: "t" })).toEqual({ billing: "subscription", source: "CLAUDE_CODE_OAUTH_TOKEN", unusedApiKey: `primaryApiKey in ${join(home, ".claude.json")}` });
    expect(() => checkBeforeStart({ env: { HOME: home, CLAUDE_CODE_OAUTH_TOKEN: "t" }, requireSubscription: true })).toThrow(/holds an API key beside your OAuth login .*primaryApiKey in .*found in the read ahead/);
    expect(loginAhead({ HOME: temp({ ".claude/.credentials.json": "{}" }) })).toEqual({ billing: "subscription", source: "claude.ai" });
    expect(loginAhead({ HOME: temp() })).toBeUndefined();
    expect(() => checkBeforeStart({ env: { HOME: home }, requireSubscription: true })).toThrow(SubscriptionRequiredError);
    expect(() => checkBeforeStart({ env: { HOME: home } })).not.toThrow();
  });

  it("refuses remote-settings.json hooks and env before any process starts, with the user's advice", () => {
    const home = temp({ ".claude/remote-settings.json": JSON.stringify({ hooks: { SessionStart: [] } }) });
    expect(() => checkBeforeStart({ env: { HOME: home } })).toThrow(/remote-settings\.json sets hooks.*delete the file/);
  });
});

describe("what can route requests", () => {
  it("shows proxies (credentials redacted), CA bundles and client certificates the child was given", () => {
    const route = networkRoute({ HTTPS_PROXY: "http://user:pw@proxy.corp:3128", NO_PROXY: "localhost", NODE_EXTRA_CA_CERTS: "/etc/corp-ca.pem", CLAUDE_CODE_CLIENT_CERT: "/c.pem", PATH: "/bin" });
    expect(route).toEqual({ proxies: { HTTPS_PROXY: "http://[REDACTED]@proxy.corp:3128", NO_PROXY: "localhost" }, trustedCa: { NODE_EXTRA_CA_CERTS: "/etc/corp-ca.pem" }, clientCertificate: ["CLAUDE_CODE_CLIENT_CERT"] });
    expect(describeRoute(route)).toMatch(/HTTPS_PROXY=http:\/\/\[REDACTED\]@proxy\.corp:3128; NO_PROXY=localhost; NODE_EXTRA_CA_CERTS=\/etc\/corp-ca\.pem; client certificate/);
    expect(describeRoute(networkRoute({}))).toMatch(/^direct/);
  });
});

describe("transcript names", () => {
  it("a name with a separator or .. is an InvalidInputError and writes nothing outside dir", async () => {
    const root = temp();
    const dir = join(root, "transcripts");
    for (const name of ["../x", "../../x", "a/b", "a\\b", "..", "", "x\0y"]) {
      await expect(openRunTranscript(dir, { name, secrets: [] }), name).rejects.toBeInstanceOf(InvalidInputError);
    }
    expect(readdirSync(root)).toEqual([]);
  });

  it("a file-system failure is a TranscriptWriteError naming the path", async () => {
    const file = join(temp({ "file": "x" }), "file");
    const error = await openRunTranscript(join(file, "sub"), { name: "run", secrets: [] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TranscriptWriteError);
    expect((error as TranscriptWriteError).code).toBe("transcript_write_failed");
    expect((error as Error).message).toMatch(/Could not create the transcript directory .*file\/sub \((ENOTDIR|EEXIST)\)/);
  });
});
