import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseCliMessage } from "../../src/protocol/messages.js";

const FIXTURE_DIR = join(import.meta.dirname, "../../fixtures/protocol-2.1.330");

describe("parseCliMessage", () => {
  it("classifies every line of the real 2.1.330 stdout samples without an invalid one", () => {
    const kinds = new Set<string>();
    for (const file of readdirSync(FIXTURE_DIR).filter((name) => name.endsWith(".ndjson"))) {
      for (const line of readFileSync(join(FIXTURE_DIR, file), "utf8").split("\n")) {
        if (!line.trim()) continue;
        const parsed = parseCliMessage(JSON.parse(line));
        expect(parsed.kind, `${file}: ${line.slice(0, 120)}`).not.toBe("invalid");
        kinds.add(parsed.kind);
      }
    }
    for (const kind of ["system_init", "assistant", "user", "result", "control_request", "control_response", "system", "api_retry"]) {
      expect(kinds).toContain(kind);
    }
  });

  it("keeps unknown fields", () => {
    const parsed = parseCliMessage({ type: "result", subtype: "success", brand_new_field: 42 });
    expect(parsed.kind).toBe("result");
    expect((parsed as { message: Record<string, unknown> }).message.brand_new_field).toBe(42);
  });

  it("passes an unknown message type through", () => {
    expect(parseCliMessage({ type: "hologram", x: 1 })).toEqual({ kind: "unknown_message", message: { type: "hologram", x: 1 } });
  });

  it("takes a type named like an Object.prototype member as unknown, without throwing", () => {
    for (const type of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      expect(parseCliMessage({ type, x: 1 })).toEqual({ kind: "unknown_message", message: { type, x: 1 } });
    }
  });

  it("reports a known type with a broken shape as invalid, and never throws", () => {
    expect(parseCliMessage({ type: "control_request" }).kind).toBe("invalid");
    expect(parseCliMessage("text").kind).toBe("invalid");
    expect(parseCliMessage(null).kind).toBe("invalid");
    expect(parseCliMessage([1]).kind).toBe("invalid");
  });

  it("routes keep_alive, stream_event and informational types", () => {
    expect(parseCliMessage({ type: "keep_alive" }).kind).toBe("keep_alive");
    expect(parseCliMessage({ type: "stream_event", event: {} }).kind).toBe("stream_event");
    expect(parseCliMessage({ type: "rate_limit_event" }).kind).toBe("rate_limit");
  });
});
