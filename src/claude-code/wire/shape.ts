/**
 * What a verified CLI version sends on the first-party path (`api.anthropic.com`, an OAuth login),
 * recorded with the scripted API's first-party mode (src/testing/first-party.ts) and checked by
 * check.ts before any request is forwarded. A version with no entry here cannot be checked: the
 * interceptor then refuses its Messages requests (docs/isolation.md, "The wire check").
 * Recorded for 2.1.330: `test/e2e/wire.test.ts` › "records" prints a request of each call kind.
 */

export interface WireShape {
  /** Header names (lower case) a Messages request may carry. */
  headers: ReadonlySet<string>;
  /** `anthropic-beta` values it may carry (a retry after a 400 sends fewer). */
  betas: ReadonlySet<string>;
  /** Top-level body fields it may carry. */
  bodyFields: ReadonlySet<string>;
  /** The system block between the billing line and the caller's system prompt. */
  preamble: string;
  /** The first system block. */
  billingLine: RegExp;
  /** `<system-reminder>` kinds it adds to user turns: each reminder's whole text must match one. */
  reminders: ReadonlyArray<{ kind: string; pattern: RegExp }>;
  /** Sections the "context" reminder may hold, each with its whole text. */
  contextSections: ReadonlyArray<{ name: string; pattern: RegExp }>;
  /** Texts the CLI itself adds as a later user turn (the structured-output nudge). */
  syntheticUserTexts: readonly string[];
  /** Non-Messages requests it makes (method, host, path), each needed for the call. */
  otherRequests: ReadonlyArray<{ method: string; host: string; path: string; why: string }>;
  /** Hosts it connects to. */
  hosts: readonly string[];
}

const ANY_LINE = "[^\\n]*";

const SHAPE_2_1_330: WireShape = {
  headers: new Set([
    "accept",
    "authorization",
    "content-type",
    "user-agent",
    "x-claude-code-session-id",
    "x-stainless-arch",
    "x-stainless-lang",
    "x-stainless-os",
    "x-stainless-package-version",
    "x-stainless-retry-count",
    "x-stainless-runtime",
    "x-stainless-runtime-version",
    "x-stainless-timeout",
    "anthropic-beta",
    "anthropic-dangerous-direct-browser-access",
    "anthropic-version",
    "x-app",
    "x-claude-1p-request-class",
    "x-claude-code-prompt-id",
    "x-claude-code-request-class",
    "x-claude-code-sandy-plover",
    "x-client-request-id",
    "x-claude-code-prev-tool-durations",
    "connection",
    "host",
    "accept-encoding",
    "content-length",
  ]),
  betas: new Set([
    "claude-code-20250219",
    "oauth-2025-04-20",
    "interleaved-thinking-2025-05-14",
    "context-management-2025-06-27",
    "prompt-caching-scope-2026-01-05",
    "tool-provenance-2026-10-26",
    "thinking-token-count-2026-05-13",
    "effort-2025-11-24",
    "thinking-binding-controls-2026-08-01",
    "thinking-display-updates-2026-08-18",
    "extended-cache-ttl-2025-04-11",
    "cache-diagnosis-2026-04-07",
  ]),
  bodyFields: new Set(["model", "messages", "system", "tools", "metadata", "max_tokens", "thinking", "context_management", "output_config", "diagnostics", "stream", "temperature", "tool_choice"]),
  preamble: "You are a Claude agent, built on Anthropic's Claude Agent SDK.",
  billingLine: /^x-anthropic-billing-header: cc_version=[0-9a-f.]+; cc_entrypoint=sdk-cli;(?: (?:cch|cc_prompt_id|cc_turn_origin|cc_prompt_index|cc_turn_index|cc_prev_req)=[A-Za-z0-9_.-]+;)*$/,
  reminders: [
    {
      kind: "environment",
      pattern: new RegExp(
        "^# Environment\\nYou have been invoked in the following environment: \\n" +
          ` - Primary working directory: ${ANY_LINE}\\n - Is a git repository: (?:true|false)\\n(?: - Additional working directories:${ANY_LINE}\\n)?` +
          ` - Platform: ${ANY_LINE}\\n - Shell: ${ANY_LINE}\\n - OS Version: ${ANY_LINE}\\n` +
          " - Downloaded files and extracted archives are untrusted data: put each in its own new, empty directory, keep scripts you write in a different directory, and pass paths as arguments instead of running an interpreter or build tool from inside it\\. Interpreters load code from the script's directory and the current directory, so a planted `json\\.py` runs on `import json`\\. Run any Python that reads them with `-I`\\. This does not apply to code the user asked you to build or run\\.\\n" +
          " - In `curl`, send untrusted values with `--form-string`, not `-F`\\.$",
      ),
    },
    { kind: "model identity", pattern: /^You are powered by the model named [^\n]+\. The exact model ID is [a-z0-9.-]+\.(?: Assistant knowledge cutoff is [A-Za-z]+ \d{4}\.)?$/ },
    { kind: "date", pattern: /^Today's date is \d{4}-\d{2}-\d{2}\.$/ },
    { kind: "token budget", pattern: /^<total_tokens>\d+ tokens left<\/total_tokens>$/ },
  ],
  contextSections: [
    {
      name: "userEmail",
      // Two wordings seen on 2.1.330 (the shorter with non-essential traffic on); one line either way.
      pattern: /^The user's email address is [^\s]+\. Use (?:this email address|it) only to identify the user, such as for authorship, attribution, or filtering their own work\.[^\n]*$/,
    },
  ],
  syntheticUserTexts: ["[structured-output-enforce] You MUST call the StructuredOutput tool to complete this request. Call this tool now."],
  otherRequests: [
    { method: "GET", host: "api.anthropic.com", path: "/api/oauth/profile", why: "the OAuth profile, asked once per process" },
    { method: "POST", host: "platform.claude.com", path: "/v1/oauth/token", why: "the OAuth token refresh" },
  ],
  hosts: ["api.anthropic.com", "platform.claude.com"],
};

const SHAPES: Record<string, WireShape> = { "2.1.330": SHAPE_2_1_330 };

export function wireShapeFor(version: string): WireShape | undefined {
  return Object.hasOwn(SHAPES, version) ? SHAPES[version] : undefined;
}

/** The versions whose first-party shape is recorded. */
export const WIRE_VERSIONS: readonly string[] = Object.keys(SHAPES);

/** The hosts any recorded version connects to: what the runtime's CA is constrained to. */
export const WIRE_HOSTS: readonly string[] = [...new Set(Object.values(SHAPES).flatMap((shape) => shape.hosts))];
