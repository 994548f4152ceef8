/**
 * What the runtime reads of the CLI's lines, so a drift report can say whether a change matters to
 * it. The fields come from the wire schemas themselves (`src/protocol/messages.ts`, which
 * `fast-checks.ts` mirrors): a field a schema names is one the runtime parses; everything else is
 * kept but never read. The few reads outside those schemas are listed here with where they are.
 */
import { z } from "zod";
import {
  apiRetrySchema,
  assistantMessageSchema,
  controlRequestSchema,
  controlResponseSchema,
  rateLimitEventSchema,
  resultMessageSchema,
  systemInitSchema,
  userMessageSchema,
} from "../protocol/messages.js";

/** A schema's object shape, through optional/nullable/catch wrappers; undefined for anything else. */
function shapeOf(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  let inner: unknown = schema;
  for (let depth = 0; depth < 5 && inner && !(inner instanceof z.ZodObject); depth += 1) {
    const wrapped = inner as { unwrap?: () => unknown; def?: { innerType?: unknown } };
    inner = typeof wrapped.unwrap === "function" ? wrapped.unwrap() : wrapped.def?.innerType;
  }
  return inner instanceof z.ZodObject ? (inner.shape as Record<string, z.ZodType>) : undefined;
}

/**
 * What a schema reads: every field path it names (`message.usage.input_tokens`), and which of them
 * it takes whole (a list, a record, `unknown`: everything inside is read).
 */
interface Reads {
  paths: Set<string>;
  whole: Set<string>;
}

function schemaReads(schema: z.ZodType, extra: { whole?: string[]; containers?: string[] } = {}): Reads {
  const reads: Reads = { paths: new Set(), whole: new Set() };
  const walk = (inner: z.ZodType, prefix: string) => {
    for (const [name, field] of Object.entries(shapeOf(inner) ?? {})) {
      const path = prefix ? `${prefix}.${name}` : name;
      reads.paths.add(path);
      if (shapeOf(field)) walk(field, path);
      else reads.whole.add(path);
    }
  };
  walk(schema, "");
  // An envelope typed `unknown` whose contents are read field by field elsewhere.
  for (const path of extra.containers ?? []) reads.whole.delete(path);
  for (const path of extra.whole ?? []) {
    reads.paths.add(path);
    reads.whole.add(path);
  }
  return reads;
}

/** Message types (as `messageKey` names them) whose lines the runtime parses, and the fields it reads. */
const READS: Array<[RegExp, Reads]> = [
  [/^system\/init$/, schemaReads(systemInitSchema)],
  [/^system\/api_retry$/, schemaReads(apiRetrySchema)],
  [/^rate_limit_event$/, schemaReads(rateLimitEventSchema)],
  [/^assistant$/, schemaReads(assistantMessageSchema)],
  [/^user$/, schemaReads(userMessageSchema)],
  [/^result\//, schemaReads(resultMessageSchema)],
  // The requests it answers: tool calls over MCP (session/control.ts) and permission questions (run/run-state.ts reads tool_name).
  [/^control_request\/mcp_message/, schemaReads(controlRequestSchema, { whole: ["request.server_name", "request.message"] })],
  [/^control_request\/can_use_tool$/, schemaReads(controlRequestSchema, { whole: ["request.tool_name", "request.input"] })],
  // The initialize reply's account (checks/isolation.ts, checks/billing.ts) and the rewind reply (session/pooled-process.ts).
  [/^control_response\/\w+ to initialize$/, schemaReads(controlResponseSchema, { containers: ["response.response"], whole: ["response.response.account"] })],
  [/^control_response\/\w+ to rewind_conversation$/, schemaReads(controlResponseSchema, { containers: ["response.response"], whole: ["response.response.rewound"] })],
  [/^control_response\//, schemaReads(controlResponseSchema, { containers: ["response.response"] })],
];

/** Control requests the CLI sends that the runtime answers (session/control.ts). */
export const ANSWERED_CONTROL_REQUESTS = ["mcp_message", "can_use_tool"];

function readsOf(key: string): Reads | undefined {
  return READS.find(([pattern]) => pattern.test(key))?.[1];
}

/** Whether the runtime parses lines of this message type at all. */
export function runtimeReadsType(key: string): boolean {
  return readsOf(key) !== undefined;
}

/**
 * Whether the runtime reads this field, a path as the diff names it (`sandbox_enabled`,
 * `message.usage.input_tokens`, `response.response.account`, a list such as `capabilities`): when
 * the schema names it, or names a field holding it that it takes whole.
 */
export function runtimeReadsField(key: string, path: string): boolean {
  const reads = readsOf(key);
  if (!reads) return false;
  if (reads.paths.has(path)) return true;
  const parts = path.split(".");
  for (let length = parts.length - 1; length > 0; length -= 1) if (reads.whole.has(parts.slice(0, length).join("."))) return true;
  return false;
}
