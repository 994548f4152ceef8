/**
 * The hand-written checks of the hot message types (src/protocol/fast-checks.ts) against their zod
 * schemas: a check may accept a value only when the schema accepts it and leaves it unchanged, and
 * parseCliMessage gives the same answer with or without them.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { FAST_CHECKS } from "../../src/protocol/fast-checks.js";
import {
  INFORMATIONAL_TYPES,
  assistantMessageSchema,
  controlCancelRequestSchema,
  controlRequestSchema,
  controlResponseSchema,
  keepAliveSchema,
  parseCliMessage,
  resultMessageSchema,
  streamEventSchema,
  systemInitSchema,
  systemOtherSchema,
  userMessageSchema,
} from "../../src/protocol/messages.js";

const ROOT = join(import.meta.dirname, "../..");

/** The schema of each kind that has a check. */
const SCHEMAS: Record<string, { schema: z.ZodType }> = {
  assistant: { schema: assistantMessageSchema },
  user: { schema: userMessageSchema },
  result: { schema: resultMessageSchema },
  control_request: { schema: controlRequestSchema },
  control_response: { schema: controlResponseSchema },
  control_cancel_request: { schema: controlCancelRequestSchema },
  stream_event: { schema: streamEventSchema },
  keep_alive: { schema: keepAliveSchema },
  informational: { schema: z.looseObject({ type: z.enum(INFORMATIONAL_TYPES) }) },
  system_init: { schema: systemInitSchema },
  system: { schema: systemOtherSchema },
};

/** Every stdout line of the recorded 2.1.330 samples and transcripts. */
function recordedLines(): unknown[] {
  const lines: unknown[] = [];
  const protocolDir = join(ROOT, "fixtures/protocol-2.1.330");
  for (const file of readdirSync(protocolDir).filter((name) => name.endsWith(".ndjson"))) {
    for (const line of readFileSync(join(protocolDir, file), "utf8").split("\n")) if (line.trim()) lines.push(JSON.parse(line));
  }
  const transcriptDir = join(ROOT, "fixtures/transcripts/2.1.330");
  for (const file of readdirSync(transcriptDir).filter((name) => name.endsWith(".jsonl"))) {
    for (const line of readFileSync(join(transcriptDir, file), "utf8").split("\n")) {
      if (!line.trim()) continue;
      const record = JSON.parse(line) as { kind?: string; text?: string };
      if (record.kind !== "in" || !record.text) continue;
      try {
        lines.push(JSON.parse(record.text));
      } catch {
        // a non-JSON line a fault transcript recorded
      }
    }
  }
  return lines;
}

/** Values a field might hold: right and wrong types alike. */
const anyField = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 6 }),
  fc.constantFrom("success", "error", "init", "text", "tool_use"),
  fc.array(fc.oneof(fc.string({ maxLength: 4 }), fc.record({ type: fc.oneof(fc.string({ maxLength: 4 }), fc.integer()) }), fc.record({ name: fc.oneof(fc.string({ maxLength: 4 }), fc.constant(null)) })), { maxLength: 3 }),
  fc.record({ type: fc.string({ maxLength: 4 }) }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
);

/** The fields each schema reads: `top` on the line, `nested` one level down (in `message`, `response`, `request`, `usage`). */
const FIELDS: Record<string, { top: string[]; nested?: string[] }> = {
  assistant: { top: ["message", "parent_tool_use_id", "session_id", "error", "is_api_error_message", "api_error_status"], nested: ["id", "model", "content", "stop_reason", "usage"] },
  user: { top: ["message", "parent_tool_use_id", "isSynthetic"], nested: ["role", "content"] },
  result: {
    top: ["subtype", "is_error", "num_turns", "session_id", "result", "errors", "stop_reason", "terminal_reason", "total_cost_usd", "usage", "modelUsage", "permission_denials", "api_error_status", "duration_ms"],
    nested: ["input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"],
  },
  control_request: { top: ["request_id", "request"], nested: ["subtype"] },
  control_response: { top: ["response"], nested: ["subtype", "request_id", "response", "error"] },
  control_cancel_request: { top: ["request_id"] },
  stream_event: { top: ["event"] },
  keep_alive: { top: ["brand_new"] },
  informational: { top: ["brand_new"] },
  system_init: { top: ["subtype", "session_id", "cwd", "tools", "mcp_servers", "model", "permissionMode", "apiKeySource", "claude_code_version", "slash_commands", "skills", "agents", "plugins"] },
  system: { top: ["subtype"] },
};

/** A recorded line of the kind changed in up to three of the fields its schema reads: set to any value, or removed. */
const mutation = (kind: string) => {
  const { top, nested } = FIELDS[kind]!;
  return fc.array(
    fc.record({ field: fc.constantFrom(...top), nested: nested ? fc.option(fc.constantFrom(...nested), { nil: undefined }) : fc.constant(undefined), value: anyField, remove: fc.boolean() }),
    { minLength: 0, maxLength: 3 },
  );
};

function mutate(base: Record<string, unknown>, changes: Array<{ field: string; nested?: string; value: unknown; remove: boolean }>): Record<string, unknown> {
  const value = structuredClone(base);
  for (const change of changes) {
    const holder = change.nested === undefined ? value : (value[change.field] as Record<string, unknown> | undefined);
    const key = change.nested ?? change.field;
    if (typeof holder !== "object" || holder === null || Array.isArray(holder)) continue;
    if (change.remove) delete holder[key];
    else holder[key] = change.value;
  }
  // A JSON line never holds undefined.
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}

describe("fast checks of the hot message types", () => {
  it("accept nothing their schema turns down, and what they accept the schema leaves unchanged", () => {
    const examples = new Map<string, Record<string, unknown>[]>();
    for (const value of recordedLines()) {
      const parsed = parseCliMessage(value);
      if (parsed.kind !== "invalid" && FAST_CHECKS[parsed.kind]) examples.set(parsed.kind, [...(examples.get(parsed.kind) ?? []), value as Record<string, unknown>]);
    }
    examples.set("keep_alive", [{ type: "keep_alive" }]);
    examples.set("informational", [{ type: "tool_progress", tool_use_id: "t1" }]);
    examples.set("control_cancel_request", [{ type: "control_cancel_request", request_id: "r1" }]);
    let accepted = 0;
    let rejected = 0;
    for (const [kind, { schema }] of Object.entries(SCHEMAS)) {
      const check = FAST_CHECKS[kind]!;
      const bases = examples.get(kind) ?? [];
      expect(bases.length, kind).toBeGreaterThan(0);
      fc.assert(
        fc.property(fc.constantFrom(...bases), mutation(kind), (base, changes) => {
          const value = { ...mutate(base, changes), type: base.type };
          if (!check(value)) {
            rejected += 1;
            return;
          }
          accepted += 1;
          const parsed = schema.safeParse(value);
          expect(parsed.success, `${kind}: ${JSON.stringify(value).slice(0, 300)}`).toBe(true);
          expect(parsed.data).toEqual(value);
        }),
        { numRuns: 300 },
      );
    }
    // The mutations reach both sides of every check.
    expect(accepted).toBeGreaterThan(300);
    expect(rejected).toBeGreaterThan(300);
  });

  it("pass every recorded line of their kinds, so the real stream takes the fast path", () => {
    const seen = new Set<string>();
    for (const value of recordedLines()) {
      const parsed = parseCliMessage(value);
      if (parsed.kind === "invalid" || !FAST_CHECKS[parsed.kind]) continue;
      seen.add(parsed.kind);
      expect(FAST_CHECKS[parsed.kind]!(value as Record<string, unknown>), `${parsed.kind}: ${JSON.stringify(value).slice(0, 200)}`).toBe(true);
      // Same message as zod's parse would give.
      expect(parsed.message).toEqual(SCHEMAS[parsed.kind]!.schema.parse(value));
    }
    for (const kind of ["assistant", "user", "result", "control_request", "control_response", "system_init", "system", "stream_event"]) expect(seen).toContain(kind);
  });

  it("leave malformed lines to zod, whose error text the caller gets", () => {
    const broken = { type: "assistant", message: { id: 7, content: [] } };
    const parsed = parseCliMessage(broken);
    expect(parsed.kind).toBe("invalid");
    expect(parsed.kind === "invalid" && parsed.issues).toBe(z.prettifyError(assistantMessageSchema.safeParse(broken).error!));
    expect(parseCliMessage({ type: "user", message: { content: [{ text: "no type" }] } }).kind).toBe("invalid");
    expect(parseCliMessage({ type: "control_response", response: { subtype: "maybe", request_id: "r1" } }).kind).toBe("invalid");
    expect(parseCliMessage({ type: "system", subtype: "init", session_id: "s", tools: [1], mcp_servers: [], model: "m" }).kind).toBe("invalid");
  });
});
