/**
 * Which further names `passEnv` may hand the CLI: an allowlist, compared case-insensitively (Windows
 * treats `Bun_Options` as `BUN_OPTIONS`; on Linux a CLI could grow a lower-case reader). A name passes
 * when it is one of the CLI's own behaviour knobs known to be harmless, or an application name of the
 * caller's that lies outside every namespace the CLI, its Bun runtime, TLS or the cloud SDKs read and
 * says nothing of credentials, routing, code, TLS or logs. Everything else is refused with the
 * reason. docs/environment.md ("passEnv") lists both rules.
 */

/** The CLI's behaviour knobs that carry no credential, route nothing and run nothing (all in the 2.1.330 binary). */
export const PASSABLE_CLI_KNOBS: readonly string[] = [
  "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
  "MAX_THINKING_TOKENS",
  "CLAUDE_CODE_DISABLE_THINKING",
  "CLAUDE_CODE_DISABLE_ADAPTIVE_THINKING",
  "DISABLE_INTERLEAVED_THINKING",
  "CLAUDE_CODE_EFFORT_LEVEL",
  "CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS",
  "CLAUDE_CODE_DISABLE_1M_CONTEXT",
  "MAX_MCP_OUTPUT_TOKENS",
  "MCP_TIMEOUT",
  "MCP_TOOL_TIMEOUT",
  "DISABLE_COST_WARNINGS",
  "DISABLE_ERROR_REPORTING",
  "DISABLE_TELEMETRY",
  "NO_COLOR",
  "FORCE_COLOR",
];

/**
 * Namespaces read by the CLI, Bun/Node, the dynamic loader, TLS libraries, cloud SDKs and proxies.
 * A name in one of them that is not a listed knob may mean anything in a future version: refused.
 */
const RESERVED_PREFIXES: readonly string[] = [
  "CLAUDE", "ANTHROPIC", "KTX_CLAUDE", "OTEL", "BUN", "NODE", "NPM", "LD_", "DYLD", "AWS", "AZURE", "GOOGLE", "GCLOUD", "GCP", "VERTEX", "CLOUD_ML", "BEDROCK",
  "SSL", "OPENSSL", "CURL", "REQUESTS_", "GRPC", "HTTP", "ALL_PROXY", "NO_PROXY", "MCP", "DISABLE_", "ENABLE_", "MAX_", "API_", "AI_GATEWAY", "VERCEL", "OPENAI",
  "USE_", "FORCE_", "DEBUG", "XDG_", "TMP", "TEMP", "SHELL", "EDITOR", "VISUAL", "GIT", "SSH", "GPG", "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_", "TZ",
];

/** Words that mark a name as carrying one of the refused kinds, with the reason given. */
const REFUSED_WORDS: ReadonlyArray<{ pattern: RegExp; reason: string }> = [
  { pattern: /TLS|SSL|CERT|(^|_)CA(_|$)|KEYLOG|REJECT_UNAUTHORIZED|INSECURE|VERIFY/, reason: "it changes TLS (certificates, verification or key logging)" },
  { pattern: /KEY|TOKEN|SECRET|PASS(WORD|WD|PHRASE)?|CRED|AUTH|COOKIE|SESSION|CLIENT_ID|OAUTH|BEARER|SIGNING/, reason: "it may carry a credential" },
  { pattern: /URL|URI|HOST|ENDPOINT|PROXY|SOCKET|PORT|GATEWAY|PROVIDER|REGION|BASE|ROUTE|DNS|ADDR/, reason: "it may route requests to another server" },
  { pattern: /OPTIONS|PRELOAD|WRAPPER|PREFIX|SHELL|INSPECT|EXEC|COMMAND|HELPER|PLUGIN|HOOK|SCRIPT|REQUIRE|IMPORT|LOADER/, reason: "it may run code inside or beside the CLI" },
  { pattern: /LOG|DEBUG|TRACE|TELEMETRY|DUMP|PROFILE|METRIC/, reason: "it may write or export logs, traces or telemetry" },
  // Issue 32: names other programs read that a tool or the CLI may start (an interpreter, a pager, a
  // package manager, a cloud or cluster client). docs/environment.md ("passEnv") lists each family.
  {
    pattern: /^(PERL|RUBY|PYTHON|JAVA|_JAVA|JDK_|GEM_|BUNDLE_|LUA_|TCL|ERL_|ELIXIR|R_PROFILE|R_ENVIRON|BASH_ENV$|ENV$|ZDOTDIR$|PROMPT_COMMAND$|PS4$|IFS$|GCONV_PATH$|TERMINFO|LESS(OPEN|CLOSE|KEY)?$)|OPTS?$|STARTUP|BROWSER|PAGER|EDITOR/,
    reason: "it makes a program the CLI or a tool starts run code (an interpreter's start-up, options or library path, a pager, browser or editor, a shell start-up file)",
  },
  {
    pattern: /^(COREPACK|YARN|PNPM|PIP_|UV_|CARGO|RUSTUP|GOPROXY|GOPRIVATE|GONOPROXY|GONOSUMDB|GOSUMDB|GOFLAGS|CONDA|MAVEN|GRADLE|COMPOSER|NUGET|HEX_)|REGISTRY|MIRROR|INDEX/,
    reason: "it may route package downloads or requests to another server (a registry, mirror or index)",
  },
  {
    pattern: /^(KUBE|CLOUDSDK|DOCKER|PODMAN|HELM|GH_|GITHUB|GITLAB|GNUPG|PG|MYSQL|BOTO|VAULT|TF_|TERRAFORM|OCI_|DIGITALOCEAN|HEROKU|FLY_|NETLIFY|SNOWFLAKE|DATABRICKS|WGET|NETRC|RIPGREP|RCLONE|S3CMD)|CONFIG|NETRC|CREDENTIALS/,
    reason: "it points at configuration that holds credentials or settings another tool honours (a cluster, cloud, registry or search-tool config)",
  },
];

const upper = (name: string) => name.toUpperCase();
const KNOBS = new Set(PASSABLE_CLI_KNOBS.map(upper));
const WELL_FORMED = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why `passEnv` refuses `name`, or undefined when it may pass. */
export function passEnvRefusal(name: string): string | undefined {
  const key = upper(name);
  if (KNOBS.has(key)) return name === key ? undefined : `it is a case variant of ${key}; pass the exact name`;
  if (!WELL_FORMED.test(name)) return "it is not a plain variable name (letters, digits and _)";
  for (const { pattern, reason } of REFUSED_WORDS) if (pattern.test(key)) return reason;
  const reserved = RESERVED_PREFIXES.find((prefix) => key.startsWith(prefix));
  if (reserved) return `it lies in the ${reserved}* namespace that the CLI, its runtime or a library it uses reads, and is not one of the CLI knobs known to be harmless`;
  return undefined;
}
