import { describe, expect, it } from "vitest";
import { TOOL_OUTPUT_LIMIT, boundToolText } from "../../src/mcp/bridge.js";

describe("tool output limit", () => {
  it("stays below the CLI's 50,000-character spill threshold, note included", () => {
    const { text, truncated } = boundToolText("x".repeat(1_000_000));
    expect(text.length).toBeLessThan(50_000);
    expect(truncated).toEqual({ originalChars: 1_000_000, keptChars: TOOL_OUTPUT_LIMIT });
    expect(text).toMatch(/\[ktx: tool output truncated: showing the first 40,000 of 1,000,000 characters\. Ask for less/);
  });

  it("leaves output at the limit alone", () => {
    const exact = "y".repeat(TOOL_OUTPUT_LIMIT);
    expect(boundToolText(exact)).toEqual({ text: exact });
  });

  it("never cuts a surrogate pair in half", () => {
    const text = `${"a".repeat(TOOL_OUTPUT_LIMIT - 1)}😀${"b".repeat(10)}`;
    const bounded = boundToolText(text);
    expect(bounded.truncated?.keptChars).toBe(TOOL_OUTPUT_LIMIT - 1);
    expect(bounded.text.startsWith(`${"a".repeat(TOOL_OUTPUT_LIMIT - 1)}\n\n[ktx:`)).toBe(true);
  });
});
