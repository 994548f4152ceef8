/** `ktx-claude-code transcript show|summary|diff|import`: reading recorded runs and raw stream-json captures. */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { importCapture, loadTranscript, streamTranscript } from "../transcripts/reader.js";
import { diffTranscripts, isEmptyDiff, renderDiff, renderTimeline, summarizeRecords } from "../transcripts/inspect.js";
import { KNOWN_TYPES, unknownTypes } from "../transcripts/inspect/text.js";
import type { Io } from "./fixtures.js";
import { renderSummary } from "./summary-text.js";

export { renderSummary };

export const TRANSCRIPT_USAGE = `  transcript show <file> [--raw] [--type T,T]
                                             timeline of a recorded run or a raw stream-json capture
  transcript summary <file> [--json]         turns, tokens, cost, message counts, tool calls, result, exit
  transcript diff <before> <after> [--json]  normalised differences between two runs; exits 1 when they differ
  transcript import <capture> [--out FILE]   a raw stream-json capture as a ktx-claude-code transcript
`;

/** Writes and waits when the pipe is full, so a large `--raw` output is not buffered whole. */
async function write(text: string): Promise<void> {
  if (!process.stdout.write(text)) await new Promise<void>((resolve) => process.stdout.once("drain", () => resolve()));
}

const list = (value: string | boolean | undefined) => (typeof value === "string" ? value.split(",").map((item) => item.trim()).filter(Boolean) : undefined);

/** Exit codes: 0 done (diff: no difference), 1 differences found, 2 bad input or usage. */
export async function transcriptCommand(args: string[], io: Io, usage: string): Promise<number> {
  const [sub, ...rest] = args;
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: { raw: { type: "boolean" }, json: { type: "boolean" }, type: { type: "string" }, out: { type: "string" } }, allowPositionals: true, strict: true });
  } catch (error) {
    io.stderr(`${(error as Error).message}\n\n${usage}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (sub === "show" && positionals.length === 1) {
    const types = list(values.type);
    const unknown = unknownTypes(types ?? []);
    if (unknown.length > 0) {
      io.stderr(`Unknown --type ${unknown.map((type) => JSON.stringify(type)).join(", ")}. Known types (each also matches its subtypes, e.g. system/init): ${KNOWN_TYPES.join(", ")}.\n`);
      return 2;
    }
    const path = positionals[0]!;
    for await (const line of renderTimeline(path, streamTranscript(path), { raw: values.raw === true, types })) await write(`${line}\n`);
    return 0;
  }
  if (sub === "summary" && positionals.length === 1) {
    const path = positionals[0]!;
    const summary = await summarizeRecords(path, streamTranscript(path));
    io.stdout(values.json ? `${JSON.stringify(summary, null, 2)}\n` : renderSummary(summary));
    return 0;
  }
  if (sub === "diff" && positionals.length === 2) {
    const diff = diffTranscripts(loadTranscript(positionals[0]!), loadTranscript(positionals[1]!));
    io.stdout(values.json ? `${JSON.stringify({ ...diff, differ: !isEmptyDiff(diff) }, null, 2)}\n` : `${renderDiff(diff).join("\n")}\n`);
    return isEmptyDiff(diff) ? 0 : 1;
  }
  if (sub === "import" && positionals.length === 1) {
    const path = positionals[0]!;
    const imported = importCapture(path);
    const text = `${imported.lines.join("\n")}\n`;
    if (typeof values.out === "string") writeFileSync(values.out, text);
    else io.stdout(text);
    const cut = imported.truncatedLine ? `; line ${imported.truncatedLine} was cut short and is left out` : "";
    io.stderr(`Imported ${imported.records} lines of ${path}${typeof values.out === "string" ? ` into ${values.out}` : ""} (no timing or host lines: a capture has none)${cut}.\n`);
    return 0;
  }
  io.stderr(usage);
  return 2;
}

