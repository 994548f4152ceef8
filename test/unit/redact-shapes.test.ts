/**
 * Property tests for the 12 shapes the second hardening round found unredacted (issue 20, item 5):
 * each with a random body, between random lines of text (the secret on a line of its own, a block
 * spanning several), JSON-escaped to a random depth as tool output nests inside protocol lines.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Redactor, connectionSecrets, looksSecret, secretValues } from "../../src/transcripts/redact.js";
import { depth, escape, filler, plantable } from "./redact-arbitraries.js";

const chars = (set: string, min: number, max = min) => fc.stringMatching(new RegExp(`^[${set}]{${min},${max}}$`));
const alnum = (min: number, max = min) => chars("A-Za-z0-9", min, max);

/** A shape: the text that carries the secret, and the parts of it that must not survive. */
interface Shape {
  text: string;
  secrets: string[];
  env?: Record<string, string>;
}

const shapes: Record<string, fc.Arbitrary<Shape>> = {
  "Authorization: Basic": fc.tuple(fc.constantFrom("Authorization", "authorization", "Proxy-Authorization"), chars("A-Za-z0-9+/", 8, 40), fc.constantFrom("", "=", "==")).map(([header, body, pad]) => ({
    text: `${header}: Basic ${body}${pad}`,
    secrets: [body],
  })),
  "Stripe sk_live_": fc.tuple(fc.constantFrom("sk_live_", "rk_live_", "sk_test_"), alnum(24, 99)).map(([prefix, body]) => ({ text: `key ${prefix}${body}`, secrets: [`${prefix}${body}`] })),
  "Slack webhook URL": fc.tuple(chars("A-Z0-9", 8, 11), chars("A-Z0-9", 8, 11), alnum(24)).map(([team, bot, key]) => ({
    text: `post to https://hooks.slack.com/services/T${team}/B${bot}/${key}`,
    secrets: [key],
  })),
  "Google ya29.": chars("A-Za-z0-9_-", 30, 120).map((body) => ({ text: `token ya29.${body}`, secrets: [body] })),
  "Hugging Face hf_": chars("A-Za-z", 34).map((body) => ({ text: `HF hf_${body}`, secrets: [body] })),
  "SendGrid SG.": fc.tuple(chars("A-Za-z0-9_-", 22), chars("A-Za-z0-9_-", 43)).map(([id, key]) => ({ text: `SG.${id}.${key}`, secrets: [key] })),
  "Azure AccountKey=": chars("A-Za-z0-9+/", 86).map((body) => ({
    text: `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${body}==;EndpointSuffix=core.windows.net`,
    secrets: [`${body}==`],
  })),
  "Cookie: header": fc.tuple(fc.constantFrom("Cookie", "cookie", "Set-Cookie"), alnum(16, 32), alnum(16, 32)).map(([header, session, csrf]) => ({
    text: `${header}: session=${session}; csrf=${csrf}`,
    secrets: [session, csrf],
  })),
  "PGP private key block": fc.array(chars("A-Za-z0-9+/", 64), { minLength: 1, maxLength: 4 }).map((lines) => ({
    text: ["-----BEGIN PGP PRIVATE KEY BLOCK-----", "", ...lines, "-----END PGP PRIVATE KEY BLOCK-----"].join("\n"),
    secrets: lines,
  })),
  "Sentry DSN": fc.tuple(chars("0-9a-f", 32), fc.integer({ min: 1, max: 999999 })).map(([key, org]) => ({
    text: `dsn https://${key}@o${org}.ingest.sentry.io/${org}`,
    secrets: [key],
  })),
  "DATABASE_URL password alone in a tool error": fc.tuple(chars("A-Za-z0-9!#*", 8, 24), fc.constantFrom("DATABASE_URL", "PG_CONN", "APP_DB")).map(([password, name]) => ({
    env: { [name]: `postgres://app:${password}@db.internal:5432/app` },
    text: `error: password authentication failed for user "app" (password: "${password}")`,
    secrets: [password],
  })),
  "secret-looking value under a harmless name": fc.tuple(alnum(20, 40), fc.constantFrom("BUILD_REF", "MY_SERVICE_VALUE", "APP_MODE")).map(([body, name]) => ({
    env: { [name]: `Zq9${body}` },
    text: `the service answered for Zq9${body}`,
    secrets: [`Zq9${body}`],
  })),
};

describe("redaction of the 12 shapes of issue 20", () => {
  it.each(Object.entries(shapes))("%s: redacted between lines, at any escaping depth", (_name, shape) => {
    fc.assert(
      fc.property(filler, shape.filter(({ secrets }) => secrets.every(plantable)), filler, depth, (before, { text, secrets, env }, after, level) => {
        const redactor = new Redactor(env ? secretValues(env) : []);
        const out = redactor.redact(escape(`${before}\n${text}\n${after}`, level));
        for (const secret of secrets) expect(out).not.toContain(escape(secret, level));
      }),
      { numRuns: 150 },
    );
  });

  it("plants no secret the filler could also produce (issue 39: the filler once equalled a Basic body, \"rototype\")", () => {
    fc.assert(fc.property(filler, (text) => !plantable(text)), { numRuns: 500 });
    expect(plantable("rototype")).toBe(false);
  });

  it("takes the parts of connection strings and only values that look secret", () => {
    expect(connectionSecrets("postgres://u:p%40ss-word@h/db")).toEqual(["p%40ss-word", "p@ss-word"]);
    expect(connectionSecrets("Server=x;User Id=u;Password=hunter22;")).toEqual(["hunter22"]);
    expect(looksSecret("Zq9a8b7c6d5e4f3g2h1iJ")).toBe(true);
    expect(looksSecret("0123456789abcdef0123456789abcdef")).toBe(true);
    for (const value of ["/usr/local/bin:/usr/bin:/bin", "en_US.UTF-8", "production", "http://127.0.0.1:8080", "some words here and there", "ABCDEFGHIJKLMNOPQRSTUVWX"]) {
      expect(looksSecret(value), value).toBe(false);
    }
  });
});
