/** The text of `transcript diff`: structure first, then values (a few per message), then result, outcome and call. */
import { clip } from "./text.js";
import { isEmptyDiff, type TranscriptDiff, type ValueChange } from "./diff.js";

/** Caps that keep the text report readable (the initialize reply alone differs in dozens of places); `--json` lists all. */
const MAX_CHANGES_PER_MESSAGE = 6;
const MAX_VALUE_CHANGES = 60;
/** A value longer than this is cut in the text report only. */
const TEXT_VALUE_WIDTH = 400;
/** A new or removed field's value in the per-scenario text (the drift report's structure lists it whole). */
const FIELD_VALUE_WIDTH = 120;

const cut = (text: string) => clip(text, TEXT_VALUE_WIDTH);

/** One value change as text: a list by what was added and removed (whole), a value as before -> after. */
export function changeText(change: ValueChange): string {
  const where = `${change.direction === "in" ? "<<" : ">>"} ${change.key} #${change.occurrence} (lines ${change.lines[0]}/${change.lines[1]}) ${change.path || "(whole line)"}`;
  if (change.added || change.removed) {
    const parts = [...(change.added?.length ? [`added ${JSON.stringify(change.added)}`] : []), ...(change.removed?.length ? [`removed ${JSON.stringify(change.removed)}`] : [])];
    return `${where}: ${parts.join("; ") || "same items, another order"}`;
  }
  return `${where}: ${cut(change.before)} -> ${cut(change.after)}`;
}

/** The text report: structure first, then values (a few per message), then result, outcome and call. */
export function renderDiff(diff: TranscriptDiff): string[] {
  const versions = diff.cliVersions ? [`CLI ${diff.cliVersions.before} -> ${diff.cliVersions.after} (version strings are masked below)`] : [];
  if (isEmptyDiff(diff)) return [...versions, "no differences"];
  const lines: string[] = [...versions];
  if (diff.projectDirLengths) {
    const { before, after } = diff.projectDirLengths;
    lines.push(`note: the project dirs are ${before} and ${after} characters long; the CLI names its project dir in every API request, so input tokens and costs differ with its length (run both in dirs of one length to compare them)`);
  }
  if (diff.addedMessageTypes.length) lines.push(`new message types: ${diff.addedMessageTypes.join(", ")}`);
  if (diff.removedMessageTypes.length) lines.push(`removed message types: ${diff.removedMessageTypes.join(", ")}`);
  // Each field with its value(s) in the run that has it: a new `sandbox_enabled` reads `sandbox_enabled = false`.
  const withValues = (fields: string[], values: Record<string, unknown[]> | undefined) =>
    fields.map((field) => (values?.[field]?.length ? `${field} = ${clip(values[field]!.map((value) => JSON.stringify(value)).join(" | "), FIELD_VALUE_WIDTH)}` : field)).join(", ");
  for (const [key, fields] of Object.entries(diff.addedFields)) lines.push(`${key}: new fields ${withValues(fields, diff.addedFieldValues?.[key])}`);
  for (const [key, fields] of Object.entries(diff.removedFields)) lines.push(`${key}: removed fields ${withValues(fields, diff.removedFieldValues?.[key])}`);
  if (diff.controlRequests) lines.push(`control requests changed:\n  before ${diff.controlRequests.before.join(" ")}\n  after  ${diff.controlRequests.after.join(" ")}`);
  if (diff.hostLines) lines.push(`our lines changed:\n  before ${diff.hostLines.before.join(" ")}\n  after  ${diff.hostLines.after.join(" ")}`);
  if (diff.valueChanges.length) {
    lines.push("changed values (normalised):");
    const perMessage = new Map<string, number>();
    let listed = 0;
    for (const change of diff.valueChanges) {
      const message = `${change.direction} ${change.key} ${change.occurrence}`;
      const n = perMessage.get(message) ?? 0;
      perMessage.set(message, n + 1);
      if (n >= MAX_CHANGES_PER_MESSAGE || listed >= MAX_VALUE_CHANGES) continue;
      listed += 1;
      lines.push(`  ${changeText(change)}`);
    }
    const omitted = diff.valueChanges.length - listed;
    if (omitted > 0) lines.push(`  … and ${omitted} more, not listed here (at most ${MAX_CHANGES_PER_MESSAGE} per message and ${MAX_VALUE_CHANGES} in all; --json lists every one)`);
  }
  const json = (value: unknown) => (value === undefined ? "(none)" : JSON.stringify(value));
  if (diff.result) lines.push(`result changed: ${json(diff.result.before)} -> ${json(diff.result.after)}`);
  if (diff.outcome) lines.push(`outcome changed: ${json(diff.outcome.before)} -> ${json(diff.outcome.after)}`);
  if (diff.call) lines.push(`call record changed: ${json(diff.call.before)} -> ${json(diff.call.after)}`);
  if (diff.sessionTurns) lines.push(`session turns changed:\n  before ${json(diff.sessionTurns.before)}\n  after  ${json(diff.sessionTurns.after)}`);
  return lines;
}
