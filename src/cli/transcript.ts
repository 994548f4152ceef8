/** `ktx-claude-code transcript show|summary|diff|import`: reading recorded runs and raw stream-json captures. */
import { closeSync, writeFileSync } from "node:fs";
import { OutputWriteError } from "../errors/index.js";
import { openForWrite } from "../transport/files.js";
import { importCapture, loadTranscript, streamTranscript } from "../transcripts/reader.js";
import { diffTranscripts, isEmptyDiff, renderDiff, renderTimeline, summarizeRecords, traceRecords } from "../transcripts/inspect.js";
import { KNOWN_TYPES, unknownTypes } from "../transcripts/inspect/text.js";
import { isStop, parseCommand, stop, text, usageError, type CommandSpec } from "./args.js";
import type { Io } from "./fixtures.js";
import { renderSummary } from "./summary-text.js";
import { terminalText } from "./terminal-text.js";
import { TRANSCRIPT_USAGE } from "./usage.js";

export { renderSummary, TRANSCRIPT_USAGE };
export { stop } from "./args.js";

const FILE = "a transcript (.jsonl) or a raw stream-json capture";

export const TRANSCRIPT_COMMANDS: Record<string, CommandSpec> = {
  show: {
    name: "transcript show",
    positionals: { shown: "<file>", count: 1, what: "file" },
    summary: `The timeline of one run (${FILE}): turns, tool calls and their durations, permission answers, control traffic, tokens, cost, exit.`,
    options: {
      raw: { type: "boolean", help: "each record's text as recorded, uncut" },
      type: { type: "string", value: "T,T", help: `only these message types (each also matches its subtypes): ${KNOWN_TYPES.join(", ")}` },
    },
    examples: ["ktx-claude-code transcript show run.jsonl", "ktx-claude-code transcript show run.jsonl --type result,control_request/mcp_message --raw"],
  },
  summary: {
    name: "transcript summary",
    positionals: { shown: "<file>", count: 1, what: "file" },
    summary: `One screen of figures about a run (${FILE}): how it ended, turns, tokens and cost over the same scope, tool calls, message counts.`,
    options: { json: { type: "boolean", help: "the summary as JSON" } },
    examples: ["ktx-claude-code transcript summary run.jsonl --json"],
  },
  diff: {
    name: "transcript diff",
    positionals: { shown: "<before> <after>", count: 2, what: "files (<before> <after>)" },
    summary: "What differs between two runs, after masking what differs between any two runs (ids, temp dirs, times, pids, the CLI version): structure, then values.",
    options: { json: { type: "boolean", help: "the differences as JSON, every value whole" } },
    notes: ["Exit codes: 0 the runs are the same, 1 they differ, 2 it could not compare (a missing or unreadable file, wrong arguments)."],
    examples: ["ktx-claude-code transcript diff before.jsonl after.jsonl"],
  },
  trace: {
    name: "transcript trace",
    positionals: { shown: "<file>", count: 1, what: "file" },
    summary: `A run (${FILE}) as Chrome trace-event JSON, to open in https://ui.perfetto.dev or chrome://tracing: process start, initialize, each API turn, each tool call and permission answer, result, exit on one time axis, subagents on their own tracks.`,
    options: { out: { type: "string", value: "FILE", help: "write it to FILE (default: stdout)" } },
    examples: ["ktx-claude-code transcript trace run.jsonl --out trace.json"],
  },
  import: {
    name: "transcript import",
    positionals: { shown: "<capture>", count: 1, what: "capture file" },
    summary: "A raw stream-json capture (`claude -p --output-format stream-json --verbose` stdout) as a ktx-claude-code transcript.",
    options: { out: { type: "string", value: "FILE", help: "write it to FILE (default: stdout)" } },
    examples: ["ktx-claude-code transcript import run.ndjson --out run.jsonl"],
  },
};


/** Writes and waits when the pipe is full, so a large `--raw` output is not buffered whole. */
async function write(text: string): Promise<void> {
  if (!process.stdout.write(text)) await new Promise<void>((resolve) => process.stdout.once("drain", () => resolve()));
}

/** Writes a `--out` file as a regular file (no symlink followed, no FIFO), or throws `OutputWriteError` naming the path. */
function writeOut(path: string, body: string): void {
  let fd: number;
  try {
    fd = openForWrite(path, { mode: 0o644 });
  } catch (error) {
    throw new OutputWriteError(path, error);
  }
  try {
    writeFileSync(fd, body);
  } catch (error) {
    throw new OutputWriteError(path, error);
  } finally {
    closeSync(fd);
  }
}

const list = (value: string | boolean | undefined) => (typeof value === "string" ? value.split(",").map((item) => item.trim()).filter(Boolean) : undefined);

/** Exit codes: 0 done (diff: no difference), 1 differences found, 2 bad input or usage. */
export async function transcriptCommand(args: string[], io: Io, usage: string): Promise<number> {
  const [sub, ...rest] = args;
  const spec = sub ? TRANSCRIPT_COMMANDS[sub] : undefined;
  if (!spec) {
    if (sub === "--help" || sub === "-h") {
      const examples = Object.values(TRANSCRIPT_COMMANDS).map((command) => command.examples?.[0]).filter((line) => line !== undefined);
      io.stdout(`Usage: ktx-claude-code transcript <show|summary|diff|trace|import> …\n\n${TRANSCRIPT_USAGE}\nExamples:\n${examples.map((line) => `  ${line}`).join("\n")}\n\nEach answers --help.\n`);
      return 0;
    }
    io.stderr(`ktx-claude-code transcript: ${sub === undefined ? "which subcommand?" : `unknown subcommand ${JSON.stringify(sub)}`} (show, summary, diff, trace, import).\n\n${usage}`);
    return 2;
  }
  const parsed = parseCommand(spec, rest);
  if (isStop(parsed)) return stop(io, parsed);
  const { values, positionals } = parsed;
  if (sub === "show") {
    const types = list(values.type);
    const unknown = unknownTypes(types ?? []);
    if (unknown.length > 0) {
      return stop(io, usageError(spec, `unknown --type ${unknown.map((type) => JSON.stringify(type)).join(", ")}; known types (each also matches its subtypes, e.g. system/init): ${KNOWN_TYPES.join(", ")}`));
    }
    const path = positionals[0]!;
    for await (const line of renderTimeline(path, streamTranscript(path), { raw: values.raw === true, types })) await write(`${terminalText(line)}\n`);
    return 0;
  }
  if (sub === "summary") {
    const path = positionals[0]!;
    const summary = await summarizeRecords(path, streamTranscript(path));
    io.stdout(values.json ? `${JSON.stringify(summary, null, 2)}\n` : terminalText(renderSummary(summary)));
    return 0;
  }
  if (sub === "diff") {
    const diff = diffTranscripts(loadTranscript(positionals[0]!), loadTranscript(positionals[1]!));
    io.stdout(values.json ? `${JSON.stringify({ ...diff, differ: !isEmptyDiff(diff) }, null, 2)}\n` : `${terminalText(renderDiff(diff).join("\n"))}\n`);
    return isEmptyDiff(diff) ? 0 : 1;
  }
  const path = positionals[0]!;
  const out = text(values.out);
  if (sub === "trace") {
    const trace = await traceRecords(path, streamTranscript(path));
    const body = `${JSON.stringify(trace)}\n`;
    if (out !== undefined) writeOut(out, body);
    else io.stdout(body);
    const count = (cat: string) => trace.traceEvents.filter((event) => event.cat === cat && event.ph === "X").length;
    if (out !== undefined) io.stderr(terminalText(`Wrote ${trace.traceEvents.length} trace events (${count("turn")} API turns, ${count("tool")} tool calls) to ${out}; open it in https://ui.perfetto.dev.\n`));
    return 0;
  }
  const imported = importCapture(path);
  const body = `${imported.lines.join("\n")}\n`;
  if (out !== undefined) writeOut(out, body);
  else io.stdout(body);
  const cut = imported.truncatedLine ? `; line ${imported.truncatedLine} was cut short and is left out` : "";
  io.stderr(terminalText(`Imported ${imported.records} lines of ${path}${out !== undefined ? ` into ${out}` : ""} (no timing or host lines: a capture has none)${cut}; secrets redacted in ${imported.redactedLines} of them (the header says so).\n`));
  return 0;
}
