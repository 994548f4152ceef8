/**
 * The redactor's own shapes (redact.ts runs them before the maintained pattern set): token shapes that
 * need no context, secret-named JSON values, assignments, URL passwords, headers and PEM blocks.
 *
 * Every rule is linear in the text (issue 40): a match starts at a literal or a quote, never at every
 * backslash or letter; each unbounded part is a character class that cannot overlap what follows it, or
 * is taken whole (a lookahead capture and its backreference: no backtracking); user, host and password
 * parts are bounded; a PEM header without its END line is found by one scan, not a lookahead per header.
 * test/security/redaction-linear.test.ts feeds each rule repetitions of its prefix.
 */

export const REDACTED = "[REDACTED]";

/** Longest URL user or password, and longest value of a `key: value` assignment, that is looked at. */
const URL_PART = 256;

/**
 * Token shapes that need no context. No leading word boundary: inside escaped text a token often
 * follows `\n`, i.e. the letter n.
 */
const SHAPES: readonly RegExp[] = [
  // Stripe secret and restricted keys; Google OAuth access tokens; Hugging Face; SendGrid.
  /(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g,
  /ya29\.[0-9A-Za-z_-]{20,}/g,
  /hf_[A-Za-z0-9]{30,}/g,
  /SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/g,
  // Slack webhooks; the slashes may be JSON-escaped (`\/`) at any depth. The backslash run is taken whole.
  /hooks\.slack\.com(?=(\\*))\1\/(?:services|workflows|triggers)(?:(?=(\\*))\2\/[A-Za-z0-9_-]+)+/g,
  /sk-ant-[A-Za-z0-9_-]{8,}/g,
  /sk-(?<=(?:^|[^A-Za-z0-9])sk-)[A-Za-z0-9_-]{16,}/g,
  /gh[pousr]_[A-Za-z0-9]{20,}/g,
  /github_pat_[A-Za-z0-9_]{20,}/g,
  /(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}(?![A-Z0-9])/g,
  /xox[abposr]-[A-Za-z0-9-]{10,}/g,
  /glpat-[A-Za-z0-9_-]{20,}/g,
  /npm_[A-Za-z0-9]{36}/g,
  /AIza[0-9A-Za-z_-]{35}/g,
  // JWTs (and JWS/JWE compact forms): base64url JSON header and payload. Each segment is taken whole
  // (a lookahead capture, then its backreference: no backtracking), so a long run of "eyJ…" stays linear.
  // It must start a token (or follow an escaped line break): otherwise every "eyJ" inside a run would rescan it.
  // The literal comes first and the lookbehind after it: a pattern starting with a lookbehind is tried at every position.
  /eyJ(?<=(?:^|[^A-Za-z0-9_-]|\\[nrt])eyJ)(?=([A-Za-z0-9_-]{8,}))\1\.eyJ(?=([A-Za-z0-9_-]{8,}))\2\.[A-Za-z0-9_-]*/g,
];

/** Keys whose JSON string value is a secret, at any escaping depth. */
const SECRET_KEYS =
  "x-api-key|authorization|api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|id[_-]?token|oauth[_-]?token|auth[_-]?token|client[_-]?secret|secret[_-]?key|private[_-]?key(?:[_-]?id)?|account[_-]?key|shared[_-]?access[_-]?key|password|passwd|secret|token|cookie";

/**
 * `"key":"value"` with the quotes escaped to the same depth. The match starts at the key's quote; the
 * lookbehind takes the whole run of backslashes before it (`\2`, atomic), so a run of backslashes is
 * scanned once per quote, not once per backslash. A value's own escaped quote at that depth is `\2\2\"`
 * (2k+1 backslashes); any other backslash run inside the value is taken whole (`\4`, no backtracking).
 */
const JSON_PAIR = new RegExp(`("(?<=(\\\\*)")(?:${SECRET_KEYS})\\2"\\s*:\\s*\\2")((?:[^"\\\\]|(?=(\\\\+))\\4(?![\\\\"])|\\2\\2\\\\")+?)(\\2")`, "gi");
/** Fallback for a value the exact form cannot delimit: everything up to the next quote or backslash. */
const JSON_PAIR_LOOSE = new RegExp(`("(?<=(\\\\*)")(?:${SECRET_KEYS})\\2"\\s*:\\s*\\2")(?!\\[REDACTED\\])([^"\\\\]+)`, "gi");
/** `password=…`, `api_key: …` in free text, query strings, env dumps and command lines. */
const ASSIGNMENT = new RegExp(`((?:${SECRET_KEYS}|pwd)\\s*[=:]\\s*)(?!\\[REDACTED\\]|Bearer\\s|Basic\\s)([^\\s"'\\\\&;,<>]{3,})`, "gi");
/**
 * The password in `scheme://user:password@host` (database URLs), found from its "@": the lookbehind
 * reads back from each "@" (the password stops at the previous one), so a line of `a://b:` repeated
 * with no "@" costs nothing, and each "@" at most a bounded user and password. Slashes may be escaped.
 */
const URL_PASSWORD = new RegExp(`@(?<=(?<=[a-z0-9]):(?:\\\\*\\/){2}[^\\s:/@"'\\\\]{1,${URL_PART}}:([^\\s@"'\\\\]{1,${URL_PART}})@)`, "gi");
const BEARER = /(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi;
/** `Authorization: Basic <base64>` (also `Proxy-Authorization`, and as a JSON value). */
const BASIC = /(authorization\W{1,8}Basic\s+)[A-Za-z0-9+/]{4,}={0,2}/gi;
/** A whole `Cookie:` / `Set-Cookie:` header value, up to the line's end or the string's quote. */
const COOKIE = /(cookie\s*:\s*)(?!\[REDACTED\])[^\r\n"\\]+/gi;
/** A match that continues a word ("fortunecookie: …") is not a header; the n of an escaped line break is no word. */
const continuesWord = (text: string, offset: number) => /[A-Za-z0-9]/.test(text[offset - 1] ?? "") && !(/[nrt]/.test(text[offset - 1]!) && text[offset - 2] === "\\");
/** The key in a URL's user part without a password (a Sentry DSN: `https://<key>@o1.ingest.sentry.io/1`). */
const URL_KEY = /(:(?<=[a-z0-9]:)(?:\\*\/){2})([0-9a-f]{32})((?::[0-9a-f]{32})?@)/gi;

/** A PEM private key or PGP private key block header; `label` must be repeated in its END line. */
const PEM_BEGIN = /-----BEGIN ((?:[A-Z0-9]{1,32} ){0,8})PRIVATE KEY( BLOCK)?-----/g;

/**
 * PEM private keys and PGP private key blocks (the line breaks real or escaped at any depth): from each
 * header to its END line, or to the end of the text when the END line is missing (a truncated tool
 * output). One `indexOf` per header from where the previous block ended: linear.
 */
function redactPem(text: string): string {
  if (!text.includes("-----BEGIN ")) return text;
  let out = "";
  let from = 0;
  PEM_BEGIN.lastIndex = 0;
  for (let match = PEM_BEGIN.exec(text); match; match = PEM_BEGIN.exec(text)) {
    const end = `-----END ${match[1]}PRIVATE KEY${match[2] ?? ""}-----`;
    const endAt = text.indexOf(end, PEM_BEGIN.lastIndex);
    out += text.slice(from, match.index) + REDACTED;
    if (endAt < 0) return out;
    from = endAt + end.length;
    PEM_BEGIN.lastIndex = from;
  }
  return out + text.slice(from);
}

/** Each password before an "@" that URL_PASSWORD finds becomes REDACTED (the match is the "@" alone). */
function redactUrlPasswords(text: string): string {
  if (!text.includes("@")) return text;
  let out = "";
  let from = 0;
  for (const match of text.matchAll(URL_PASSWORD)) {
    out += `${text.slice(from, match.index - match[1]!.length)}${REDACTED}`;
    from = match.index;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** Words one of which a case-insensitive rule's match holds: a text without any skips the rule. */
const KEY_WORDS = ["key", "token", "authorization", "secret", "passw", "cookie"];

/**
 * The redactor's own shapes, in order; each pass is linear in the text. `needs`: lower-case words one of
 * which the text must hold for the pass to run (checked on one lower-cased copy).
 */
export const OWN_PASSES: ReadonlyArray<{ needs?: readonly string[]; run: (text: string) => string }> = [
  { needs: ["-----begin "], run: redactPem },
  { run: (text) => SHAPES.reduce((out, shape) => out.replace(shape, REDACTED), text) },
  { needs: KEY_WORDS, run: (text) => text.replace(JSON_PAIR, (_match, head: string, _slashes: string, _value: string, _run: string, tail: string) => `${head}${REDACTED}${tail}`) },
  { needs: KEY_WORDS, run: (text) => text.replace(JSON_PAIR_LOOSE, (_match, head: string) => `${head}${REDACTED}`) },
  { needs: ["@"], run: redactUrlPasswords },
  { needs: ["bearer"], run: (text) => text.replace(BEARER, (_match, head: string) => `${head}${REDACTED}`) },
  { needs: ["basic"], run: (text) => text.replace(BASIC, (_match, head: string) => `${head}${REDACTED}`) },
  { needs: ["cookie"], run: (text) => text.replace(COOKIE, (match: string, head: string, offset: number, whole: string) => (continuesWord(whole, offset) ? match : `${head}${REDACTED}`)) },
  { needs: ["@"], run: (text) => text.replace(URL_KEY, (_match, head: string, _key: string, tail: string) => `${head}${REDACTED}${tail.startsWith(":") ? "@" : tail}`) },
  { needs: [...KEY_WORDS, "pwd"], run: (text) => text.replace(ASSIGNMENT, (_match, head: string) => `${head}${REDACTED}`) },
];
