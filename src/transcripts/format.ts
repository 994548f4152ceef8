/**
 * The transcript file format: JSONL, one record per line. The header comes first, then every line
 * in both directions (raw text, redacted) and stderr chunks with a monotonic millisecond offset,
 * then the exit.
 */
import { z } from "zod";
import { TRANSCRIPT_FORMAT } from "./format-check.js";

// The reader checks records with format-check.ts (no zod); these schemas are the reference it is tested against.
export { TRANSCRIPT_FORMAT };

export const headerRecordSchema = z.looseObject({
  kind: z.literal("header"),
  format: z.literal(TRANSCRIPT_FORMAT),
  library: z.string(),
  cliPath: z.string(),
  cliVersion: z.string(),
  args: z.array(z.string()),
  /** Names only, never values. */
  envNames: z.array(z.string()),
  cwd: z.string(),
  startedAt: z.string(),
  scenario: z.string().optional(),
});

export const wireRecordSchema = z.looseObject({
  kind: z.enum(["out", "in", "stderr", "dropped"]),
  /** Absent in a transcript imported from a raw stream-json capture (no timing was recorded). */
  t: z.number().optional(),
  text: z.string(),
});

export const exitRecordSchema = z.looseObject({
  kind: z.literal("exit"),
  t: z.number(),
  exitCode: z.number().nullable(),
  signal: z.string().nullable(),
});

/** A figure the runtime did not write reads as 0: one missing field must not make the whole file unreadable. */
const tokens = z.number().optional().default(0);
const callUsageSchema = z.looseObject({
  inputTokens: tokens,
  outputTokens: tokens,
  cacheCreationInputTokens: tokens,
  cacheReadInputTokens: tokens,
});

/**
 * The last record of a call (transcripts written since issue 18; older ones lack it): this call's own
 * cost and usage as the runtime computed them (a reused process's `result` line carries the process's
 * running total instead), how the process ended for this call, and which launch served it.
 */
export const callRecordSchema = z.looseObject({
  kind: z.literal("call"),
  t: z.number(),
  costUsd: z.number().nullable().optional().default(null),
  usage: callUsageSchema.nullable().optional().default(null),
  /** `kept for reuse`, `retired: <reason>`, `aborted`, `exited <code>` or `signal <SIG>`. */
  ending: z.string(),
  /** Which launch served the call; optional so a call that never got a process still reads. */
  process: z.looseObject({ launch: z.string(), call: z.number() }).optional(),
});

/**
 * A session's turn begins (a session's transcript only; docs/transcript-format.md, "Sessions"): its number
 * (1-based: `history[turn - 1]`), its input (redacted), whether the earlier turns reached the model natively or
 * replayed as text, and (once a process serves it) which process.
 */
export const turnRecordSchema = z.looseObject({
  kind: z.literal("turn"),
  t: z.number(),
  turn: z.number(),
  input: z.string(),
  history: z.enum(["native", "replayed"]),
  process: z.looseObject({ pid: z.number().optional(), launch: z.string(), call: z.number() }).optional(),
});

/** A session's turn ended: `ok`, `interrupted` or `failed` (with the error), its duration and, when ok, its usage and cost. */
export const turnEndRecordSchema = z.looseObject({
  kind: z.literal("turn_end"),
  t: z.number(),
  turn: z.number(),
  outcome: z.enum(["ok", "interrupted", "failed"]),
  durationMs: z.number(),
  usage: callUsageSchema.optional(),
  costUsd: z.number().optional(),
  error: z.looseObject({ name: z.string(), code: z.string(), message: z.string() }).optional(),
});

/** The caller interrupted a session's turn (`session.interrupt()`), here. */
export const interruptRecordSchema = z.looseObject({ kind: z.literal("interrupt"), t: z.number(), turn: z.number() });

/** The session was closed after `turns` turns. */
export const sessionEndRecordSchema = z.looseObject({ kind: z.literal("session_end"), t: z.number(), turns: z.number() });

export const transcriptRecordSchema = z.discriminatedUnion("kind", [
  headerRecordSchema,
  wireRecordSchema,
  exitRecordSchema,
  callRecordSchema,
  turnRecordSchema,
  turnEndRecordSchema,
  interruptRecordSchema,
  sessionEndRecordSchema,
]);

export type HeaderRecord = z.infer<typeof headerRecordSchema>;
export type WireRecord = z.infer<typeof wireRecordSchema>;
export type ExitRecord = z.infer<typeof exitRecordSchema>;
export type CallRecord = z.infer<typeof callRecordSchema>;
export type TurnRecord = z.infer<typeof turnRecordSchema>;
export type TurnEndRecord = z.infer<typeof turnEndRecordSchema>;
export type InterruptRecord = z.infer<typeof interruptRecordSchema>;
export type SessionEndRecord = z.infer<typeof sessionEndRecordSchema>;
export type TranscriptRecord = z.infer<typeof transcriptRecordSchema>;

/** Appended by the fixture recorder: what the runtime call returned, to compare replays against. */
export const outcomeRecordSchema = z.looseObject({
  kind: z.literal("outcome"),
  scenario: z.string(),
  outcome: z.record(z.string(), z.unknown()),
});
export type OutcomeRecord = z.infer<typeof outcomeRecordSchema>;

/**
 * What one Messages request carried, as the runtime's interceptor records it in a call record's
 * `requests` (docs/transcript-format.md, "Request records"). Bodies only when asked; never the credential.
 */
export interface RequestRecord {
  /** Bytes of the request body, and of its `system`, `messages` and `tools` fields as JSON; `rest` is the remainder. */
  bytes: { total: number; system: number; messages: number; tools: number; rest: number };
  betas: string[];
  model?: string;
  status?: number;
  /** From the answer: `message_start` and `message_delta` usage (streamed) or the JSON body's `usage`. */
  usage?: Record<string, unknown>;
  /** `anthropic-ratelimit-*` and `retry-after` answer headers. */
  rateLimit?: Record<string, string>;
  /** Milliseconds from the request's last byte to the answer's headers and to its last byte. */
  firstByteMs?: number;
  lastByteMs?: number;
  error?: string;
  /** The answer's message id: a model response the CLI reports must be one of these (the call fails otherwise). */
  messageId?: string;
  /** Set on a session's summary request (the CLI compacting its conversation, wire/compaction.ts): its answer is the summary, not a turn. */
  compaction?: true;
  /** The request body (only with `wire: { bodies: true }`); redacted by the transcript like every record. */
  body?: unknown;
}
