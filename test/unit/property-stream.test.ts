/** Property tests: random splits, junk and odd-but-valid messages never crash, hang or lose a line. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseCliMessage } from "../../src/protocol/messages.js";
import { NdjsonFramer } from "../../src/transport/ndjson.js";

/** Splits `bytes` at the given cut points (sorted, deduplicated, in range). */
function split(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const point of points) {
    chunks.push(bytes.subarray(start, point));
    start = point;
  }
  chunks.push(bytes.subarray(start));
  return chunks;
}

function frameAll(chunks: Buffer[], limit?: number) {
  const lines: string[] = [];
  let oversized = 0;
  const framer = new NdjsonFramer({ line: (line) => lines.push(line), oversized: () => (oversized += 1) }, limit);
  for (const chunk of chunks) framer.push(chunk);
  framer.end();
  return { lines, oversized };
}

const jsonValue = fc.jsonValue({ maxDepth: 3 });
const oddMessage = fc.oneof(
  fc.record({ type: fc.constantFrom("assistant", "user", "result", "system", "control_request", "control_response", "stream_event", "keep_alive", "zzz_future") }, { requiredKeys: [] }),
  fc.dictionary(fc.string(), jsonValue),
  fc.record({ type: fc.constant("result"), subtype: fc.string(), is_error: fc.boolean(), extra: jsonValue }),
  fc.record({ type: fc.constant("system"), subtype: fc.string(), session_id: fc.string() }),
);

describe("NDJSON framing under random chunking", () => {
  it("delivers exactly the non-empty lines, in order, however the bytes are split", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "binary" }).map((s) => s.replace(/[\n\r]/g, " ")), { maxLength: 30 }), fc.array(fc.nat(), { maxLength: 20 }), (texts, cuts) => {
        const bytes = Buffer.from(texts.map((text) => `${text}\n`).join(""));
        const { lines } = frameAll(split(bytes, cuts));
        expect(lines).toEqual(texts.filter((text) => text.length > 0));
      }),
    );
  });

  it("never crashes on binary junk, and each segment is either one line or one oversized report", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2_000 }), fc.array(fc.nat(), { maxLength: 20 }), fc.integer({ min: 1, max: 64 }), (junk, cuts, limit) => {
        const bytes = Buffer.from(junk);
        const { lines, oversized } = frameAll(split(bytes, cuts), limit);
        const segments = bytes.toString("latin1").split("\n");
        expect(lines.length + oversized).toBeLessThanOrEqual(segments.length);
      }),
    );
  });

  it("keeps ASCII lines up to the limit intact and reports longer ones", () => {
    const asciiLine = fc.string({ unit: fc.integer({ min: 32, max: 126 }).map((code) => String.fromCharCode(code)), minLength: 1, maxLength: 80 });
    fc.assert(
      fc.property(fc.array(asciiLine, { maxLength: 30 }), fc.array(fc.nat(), { maxLength: 20 }), fc.integer({ min: 1, max: 64 }), (texts, cuts, limit) => {
        const { lines, oversized } = frameAll(split(Buffer.from(texts.map((text) => `${text}\n`).join("")), cuts), limit);
        expect(lines).toEqual(texts.filter((text) => text.length <= limit));
        expect(oversized).toBe(texts.filter((text) => text.length > limit).length);
      }),
    );
  });
});

describe("message parsing of odd but valid JSON", () => {
  it("classifies every JSON line without throwing, keeping unknown types and fields", () => {
    fc.assert(
      fc.property(fc.array(oddMessage, { maxLength: 20 }), fc.array(fc.nat(), { maxLength: 10 }), (messages, cuts) => {
        const bytes = Buffer.from(messages.map((message) => `${JSON.stringify(message)}\n`).join(""));
        const { lines } = frameAll(split(bytes, cuts));
        expect(lines).toHaveLength(messages.length);
        lines.forEach((line, index) => {
          const parsed = parseCliMessage(JSON.parse(line));
          if (parsed.kind === "unknown_message") expect(parsed.message).toEqual(JSON.parse(JSON.stringify(messages[index])));
        });
      }),
    );
  });
});
