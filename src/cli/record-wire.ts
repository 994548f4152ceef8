/**
 * `ktx-claude-code fixtures record-wire (--version X | --cli PATH)`: records a CLI version's
 * first-party wire shape (src/testing/wire-recorder.ts, wire-shape-derive.ts) into `fixtures/transcripts/<X>/wire-shape.json`,
 * the file the runtime's interceptor checks that version's requests against. Also a phase of
 * `fixtures verify`. `--check` compares with the committed file instead of writing it.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { type WireShapeFile, validateWireShapeFile } from "../claude-code/wire/shape-file.js";
import { wireShapePath } from "../claude-code/wire/shape.js";
import { recordWire } from "../testing/wire-recorder.js";
import { deriveWireShape, wireShapeText } from "../testing/wire-shape-derive.js";
import type { Io } from "./fixtures.js";
import { terminalText } from "./terminal-text.js";

/** The differences between two shape files, one line each (the recording date and call list aside). */
export function wireShapeChanges(before: WireShapeFile, after: WireShapeFile): string[] {
  const changes: string[] = [];
  const list = (name: string, a: readonly string[], b: readonly string[]) => {
    for (const item of b) if (!a.includes(item)) changes.push(`ADDED   ${name}: ${JSON.stringify(item)}`);
    for (const item of a) if (!b.includes(item)) changes.push(`REMOVED ${name}: ${JSON.stringify(item)}`);
  };
  const value = (name: string, a: string, b: string) => {
    if (a !== b) changes.push(`CHANGED ${name}: ${JSON.stringify(a)} -> ${JSON.stringify(b)}`);
  };
  value("version", before.version, after.version);
  list("hosts", before.hosts, after.hosts);
  list("headers", before.headers, after.headers);
  list("betas", before.betas, after.betas);
  list("bodyFields", before.bodyFields, after.bodyFields);
  value("billingLine.template", before.billingLine.template, after.billingLine.template);
  list("billingLine.fields", before.billingLine.fields, after.billingLine.fields);
  value("preamble", before.preamble, after.preamble);
  const reminder = (entry: { kind: string; template: string }) => `${entry.kind}: ${entry.template}`;
  list("reminders", before.reminders.map(reminder), after.reminders.map(reminder));
  value("context.head", before.context.head, after.context.head);
  value("context.tail", before.context.tail, after.context.tail);
  const section = (entry: { name: string; template: string }) => `${entry.name}: ${entry.template}`;
  list("context.sections", before.context.sections.map(section), after.context.sections.map(section));
  list("syntheticUserTexts", before.syntheticUserTexts, after.syntheticUserTexts);
  const other = (entry: { method: string; host: string; path: string }) => `${entry.method} ${entry.host}${entry.path}`;
  list("otherRequests", before.otherRequests.map(other), after.otherRequests.map(other));
  const cliTool = (entry: { name: string; description: string }) => `${entry.name}: ${entry.description}`;
  list("cliTools", (before.cliTools ?? []).map(cliTool), (after.cliTools ?? []).map(cliTool));
  const builtinTool = (entry: { name: string; description: string; inputSchema: unknown }) => `${entry.name}: ${entry.description} ${JSON.stringify(entry.inputSchema)}`;
  list("builtinTools", (before.builtinTools ?? []).map(builtinTool), (after.builtinTools ?? []).map(builtinTool));
  // A recording without the project instructions call lacks their format (REMOVED, as a list's missing items are).
  const instructions = (shape: WireShapeFile) => (shape.projectInstructions ? [JSON.stringify(shape.projectInstructions)] : []);
  list("projectInstructions", instructions(before), instructions(after));
  // The variants (shape-variants.ts), each entry whole.
  const variant = ({ why: _why, ...entry }: NonNullable<WireShapeFile["modelVariants"]>[number]) => JSON.stringify(entry);
  list("modelVariants", (before.modelVariants ?? []).map(variant), (after.modelVariants ?? []).map(variant));
  list("contextSuffix", before.contextSuffix ? [JSON.stringify(before.contextSuffix)] : [], after.contextSuffix ? [JSON.stringify(after.contextSuffix)] : []);
  list("worktree.reminders", (before.worktree?.reminders ?? []).map(reminder), (after.worktree?.reminders ?? []).map(reminder));
  value("webSearch", JSON.stringify(before.webSearch ?? null), JSON.stringify(after.webSearch ?? null));
  // A session's compaction (wire/compaction.ts): each part as a line.
  const compaction = (file: WireShapeFile) =>
    file.compaction
      ? [
          ...file.compaction.prompts.map((prompt) => `prompt: ${prompt}`),
          ...file.compaction.requestHeaders.map((name) => `request header: ${name}`),
          ...file.compaction.compactedHeaders.map((name) => `header after: ${name}`),
          ...file.compaction.billingFields.map((name) => `billing field after: ${name}`),
          `continuation: ${JSON.stringify(file.compaction.continuation)}`,
        ]
      : [];
  list("compaction", compaction(before), compaction(after));
  return changes;
}

export interface RecordWireCommandOptions {
  cliPath: string;
  /** Where to write (default: fixtures/transcripts/<version>/wire-shape.json of this package). */
  out?: string;
  /** Compare with the file instead of writing it: exit 1 when they differ. */
  check?: boolean;
}

/** Records, derives and writes (or checks) a version's shape; exit 0 written or same, 1 differs (`check`). */
export async function recordWireShape(options: RecordWireCommandOptions, io: Io): Promise<{ exitCode: number; version: string; seconds: number; changes: string[]; path: string }> {
  const started = performance.now();
  io.stderr(`Recording the first-party wire shape of ${options.cliPath}\n`);
  const recording = await recordWire({ cliPath: options.cliPath, progress: (text) => io.stderr(text) });
  const file = deriveWireShape(recording);
  const path = options.out ?? wireShapePath(recording.version);
  const before = existsSync(path) ? validateWireShapeFile(JSON.parse(readFileSync(path, "utf8"))) : undefined;
  const changes = before ? wireShapeChanges(before, file) : [];
  const seconds = (performance.now() - started) / 1000;
  const summary = `${recording.version}: ${recording.calls.length} calls, ${recording.requests.length} requests (${recording.requests.filter((request) => request.path === "/v1/messages").length} Messages) in ${seconds.toFixed(1)} s; ${file.headers.length} headers, ${file.betas.length} betas, ${file.bodyFields.length} body fields, ${file.reminders.length} reminder templates, ${file.context.sections.length} context sections, ${file.syntheticUserTexts.length} synthetic user texts, ${file.otherRequests.length} other requests`;
  const failed = recording.calls.filter((call) => !call.ok).map((call) => `  call "${call.name}" failed (recorded as such): ${call.error}\n`);
  if (options.check) {
    io.stdout(`${summary}\n${failed.join("")}`);
    if (!before) {
      io.stdout(`No shape at ${path} to compare with.\n`);
      return { exitCode: 1, version: recording.version, seconds, changes, path };
    }
    io.stdout(changes.length === 0 ? `Same as ${path}.\n` : `Differs from ${path}:\n${changes.map((line) => `  ${line}\n`).join("")}`);
    return { exitCode: changes.length === 0 ? 0 : 1, version: recording.version, seconds, changes, path };
  }
  // The same shape recorded on another day leaves the file as it was (its date included): re-verifying
  // a version changes nothing in the checkout.
  if (before && wireShapeText({ ...file, recorded: { ...file.recorded, date: before.recorded.date } }) === readFileSync(path, "utf8")) {
    io.stdout(terminalText(`${summary}\n${failed.join("")}Unchanged: ${path} (the recording is the same; the file is left as it was)\n`));
    return { exitCode: 0, version: recording.version, seconds, changes, path };
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, wireShapeText(file));
  io.stdout(terminalText(`${summary}\n${failed.join("")}Wrote ${path}${before ? (changes.length === 0 ? " (no change in the checked parts)" : `; against the previous file:\n${changes.map((line) => `  ${line}\n`).join("")}`) : " (new)"}\n`));
  return { exitCode: 0, version: recording.version, seconds, changes, path };
}
