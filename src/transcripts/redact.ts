/**
 * Redaction applied to everything a transcript holds (args, both directions, stderr) before it is
 * written: the values of credential variables, plus common key and token shapes, at any JSON-escaping
 * depth up to MAX_DEPTH (tool output is JSON inside a JSON string inside a protocol line).
 */
import { KEPT_CREDENTIALS, isScrubbedEnvName, type Env, type ApiEndpoint, endpointCredential } from "../transport/env.js";
import { prepareRules, scanSecrets } from "./secret-rules/index.js";
import { OWN_PASSES, REDACTED } from "./secret-rules/shapes.js";

export { REDACTED };

/** Escaping depths covered: a protocol line (1) holding tool output (2) holding an API response (3), and one more. */
export const MAX_DEPTH = 4;

/** Credential-bearing names beyond the scrub's own: a KTX user's service tokens, keys, passwords. */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|COOKIE|DSN|WEBHOOK|CONNECTION_STRING|^DATABASE_URL$/i;

/** Shortest secret value worth matching literally; shorter values ("1", "true") would shred the text. */
const MIN_SECRET_LENGTH = 6;

/**
 * A value that looks like a secret whatever its name: one unbroken run of 20+ token characters mixing
 * at least three of lower case, upper case, digits and `-_+=.`, or 32+ hex digits. Paths, lists,
 * URLs and words are not (they hold `/`, `:`, `,`, spaces or one character class).
 */
export function looksSecret(value: string): boolean {
  if (value.length < 20 || value.length > 4096 || !/^[A-Za-z0-9_\-+=.]+$/.test(value)) return false;
  if (/^[0-9a-fA-F]{32,}$/.test(value)) return true;
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/, /[-_+=.]/].filter((re) => re.test(value)).length;
  return classes >= 3 && /[0-9]/.test(value);
}

/**
 * The password (raw and percent-decoded) of a connection string: `scheme://user:password@host` or a
 * `Password=…;` / `Pwd=…;` / `AccountKey=…;` part. A tool error often quotes it alone.
 */
export function connectionSecrets(value: string): string[] {
  const parts: string[] = [];
  for (const match of value.matchAll(/[a-z][a-z0-9+.-]{0,30}:\/\/[^\s:/@]*:([^\s@/]+)@/gi)) parts.push(match[1]!);
  for (const match of value.matchAll(/(?:^|;)\s*(?:password|pwd|accountkey|sharedaccesskey)\s*=\s*([^;]+)/gi)) parts.push(match[1]!.trim());
  return parts.flatMap((part) => {
    let decoded = part;
    try {
      decoded = decodeURIComponent(part);
    } catch {
      // Not percent-encoded: the raw form is all there is.
    }
    return decoded === part ? [part] : [part, decoded];
  });
}

/**
 * Values to redact literally: credential-bearing variables of `env` (and the parts of their connection
 * strings), any variable whose value looks like a secret or holds a connection-string password, and
 * the explicit endpoint's key.
 */
export function secretValues(env: Env, apiEndpoint?: ApiEndpoint): string[] {
  const values: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!value) continue;
    if (isScrubbedEnvName(name) || KEPT_CREDENTIALS.includes(name) || SECRET_NAME.test(name) || looksSecret(value)) values.push(value);
    values.push(...connectionSecrets(value));
  }
  if (apiEndpoint) values.push(endpointCredential(apiEndpoint));
  return [...new Set(values.filter((value) => value.length >= MIN_SECRET_LENGTH))].sort((a, b) => b.length - a.length);
}

/** `text` as it appears after `depth` rounds of JSON string escaping. */
function escaped(text: string, depth: number): string {
  let out = text;
  for (let level = 0; level < depth; level++) out = JSON.stringify(out).slice(1, -1);
  return out;
}

/** Every form a literal secret takes: each escaping depth, and with `/` escaped as some encoders do. */
function literalForms(secret: string): string[] {
  const forms = new Set<string>();
  for (let depth = 0; depth <= MAX_DEPTH; depth++) {
    const form = escaped(secret, depth);
    forms.add(form);
    if (form.includes("/")) forms.add(form.replaceAll("/", "\\/"));
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/** One regex for many literal strings, longest first: a single pass however many there are. */
export function literalPattern(strings: readonly string[]): RegExp | undefined {
  // An empty string would match between every two characters.
  const literals = strings.filter((literal) => literal.length > 0);
  if (literals.length === 0) return undefined;
  return new RegExp([...literals].sort((a, b) => b.length - a.length).map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
}

/**
 * The stated bound of one text's redaction (issue 40). Every rule is linear in the text (the red team's
 * inputs cost 2–130 ms per MiB, a line of one gitleaks keyword up to about 0.5 s per MiB: bench/recorder.mjs);
 * past these limits the rest of the line is not recorded and the line says so, so one line holds the
 * host's event loop at most about `budgetMs` (plus one 64 KiB window of the pattern set).
 */
export const REDACTION_LIMITS = {
  /** Characters of one line that are redacted and recorded; the rest is left out. */
  maxChars: 4 * 2 ** 20,
  /** Milliseconds one line's redaction may take; what is not scanned by then is left out. */
  budgetMs: 500,
};

/** What stands in a line for its part that was left out. */
export function cutNote(total: number, why: string): string {
  return `${REDACTED}[the rest of this line (${total} characters in all) is not recorded: ${why}; see docs/transcript-format.md, "Redaction"]`;
}

/**
 * `text` without its last partial token (at most 4 KiB of it): where a line is cut, that token may be
 * the first half of a secret that only its whole form would have matched. A backwards walk, not a
 * regex anchored at `$` (which would be tried from every position).
 */
function dropPartialToken(text: string): string {
  let end = text.length;
  while (end > 0 && text.length - end < 4096 && !/[\s"',;]/.test(text[end - 1]!)) end -= 1;
  return text.slice(0, end);
}

/**
 * `\uXXXX` escapes of printable ASCII (at any backslash depth) as the characters they stand for: a
 * secret written `\u0041KIA…` in a capture is the same secret. The match starts at "u00" (a pattern
 * starting with a lookbehind would be tried at every position); the lookbehind then takes the whole
 * run of backslashes before it, once. Quote and backslash stay escaped: the JSON stays valid.
 */
const TOKEN_ESCAPE = /u00([2-7][0-9a-fA-F])(?<=(?:^|[^\\])(\\+)u00[2-7][0-9a-fA-F])/g;
function decodeTokenEscapes(text: string): string {
  if (!text.includes("u00")) return text;
  let out = "";
  let from = 0;
  for (const match of text.matchAll(TOKEN_ESCAPE)) {
    const code = Number.parseInt(match[1]!, 16);
    if (code === 0x22 || code === 0x5c || code === 0x7f) continue;
    out += text.slice(from, match.index - match[2]!.length) + String.fromCharCode(code);
    from = match.index + 5;
  }
  return from === 0 ? text : out + text.slice(from);
}

export class Redactor {
  private readonly literals: RegExp | undefined;

  constructor(
    secrets: readonly string[],
    private readonly limits: { maxChars: number; budgetMs: number } = REDACTION_LIMITS,
  ) {
    this.literals = literalPattern([...new Set(secrets.flatMap(literalForms))]);
    // The pattern set's regexes are compiled once per process, here rather than on the first line written.
    prepareRules();
  }

  /**
   * `text` with every secret replaced. Matched on the decoded text too: when decoding `\uXXXX` escapes
   * reveals a secret, the decoded form (with it redacted) is what is recorded.
   */
  redact(text: string): string {
    const deadline = performance.now() + this.limits.budgetMs;
    const decoded = decodeTokenEscapes(text);
    if (decoded !== text) {
      const out = this.redactUntil(decoded, deadline);
      if (out !== decoded) return out;
    }
    return this.redactUntil(text, deadline);
  }

  private redactUntil(whole: string, deadline: number): string {
    const { maxChars, budgetMs } = this.limits;
    // Past the size limit the tail is never scanned; the kept part loses its last partial token (dropPartialToken).
    let out = whole.length > maxChars ? dropPartialToken(whole.slice(0, maxChars)) : whole;
    const tooLong = out.length < whole.length ? `the line is longer than the ${maxChars} characters redaction reads` : undefined;
    const overBudget = `redaction took longer than its ${budgetMs} ms budget`;
    if (this.literals) out = out.replace(this.literals, REDACTED);
    // Redaction only removes text, and "[REDACTED]" holds none of the words: the copy taken first gates every pass.
    const lower = out.toLowerCase();
    for (const pass of OWN_PASSES) {
      if (pass.needs && !pass.needs.some((word) => lower.includes(word))) continue;
      out = pass.run(out);
      if (performance.now() > deadline) return cutNote(whole.length, overBudget);
    }
    // Last, the maintained pattern set (gitleaks' rules and the local shapes it lacks): what the rules above left.
    const { secrets, scannedTo } = scanSecrets(out, deadline);
    const found = literalPattern(secrets);
    if (scannedTo < out.length) {
      const scanned = out.slice(0, scannedTo);
      const redacted = found ? scanned.replace(found, REDACTED) : scanned;
      return dropPartialToken(redacted) + cutNote(whole.length, overBudget);
    }
    if (found) out = out.replace(found, REDACTED);
    return tooLong ? out + cutNote(whole.length, tooLong) : out;
  }
}
