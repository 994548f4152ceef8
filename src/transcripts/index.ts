/**
 * `ktx-claude-code/transcripts`: the stable public entry for reading transcripts and raw stream-json
 * captures, and for the figures, comparisons and traces the `transcript` commands print
 * (docs/guides/debugging.md, "From code"). Tools outside this package import from here,
 * never from `dist/…` paths, which move between releases.
 */
export {
  loadTranscript,
  readTranscriptRecords,
  streamTranscript,
  importCapture,
  detectFormat,
  isRawCapture,
  projectDirLength,
  type AnyRecord,
  type LoadedTranscript,
  type NoteRecord,
  type ReadRecord,
  type SourceFormat,
} from "./reader.js";
export { TRANSCRIPT_FORMAT } from "./format-check.js";
export type { CallRecord, ExitRecord, HeaderRecord, OutcomeRecord, TranscriptRecord, WireRecord } from "./format.js";
export { summarizeTranscript, summarizeRecords, type TranscriptSummary, type TokenSource, type RequestSummary } from "./inspect/summary.js";
export { diffTranscripts, isEmptyDiff, type TranscriptDiff, type ValueChange } from "./inspect/diff.js";
export { renderDiff } from "./inspect/diff-text.js";
export { renderTranscript, renderTimeline, type TimelineOptions } from "./inspect/show.js";
export { traceTranscript, traceRecords, type TraceFile, type TraceEvent } from "./inspect/trace.js";
export { TranscriptFileError } from "../errors/index.js";
