/**
 * Reading aids for transcripts: a timeline of a run (`show`), a summary of its figures, and a diff of
 * two runs (used for debugging and for the CLI-version drift report).
 */
export { LINE_WIDTH, VALUE_WIDTH, clip, matchesType, messageKey } from "./inspect/text.js";
export * from "./inspect/show.js";
export * from "./inspect/summary.js";
export * from "./inspect/diff.js";
export * from "./inspect/diff-text.js";
export * from "./inspect/trace.js";
