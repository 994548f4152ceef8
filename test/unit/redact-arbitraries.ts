/** What the redaction property tests share: JSON escaping to any depth and filler that cannot form a token. */
import fc from "fast-check";
import { MAX_DEPTH } from "../../src/transcripts/redact.js";

/** `text` after `depth` rounds of JSON string escaping. */
export const escape = (text: string, depth: number): string => {
  let out = text;
  for (let level = 0; level < depth; level++) out = JSON.stringify(out).slice(1, -1);
  return out;
};

/** Filler that cannot itself form a token: lower-case words, spaces, punctuation, line breaks. */
export const filler = fc.stringMatching(/^[a-z .,:\n{}[\]"]{0,40}$/);
export const depth = fc.integer({ min: 0, max: MAX_DEPTH - 1 });
