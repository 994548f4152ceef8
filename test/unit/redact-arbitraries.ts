/**
 * What the redaction property tests share: JSON escaping to any depth, filler that cannot form a token,
 * and the rule that keeps a secret out of the filler: the filler has no upper-case letter and no digit,
 * and every secret a property plants has one (`plantable`). Without it, fast-check once drew the same
 * word for the filler and for an `Authorization: Basic` body ("rototype", issue 39): the assertion
 * "the secret is not in the output" then failed on text the test itself put there.
 */
import fc from "fast-check";
import { MAX_DEPTH } from "../../src/transcripts/redact.js";

/** `text` after `depth` rounds of JSON string escaping. */
export const escape = (text: string, depth: number): string => {
  let out = text;
  for (let level = 0; level < depth; level++) out = JSON.stringify(out).slice(1, -1);
  return out;
};

/** Filler that cannot itself form a token: lower-case words, spaces, punctuation, line breaks (no upper case, no digit). */
export const filler = fc.stringMatching(/^[a-z .,:\n{}[\]"]{0,40}$/);
export const depth = fc.integer({ min: 0, max: MAX_DEPTH - 1 });

/** A secret the filler cannot hold: it has an upper-case letter or a digit. */
export const plantable = (secret: string): boolean => /[A-Z0-9]/.test(secret);
