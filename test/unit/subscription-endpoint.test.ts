/** Subscription mode of the scripted API: usage-limit headers, the OAuth endpoint, its env and isolation rules. */
import { afterEach, describe, expect, it } from "vitest";
import { checkAccount } from "../../src/claude-code/checks/isolation.js";
import { rateLimitHeaders } from "../../src/testing/rate-limit-headers.js";
import { SCRIPTED_OAUTH_TOKEN, type ScriptedMessagesApi, startScriptedMessagesApi, turn } from "../../src/testing/scripted-api.js";
import { secretValues } from "../../src/transcripts/redact.js";
import { createKtxClaudeCodeEnv } from "../../src/transport/env.js";

const open: ScriptedMessagesApi[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((api) => api.close()));
});

const post = (api: ScriptedMessagesApi) =>
  fetch(`${api.baseUrl}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${SCRIPTED_OAUTH_TOKEN}` },
    body: JSON.stringify({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }),
  });

describe("usage-limit headers", () => {
  it("writes the overall status, reset (unix seconds, rounded up) and claim, and per-window figures", () => {
    const resetsAt = new Date(1_800_000_000_500);
    const headers = rateLimitHeaders({ status: "allowed_warning", utilization: 0.91, resetsAt, otherWindows: { seven_day: { utilization: 0.4, resetsAt: new Date(1_800_500_000_000) } } });
    expect(headers).toEqual({
      "anthropic-ratelimit-unified-status": "allowed_warning",
      "anthropic-ratelimit-unified-reset": "1800000001",
      "anthropic-ratelimit-unified-representative-claim": "five_hour",
      "anthropic-ratelimit-unified-5h-utilization": "0.91",
      "anthropic-ratelimit-unified-5h-reset": "1800000001",
      "anthropic-ratelimit-unified-5h-status": "allowed_warning",
      "anthropic-ratelimit-unified-7d-utilization": "0.4",
      "anthropic-ratelimit-unified-7d-reset": "1800500000",
      "anthropic-ratelimit-unified-7d-status": "allowed",
    });
  });

  it("defaults a window's reset to its length from now", () => {
    const now = 1_800_000_000_000;
    expect(rateLimitHeaders({ status: "allowed", window: "seven_day" }, now)["anthropic-ratelimit-unified-reset"]).toBe(String(now / 1000 + 7 * 86_400));
  });

  it("sends a turn's headers with its answer, and turns a rejected limit into a 429 usage-limit error", async () => {
    const resetsAt = new Date(Date.now() + 60_000);
    const api = await startScriptedMessagesApi([
      turn.withRateLimit(turn.text("near the limit"), { status: "allowed_warning", utilization: 0.85 }),
      turn.limitReached({ window: "seven_day", resetsAt }),
      turn.withRateLimit(turn.text("ignored"), { status: "rejected", resetsAt }),
    ]);
    open.push(api);
    const warning = await post(api);
    expect(warning.status).toBe(200);
    expect(warning.headers.get("anthropic-ratelimit-unified-5h-utilization")).toBe("0.85");
    expect(((await warning.json()) as any).content[0].text).toBe("near the limit");
    for (const claim of ["seven_day", "five_hour"]) {
      const rejected = await post(api);
      expect(rejected.status).toBe(429);
      expect(rejected.headers.get("anthropic-ratelimit-unified-status")).toBe("rejected");
      expect(rejected.headers.get("anthropic-ratelimit-unified-representative-claim")).toBe(claim);
      expect(rejected.headers.get("anthropic-ratelimit-unified-reset")).toBe(String(Math.ceil(resetsAt.getTime() / 1000)));
      expect(((await rejected.json()) as any).error.type).toBe("rate_limit_error");
    }
  });

  it("applies the server-wide rateLimit option (a function of the turn) to turns without their own", async () => {
    const api = await startScriptedMessagesApi([turn.text("a"), turn.text("b")], { rateLimit: (_request, index) => ({ status: "allowed", utilization: index / 10 }) });
    open.push(api);
    expect((await post(api)).headers.get("anthropic-ratelimit-unified-5h-utilization")).toBe("0");
    expect((await post(api)).headers.get("anthropic-ratelimit-unified-5h-utilization")).toBe("0.1");
  });
});

describe("subscription endpoint", () => {
  it("hands out an OAuth endpoint and an API-key endpoint", async () => {
    const api = await startScriptedMessagesApi([]);
    open.push(api);
    expect(api.endpoint("subscription")).toEqual({ baseUrl: api.baseUrl, oauthToken: SCRIPTED_OAUTH_TOKEN });
    expect(api.endpoint()).toEqual({ baseUrl: api.baseUrl, apiKey: "sk-test-scripted" });
  });

  it("gives the child the endpoint's OAuth token, never the parent's, and no API key", () => {
    const parent = { PATH: "/bin", CLAUDE_CODE_OAUTH_TOKEN: "the-users-real-token", ANTHROPIC_API_KEY: "sk-parent" };
    const env = createKtxClaudeCodeEnv(parent, { apiEndpoint: { baseUrl: "http://127.0.0.1:1", oauthToken: "sk-ant-oat01-test" } });
    expect(env.CLAUDE_CODE_OAUTH_TOKEN).toBe("sk-ant-oat01-test");
    expect(env.ANTHROPIC_BASE_URL).toBe("http://127.0.0.1:1");
    expect(env.ANTHROPIC_API_KEY).toBeUndefined();
    const keyed = createKtxClaudeCodeEnv(parent, { apiEndpoint: { baseUrl: "http://127.0.0.1:1", apiKey: "sk-endpoint" } });
    expect(keyed.CLAUDE_CODE_OAUTH_TOKEN).toBeUndefined();
    expect(keyed.ANTHROPIC_API_KEY).toBe("sk-endpoint");
  });

  it("redacts the endpoint's OAuth token from transcripts", () => {
    expect(secretValues({}, { baseUrl: "http://127.0.0.1:1", oauthToken: "sk-ant-oat01-secret" })).toContain("sk-ant-oat01-secret");
  });

  it("accepts the OAuth token source only when the explicit endpoint gave one", () => {
    const base = { toolIds: [], structuredOutput: false, cwd: "/tmp" };
    const account = { account: { tokenSource: "CLAUDE_CODE_OAUTH_TOKEN", apiProvider: "firstParty" } };
    expect(checkAccount(account, { ...base, apiKeyAllowed: false, explicitCredential: "oauthToken" })).toEqual([]);
    expect(checkAccount(account, { ...base, apiKeyAllowed: true, explicitCredential: "apiKey" })).toEqual([expect.stringContaining("tokenSource was \"CLAUDE_CODE_OAUTH_TOKEN\"")]);
    // A subscription endpoint does not allow an API key to appear.
    expect(checkAccount({ account: { apiKeySource: "ANTHROPIC_API_KEY" } }, { ...base, apiKeyAllowed: false, explicitCredential: "oauthToken" })).toHaveLength(1);
  });
});
