/**
 * The login a call bills to, and what can route its requests: read ahead from the files and the
 * environment before any process starts (for the transcript header and an early refusal), then
 * taken from the `account` block of the CLI's initialize reply, which arrives before the prompt is
 * sent. docs/isolation.md ("The login a call bills to") and docs/environment.md ("What can route").
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { IsolationError, SubscriptionRequiredError } from "../../errors/index.js";
import type { SystemInitMessage } from "../../protocol/messages.js";
import type { CallLogin, InterceptorState, NetworkRoute } from "../../runtime/types.js";
import type { Env } from "../../transport/env.js";
import { type AuthOption, isCloudKind } from "../../transport/auth.js";
import { isStandInCli } from "../../binary/stand-in.js";
import { NotRegularFileError, readRegularFile } from "../../transport/files.js";
import { type ExpectedSurface, checkAccount } from "./isolation.js";
import { MANAGED_POLICY_ADVICE, USER_POLICY_ADVICE, checkManagedPolicy, checkUserPolicy, claudeConfigDir } from "./managed-policy.js";

interface Account {
  tokenSource?: unknown;
  apiKeySource?: unknown;
  subscriptionType?: unknown;
  organization?: unknown;
}

export type { CallLogin, NetworkRoute };

/** Token variables the CLI treats as a subscriber's OAuth login (2.1.330: it then sends no API key). */
const ENV_TOKEN_SOURCES = new Set(["CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR"]);
const text = (value: unknown) => (typeof value === "string" && value.length > 0 ? value : undefined);

/**
 * The login from the initialize reply's `account` (or, on a later call of a reused process, only
 * `init.apiKeySource`). 2.1.330 reports `subscriptionType` for a claude.ai subscriber and `tokenSource`
 * for a token variable; `apiKeySource` whenever it holds a key, used or not. It sends the key only
 * when the login is not a subscriber's OAuth (measured: a token variable plus a planted
 * `primaryApiKey` sent `Authorization: Bearer`, no `x-api-key`), so such a key is reported as `unusedApiKey`.
 */
export function callLogin(account: Account | undefined, init?: Pick<SystemInitMessage, "apiKeySource">): CallLogin {
  const keySource = text(account?.apiKeySource) ?? text(init?.apiKeySource);
  const key = keySource && keySource !== "none" ? keySource : undefined;
  const subscriptionType = text(account?.subscriptionType);
  const tokenSource = text(account?.tokenSource);
  const extra = {
    ...(subscriptionType ? { subscriptionType } : {}),
    ...(text(account?.organization) ? { organization: text(account?.organization) } : {}),
  };
  if (subscriptionType || (tokenSource && ENV_TOKEN_SOURCES.has(tokenSource))) {
    return { billing: "subscription", source: tokenSource ?? "claude.ai", ...extra, ...(key ? { unusedApiKey: key } : {}) };
  }
  if (key) return { billing: "api-key", source: key, ...extra };
  if (tokenSource === "claude.ai") return { billing: "subscription", source: tokenSource, ...extra };
  if (!account && init) return { billing: "subscription", source: "OAuth (the process's first call has the token source)", ...extra };
  return { billing: "none", source: tokenSource ?? "none", ...extra };
}

/** The CLI's global config file(s) for this environment, where a Console `/login` saves `primaryApiKey`. */
export function globalConfigFiles(env: Env): string[] {
  const base = env.CLAUDE_CONFIG_DIR || env.HOME || env.USERPROFILE || homedir();
  return [join(base, ".claude.json"), join(claudeConfigDir(env), ".config.json")];
}

/**
 * The login the CLI will use, read ahead: an explicit endpoint's credential, the OAuth token variable
 * or the credentials file (a subscriber's OAuth wins over a key), else a `primaryApiKey` in the config.
 * A key beside an OAuth login is reported as `unusedApiKey`. Undefined when the files cannot tell (the
 * macOS keychain); the initialize reply has the last word.
 */
export function loginAhead(env: Env, explicit?: "apiKey" | "oauthToken", auth?: AuthOption): CallLogin | undefined {
  const kind = auth?.kind;
  if (isCloudKind(kind)) return { billing: "cloud", source: kind, auth: kind };
  if (kind === "apiKey") return { billing: "api-key", source: "ANTHROPIC_API_KEY", auth: kind };
  if (explicit === "apiKey") return { billing: "api-key", source: "ANTHROPIC_API_KEY (the explicit apiEndpoint)" };
  let key: string | undefined;
  for (const file of globalConfigFiles(env)) {
    let text: string | undefined;
    try {
      text = readRegularFile(file);
    } catch (error) {
      // A FIFO or device where the config belongs: nothing can tell what the CLI would read from it.
      if (error instanceof NotRegularFileError) throw new IsolationError([`${error.message}: the CLI reads its login and any primaryApiKey from it, which cannot be checked`], "Replace it with the regular file Claude Code writes (or remove it and log in again with `npx ktx-claude-code login`).");
      continue; // Unreadable: the CLI cannot use it either.
    }
    // The config also holds every project's history (often megabytes): it is parsed only when the key can
    // be in it. JSON may spell any letter of a key as a \u escape ("primary\u0041piKey"), so a text with
    // any \u escape is parsed too: only one without both is skipped (issue 32).
    if (text === undefined || (!text.includes("primaryApiKey") && !text.includes("\\u"))) continue;
    let config: unknown;
    try {
      config = JSON.parse(text);
    } catch {
      continue; // Not JSON: the CLI does not read a key from it either.
    }
    const value = typeof config === "object" && config !== null ? (config as { primaryApiKey?: unknown }).primaryApiKey : undefined;
    if (typeof value === "string" && value.length > 0) {
      key = `primaryApiKey in ${file}`;
      break;
    }
  }
  const unused = key ? { unusedApiKey: key } : {};
  if (kind === "oauthToken") return { billing: "subscription", source: "CLAUDE_CODE_OAUTH_TOKEN", auth: kind, ...unused };
  if (explicit === "oauthToken" || env.CLAUDE_CODE_OAUTH_TOKEN) return { billing: "subscription", source: "CLAUDE_CODE_OAUTH_TOKEN", ...unused };
  // Only whether it is there: a FIFO planted in its place must not block the host.
  if (existsSync(join(claudeConfigDir(env), ".credentials.json"))) return { billing: "subscription", source: "claude.ai", ...unused };
  return key ? { billing: "api-key", source: key } : undefined;
}

const PROXY_NAMES = ["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "all_proxy", "no_proxy"];
const CA_NAMES = ["NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR"];
const CLIENT_CERT_NAMES = ["CLAUDE_CODE_CLIENT_CERT", "CLAUDE_CODE_CLIENT_KEY", "CLAUDE_CODE_CLIENT_KEY_PASSPHRASE"];

export function networkRoute(childEnv: Record<string, string | undefined>, interceptor?: InterceptorState): NetworkRoute {
  const pick = (names: string[], map: (value: string) => string = (value) => value) =>
    Object.fromEntries(names.filter((name) => childEnv[name]).map((name) => [name, map(childEnv[name]!)]));
  return {
    proxies: pick(PROXY_NAMES, (value) => value.replace(/\/\/[^/@\s]*@/, "//[REDACTED]@")),
    trustedCa: pick(CA_NAMES),
    clientCertificate: CLIENT_CERT_NAMES.filter((name) => childEnv[name]),
    ...(interceptor ? { interceptor } : {}),
  };
}

/**
 * Whether a runtime with these options runs its calls behind its interceptor, decided here only: on by
 * default on the first-party path; off with `wire: false`; never with an `apiEndpoint` (a base URL the
 * CLI talks to directly) or a stand-in CLI the testing helpers wrote in this process (it makes no
 * request; src/binary/stand-in.ts), whatever `wire` says.
 */
export function interceptorState(options: { wire?: unknown; apiEndpoint?: unknown; cliPath?: string; auth?: AuthOption }): InterceptorState {
  if (options.apiEndpoint) return "apiEndpoint";
  if (isStandInCli(options.cliPath)) return "standIn";
  // Bedrock, Vertex and Foundry are other hosts with other request shapes: no recorded shape checks them.
  if (isCloudKind(options.auth?.kind)) return "cloud";
  return options.wire === false ? "off" : "on";
}

/** One line on the interceptor for status, doctor and `transcript show`. */
export function describeInterceptor(state: InterceptorState): string {
  if (state === "on") return "on (every request checked on 127.0.0.1 before it is forwarded; other egress refused)";
  if (state === "apiEndpoint") return "off (an apiEndpoint: the CLI talks to its base URL directly)";
  if (state === "standIn") return "off (a stand-in CLI of ktx-claude-code/testing: it makes no request)";
  if (state === "cloud") return "off (auth bedrock, vertex or foundry: requests go to that cloud unchecked; egress is not refused)";
  return "off (wire: false: requests leave unchecked, egress is not refused, no request records)";
}

/** One line for status, doctor and logs. */
export function describeRoute(route: NetworkRoute): string {
  const parts = [
    ...Object.entries(route.proxies).map(([name, value]) => `${name}=${value}`),
    ...Object.entries(route.trustedCa).map(([name, value]) => `${name}=${value}`),
    ...(route.clientCertificate.length > 0 ? [`client certificate (${route.clientCertificate.join(", ")})`] : []),
  ];
  return parts.length === 0 ? "direct (no proxy, CA or client-certificate variable)" : parts.join("; ");
}

export function describeLogin(login: CallLogin | undefined): string {
  if (!login) return "unknown until the CLI starts (no file shows it; the macOS keychain, for example)";
  const label = login.billing === "subscription" ? "subscription (OAuth)" : login.billing === "api-key" ? "API key" : login.billing === "cloud" ? "cloud provider" : "none";
  const extra = [login.subscriptionType, login.organization].filter(Boolean).join(", ");
  const unused = login.unusedApiKey ? `; an API key is also present but not sent (${login.unusedApiKey})` : "";
  const auth = login.auth && login.auth !== "login" ? ` [auth ${login.auth}]` : "";
  return `${label} via ${login.source}${extra ? ` (${extra})` : ""}${unused}${auth}`;
}

/**
 * Everything checked before any process starts or is reused: the policy files read ahead as an
 * allowlist, and (with `requireSubscription`) a `primaryApiKey` the CLI would bill instead.
 */
export function checkBeforeStart(spec: { env: Record<string, string>; requireSubscription?: boolean; explicitCredential?: "apiKey" | "oauthToken"; auth?: AuthOption }): void {
  const managed = checkManagedPolicy(undefined, spec.env);
  const user = checkUserPolicy(spec.env);
  if (managed.length + user.length > 0) {
    throw new IsolationError([...managed, ...user], [managed.length > 0 ? MANAGED_POLICY_ADVICE : "", user.length > 0 ? USER_POLICY_ADVICE : ""].filter(Boolean).join(" "));
  }
  if (spec.requireSubscription) {
    // A key beside an OAuth login is refused too: the CLI sends it once the login stops counting as a subscriber's.
    const login = loginAhead(spec.env, spec.explicitCredential, spec.auth);
    if (login?.billing === "api-key") throw new SubscriptionRequiredError(login, "read ahead");
    if (login?.unusedApiKey) throw new SubscriptionRequiredError({ billing: "api-key (held beside the OAuth login)", source: login.unusedApiKey }, "read ahead");
  }
}

/**
 * The account check of the initialize reply (before the prompt is sent), plus the billing rule: the
 * login is remembered under `key` (the call, or a reused process) for the result.
 */
export function accountFailure(response: Record<string, unknown>, expected: ExpectedSurface & { requireSubscription?: boolean }, key: object): IsolationError | SubscriptionRequiredError | undefined {
  const account = response.account as Account | undefined;
  accounts.set(key, account);
  const differences = checkAccount(response, expected);
  if (differences.length > 0) return new IsolationError(differences);
  const login = callLogin(account);
  if (expected.requireSubscription && login.billing === "api-key") return new SubscriptionRequiredError(login, "initialize reply");
  // The reply's apiKeySource too: a key held beside the OAuth login is billed once that login stops counting as a subscriber's.
  if (expected.requireSubscription && login.unusedApiKey) return new SubscriptionRequiredError({ billing: "api-key (held beside the OAuth login)", source: login.unusedApiKey }, "initialize reply");
  return undefined;
}

const accounts = new WeakMap<object, Account | undefined>();

/** The login of a call whose account was remembered under `key` (see accountFailure). */
export function loginFor(key: object, init: Pick<SystemInitMessage, "apiKeySource"> | undefined, auth?: AuthOption): CallLogin {
  const login = callLogin(accounts.get(key), init);
  const kind = auth?.kind;
  if (!kind || kind === "login") return login;
  // A cloud account has no Anthropic login: the provider the initialize reply named (checked) is the source.
  if (isCloudKind(kind)) return { billing: "cloud", source: kind, auth: kind };
  return { ...login, auth: kind };
}
