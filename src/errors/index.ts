/**
 * Every failure the library reports is a `ClaudeCodeError` subclass with a stable `code`.
 * Messages say what happened (with the concrete value), then what to do.
 */

const BRAND = Symbol.for("ktx-claude-code.error");

export interface ErrorDetails {
  cause?: unknown;
  /** Last lines of the CLI's stderr, when a CLI process was involved. */
  stderrTail?: string;
  /** Path of the transcript of the run, when one was recorded. */
  transcriptPath?: string;
}

export class ClaudeCodeError extends Error {
  readonly code: string = "claude_code_error";
  readonly stderrTail: string | undefined;
  transcriptPath: string | undefined;
  readonly [BRAND] = true;

  constructor(message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.stderrTail = details.stderrTail;
    this.transcriptPath = details.transcriptPath;
  }

  /** Works across duplicated copies of the package, unlike `instanceof`. */
  static isInstance(value: unknown): value is ClaudeCodeError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}

/** The caller passed something the runtime cannot use. */
export class InvalidInputError extends ClaudeCodeError {
  override readonly code = "invalid_input";
  /** The option or input field at fault (`timeoutMs`, `reuse.maxIdle`, `maxturns`), when one is. */
  field: string | undefined;
}

/**
 * A transcript (or raw capture) that cannot be read as one: no such file, a directory, a FIFO or device,
 * or no permission — said with the path and what to do, instead of the system's `ENOENT`.
 */
export class TranscriptFileError extends InvalidInputError {
  constructor(
    readonly path: string,
    /** `missing`, `not a file`, `not readable`. */
    readonly reason: "missing" | "not a file" | "not readable",
    message: string,
    details: ErrorDetails = {},
  ) {
    super(message, details);
  }
}

/** A dep KTX may pass (the hook, the auth probe) that this runtime cannot honour; refused so nothing is dropped silently. */
export class UnsupportedKtxDepError extends InvalidInputError {
  constructor(
    readonly dep: string,
    fix: string,
    where = "createClaudeCodeRuntime",
  ) {
    super(`${where} does not take \`${dep}\`: ${fix}`);
  }

  /** KTX's `query` seam (the Agent SDK's `query`), refused by `where`. */
  static query(where?: string): UnsupportedKtxDepError {
    return new UnsupportedKtxDepError(
      "query",
      "it is the Agent SDK's query function (KTX's own backend's test seam), and this runtime drives the Claude Code CLI without the Agent SDK. " +
        "In tests, pass cliPath: createScriptedCli(script) from ktx-claude-code/testing instead (docs/guides/testing.md, \"Porting KTX's backend tests\").",
      where,
    );
  }
}

/**
 * `projectDir` is not an existing directory. Raised when a call starts, never at construction (KTX's
 * factory builds the runtime before any call, and its own backend accepts any path there).
 */
export class ProjectDirNotFoundError extends InvalidInputError {
  /** The option to fix. */
  readonly option = "projectDir";
  constructor(readonly projectDir: string) {
    super(`projectDir ${projectDir} is not an existing directory; pass the KTX project directory (the directory that holds ktx.yaml) as projectDir.`);
  }
}

/**
 * `capabilities.projectInstructions` would load more from the project than its instructions: a file the CLI's
 * project setting source reads (settings, agents, conditional rules, instructions above the project dir) that
 * the library cannot switch off. Found before any process starts (docs/guides/capabilities.md).
 */
export class ProjectSourceError extends InvalidInputError {
  readonly option = "capabilities.projectInstructions";
  constructor(
    /** The file (or directory) at fault, absolute. */
    readonly file: string,
    /** What the CLI would load from it. */
    readonly loads: string,
    /** What to do. */
    readonly advice: string,
  ) {
    super(`capabilities.projectInstructions: ${file} ${loads}, which projectInstructions does not opt into; no process was started. ${advice} (docs/guides/capabilities.md, "Project instructions").`);
  }
}

/**
 * The `auth` option names a provider whose credential or required setting is missing (or is contradicted by
 * another option), found before any process starts; see docs/options.md, "Authentication".
 */
export class AuthConfigError extends ClaudeCodeError {
  override readonly code = "auth_config";
  constructor(
    /** The `auth.kind` chosen. */
    readonly kind: string,
    /** What is missing: the variables or fields, in words. */
    readonly missing: string,
    /** How to supply it. */
    readonly advice: string,
  ) {
    super(`auth ${JSON.stringify(kind)}: ${missing}; no process was started. ${advice} Nothing falls back to another login or provider (docs/options.md, "Authentication").`);
  }
}

/** A `passEnv` name that is not known to be harmless (credential, routing, code, TLS, logging); see docs/environment.md. */
export class EnvNotAllowedError extends ClaudeCodeError {
  override readonly code = "env_not_allowed";
  constructor(
    readonly variable: string,
    /** Why the name is refused ("it may carry a credential", …). */
    readonly reason = "it is a credential, provider-routing, code-injection or telemetry variable",
  ) {
    super(
      `passEnv may not pass ${variable}: ${reason}, and the CLI must only use your local Claude Code session. ` +
        `Remove it from passEnv (use apiEndpoint for a test endpoint, the telemetry option for OpenTelemetry); docs/environment.md ("passEnv") lists what may pass.`,
    );
  }
}

export class CliNotFoundError extends ClaudeCodeError {
  override readonly code = "cli_not_found";
  constructor(
    readonly cliPath: string | undefined,
    reason: string,
    details: ErrorDetails = {},
  ) {
    super(
      `Claude Code CLI not usable${cliPath ? ` at ${cliPath}` : ""}: ${reason}. ` +
        `Reinstall dependencies (npm ci, with optional dependencies) so the CLI's platform package (@anthropic-ai/claude-code-<platform>) is present, or pass cliPath pointing at a Claude Code binary.`,
      details,
    );
  }
}

/** Another Claude Code version could not be installed on demand (`fixtures compare --version`, `fixtures record`). */
export class CliInstallError extends ClaudeCodeError {
  override readonly code = "cli_install_failed";
  constructor(
    readonly version: string,
    reason: string,
    advice: string,
    details: ErrorDetails = {},
  ) {
    super(`Could not install @anthropic-ai/claude-code@${version}: ${reason}. ${advice}`, details);
  }
}

/** `fixtures record` of a CLI version the table does not hold: its fixtures are recorded as part of verifying it. */
export class UnverifiedFixturesError extends ClaudeCodeError {
  override readonly code = "unverified_cli_fixtures";
  constructor(
    readonly version: string,
    readonly verifiedVersions: readonly string[],
  ) {
    super(
      `Not recording fixtures of CLI ${version}: ktx-claude-code has not verified it (verified: ${verifiedVersions.join(", ")}), and its runs would only hold an UnsupportedCliVersionError. ` +
        `Verify it with \`ktx-claude-code fixtures verify --version ${version}\` (which records them), or pass --verification to record them as one step of a verification by hand.`,
    );
  }
}

/** An installed CLI binary whose sha256 is not the one recorded for its version: it is never run. */
export class CliChecksumError extends ClaudeCodeError {
  override readonly code = "cli_checksum_mismatch";
  constructor(
    readonly cliPath: string,
    readonly version: string,
    readonly expectedSha256: string,
    readonly actualSha256: string,
    readonly recordedIn: string,
  ) {
    super(
      `The Claude Code ${version} binary at ${cliPath} has sha256 ${actualSha256}, not ${expectedSha256} (${recordedIn}); it is not run. ` +
        "Something replaced it after the checked install: remove that version's cache directory and run again to reinstall it.",
    );
  }
}

export class UnsupportedCliVersionError extends ClaudeCodeError {
  override readonly code = "unsupported_cli_version";
  constructor(
    readonly cliPath: string,
    readonly version: string,
    readonly verifiedVersions: readonly string[],
  ) {
    super(
      `Claude Code CLI at ${cliPath} is version ${version}, which ktx-claude-code has not verified ` +
        `(verified: ${verifiedVersions.join(", ")}). Use a verified version, or pass allowUnverifiedCli: true to run it anyway.`,
    );
  }
}

/**
 * The one command that logs the installed Claude Code CLI in (docs/guides/ktx-backend.md); every "log in" advice names it.
 * `--no-install`: npx must run the project's own bin, never fetch a package of that name from the registry.
 */
export const LOGIN_COMMAND = "npx --no-install ktx-claude-code login";

/** What to do about a missing or refused Claude Code login. */
export const AUTH_FIX = `Authenticate Claude Code locally with the Claude Code CLI, then rerun: run \`${LOGIN_COMMAND}\` (the installed CLI's own login, in this terminal).`;

export class ClaudeCodeAuthError extends ClaudeCodeError {
  override readonly code = "auth_failed";
  constructor(detail: string, details: ErrorDetails = {}) {
    super(
      `Claude Code is not authenticated (${detail}). ${AUTH_FIX} ` +
        `API keys in the environment are deliberately not used by the claude-code backend.`,
      details,
    );
  }
}

export class ClaudeCodeApiError extends ClaudeCodeError {
  override readonly code = "api_error";
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly terminalReason: string | undefined,
    details: ErrorDetails = {},
  ) {
    super(message, details);
  }
}

/**
 * The prompt does not fit the model's context window, and the CLI refused it before sending any request
 * (no network involved, nothing billed; `status` undefined). Retrying as it is fails the same way.
 */
export class PromptTooLongError extends ClaudeCodeApiError {
  constructor(message: string, terminalReason: string | undefined, details: ErrorDetails = {}) {
    super(message, undefined, terminalReason, details);
  }
}

export class CliCrashError extends ClaudeCodeError {
  override readonly code = "cli_crashed";
  /** True when the CLI died before answering `initialize`: the model was never asked anything. */
  beforeInitialize = false;
  constructor(
    message: string,
    readonly exitCode: number | undefined,
    readonly signal: string | undefined,
    details: ErrorDetails = {},
  ) {
    super(details.stderrTail ? `${message}\n--- CLI stderr (tail) ---\n${details.stderrTail}` : message, details);
  }
}

/** The CLI wrote something that breaks the stream-json protocol (bad JSON, an oversized line, a missing reply). */
export class ProtocolError extends ClaudeCodeError {
  override readonly code = "protocol_error";
  /** Set when the CLI refused one of our own control requests (e.g. `set_model`), before the prompt was sent. */
  refusedRequest?: string;
}

export class IsolationError extends ClaudeCodeError {
  override readonly code = "isolation_violated";
  constructor(
    readonly differences: readonly string[],
    /** What to do; the default fits a CLI version or default that changed. */
    advice = "This usually means an unverified CLI version or a changed default; check docs/isolation.md and the CLI version.",
  ) {
    super(`The Claude Code CLI did not start with the isolated surface ktx-claude-code asked for, so the run was stopped: ${differences.join("; ")}. ${advice}`);
  }
}

/**
 * What went wrong with the runtime's interceptor: it could not `start`, its process `exited`, it
 * `stalled` (did not answer an exchange within its deadline: stopped, hung or saturated; it is killed and
 * replaced), the CLI could not reach it (`unreachable`), or the runtime was `closed` under the call.
 */
export type InterceptorFailure = "start" | "exited" | "stalled" | "unreachable" | "closed";

/**
 * The runtime's interceptor (its own process, docs/isolation.md "The wire check") could not start,
 * exited or stalled while the runtime used it, or the CLI could not reach it: calls behind it cannot be
 * checked, so they fail instead of running unchecked. The next call starts a new one.
 */
export class InterceptorError extends ClaudeCodeError {
  override readonly code = "interceptor_failed";
  constructor(
    what: string,
    details: ErrorDetails = {},
    readonly reason: InterceptorFailure = "exited",
  ) {
    const next = reason === "unreachable" ? "so this call failed; rerun it" : "so this call was stopped; the next call starts a new interceptor";
    super(`${what} The runtime's calls run only through its interceptor, ${next}. If it keeps failing, the stderr tail says why; \`wire: false\` turns the interceptor off (docs/isolation.md, "The wire check").`, details);
  }
}

/** The caller required the subscription (`requireSubscription`) and the CLI would bill an API key; see docs/isolation.md. */
export class SubscriptionRequiredError extends ClaudeCodeError {
  override readonly code = "subscription_required";
  constructor(
    /** What the CLI would bill to: `source` is the CLI's `apiKeySource` ("/login managed key", …) or a file. */
    readonly login: { billing: string; source: string },
    /** Where it was found: "read ahead" (a file, before any process) or "initialize reply" (before the prompt). */
    readonly foundIn: string,
  ) {
    super(
      `requireSubscription is set, but ${login.billing === "api-key" ? "this call would be billed to an API key, not your Claude Code subscription" : "the CLI holds an API key beside your OAuth login and sends it once that login stops counting as a subscriber's"} (${login.source}, found in the ${foundIn}); no prompt was sent. ` +
        (/\/login managed key|primaryApiKey/.test(login.source)
          ? `A Console /login saved primaryApiKey in the Claude Code config: run \`claude /logout\` then \`claude /login\` with your subscription account, or remove primaryApiKey from that file if you did not put it there.`
          : `Remove that key, or drop requireSubscription to accept API-key billing.`) +
        ` See docs/isolation.md, "The login a call bills to".`,
    );
  }
}


/** The command-line tool could not write an output file (`--out`): a missing directory, no permission, or a path that is not a regular file. */
export class OutputWriteError extends ClaudeCodeError {
  override readonly code = "output_write_failed";
  constructor(
    readonly path: string,
    cause: unknown,
  ) {
    const errno = (cause as NodeJS.ErrnoException | undefined)?.code;
    const why = errno === "ENOENT" ? "its directory does not exist" : errno === "EACCES" || errno === "EPERM" ? "permission denied" : errno === "ELOOP" ? "it is a symbolic link, which is not followed" : errno === "EISDIR" ? "it is a directory" : cause instanceof Error ? cause.message : String(cause);
    super(`Could not write ${path}${errno ? ` (${errno})` : ""}: ${why}. Give --out a file in an existing, writable directory, or leave --out off to write to stdout.`, { cause });
  }
}
/** The transcript recorder could not create its directory or open its file (`path`, `cause`). */
export class TranscriptWriteError extends ClaudeCodeError {
  override readonly code = "transcript_write_failed";
  constructor(
    readonly action: string,
    readonly path: string,
    cause: unknown,
  ) {
    const errno = (cause as NodeJS.ErrnoException | undefined)?.code;
    super(
      `Could not ${action} ${path}${errno ? ` (${errno})` : ""}: ${cause instanceof Error ? cause.message : String(cause)}. ` +
        `Check that transcript.dir exists or can be created and is writable, or turn transcripts off (transcript: false); no CLI was started.`,
      { cause },
    );
  }
}

export class StructuredOutputError extends ClaudeCodeError {
  override readonly code = "structured_output_failed";
  constructor(
    message: string,
    /** What came back: the structured output, the text, or the result message. */
    readonly received: unknown,
    readonly issues: readonly string[] = [],
    details: ErrorDetails = {},
  ) {
    super(message, details);
  }
}

export class TimeoutError extends ClaudeCodeError {
  override readonly code = "timeout";
  constructor(
    readonly kind: "overall" | "idle",
    readonly timeoutMs: number,
    details: ErrorDetails = {},
  ) {
    super(
      kind === "overall"
        ? `The Claude Code run did not finish within timeoutMs=${timeoutMs} ms and was stopped. Raise timeoutMs if the work is legitimately long.`
        : `The Claude Code CLI wrote nothing for idleTimeoutMs=${timeoutMs} ms and was stopped. Check the stderr tail and the transcript; raise idleTimeoutMs if the model is legitimately slow.`,
      details,
    );
  }
}

export class AbortError extends ClaudeCodeError {
  override readonly code = "aborted";
  constructor(reason?: unknown) {
    super(`The Claude Code run was aborted by its AbortSignal${reason instanceof Error ? `: ${reason.message}` : ""}.`, {
      cause: reason,
    });
  }
}

/** A tool-related failure surfaced to the caller (tool errors the model sees are not thrown). */
export class ToolDefinitionError extends ClaudeCodeError {
  override readonly code = "invalid_tool";
}

/** A text or object call used all its turns without finishing (loops report this as `budget` instead). */
export class MaxTurnsError extends ClaudeCodeError {
  override readonly code = "max_turns_reached";
  /** `maxTurns`: the model responses the call was allowed. */
  constructor(
    readonly maxTurns: number | undefined,
    details: ErrorDetails = {},
  ) {
    super(`The call used all ${maxTurns ? `${maxTurns} ` : ""}model turns it was allowed without finishing; raise maxTurns if the model needs more tool calls.`, details);
  }
}

/**
 * `capabilities.bash` asked for the sandbox (its default) and it cannot run here: the programs it needs are
 * missing, or the platform has none. Checked before any process starts; the CLI is never left to run Bash unsandboxed.
 */
export class SandboxUnavailableError extends ClaudeCodeError {
  override readonly code = "sandbox_unavailable";
  constructor(
    /** The programs not found on the child's PATH (`bwrap`, `socat`), or the platform when it has no sandbox. */
    readonly missing: readonly string[],
    message: string,
  ) {
    super(message);
  }
}
