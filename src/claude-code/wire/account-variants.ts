/**
 * What real accounts send that the recorded shapes (one scripted Max login, fixtures record-wire) do not
 * hold, admitted here as rules with where each came from (issue 45); what newer models, `[1m]` ids,
 * worktrees and midnight add is recorded per version instead (shape-variants.ts). Also the variants known
 * from the bundle, so a refusal on a version whose shape lacks one can say "a CLI variant for your account
 * or model" rather than "text the call did not give".
 */
import { IsolationError } from "../../errors/index.js";
import type { WireShape } from "./shape.js";

/**
 * A Console (API-key) login sends its key as `x-api-key` in place of the OAuth `authorization` header
 * (2.1.330 against the scripted API's first-party front with a `primaryApiKey` in `~/.claude.json`:
 * the Messages request's headers were the recorded ones with `x-api-key` for `authorization`). Either
 * one is admitted where the shape has `authorization`, never both.
 */
export const CREDENTIAL_HEADERS: readonly string[] = ["authorization", "x-api-key"];

/** Whether a header the shape does not list is the other credential header of a shape that has one. */
export function isCredentialHeader(name: string, shape: WireShape): boolean {
  return CREDENTIAL_HEADERS.includes(name) && CREDENTIAL_HEADERS.some((header) => shape.headers.has(header));
}

/** A request carrying both credential headers: no login of the CLI sends two. */
export function credentialDifferences(headers: Record<string, unknown>): string[] {
  const present = CREDENTIAL_HEADERS.filter((name) => headers[name] !== undefined);
  return present.length > 1 ? [`the request carried both ${present.map((name) => JSON.stringify(name)).join(" and ")}; a login sends one credential`] : [];
}

/**
 * Requests the CLI makes as essential traffic for some logins (sent with CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1):
 * a Console login and Team/Enterprise logins fetch their organisation's policy limits, Team/Enterprise
 * also its managed settings. 2.1.330: both paths in its bundle ("api.anthropic.com/api/claude_code/policy_limits
 * and api.anthropic.com/api/claude_code/settings"); the API-key login above sent both before its first
 * Messages request. Without them such a login fails every call on the egress allowlist.
 */
export const ACCOUNT_REQUESTS: ReadonlyArray<{ method: string; host: string; path: string; why: string }> = [
  { method: "GET", host: "api.anthropic.com", path: "/api/claude_code/policy_limits", why: "the organisation's policy limits (Console, Team and Enterprise logins)" },
  { method: "GET", host: "api.anthropic.com", path: "/api/claude_code/settings", why: "the organisation's managed settings (Team and Enterprise logins)" },
];

export const isAccountRequest = (method: string, host: string, path: string): boolean =>
  ACCOUNT_REQUESTS.some((allowed) => allowed.method === method && allowed.host === host && allowed.path === path);

/**
 * Variants the CLI sends for some accounts or models, read from 2.1.330's bundle (issue 45): a difference
 * naming one of these is "a CLI variant for your account or model" — unless the version's shape records
 * the variant (`recordedIn`, shape-variants.ts: then the check admits it where it applies, and the same
 * text anywhere else is text the call did not give).
 */
export const KNOWN_VARIANTS: ReadonlyArray<{ test: RegExp; what: string; recordedIn?: (shape: WireShape) => boolean }> = [
  { test: /beta "per-turn-control-2026-07-01"/, what: "the beta newer models (claude-*-5-5 and others) add to every request", recordedIn: (shape) => [...(shape.variants?.models.values() ?? [])].some((variant) => variant.betas.includes("per-turn-control-2026-07-01")) },
  { test: /beta "context-1m-2025-08-07"/, what: "the beta a [1m] model id adds", recordedIn: (shape) => shape.variants?.contextSuffix !== undefined },
  { test: /model was "claude-[^"]*", not the role's "claude-[^"]*\[1m\]"/, what: "a [1m] model id, whose suffix the CLI strips from the body", recordedIn: (shape) => shape.variants?.contextSuffix !== undefined },
  { test: /The user hasn't heard from you/, what: "the reminder newer models get after turns without text", recordedIn: (shape) => [...(shape.variants?.models.values() ?? [])].some((variant) => variant.reminders.some((reminder) => reminder.kind === "silent turns")) },
  { test: /The date has changed\./, what: "the date-change reminder of a call across midnight", recordedIn: (shape) => shape.reminders.some((reminder) => reminder.kind === "date change") },
  // 2.1.330: "This is a git worktree — an isolated copy of the repository. …"; told apart only when the
  // difference's quote (check.ts: its first 120 characters) reaches the line.
  { test: /This is a git worktree|no longer a git worktree/, what: "the lines a project dir in a git worktree adds to the environment reminder", recordedIn: (shape) => shape.variants?.worktree !== undefined },
];

/** A variant's name when a difference is one known above and not recorded in `shape`. */
const variantOf = (difference: string, shape?: WireShape): string | undefined => KNOWN_VARIANTS.find((variant) => variant.test.test(difference) && !(shape && variant.recordedIn?.(shape)))?.what;

const MARK = "(a CLI variant for your account or model:";

/**
 * The refusal of a Messages request (`differences` as the interceptor names them, `wire: …`), separating
 * a CLI variant for the user's account or model (known above, not yet admitted) from text the call did
 * not give; both name `wire: false` as the way out. Made in the interceptor's process with the version's
 * shape (`recorded`: a variant it records is not one), and again by its host from the differences it is
 * told (`"marked"`: only those the process marked are variants), so a difference is never marked twice.
 */
export function wireRefusal(differences: readonly string[], textAdvice: string, recorded?: WireShape | "marked"): IsolationError {
  const variants = new Set<string>();
  let others = 0;
  const named = differences.map((difference) => {
    const what = recorded === "marked" ? (difference.includes(MARK) ? /\(a CLI variant for your account or model: (.*)\)$/.exec(difference)?.[1] : undefined) : variantOf(difference, recorded);
    if (!what) {
      others += 1;
      return difference;
    }
    variants.add(what);
    return difference.includes(MARK) ? difference : `${difference} ${MARK} ${what})`;
  });
  const advice = [
    variants.size > 0
      ? `A CLI variant for your account or model, which no recorded shape of this CLI version admits yet, so the request was not forwarded (nothing was wrong with the call): ${[...variants].join("; ")}. \`wire: false\` runs such calls without the check (requests then leave unchecked; docs/isolation.md, "Real accounts").`
      : "",
    others > 0 ? `Text the call did not give: ${textAdvice}` : "",
  ];
  return new IsolationError(named, advice.filter(Boolean).join(" "));
}
