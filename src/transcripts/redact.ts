/**
 * Redaction applied to everything a transcript holds (args, both directions, stderr) before it is
 * written: the values of credential variables, plus common key and token shapes, at any JSON-escaping
 * depth up to MAX_DEPTH (tool output is JSON inside a JSON string inside a protocol line).
 */
import { KEPT_CREDENTIALS, isScrubbedEnvName, type Env, type ApiEndpoint, endpointCredential } from "../transport/env.js";
import { findSecrets, prepareRules } from "./secret-rules/index.js";

export const REDACTED = "[REDACTED]";

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

/**
 * Token shapes that need no context. No leading word boundary: inside escaped text a token often
 * follows `\n`, i.e. the letter n.
 */
const SHAPES: readonly RegExp[] = [
  // PEM private keys and PGP private key blocks; the line breaks are real or escaped at any depth.
  /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----[\s\S]*?-----END \1PRIVATE KEY\2-----/g,
  // A block cut off before its END line (a truncated tool output): everything after BEGIN.
  /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?![\s\S]*-----END )[\s\S]*/g,
  // Stripe secret and restricted keys; Google OAuth access tokens; Hugging Face; SendGrid.
  /(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g,
  /ya29\.[0-9A-Za-z_-]{20,}/g,
  /hf_[A-Za-z0-9]{30,}/g,
  /SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/g,
  // Slack webhooks; the slashes may be JSON-escaped (`\/`) at any depth.
  /hooks\.slack\.com(?:\\*\/)(?:services|workflows|triggers)(?:(?:\\*\/)[A-Za-z0-9_-]+)+/g,
  /sk-ant-[A-Za-z0-9_-]{8,}/g,
  /(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{16,}/g,
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
  /(?:(?<![A-Za-z0-9_-])|(?<=\\[nrt]))eyJ(?=([A-Za-z0-9_-]{8,}))\1\.eyJ(?=([A-Za-z0-9_-]{8,}))\2\.[A-Za-z0-9_-]*/g,
];

/** Keys whose JSON string value is a secret, at any escaping depth. */
const SECRET_KEYS =
  "x-api-key|authorization|api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|id[_-]?token|oauth[_-]?token|auth[_-]?token|client[_-]?secret|secret[_-]?key|private[_-]?key(?:[_-]?id)?|account[_-]?key|shared[_-]?access[_-]?key|password|passwd|secret|token|cookie";

/**
 * `"key":"value"` with the quotes escaped to the same depth (`\1` is the run of backslashes before each
 * quote). A value's own escaped quote at that depth is `\1\1\"` (2k+1 backslashes).
 */
const JSON_PAIR = new RegExp(`((\\\\*)"(?:${SECRET_KEYS})\\2"\\s*:\\s*\\2")((?:[^"\\\\]|\\\\+(?![\\\\"])|\\2\\2\\\\")+?)(\\2")`, "gi");
/** Fallback for a value the exact form cannot delimit: everything up to the next quote. */
const JSON_PAIR_LOOSE = new RegExp(`((\\\\*)"(?:${SECRET_KEYS})\\2"\\s*:\\s*\\2")(?!\\[REDACTED\\])([^"\\\\]+)`, "gi");
/** `password=…`, `api_key: …` in free text, query strings, env dumps and command lines. */
const ASSIGNMENT = new RegExp(`((?:${SECRET_KEYS}|pwd)\\s*[=:]\\s*)(?!\\[REDACTED\\]|Bearer\\s|Basic\\s)([^\\s"'\\\\&;,<>]{3,})`, "gi");
/** The password in `scheme://user:password@host` (database URLs). */
// Both URL patterns start at the ":" of "://" (slashes JSON-escaped or not): a leading scheme pattern
// would be tried at every letter of every line, which cost 200 ms per 400 KiB.
const URL_PASSWORD = /(?<=[a-z0-9])(:(?:\\*\/){2}[^\s:/@"'\\]+:)([^\s@"'\\]+)(@)/gi;
const BEARER = /(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi;
/** `Authorization: Basic <base64>` (also `Proxy-Authorization`, and as a JSON value). */
const BASIC = /(authorization\W{1,8}Basic\s+)[A-Za-z0-9+/]{4,}={0,2}/gi;
/** A whole `Cookie:` / `Set-Cookie:` header value, up to the line's end or the string's quote. */
const COOKIE = /(cookie\s*:\s*)(?!\[REDACTED\])[^\r\n"\\]+/gi;
/** A match that continues a word ("fortunecookie: …") is not a header; the n of an escaped line break is no word. */
const continuesWord = (text: string, offset: number) => /[A-Za-z0-9]/.test(text[offset - 1] ?? "") && !(/[nrt]/.test(text[offset - 1]!) && text[offset - 2] === "\\");
/** The key in a URL's user part without a password (a Sentry DSN: `https://<key>@o1.ingest.sentry.io/1`). */
const URL_KEY = /(?<=[a-z0-9])(:(?:\\*\/){2})([0-9a-f]{32})((?::[0-9a-f]{32})?@)/gi;

export class Redactor {
  private readonly forms: readonly string[];

  constructor(secrets: readonly string[]) {
    this.forms = [...new Set(secrets.flatMap(literalForms))].sort((a, b) => b.length - a.length);
    // The pattern set's regexes are compiled once per process, here rather than on the first line written.
    prepareRules();
  }

  redact(text: string): string {
    let out = text;
    for (const form of this.forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
    for (const shape of SHAPES) out = out.replace(shape, REDACTED);
    out = out.replace(JSON_PAIR, (_match, head: string, _slashes: string, _value: string, tail: string) => `${head}${REDACTED}${tail}`);
    out = out.replace(JSON_PAIR_LOOSE, (_match, head: string) => `${head}${REDACTED}`);
    out = out.replace(URL_PASSWORD, (_match, head: string, _password: string, at: string) => `${head}${REDACTED}${at}`);
    out = out.replace(BEARER, (_match, head: string) => `${head}${REDACTED}`);
    out = out.replace(BASIC, (_match, head: string) => `${head}${REDACTED}`);
    out = out.replace(COOKIE, (match: string, head: string, offset: number, whole: string) => (continuesWord(whole, offset) ? match : `${head}${REDACTED}`));
    out = out.replace(URL_KEY, (_match, head: string, _key: string, tail: string) => `${head}${REDACTED}${tail.startsWith(":") ? "@" : tail}`);
    out = out.replace(ASSIGNMENT, (_match, head: string) => `${head}${REDACTED}`);
    // Last, the maintained pattern set (gitleaks' rules and the local shapes it lacks): what the rules above left.
    for (const secret of findSecrets(out)) out = out.split(secret).join(REDACTED);
    return out;
  }
}
