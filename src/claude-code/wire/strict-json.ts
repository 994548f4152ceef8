/**
 * A request body's strict parse (check.ts): JSON.parse keeps the last of two equal keys, but the API's
 * parser need not, so a body with `"system"` twice (or `"\u006dodel"` then `"model"`) would be checked
 * on one value and read on another. The body is forwarded byte for byte (its bytes are what the CLI
 * signed into the billing line's hash, and the e2e tests compare them with a direct request), so instead
 * of re-serialising it, a body whose objects repeat a key, or whose bytes are not UTF-8, is refused.
 */

const decoder = new TextDecoder("utf-8", { fatal: true });

/** The parsed body, or why it cannot be checked. */
export function parseStrictJson(raw: Buffer): { value: unknown } | { problem: string } {
  let text: string;
  try {
    text = decoder.decode(raw);
  } catch {
    return { problem: "the body is not UTF-8" };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: "the body is not JSON" };
  }
  const duplicate = duplicateKey(text);
  return duplicate === undefined ? { value } : { problem: `the body repeats the key ${JSON.stringify(duplicate)} in one object (checked on one value, read on another)` };
}

/**
 * The first key an object of `text` (valid JSON) holds twice, after unescaping; undefined when none.
 * One pass: only strings and brackets matter, and a string is a key when it follows `{` or a `,` inside an object.
 */
export function duplicateKey(text: string): string | undefined {
  const stack: Array<Set<string> | undefined> = [];
  let expectKey = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text.charCodeAt(index);
    if (char === 0x22 /* " */) {
      let end = index + 1;
      let escaped = false;
      for (; end < text.length; end += 1) {
        const inner = text.charCodeAt(end);
        if (inner === 0x5c /* \ */) {
          escaped = true;
          end += 1;
        } else if (inner === 0x22) break;
      }
      if (expectKey) {
        const raw = text.slice(index + 1, end);
        const key = escaped ? (JSON.parse(`"${raw}"`) as string) : raw;
        const keys = stack[stack.length - 1]!;
        if (keys.has(key)) return key;
        keys.add(key);
        expectKey = false;
      }
      index = end;
    } else if (char === 0x7b /* { */) {
      stack.push(new Set());
      expectKey = true;
    } else if (char === 0x5b /* [ */) {
      stack.push(undefined);
    } else if (char === 0x7d /* } */ || char === 0x5d /* ] */) {
      stack.pop();
    } else if (char === 0x2c /* , */) {
      expectKey = stack[stack.length - 1] !== undefined;
    }
  }
  return undefined;
}
