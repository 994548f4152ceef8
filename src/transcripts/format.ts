/**
 * The transcript file format: JSONL, one record per line. The header comes first, then every line
 * in both directions (raw text, redacted) and stderr chunks with a monotonic millisecond offset,
 * then the exit.
 */
import { z } from "zod";

export const TRANSCRIPT_FORMAT = "ktx-claude-code-transcript/1";

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

export const transcriptRecordSchema = z.discriminatedUnion("kind", [headerRecordSchema, wireRecordSchema, exitRecordSchema]);

export type HeaderRecord = z.infer<typeof headerRecordSchema>;
export type WireRecord = z.infer<typeof wireRecordSchema>;
export type ExitRecord = z.infer<typeof exitRecordSchema>;
export type TranscriptRecord = z.infer<typeof transcriptRecordSchema>;

/** Appended by the fixture recorder: what the runtime call returned, to compare replays against. */
export const outcomeRecordSchema = z.looseObject({
  kind: z.literal("outcome"),
  scenario: z.string(),
  outcome: z.record(z.string(), z.unknown()),
});
export type OutcomeRecord = z.infer<typeof outcomeRecordSchema>;
