/**
 * Issue 40, finding 1: redaction in linear time on any input. The red team's inputs (a 256 KiB line of
 * `a://b:` froze the host 12.8 s), then an adversarial generator per rule — repetitions of each rule's
 * keywords and literal prefix with the characters its pattern reads next, and a run after one keyword —
 * for every gitleaks rule, every local shape and the redactor's own passes. Each is timed at n and 16n
 * characters (best of several runs): linear time grows about 16 times, a quadratic rule 256 times; the
 * check allows 64 (a loaded 2-core machine), not an absolute figure. Then the per-line budget: past it
 * the rest of a line is left out and the line says so.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { REDACTED, REDACTION_LIMITS, Redactor } from "../../src/transcripts/redact.js";
import { openRunTranscript } from "../../src/transcripts/recorder.js";
import { compiledRules } from "../../src/transcripts/secret-rules/index.js";
import { tempDir } from "../support.js";

/** No budget: these tests time the rules themselves, not the cut that bounds them. */
const unbounded = new Redactor(["sk-ant-planted-literal-0123456789"], { maxChars: Number.POSITIVE_INFINITY, budgetMs: Number.POSITIVE_INFINITY });

const repeat = (unit: string, n: number) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);

/** Best of `runs` timings of `work` (the least disturbed by other load). */
function best(work: () => unknown, runs = 5): number {
  let fastest = Number.POSITIVE_INFINITY;
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    work();
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
}

/**
 * Time at 16n over time at n, each the best of 5 runs taken in turn (so a burst of other load hits
 * both); below 0.25 ms at n, the small run counts as 0.25 ms (timer and JIT noise).
 */
function growth(work: (text: string) => unknown, generate: (n: number) => string, n: number): { small: number; large: number; ratio: number } {
  // A quadratic rule is over the limit on every try; a burst of other load on one try only: up to 3 tries.
  let result = growthOnce(work, generate, n);
  for (let retry = 0; retry < 2 && result.ratio >= LINEAR; retry++) {
    const again = growthOnce(work, generate, n);
    if (again.ratio < result.ratio) result = again;
  }
  return result;
}

function growthOnce(work: (text: string) => unknown, generate: (n: number) => string, n: number): { small: number; large: number; ratio: number } {
  const smallText = generate(n);
  const largeText = generate(16 * n);
  work(smallText); // compiled and warm
  let small = Number.POSITIVE_INFINITY;
  let large = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 5; run++) {
    small = Math.min(small, best(() => work(smallText), 1));
    large = Math.min(large, best(() => work(largeText), 1));
  }
  return { small, large, ratio: large / Math.max(small, 0.25) };
}

/**
 * 16 times the input: linear time grows 16 times (up to about 3 times more where the text outgrows the
 * CPU's caches and the collector works harder), a quadratic rule 256 times.
 */
const LINEAR = 64;

/** The red team's inputs (ms at 256 KiB / 1 MiB before: 13,673 / >20,000; 10,219; 2,212; 725–1,570; >20,000 at 256 KiB). */
const RED_TEAM: Record<string, (n: number) => string> = {
  "a://b: repeated": (n) => repeat("a://b:", n),
  "mysql repeated": (n) => repeat("mysql ", n),
  "a://<32 hex> repeated": (n) => repeat("a://0123456789abcdef0123456789abcdef", n),
  "PEM private key headers with no END, repeated": (n) => repeat("-----BEGIN RSA PRIVATE KEY-----", n),
  "PEM private key headers with no END, repeated, escaped line breaks": (n) => repeat("-----BEGIN OPENSSH PRIVATE KEY-----\\n", n),
  // Linear before too (one header scans to the end once); kept so the one-scan rewrite stays so.
  "one PEM private key header with no END before a long body": (n) => `-----BEGIN RSA PRIVATE KEY-----\n${repeat("MIIEowIBAAKCAQEA", n - 32)}`,
  "a run of backslashes": (n) => repeat("\\", n),
  'a JSON secret key before a run of backslashes (JSON_PAIR)': (n) => `{"token":"${repeat("\\", n - 11)}`,
  "an escaped JSON secret key before a run of backslashes (JSON_PAIR_LOOSE)": (n) => `{\\"password\\":\\"${repeat("\\", n - 20)}`,
};

describe("the red team's inputs are redacted in linear time (issue 40)", () => {
  for (const [name, generate] of Object.entries(RED_TEAM)) {
    it(`${name}: 16 times the input takes about 16 times as long, and 1 MiB takes well under a second`, () => {
      // 16 KiB and 256 KiB, the red team's size. Before the fix the red team's inputs took 170 to 1,150 times as long at 16 times the input.
      const { small, large, ratio } = growth((text) => unbounded.redact(text), generate, 16 * 1024);
      expect(ratio, `16 KiB: ${small.toFixed(2)} ms, 256 KiB: ${large.toFixed(2)} ms`).toBeLessThan(LINEAR);
      const mib = generate(2 ** 20);
      const ms = best(() => unbounded.redact(mib), 2);
      // Measured 10–65 ms per MiB on this 2-core machine under other load (docs/performance.md); the bound is generous.
      expect(ms, `1 MiB of ${name}`).toBeLessThan(1000);
    });
  }
});

/** What follows a keyword in the generators: each character class a rule reads after it, and nothing. */
const FOLLOWERS = ["", " ", "=", ":", '"', "\\", "a", "0", "_", "-", "/", ".", " = ", '="', ": ", "\\n", "=a", ":a/", " -p", "://", "\n", "='", '\\"'];

/** The generators for a rule: its keywords and its regex's literal prefix, each repeated with every follower, and once before a long run. */
function generators(keywords: readonly string[], regex: RegExp): Array<[string, (n: number) => string]> {
  const prefix = /^(?:\\b)?\(?(?:\?:)?([A-Za-z0-9_-]{2,})/.exec(regex.source)?.[1];
  const words = [...new Set([...keywords, ...(prefix ? [prefix] : [])])];
  return words.flatMap((word) => [
    ...FOLLOWERS.map((follower): [string, (n: number) => string] => [JSON.stringify(word + follower), (n) => repeat(word + follower, n)]),
    ...["a", "a/", "=", "\\", " ", "0"].map((run): [string, (n: number) => string] => [`${JSON.stringify(`${word}=`)} then ${JSON.stringify(run)} repeated`, (n) => `${word}=${repeat(run, n)}`.slice(0, n)]),
  ]);
}

describe("every rule of the pattern set is linear on repetitions of its own keywords (issue 40)", () => {
  it("no gitleaks or local rule grows more than linearly on any generator", () => {
    const slow: string[] = [];
    let checked = 0;
    for (const rule of compiledRules()) {
      const scan = (text: string) => {
        for (const _match of text.matchAll(rule.regex));
      };
      for (const [name, generate] of generators(rule.keywords, rule.regex)) {
        // To keep the suite's CPU cost down, a rule under 0.2 ms on 4 KiB of a generator is not grown: each quadratic rule found (curl-auth-user, curl-auth-header) took 4 ms or more there.
        if (best(() => scan(generate(4096)), 2) < 0.2) continue;
        checked += 1;
        const { small, large, ratio } = growth(scan, generate, 4096);
        if (ratio >= LINEAR) slow.push(`${rule.id} on ${name}: ${small.toFixed(2)} ms at 4 KiB, ${large.toFixed(2)} ms at 64 KiB`);
      }
    }
    expect(slow.join("\n")).toBe("");
    expect(checked).toBeGreaterThan(0);
  });

  const OWN: Record<string, string> = {
    "Stripe": "sk_live_",
    "Google ya29.": "ya29.",
    "Hugging Face": "hf_",
    "SendGrid": "SG.aaaaaaaaaaaaaaaaa.",
    "Slack webhook": "hooks.slack.com\\/services\\/",
    "Anthropic": "sk-ant-",
    "sk-": " sk-",
    "GitHub": "ghp_",
    "GitHub PAT": "github_pat_",
    "AWS": "AKIA",
    "Slack token": "xoxb-",
    "GitLab": "glpat-",
    "npm": "npm_",
    "Google API": "AIza",
    "JWT": " eyJaaaaaaaaa.eyJ",
    "JSON secret key": '"token":"',
    "escaped JSON secret key": '\\"api_key\\":\\"',
    "assignment": "password=",
    "URL password": "a://b:c@",
    "URL password without @": "postgres://user:",
    "Bearer": "Bearer ",
    "Basic": "Authorization: Basic ",
    "Cookie": "Cookie: ",
    "Sentry DSN": "https://0123456789abcdef0123456789abcdef",
    "PEM header": "-----BEGIN PGP PRIVATE KEY BLOCK-----",
    "escaped character": "\\\\u0041",
  };
  for (const [name, prefix] of Object.entries(OWN)) {
    it(`the redactor's own ${name} shape (${JSON.stringify(prefix)} repeated, and before a run) grows linearly`, () => {
      const shapes: Record<string, (n: number) => string> = {
        repeated: (n) => repeat(prefix, n),
        "before a run of a": (n) => `${prefix}${repeat("a", n)}`,
        "before a run of backslashes": (n) => `${prefix}${repeat("\\", n)}`,
      };
      for (const [shape, generate] of Object.entries(shapes)) {
        const { small, large, ratio } = growth((text) => unbounded.redact(text), generate, 4 * 1024);
        expect(ratio, `${shape}: 4 KiB: ${small.toFixed(2)} ms, 64 KiB: ${large.toFixed(2)} ms`).toBeLessThan(LINEAR);
      }
    });
  }
});

describe("the per-line budget: the rest of a line is left out, and the line says so (issue 40)", () => {
  it(`a line longer than ${REDACTION_LIMITS.maxChars} characters is redacted up to there and the rest left out, with the partial token at the cut`, () => {
    const redactor = new Redactor([], { maxChars: 1000, budgetMs: Number.POSITIVE_INFINITY });
    const secret = "ghp_0123456789abcdefghijABCDEFGHIJ0123";
    const line = `${"word ".repeat(150)}key ${secret} ${"x".repeat(250)}${"tail ".repeat(400)}`;
    const out = redactor.redact(line);
    expect(out).not.toContain(secret);
    expect(out).toContain(`key ${REDACTED} `);
    expect(out).not.toContain("tail");
    // The cut fell inside the run of x: that partial token is gone too.
    expect(out).not.toContain("x");
    expect(out.endsWith(`${REDACTED}[the rest of this line (${line.length} characters in all) is not recorded: the line is longer than the 1000 characters redaction reads; see docs/transcript-format.md, "Redaction"]`)).toBe(true);
  });

  it("a line whose redaction passes the time budget is left out from where the scan stopped, and says so", () => {
    const out = new Redactor([], { maxChars: Number.POSITIVE_INFINITY, budgetMs: 0 }).redact(`secret ${"ghp_0123456789abcdefghijABCDEFGHIJ0123 ".repeat(100)}`);
    expect(out).not.toContain("ghp_");
    expect(out).toMatch(/^\[REDACTED\]\[the rest of this line \(3907 characters in all\) is not recorded: redaction took longer than its 0 ms budget; see docs\/transcript-format.md, "Redaction"\]$/);
  });

  it("the recorder applies the limits: a line past 4 MiB is recorded cut, with the note, in the transcript", async () => {
    const transcript = await openRunTranscript(tempDir("transcripts"), { secrets: [] });
    const line = JSON.stringify({ type: "user", message: { content: [{ type: "tool_result", content: "orders billing ".repeat(300_000) }] } });
    transcript.observer.wire!("in", line);
    await transcript.close();
    const record = JSON.parse(readFileSync(transcript.path, "utf8").trim());
    expect(record.text.length).toBeLessThan(REDACTION_LIMITS.maxChars + 300);
    // The size limit, or on a machine slow enough the time budget first: either way the line says so.
    expect(/\[REDACTED\]\[the rest of this line \(4500075 characters in all\) is not recorded: (the line is longer than the 4194304 characters redaction reads|redaction took longer than its 500 ms budget);/.test(record.text.slice(-300))).toBe(true);
  });
});
