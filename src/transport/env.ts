/**
 * The child's environment. Anything that could route the CLI to another provider or credential than
 * the user's own local Claude Code session is removed; see docs/environment.md for each entry's reason.
 * This file is the single source of truth for the scrub (the transcript redactor reads it too).
 */

/** Exact names removed. */
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
  // KTX's own gateway backend key (Vercel AI Gateway)
  "AI_GATEWAY_API_KEY",
  // Nested-session guard (CLI >= 2.1.39 refuses to start inside another Claude Code session) and its markers
  "CLAUDECODE",
  "CLAUDE_CODE_ENTRYPOINT",
  "CLAUDE_CODE_SSE_PORT",
  // A parent's Node flags (--inspect, --require hooks) must not leak into the CLI
  "NODE_OPTIONS",
];

/** Whole families removed by prefix: every member routes auth, endpoint, region or model. */
export const SCRUBBED_ENV_PREFIXES: readonly string[] = [
  "ANTHROPIC_",
  "AWS_",
  "AZURE_",
  "VERTEX_REGION_",
  "CLAUDE_CODE_USE_",
  "CLAUDE_CODE_SKIP_",
  "CLAUDE_GATEWAY_",
  "CLAUDE_BG_GATEWAY_",
];

/** Kept on purpose although they match nothing above: the user's own Claude Code credential. */
export const KEPT_CREDENTIALS: readonly string[] = ["CLAUDE_CODE_OAUTH_TOKEN"];

export function isScrubbedEnvName(name: string): boolean {
  return SCRUBBED_ENV_NAMES.includes(name) || SCRUBBED_ENV_PREFIXES.some((prefix) => name.startsWith(prefix));
}

export interface KtxClaudeCodeEnvOptions {
  /** Default true: no telemetry, error reporting or other non-essential calls from the CLI. */
  disableNonessentialTraffic?: boolean;
  /** Explicit test/recording endpoint; the only way a base URL or API key reaches the child. */
  apiEndpoint?: ApiEndpoint;
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

/** Builds the child's environment from `env` (normally `process.env`) with the scrub applied. */
export function createKtxClaudeCodeEnv(env: Env, options: KtxClaudeCodeEnvOptions = {}): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || isScrubbedEnvName(name)) continue;
    result[name] = value;
  }
  // A pinned CLI must never replace itself.
  result.DISABLE_AUTOUPDATER = "1";
  if (options.disableNonessentialTraffic !== false) result.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = "1";
  if (options.apiEndpoint) {
    // The endpoint's own credential is the only one: the user's real token must never reach a test server.
    delete result.CLAUDE_CODE_OAUTH_TOKEN;
    result.ANTHROPIC_BASE_URL = options.apiEndpoint.baseUrl;
    if (options.apiEndpoint.apiKey !== undefined) result.ANTHROPIC_API_KEY = options.apiEndpoint.apiKey;
    else result.CLAUDE_CODE_OAUTH_TOKEN = options.apiEndpoint.oauthToken;
  }
  return result;
}
