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
});
