/**
 * `ktx-claude-code/transcripts` (issue 39): the transcript reader and its figures through the package's
 * own entry, as a tool outside the package imports them (never `dist/…` paths, which move).
 */
import { join } from "node:path";
import { expect, it } from "vitest";
import {
  TRANSCRIPT_FORMAT,
  TranscriptFileError,
  diffTranscripts,
  isEmptyDiff,
  loadTranscript,
  readTranscriptRecords,
  summarizeTranscript,
  traceTranscript,
  type ReadRecord,
} from "ktx-claude-code/transcripts";

const FIXTURE = join(import.meta.dirname, "../../fixtures/transcripts/2.1.331/tool-loop.jsonl");

it("reads, summarises, diffs and traces a transcript through the public entry", async () => {
  const transcript = loadTranscript(FIXTURE);
  expect(transcript.header.format).toBe(TRANSCRIPT_FORMAT);
  const streamed: ReadRecord[] = [];
  for await (const record of readTranscriptRecords(FIXTURE)) streamed.push(record);
  expect(streamed.length).toBe(transcript.records.length);
  expect(summarizeTranscript(transcript).toolCalls.map((call) => call.name)).toEqual(["mcp__ktx__lookup", "mcp__ktx__count"]);
  expect(isEmptyDiff(diffTranscripts(transcript, transcript))).toBe(true);
  expect(traceTranscript(transcript).traceEvents.length).toBeGreaterThan(0);
  expect(() => loadTranscript(join(import.meta.dirname, "absent.jsonl"))).toThrow(TranscriptFileError);
});
