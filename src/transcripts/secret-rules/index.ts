/**
 * Secret shapes from a maintained pattern set: gitleaks' default rules (gitleaks-rules.ts, generated,
 * MIT), plus the few local shapes it lacks. Used by the transcript redactor after its own rules
 * (redact.ts). gitleaks' keyword prefilter decides which rules are tried on a text: one lower-cased
 * copy, then one `includes` per distinct keyword, so a line holding none of them costs no regex at all.
 * secretlint was measured at 3.1 ms per run and declined (issue 32); these rules run in-process.
 */
import { GITLEAKS_COMMIT, GITLEAKS_RULES, GITLEAKS_VERSION } from "./gitleaks-rules.js";
import type { GitleaksRule } from "./types.js";

export { GITLEAKS_COMMIT, GITLEAKS_VERSION };

interface CompiledRule {
  id: string;
  keywords: readonly string[];
  regex: RegExp;
  secretGroup?: number;
  entropy?: number;
  allow: Array<{ regexes: RegExp[]; target: string; stopwords: string[] }>;
}

/**
 * Shapes gitleaks' default rules do not cover (issue 32's findings), in the same form. Each names the
 * secret in its first group.
 */
export const LOCAL_RULES: readonly GitleaksRule[] = [
  // An AWS secret access key assigned by name (env dumps, credentials files); gitleaks' generic rule stops at some of its characters.
  { id: "local-aws-secret-access-key", regex: String.raw`aws_?secret_?access_?key[\\"']*\s*(?:=|:)\s*[\\"']*([A-Za-z0-9/+=]{30,})`, flags: "gi", keywords: ["secret"] },
  // A .netrc entry: machine <host> [login <user>] password <password>.
  { id: "local-netrc-password", regex: String.raw`machine\s+\S+(?:\s+login\s+\S+)?\s+password\s+([^\s\\"']+)`, flags: "gi", keywords: ["machine"] },
  // mysql / mysqldump / mariadb -p<password> (no leading \b: in escaped text the command follows the n of "\n"), -p'<password>', -p"<password>" on a command line.
  // The scan for "-p" stops at the next command word, so the scans of a line of "mysql " repeated do not overlap (linear, issue 40).
  { id: "local-mysql-password-flag", regex: String.raw`(?:mysql|mysqldump|mysqladmin|mariadb)\b(?:(?!mysql|mariadb)[^\n])*?\s-p(?:\\*'([^'\\\s]+)\\*'|\\*"([^"\\\s]+)\\*"|([^\s'"\\-][^\s'"\\]*))`, flags: "gi", keywords: ["mysql", "mariadb"] },
  // An Azure shared access signature's sig= (URLs of storage, service bus, event hubs).
  { id: "local-azure-sas-signature", regex: String.raw`[?&]sig=([A-Za-z0-9%+/]{20,}={0,2}(?:%3[Dd]){0,2})`, flags: "g", keywords: ["sig="] },
  // A Telegram bot token on its own (gitleaks' rule wants the word "telegram" nearby).
  { id: "local-telegram-bot-token", regex: String.raw`(?<![0-9])([0-9]{8,10}:AA[A-Za-z0-9_-]{33})(?![A-Za-z0-9_-])`, flags: "g", keywords: [":aa"] },
];

/**
 * Most gitleaks rules start with `[\w.-]{0,50}?` before their keyword (some inside their first group):
 * it only widens the match to the left (the secret is a later group), and a lazy run tried at every
 * position of every line made generic-api-key alone cost 2 ms per recorded run, and a rule whose first
 * group keeps it 1.7 ms per KiB on a line of its keyword. It is dropped; the allowlists that read the
 * whole match see the 50 characters before it instead (`context`).
 */
const LEFT_CONTEXT = /^(?:\[\\w\.-\]\{0,50\}\?)+/;
const GROUP_LEFT_CONTEXT = /^\(\?:(?:\[\\w\.-\]\{0,50\}\?)+/;
const CONTEXT = 50;

/** `keyword` matching any case, for a guard inside a case-sensitive rule. */
const anyCase = (keyword: string) => [...keyword].map((char) => (/[a-z]/i.test(char) ? `[${char.toLowerCase()}${char.toUpperCase()}]` : char.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("");

/**
 * The rule's regex made linear and cheap (issue 40): without the left context, and with each unbounded
 * "any character" run (`.*`, `.*?`, `.+`, `.{n,}` — curl-auth-user, curl-auth-header,
 * nuget-config-password) and each long character-class run (unbounded or up to 100+ characters, when
 * every keyword has 3+ characters — generic-api-key's `[\w.=-]{10,150}`) stopped at the next occurrence
 * of one of the rule's keywords. A match attempt starts at a keyword, so the attempts from successive
 * keywords read disjoint stretches: a line of "curl " or "api=" repeated is read once, not once per
 * keyword (generic-api-key on "api=" repeated: 606 → 40 ms per MiB). The cost: a secret holding its
 * own rule's keyword (a random 40-character value holds "api" or "key" about once in 250) is cut
 * there and not matched by that rule; the redactor's own assignment and JSON-key rules still cover
 * `api_key=`, `secret:`, `"token": "…"` and the like.
 */
export function linearSource(rule: GitleaksRule): string {
  const source = rule.regex.replace(LEFT_CONTEXT, "").replace(GROUP_LEFT_CONTEXT, "(?:");
  if (rule.keywords.length === 0) return source;
  const stop = `(?!${rule.keywords.map(anyCase).join("|")})`;
  // Long class runs are guarded only for keywords of 3+ characters: a 2-character one ("ey") occurs inside many real tokens.
  const guardClasses = rule.keywords.every((keyword) => keyword.length >= 3);
  let out = "";
  let classStart = -1;
  for (let at = 0; at < source.length; at++) {
    const char = source[at]!;
    const rest = source.slice(at + 1, at + 16);
    if (char === "\\") {
      out += source.slice(at, at + 2);
      at += 1;
    } else if (classStart >= 0) {
      out += char;
      if (char !== "]") continue;
      // A class run that may read past the next keyword: unbounded, or up to 100 characters or more.
      if (guardClasses && /^(?:[*+]|\{\d+,(?:\d{3,})?\})/.test(rest)) out = `${out.slice(0, classStart)}(?:${stop}${out.slice(classStart)})`;
      classStart = -1;
    } else if (char === "[") {
      classStart = out.length;
      out += char;
    } else if (char === "." && /^(?:[*+]|\{\d+,\})/.test(rest)) {
      // "." outside a character class, before an unbounded quantifier.
      out += `(?:${stop}.)`;
    } else {
      out += char;
    }
  }
  return out;
}

function compile(rule: GitleaksRule): CompiledRule | undefined {
  try {
    return {
      id: rule.id,
      keywords: rule.keywords,
      regex: new RegExp(linearSource(rule), rule.flags.includes("g") ? rule.flags : `${rule.flags}g`),
      secretGroup: rule.secretGroup,
      entropy: rule.entropy,
      allow: (rule.allow ?? []).map((allow) => ({
        regexes: (allow.regexes ?? []).map(([source, flags]) => new RegExp(source, flags.replace("g", ""))),
        target: allow.target ?? "secret",
        stopwords: allow.stopwords ?? [],
      })),
    };
  } catch {
    return undefined; // A Go-only construct the rewrite could not express: counted in skippedRules().
  }
}

interface RuleSet {
  skipped: string[];
  count: number;
  always: CompiledRule[];
  byKeyword: Map<string, CompiledRule[]>;
  keywordScan: RegExp;
  contained: Map<string, string[]>;
}

let ruleSet: RuleSet | undefined;

/** Compiled on first use, not at import: 226 regexes cost tens of milliseconds a program that never records a transcript should not pay. */
function rules(): RuleSet {
  if (ruleSet) return ruleSet;
  const compiled = [...GITLEAKS_RULES, ...LOCAL_RULES].map((rule) => ({ rule, compiled: compile(rule) }));
  const usable = compiled.flatMap((entry) => (entry.compiled ? [entry.compiled] : []));
  // keyword -> rules that list it; rules without keywords are always tried.
  const byKeyword = new Map<string, CompiledRule[]>();
  const always: CompiledRule[] = [];
  for (const rule of usable) {
    if (rule.keywords.length === 0) always.push(rule);
    for (const keyword of rule.keywords) {
      const list = byKeyword.get(keyword) ?? [];
      list.push(rule);
      byKeyword.set(keyword, list);
    }
  }
  const keywords = [...byKeyword.keys()].sort((a, b) => b.length - a.length);
  ruleSet = {
    skipped: compiled.filter((entry) => !entry.compiled).map((entry) => entry.rule.id),
    count: usable.length,
    always,
    byKeyword,
    /**
     * Every keyword at every position in one pass: the lookahead finds, at each position, the longest
     * keyword starting there (one `includes` per keyword was 6 times slower on a 2.4 KB line). A shorter
     * keyword at the same position is a prefix of that one, so each found keyword also stands for the
     * keywords it contains.
     */
    keywordScan: new RegExp(`(?=(${keywords.map((keyword) => keyword.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")}))`, "g"),
    contained: new Map(keywords.map((keyword) => [keyword, keywords.filter((other) => keyword.includes(other))])),
  };
  return ruleSet;
}

/** Compiles the rules now (the recorder does, when a transcript is opened: before any line is on its write path). */
export function prepareRules(): void {
  rules();
}

/** Ids of the gitleaks rules JavaScript could not compile (reported in docs/transcript-format.md). */
export const skippedRules = (): readonly string[] => rules().skipped;
/** Every rule in use as compiled, with its keywords (the adversarial test feeds each its own keywords). */
export const compiledRules = (): ReadonlyArray<{ id: string; regex: RegExp; keywords: readonly string[] }> => [...new Set([...rules().always, ...[...rules().byKeyword.values()].flat()])].map((rule) => ({ id: rule.id, regex: rule.regex, keywords: rule.keywords }));
/** How many rules are in use (gitleaks' and the local ones). */
export const ruleCount = (): number => rules().count;

/** Shannon entropy in bits per character, as gitleaks computes it. */
function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

function allowed(rule: CompiledRule, secret: string, match: string): boolean {
  const lower = secret.toLowerCase();
  for (const allow of rule.allow) {
    if (allow.stopwords.some((word) => lower.includes(word))) return true;
    const target = allow.target === "match" || allow.target === "line" ? match : secret;
    if (allow.regexes.some((regex) => regex.test(target))) return true;
  }
  return false;
}

/**
 * The pattern set reads a long text in windows of WINDOW characters, each with OVERLAP more after it
 * (a match starting in one window is seen whole if it is shorter than OVERLAP): the time budget is
 * checked between windows, and the keyword prefilter picks rules per window, not per line.
 */
export const WINDOW = 64 * 1024;
const OVERLAP = 4096;
/** A match that reaches its window's end may go on: it is extended over the token characters after it. */
const TOKEN_TAIL = /[^\s"'\\,;]{0,4096}/y;

/** The candidate rules for `text`: those without keywords, and those with a keyword found in it. */
function candidates(text: string): Set<CompiledRule> {
  const { always, byKeyword, keywordScan, contained } = rules();
  const found = new Set<CompiledRule>(always);
  const seen = new Set<string>();
  for (const match of text.toLowerCase().matchAll(keywordScan)) {
    if (seen.has(match[1]!)) continue;
    for (const keyword of contained.get(match[1]!)!) {
      seen.add(keyword);
      for (const rule of byKeyword.get(keyword)!) found.add(rule);
    }
  }
  return found;
}

function scanWindow(text: string, start: number, end: number, found: Set<string>): void {
  const window = start === 0 && end === text.length ? text : text.slice(start, end);
  for (const rule of candidates(window)) {
    for (const match of window.matchAll(rule.regex)) {
      let secret = rule.secretGroup !== undefined ? match[rule.secretGroup] : (match.slice(1).find((group) => group !== undefined) ?? match[0]);
      if (!secret || secret.length < 4 || secret === "[REDACTED]" || secret.includes("[REDACTED]")) continue;
      if (rule.entropy !== undefined && entropy(secret) < rule.entropy) continue;
      if (allowed(rule, secret, window.slice(Math.max(0, match.index! - CONTEXT), match.index! + match[0].length))) continue;
      if (end < text.length && match.index! + match[0].length === window.length && window.endsWith(secret)) {
        TOKEN_TAIL.lastIndex = end;
        secret += TOKEN_TAIL.exec(text)![0];
      }
      found.add(secret);
    }
  }
}

/**
 * The secrets the rules find in `text` (each at most once, longest first), and how far it was read:
 * `text.length`, or less when `deadline` (a `performance.now()` time) passed first.
 */
export function scanSecrets(text: string, deadline = Number.POSITIVE_INFINITY): { secrets: string[]; scannedTo: number } {
  const found = new Set<string>();
  let start = 0;
  do {
    if (start > 0 && performance.now() > deadline) break;
    scanWindow(text, start, Math.min(text.length, start + WINDOW + OVERLAP), found);
    start += WINDOW;
  } while (start < text.length);
  return { secrets: [...found].sort((a, b) => b.length - a.length), scannedTo: Math.min(start, text.length) };
}

/** The secrets the rules find in `text` (each at most once, longest first). */
export function findSecrets(text: string): string[] {
  return scanSecrets(text).secrets;
}
