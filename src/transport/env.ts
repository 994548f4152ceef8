/**
 * The child's environment, built from an allowlist: only what the CLI needs to run and to find the
 * user's own session passes, plus the library's own settings; everything else is dropped. Every
 * process the library starts (runs, the `--version` probe, warm processes, the auth probe, status)
 * gets this environment. docs/environment.md gives each name's reason.
 *
 * The denylist below names what the allowlist drops on purpose (tests, docs, managed `env`); what a caller
 * may add with `passEnv` is decided by a second allowlist (pass-env.ts).
 */
import { EnvNotAllowedError } from "../errors/index.js";
import { type AuthOption, authEnv, authPassableNames } from "./auth.js";
import { passEnvRefusal } from "./pass-env.js";
import { type TelemetryOptions, telemetryEnv } from "./telemetry.js";

/** Exact names passed through from the base environment. The reasons are in docs/environment.md. */
export const ALLOWED_ENV_NAMES: readonly string[] = [
  // Running at all, and finding the user's session and config.
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "CLAUDE_CONFIG_DIR",
  "CLAUDE_CODE_OAUTH_TOKEN",
  "CLAUDE_CODE_OAUTH_REFRESH_TOKEN",
  "CLAUDE_CODE_OAUTH_SCOPES",
  // Locale, time zone, temporary files.
  "LANG",
  "LANGUAGE",
  "TZ",
  "TMPDIR",
  "TMP",
  "TEMP",
  // Reaching Anthropic from behind a corporate proxy or TLS inspection.
  "HTTPS_PROXY",
  "HTTP_PROXY",
  "NO_PROXY",
  "ALL_PROXY",
  "https_proxy",
  "http_proxy",
  "no_proxy",
  "all_proxy",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "CLAUDE_CODE_CLIENT_CERT",
  "CLAUDE_CODE_CLIENT_KEY",
  "CLAUDE_CODE_CLIENT_KEY_PASSPHRASE",
  // Request behaviour that routes nothing: retries, timeout, prompt caching (docs/parity.md).
  "CLAUDE_CODE_MAX_RETRIES",
  "API_TIMEOUT_MS",
  "CLAUDE_CODE_PROMPT_CACHE_TTL",
  "ENABLE_PROMPT_CACHING_1H",
  // Windows: the system and profile directories a process needs.
  "SYSTEMROOT",
  "WINDIR",
  "COMSPEC",
  "PATHEXT",
  "USERPROFILE",
  "USERNAME",
  "APPDATA",
  "LOCALAPPDATA",
  "PROGRAMDATA",
  "HOMEDRIVE",
  "HOMEPATH",
];

/** Name families passed through: locale categories and the per-model prompt-caching switches. */
export const ALLOWED_ENV_PREFIXES: readonly string[] = ["LC_", "DISABLE_PROMPT_CACHING"];

/**
 * Denylist, exact names: credential and routing variables (a silent fallback to another key or
 * provider), code injection into the CLI (a preload runs inside it), request rewriting, extra
 * plugins and settings, and telemetry (only the `telemetry` option sets it).
 */
export const SCRUBBED_ENV_NAMES: readonly string[] = [
  // Anthropic API-key / gateway routing (also caught by the ANTHROPIC_ prefix; listed for the docs and tests).
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "ANTHROPIC_BASE_URL",
  "ANTHROPIC_MODEL",
  "ANTHROPIC_SMALL_FAST_MODEL",
  "ANTHROPIC_CUSTOM_HEADERS",
  "ANTHROPIC_UNIX_SOCKET",
  "ANTHROPIC_VERTEX_PROJECT_ID",
  "ANTHROPIC_FOUNDRY_API_KEY",
  // Vertex AI
  "CLOUD_ML_REGION",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "GOOGLE_CLOUD_PROJECT",
  "GOOGLE_OAUTH_ACCESS_TOKEN",
  // Bedrock (also caught by the AWS_ prefix)
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "AWS_REGION",
  "AWS_PROFILE",
  "AWS_BEARER_TOKEN_BEDROCK",
  // Provider switches (also caught by the CLAUDE_CODE_USE_ prefix)
  "CLAUDE_CODE_USE_BEDROCK",
  "CLAUDE_CODE_USE_VERTEX",
  "CLAUDE_CODE_USE_FOUNDRY",
  "CLAUDE_CODE_USE_GATEWAY",
  "CLAUDE_CODE_USE_MANTLE",
  "CLAUDE_CODE_USE_ANTHROPIC_AWS",
  "CLAUDE_CODE_USE_ANTHROPIC_GOOGLE_CLOUD",
  // Other API-key and endpoint routes the 2.1.330 binary reads
  "CLAUDE_CODE_API_BASE_URL",
  "CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR",
  "CLAUDE_CODE_API_KEY_HELPER_TTL_MS",
  "CLAUDE_CODE_GATEWAY_TOKEN",
  "CLAUDE_CODE_GATEWAY_TOKEN_FILE_DESCRIPTOR",
  "CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR",
  "CLAUDE_CODE_HOST_CREDS_FILE",
  "CLAUDE_CODE_HOST_AUTH_ENV_VAR",
  "CLAUDE_CODE_PROVIDER_MANAGED_BY_HOST",
  // KTX's own gateway backend key (Vercel AI Gateway)
  "AI_GATEWAY_API_KEY",
  // Nested-session guard (CLI >= 2.1.39 refuses to start inside another Claude Code session) and its markers
  "CLAUDECODE",
  "CLAUDE_CODE_ENTRYPOINT",
  "CLAUDE_CODE_SSE_PORT",
  // Code injection: a preload or flags that run code inside the CLI (a Bun binary) or its helpers
  "NODE_OPTIONS",
  "BUN_OPTIONS",
  "BUN_INSPECT",
  "BUN_INSPECT_PRELOAD",
  // Request rewriting, extra plugins, settings and MCP sources
  "CLAUDE_CODE_EXTRA_BODY",
  "CLAUDE_CODE_PLUGIN_DIRS",
  "CLAUDE_CODE_MANAGED_SETTINGS_PATH",
  "CLAUDE_CODE_REMOTE_SETTINGS_PATH",
  "CLAUDE_CODE_MOCK_REMOTE_SETTINGS",
  // Other credentials, sockets, wrappers, TLS and log switches the 2.1.330 binary reads (issue 20)
  "CLAUDE_CODE_SESSIONS_OAUTH_TOKEN",
  "CLAUDE_CODE_RUNNER_MODEL_SOCKET",
  "CLAUDE_CODE_CUSTOM_OAUTH_URL",
  "CLAUDE_CODE_OAUTH_CLIENT_ID",
  "CLAUDE_CODE_PROCESS_WRAPPER",
  "CLAUDE_CODE_SHELL_PREFIX",
  "CLAUDE_CODE_DEBUG_LOGS_DIR",
  "CLAUDE_ENV_FILE",
  "NODE_TLS_REJECT_UNAUTHORIZED",
  "SSL_KEYLOG_FILE",
  // Telemetry: only the explicit `telemetry` option turns it on
  "CLAUDE_CODE_ENABLE_TELEMETRY",
  "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA",
];

/** Denylist families by prefix: every member routes auth, endpoint, region or model, injects code, or exports telemetry. */
export const SCRUBBED_ENV_PREFIXES: readonly string[] = [
  "ANTHROPIC_",
  "AWS_",
  "AZURE_",
  "VERTEX_REGION_",
  "CLAUDE_CODE_USE_",
  "CLAUDE_CODE_SKIP_",
  "CLAUDE_GATEWAY_",
  "CLAUDE_BG_GATEWAY_",
  "BUN_",
  "LD_",
  "DYLD_",
  "OTEL_",
  "CLAUDE_CODE_OTEL_",
];

/** The user's own Claude Code credentials: allowed, and redacted in transcripts. */
export const KEPT_CREDENTIALS: readonly string[] = ["CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_OAUTH_REFRESH_TOKEN", "CLAUDE_CODE_CLIENT_KEY_PASSPHRASE"];

/** Environment variable names are case-insensitive on Windows. */
const normalise = (name: string) => (process.platform === "win32" ? name.toUpperCase() : name);

/** Case-insensitive on every platform: `anthropic_api_key` is as suspect as `ANTHROPIC_API_KEY`. */
export function isScrubbedEnvName(name: string): boolean {
  const key = name.toUpperCase();
  return SCRUBBED_ENV_NAMES.includes(key) || SCRUBBED_ENV_PREFIXES.some((prefix) => key.startsWith(prefix));
}

// Looked up once per name of the host's environment on every call: scanning the list per name made building
// the child's environment 164 µs instead of 91 with a usual process.env (docs/performance.md, "Host CPU of a reused loop").
const allowedNames = new Set(ALLOWED_ENV_NAMES.map(normalise));
const allowedPrefixes = ALLOWED_ENV_PREFIXES.map(normalise);

export function isAllowedEnvName(name: string): boolean {
  const key = normalise(name);
  if (allowedNames.has(key)) return true;
  for (const prefix of allowedPrefixes) if (key.startsWith(prefix)) return true;
  return false;
}

export interface KtxClaudeCodeEnvOptions {
  /**
   * The CLI's own auto-compaction (sessions only, docs/guides/sessions.md "Compaction"): off unless given;
   * `windowTokens` sets the window it compacts against (`CLAUDE_CODE_AUTO_COMPACT_WINDOW`).
   */
  compaction?: { windowTokens?: number };
  /** Default true: no telemetry, error reporting or other non-essential calls from the CLI. */
  disableNonessentialTraffic?: boolean;
  /** Explicit test/recording endpoint; the only way a base URL or API key reaches the child. */
  apiEndpoint?: ApiEndpoint;
  /** Further names to pass from the base environment; a name off the passEnv allowlist throws `EnvNotAllowedError`. */
  passEnv?: readonly string[];
  /** OpenTelemetry export of the CLI (off by default; never taken from the base environment). */
  telemetry?: TelemetryOptions | false;
  /** The library's own CLI switches for this launch (e.g. thinking, src/claude-code/thinking.ts); set last. */
  launchSettings?: Record<string, string>;
  /** The provider and credential chosen (auth.ts); login (the default) adds nothing. */
  auth?: AuthOption;
}

/**
 * An explicit Messages API endpoint (tests, recording), never read from the environment. With
 * `apiKey` the CLI is an API-key client; with `oauthToken` it acts as a logged-in subscriber
 * (`CLAUDE_CODE_OAUTH_TOKEN`), which is what makes it report usage limits.
 */
export type ApiEndpoint = { baseUrl: string; apiKey: string; oauthToken?: undefined } | { baseUrl: string; oauthToken: string; apiKey?: undefined };

/** The credential an explicit endpoint carries. */
export const endpointCredential = (endpoint: ApiEndpoint): string => endpoint.apiKey ?? endpoint.oauthToken;

export type Env = Record<string, string | undefined>;

/**
 * Throws `EnvNotAllowedError` for the first `passEnv` name that is not on the passEnv allowlist (pass-env.ts)
 * and is not one of the chosen `auth` kind's own variables (auth.ts).
 */
export function checkPassEnv(passEnv: readonly string[] | undefined, auth?: AuthOption): void {
  const own = new Set(authPassableNames(auth));
  for (const name of passEnv ?? []) {
    if (own.has(name.toUpperCase())) continue;
    const reason = passEnvRefusal(name);
    if (reason) throw new EnvNotAllowedError(name, reason);
  }
}

/** Builds the child's environment from `env` (normally `process.env`): the allowlist, `passEnv`, then our own settings. */
export function createKtxClaudeCodeEnv(env: Env, options: KtxClaudeCodeEnvOptions = {}): Record<string, string> {
  checkPassEnv(options.passEnv, options.auth);
  // Before anything is built: a kind whose credential is missing starts nothing (AuthConfigError).
  const auth = authEnv(options.auth, env, options.passEnv);
  const extra = new Set((options.passEnv ?? []).map(normalise));
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (isAllowedEnvName(name) || extra.has(normalise(name))) result[name] = value;
  }
  // A pinned CLI must never replace itself.
  result.DISABLE_AUTOUPDATER = "1";
  if (options.disableNonessentialTraffic !== false) result.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = "1";
  // The `<total_tokens>` reminder in every user turn is nothing a caller asked for (docs/performance.md#what-a-request-carries).
  result.CLAUDE_CODE_TOTAL_TOKENS_REMINDER = "off";
  // Variants the wire check would otherwise meet on real accounts, removed at the source (docs/environment.md).
  // 2.1.330 remaps claude-opus-4-0/-4-1 (and their dated ids) to its current default Opus unless this is set
  // (its bundle: `function a2n(){return!s.CLAUDE_CODE_DISABLE_LEGACY_MODEL_REMAP}`): the role's model must be the one sent.
  result.CLAUDE_CODE_DISABLE_LEGACY_MODEL_REMAP = "1";
  // KTX's calls are one-shot: a compaction's summary turn and its new headers are nothing a call asked for
  // (2.1.330: `Boolean(He(process.env.DISABLE_COMPACT)||s.DISABLE_AUTO_COMPACT)` turns auto-compaction off).
  // A session that asks for compaction gets it (its requests are checked, wire/compaction.ts).
  if (options.compaction) {
    delete result.DISABLE_AUTO_COMPACT;
    if (options.compaction.windowTokens !== undefined) result.CLAUDE_CODE_AUTO_COMPACT_WINDOW = String(options.compaction.windowTokens);
  } else result.DISABLE_AUTO_COMPACT = "1";
  if (options.apiEndpoint) {
    // A proxy of the user's must not carry requests meant for a loopback endpoint (it cannot reach it: 7 retries, then ApiRetryBudgetError).
    if (isLoopbackUrl(options.apiEndpoint.baseUrl)) {
      for (const name of ["NO_PROXY", "no_proxy"]) result[name] = [result[name], ...LOOPBACK_HOSTS].filter(Boolean).join(",");
    }
    // The endpoint's own credential is the only one: the user's real token must never reach a test server.
    delete result.CLAUDE_CODE_OAUTH_TOKEN;
    result.ANTHROPIC_BASE_URL = options.apiEndpoint.baseUrl;
    if (options.apiEndpoint.apiKey !== undefined) result.ANTHROPIC_API_KEY = options.apiEndpoint.apiKey;
    else result.CLAUDE_CODE_OAUTH_TOKEN = options.apiEndpoint.oauthToken;
  }
  if (options.auth && options.auth.kind !== "login") {
    // Exactly the chosen kind's credential: the login's token variables must not be a fallback.
    for (const name of ["CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_OAUTH_REFRESH_TOKEN", "CLAUDE_CODE_OAUTH_SCOPES"]) delete result[name];
    Object.assign(result, auth);
    const baseUrl = Object.entries(auth).find(([name]) => name.endsWith("_BASE_URL"))?.[1];
    if (baseUrl && isLoopbackUrl(baseUrl)) {
      for (const name of ["NO_PROXY", "no_proxy"]) result[name] = [result[name], ...LOOPBACK_HOSTS].filter(Boolean).join(",");
    }
  }
  if (options.telemetry) Object.assign(result, telemetryEnv(options.telemetry));
  if (options.launchSettings) Object.assign(result, options.launchSettings);
  return result;
}

const LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1"];

function isLoopbackUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
    return LOOPBACK_HOSTS.includes(host) || host.startsWith("127.");
  } catch {
    return false;
  }
}

/** Every name that can pick a proxy or exempt a host from one (upper and lower case). */
export const PROXY_ENV_NAMES: readonly string[] = ["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "all_proxy", "no_proxy"];

/**
 * The child's environment behind the runtime's interceptor: the interceptor's proxy and CA variables
 * replace the user's (which the interceptor itself uses on the way out), and nothing exempts a host.
 */
export function interceptedEnv(env: Record<string, string>, wire: Record<string, string>): Record<string, string> {
  const result = { ...env };
  for (const name of PROXY_ENV_NAMES) delete result[name];
  return Object.assign(result, wire);
}
