import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NdjsonFramer } from "../../src/transport/ndjson.js";

function frame(chunks: Buffer[], limit?: number) {
  const lines: string[] = [];
  const oversized: number[] = [];
  const framer = new NdjsonFramer({ line: (l) => lines.push(l), oversized: (b) => oversized.push(b) }, limit);
  for (const chunk of chunks) framer.push(chunk);
  const { truncatedBytes } = framer.end();
  return { lines, oversized, truncatedBytes };
}

describe("NdjsonFramer", () => {
  it("splits on newlines across chunk boundaries and strips CR", () => {
    const { lines } = frame([Buffer.from('{"a":1}\r\n{"b"'), Buffer.from(':2}\n\n{"c":3}\n')]);
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it("keeps multi-byte characters split between chunks intact", () => {
    const bytes = Buffer.from('{"t":"héllo ✓"}\n');
    const { lines } = frame([bytes.subarray(0, 8), bytes.subarray(8, 15), bytes.subarray(15)]);
    expect(JSON.parse(lines[0]!)).toEqual({ t: "héllo ✓" });
  });

  it("delivers a last line without newline and reports it as truncated", () => {
    const { lines, truncatedBytes } = frame([Buffer.from('{"a":1}\n{"b":')]);
    expect(lines).toEqual(['{"a":1}', '{"b":']);
    expect(truncatedBytes).toBe(5);
  });

  it("parses a single 64 MiB line arriving in 64 KiB chunks", () => {
    const payload = "x".repeat(64 * 1024 * 1024);
    const line = Buffer.from(`{"big":"${payload}"}\n`);
    const chunks: Buffer[] = [];
    for (let i = 0; i < line.length; i += 65536) chunks.push(line.subarray(i, i + 65536));
    const { lines } = frame(chunks);
    expect(lines).toHaveLength(1);
    expect((JSON.parse(lines[0]!) as { big: string }).big.length).toBe(payload.length);
  });

  it("drops a line over the limit, reports it, and resumes after its newline", () => {
    const { lines, oversized } = frame([Buffer.from(`${"y".repeat(100)}\n{"ok":true}\n`)], 50);
    expect(oversized).toEqual([100]);
    expect(lines).toEqual(['{"ok":true}']);
  });

  it("frames any stream the same however it is cut into chunks", () => {
    // Lines of a few bytes, with CRs, empty lines and multi-byte characters; a limit some of them exceed.
    const line = fc.array(fc.constantFrom("a", "{", "\"", "\r", "é", "😀", " "), { maxLength: 12 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.boolean(), fc.array(fc.nat(), { maxLength: 8 }), fc.integer({ min: 1, max: 40 }), (lines, finalNewline, cuts, limit) => {
        const bytes = Buffer.from(lines.join("\n") + (finalNewline ? "\n" : ""));
        const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
        const chunks = [0, ...points].map((from, index, all) => bytes.subarray(from, all[index + 1] ?? bytes.length));
        // Reference: the whole stream in one piece, line by line.
        const expected = { lines: [] as string[], oversized: [] as number[] };
        const raw = bytes.toString("latin1").split("\n");
        raw.forEach((text, index) => {
          const size = Buffer.byteLength(text, "latin1");
          if (index === raw.length - 1 && size === 0) return;
          if (size > limit) return expected.oversized.push(size);
          const kept = Buffer.from(text, "latin1");
          const end = kept.length > 0 && kept[kept.length - 1] === 0x0d ? kept.length - 1 : kept.length;
          if (end > 0) expected.lines.push(kept.toString("utf8", 0, end));
        });
        const { lines: got, oversized } = frame(chunks, limit);
        expect({ lines: got, oversized }).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});
