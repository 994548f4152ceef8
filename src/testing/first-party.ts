/**
 * The scripted API's first-party mode: the CLI talks to `api.anthropic.com` as a logged-in user does
 * (no base URL), through `HTTPS_PROXY` on 127.0.0.1. This front terminates the CLI's TLS with a test
 * CA (trusted by the child through `NODE_EXTRA_CA_CERTS`) and hands every decrypted request to the
 * scripted API; a CONNECT to any other host is refused and recorded. The login is a throwaway
 * credentials file (`~/.claude/.credentials.json` with `claudeAiOauth`), which the CLI needs to take
 * the first-party path; the front answers the OAuth profile and token refresh it asks for.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryCa } from "../claude-code/wire/ca.js";
import { startTlsProxy } from "../claude-code/wire/tls-proxy.js";

/** Hosts the first-party front serves: the Messages API and the OAuth token endpoint. */
export const FIRST_PARTY_HOSTS = ["api.anthropic.com", "platform.claude.com"] as const;

export const SCRIPTED_ACCESS_TOKEN = "sk-ant-oat01-scripted-first-party-access";
export const SCRIPTED_REFRESH_TOKEN = "sk-ant-ort01-scripted-first-party-refresh";
/** The key of the Console (API-key) login `login(home, { console: true })` writes. */
export const SCRIPTED_CONSOLE_KEY = "sk-ant-api03-scripted-console-login-key";

export interface FirstPartyFront {
  /** `http://127.0.0.1:<port>`: the child's `HTTPS_PROXY`. */
  readonly proxyUrl: string;
  /** The test CA, PEM, and a file holding it (the child's `NODE_EXTRA_CA_CERTS`); removed on close. */
  readonly caPem: string;
  readonly caFile: string;
  /** CONNECT targets refused (any host but the first-party ones), as `host:port`. */
  readonly refused: string[];
  /** CONNECTs accepted (one per connection the client opened). */
  readonly connects: number;
  /** Writes a claude.ai login into `home` (`.claude/.credentials.json`); `expired` makes the CLI refresh it first; `usedBefore` also caches the account as after a first profile fetch; `console` writes a Console (API-key) login instead (`writeScriptedLogin`). */
  login(home: string, options?: { expired?: boolean; usedBefore?: boolean; console?: boolean }): string;
  /** The proxy and CA variables a child needs to reach this front. */
  env(): { HTTPS_PROXY: string; NODE_EXTRA_CA_CERTS: string };
  close(): Promise<void>;
}

/** Answers for the login endpoints a first-party CLI calls (undefined for any other request). */
export function loginAnswer(request: { method: string; path: string }): object | undefined {
  if (request.method === "GET" && request.path === "/api/oauth/profile") {
    return {
      account: { uuid: "00000000-0000-4000-8000-000000000001", email: "scripted@example.invalid", full_name: "Scripted User", display_name: "Scripted", has_claude_max: true, has_claude_pro: false },
      organization: { uuid: "00000000-0000-4000-8000-000000000002", name: "Scripted Org", organization_type: "claude_max", billing_type: "stripe_subscription", rate_limit_tier: "default_claude_max_20x" },
    };
  }
  if (request.method === "POST" && request.path === "/v1/oauth/token") {
    return { access_token: SCRIPTED_ACCESS_TOKEN, refresh_token: SCRIPTED_REFRESH_TOKEN, expires_in: 28_800, token_type: "Bearer", scope: "user:inference user:profile user:sessions:claude_code" };
  }
  return undefined;
}

/**
 * Writes the throwaway claude.ai login the first-party front accepts into `home` (`.claude/.credentials.json`),
 * as `FirstPartyFront.login` does; for a front running in another process (the bench). `expired` makes the CLI refresh it first.
 * `usedBefore` also writes the account the CLI caches in `~/.claude.json` after its first profile fetch, as a real
 * user's login has: with it, 2.1.330 puts the account context (`userEmail`) into every call's first user turn;
 * without it, only once the profile has come back (the first process in a HOME races its own profile request).
 * `console`: a Console (API-key) login instead, as `claude auth login --console` leaves it: a `primaryApiKey` in
 * `~/.claude.json` and no OAuth credentials. The CLI then sends `x-api-key` and fetches the organisation's
 * `/api/claude_code/settings` and `/api/claude_code/policy_limits` (the front answers them 404, which the CLI takes as none).
 */
export function writeScriptedLogin(home: string, options: { expired?: boolean; usedBefore?: boolean; console?: boolean } = {}): string {
  if (options.console) {
    writeFileSync(join(home, ".claude.json"), JSON.stringify({ primaryApiKey: SCRIPTED_CONSOLE_KEY }), { mode: 0o600 });
    return home;
  }
  if (options.usedBefore) {
    const profile = loginAnswer({ method: "GET", path: "/api/oauth/profile" }) as { account: Record<string, unknown>; organization: Record<string, unknown> };
    const oauthAccount = {
      accountUuid: profile.account.uuid,
      emailAddress: profile.account.email,
      organizationUuid: profile.organization.uuid,
      hasExtraUsageEnabled: false,
      billingType: profile.organization.billing_type,
      displayName: profile.account.display_name,
      fullName: profile.account.full_name,
      profileFetchedAt: Date.now(),
    };
    writeFileSync(join(home, ".claude.json"), JSON.stringify({ oauthAccount }), { mode: 0o600 });
  }
  const config = join(home, ".claude");
  mkdirSync(config, { recursive: true });
  const credentials = {
    claudeAiOauth: {
      accessToken: SCRIPTED_ACCESS_TOKEN,
      refreshToken: SCRIPTED_REFRESH_TOKEN,
      expiresAt: Date.now() + (options.expired ? -3600_000 : 8 * 3600_000),
      scopes: ["user:inference", "user:profile", "user:sessions:claude_code"],
      subscriptionType: "max",
      rateLimitTier: "default_claude_max_20x",
    },
  };
  writeFileSync(join(config, ".credentials.json"), JSON.stringify(credentials), { mode: 0o600 });
  return home;
}

export async function startFirstPartyFront(handle: (request: IncomingMessage, response: ServerResponse) => void): Promise<FirstPartyFront> {
  const ca = await createMemoryCa({ name: "ktx-claude-code test CA", hosts: FIRST_PARTY_HOSTS });
  const dir = mkdtempSync(join(tmpdir(), "ktx-first-party-"));
  const caFile = join(dir, "ca.pem");
  writeFileSync(caFile, ca.certPem, { mode: 0o600 });
  const refused: string[] = [];
  let connects = 0;
  const proxy = await startTlsProxy<undefined>({
    ca,
    onConnect: (target) => {
      if ((FIRST_PARTY_HOSTS as readonly string[]).includes(target.host) && target.port === 443) {
        connects += 1;
        return { accept: true, tag: undefined };
      }
      refused.push(`${target.host}:${target.port}`);
      return { accept: false, status: 403, reason: "Forbidden by the first-party test front" };
    },
    onRequest: (request, response) => handle(request, response),
    onPlainRequest: (request, response) => {
      refused.push(`${request.method} ${request.url}`);
      response.writeHead(403).end();
    },
  });
  const proxyUrl = `http://127.0.0.1:${proxy.port}`;
  let closed: Promise<void> | undefined;
  return {
    proxyUrl,
    caPem: ca.certPem,
    caFile,
    refused,
    get connects() {
      return connects;
    },
    login: (home, options = {}) => writeScriptedLogin(home, options),
    env: () => ({ HTTPS_PROXY: proxyUrl, NODE_EXTRA_CA_CERTS: caFile }),
    close: () =>
      (closed ??= proxy.close().finally(() => rmSync(dir, { recursive: true, force: true }))),
  };
}
