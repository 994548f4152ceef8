/**
 * Property tests of transcript redaction: secrets at random places in random text, JSON-escaped to a
 * random depth (0 = raw, 1 = inside a protocol line, 2 = tool output inside it, …), must not survive.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_DEPTH, REDACTED, Redactor, secretValues } from "../../src/transcripts/redact.js";
import { depth, escape, filler, plantable } from "./redact-arbitraries.js";

const alnum = (min: number, max: number) => fc.stringMatching(new RegExp(`^[A-Za-z0-9]{${min},${max}}$`));
const upper = (length: number) => fc.stringMatching(new RegExp(`^[A-Z0-9]{${length}}$`));
const b64url = (min: number, max: number) => fc.stringMatching(new RegExp(`^[A-Za-z0-9_-]{${min},${max}}$`));

/** Token shapes of issue 12, with random bodies. */
const token = fc.oneof(
  alnum(36, 40).map((body) => `ghp_${body}`),
  fc.stringMatching(/^[A-Za-z0-9_]{22,60}$/).map((body) => `github_pat_${body}`),
  upper(16).map((body) => `AKIA${body}`),
  fc.tuple(fc.constantFrom("xoxb", "xoxp"), fc.stringMatching(/^[0-9]{10,13}-[A-Za-z0-9]{10,24}$/)).map(([kind, body]) => `${kind}-${body}`),
  fc.tuple(b64url(10, 40), b64url(10, 80), b64url(10, 43)).map(([h, p, s]) => `eyJ${h}.eyJ${p}.${s}`),
  fc.array(fc.stringMatching(/^[A-Za-z0-9+/]{64}$/), { minLength: 1, maxLength: 4 }).map((lines) =>
    ["-----BEGIN RSA PRIVATE KEY-----", ...lines, "-----END RSA PRIVATE KEY-----"].join("\n"),
  ),
  alnum(20, 40).map((body) => `sk-ant-api03-${body}`),
);

/** The parts of a token that must not survive (a PEM key: each body line). */
const secretParts = (value: string) => (value.startsWith("-----BEGIN") ? value.split("\n").slice(1, -1) : [value]);

describe("redaction properties", () => {
  it("removes every token shape at any place and escaping depth", () => {
    fc.assert(
      fc.property(filler, token.filter((secret) => secretParts(secret).every(plantable)), filler, depth, (before, secret, after, level) => {
        const out = new Redactor([]).redact(escape(`${before} ${secret} ${after}`, level));
        for (const part of secretParts(secret)) expect(out).not.toContain(escape(part, level));
      }),
      { numRuns: 300 },
    );
  });

  it("removes the value of a secret-named JSON key at any escaping depth", () => {
    const key = fc.constantFrom("api_key", "apiKey", "x-api-key", "access_token", "client_secret", "password", "authorization", "token");
    const value = fc.stringMatching(/^[A-Za-z0-9_\-.+/=]{6,40}$/).filter(plantable);
    fc.assert(
      fc.property(filler, key, value, fc.integer({ min: 1, max: MAX_DEPTH }), (before, name, secret, level) => {
        const json = escape(JSON.stringify({ note: before, [name]: secret, after: "x" }), level - 1);
        const out = new Redactor([]).redact(json);
        expect(out).not.toContain(secret);
        expect(out).toContain(REDACTED);
      }),
      { numRuns: 300 },
    );
  });

  it("removes `password=…` and URL passwords in free text", () => {
    const value = fc.stringMatching(/^[A-Za-z0-9_\-.+/=!$%*]{6,30}$/).filter(plantable);
    fc.assert(
      fc.property(filler, value, depth, fc.constantFrom("password=", "PASSWORD: ", "api_key=", "secret="), (before, secret, level, prefix) => {
        const out = new Redactor([]).redact(escape(`${before} ${prefix}${secret} and postgres://app:${secret}@db:5432/x`, level));
        expect(out).not.toContain(secret);
      }),
      { numRuns: 200 },
    );
  });

  it("removes the value of any credential-named variable, whatever its characters, at any depth", () => {
    const name = fc.tuple(fc.stringMatching(/^[A-Z]{2,8}$/), fc.constantFrom("_TOKEN", "_KEY", "_SECRET", "_PASSWORD")).map(([stem, suffix]) => stem + suffix);
    const value = fc.string({ unit: fc.constantFrom(..."aZ09\"\\/'\n\t{}:,é €+=-_ ".split("")), minLength: 8, maxLength: 30 }).filter((v) => v.trim().length >= 8 && plantable(v));
    fc.assert(
      fc.property(fc.oneof(name, fc.constant("DATABASE_URL")), value, filler, filler, depth, (variable, secret, before, after, level) => {
        const secrets = secretValues({ [variable]: secret, HOME: "/home/u" });
        expect(secrets).toContain(secret);
        const out = new Redactor(secrets).redact(escape(`${before}${secret}${after}`, level));
        expect(out).not.toContain(escape(secret, level));
      }),
      { numRuns: 300 },
    );
  });

  it("leaves text without secrets as it was", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z .,\n]{0,200}$/), depth, (text, level) => {
        const input = escape(text, level);
        expect(new Redactor(["planted-secret-value"]).redact(input)).toBe(input);
      }),
      { numRuns: 200 },
    );
  });
});
