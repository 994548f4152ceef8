#!/usr/bin/env node
/**
 * The `ktx-claude-code` command: inspect transcripts, record and compare golden fixtures, and check
 * a project's claude-code backend (status, doctor).
 */
import { parseArgs } from "node:util";
import { ClaudeCodeError } from "../errors/index.js";
import { loadTranscript, streamTranscript } from "../transcripts/reader.js";
import { diffTranscripts, renderDiff, renderTimeline, summarizeRecords, type TranscriptSummary } from "../transcripts/inspect.js";
import { compareFixtures, recordFixtures, type Io } from "./fixtures.js";
import { runDoctor, runStatus } from "./status.js";

const USAGE = `Usage: ktx-claude-code <command>

  status [--project-dir DIR] [--json]        what the claude-code backend will use
  doctor [--project-dir DIR] [--json]        the same checks; exits 1 on any failure, with the fix
  transcript show <file> [--raw] [--type T,T]
                                             timeline of a recorded run: turns, tool calls, tokens, exit
  transcript summary <file> [--json]         turns, tokens, cost, message counts, tool calls, result, exit
  transcript diff <before> <after> [--json]  normalised differences between two runs (structure and values)
  fixtures record [--versions V,V] [--scenarios S,S]
                                             record the scenario catalog with each CLI version
  fixtures compare (--cli PATH | --version V) [--against V] [--scenarios S,S] [--json]
                                             run the catalog on another CLI and report drift
`;

const io: Io = { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) };

function flags(args: string[], options: Record<string, { type: "string" | "boolean" }>) {
  return parseArgs({ args, options, allowPositionals: true, strict: true });
}

/** Writes and waits when the pipe is full, so a large `--raw` output is not buffered whole. */
async function write(text: string): Promise<void> {
  if (!process.stdout.write(text)) await new Promise<void>((resolve) => process.stdout.once("drain", () => resolve()));
}

const list = (value: string | boolean | undefined) => (typeof value === "string" ? value.split(",").map((item) => item.trim()).filter(Boolean) : undefined);

async function transcript(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = flags(rest, { raw: { type: "boolean" }, json: { type: "boolean" }, type: { type: "string" } });
  if (sub === "show" && positionals.length === 1) {
    const path = positionals[0]!;
    for await (const line of renderTimeline(path, streamTranscript(path), { raw: values.raw === true, types: list(values.type) })) await write(`${line}\n`);
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
    io.stdout(values.json ? `${JSON.stringify(diff, null, 2)}\n` : `${renderDiff(diff).join("\n")}\n`);
    return 0;
  }
  io.stderr(USAGE);
  return 2;
}

function renderSummary(summary: TranscriptSummary): string {
  const table = (counts: Record<string, number>) =>
    Object.entries(counts)
      .sort()
      .map(([key, n]) => `    ${String(n).padStart(4)}  ${key}`)
      .join("\n");
  const { tokens } = summary;
  const lines = [
    `${summary.path}`,
    `  CLI ${summary.cliVersion}, ${summary.durationMs.toFixed(0)} ms, exit ${JSON.stringify(summary.exit ?? null)}`,
    `  result: ${JSON.stringify(summary.result ?? null)}`,
    `  turns: ${summary.turns}`,
    `  tokens: in ${tokens.input}, out ${tokens.output}, cache read ${tokens.cacheRead}, cache write ${tokens.cacheCreation} (from ${tokens.source === "none" ? "nothing: no usage recorded" : `the ${tokens.source} lines`})`,
    `  cost: ${summary.costUsd === undefined ? "unknown" : `$${summary.costUsd.toFixed(6)}`}`,
    `  tool calls: ${summary.toolCalls.map((call) => `${call.name}${call.isError ? " (error)" : ""}`).join(", ") || "none"}`,
    `  permission denials sent: ${summary.deniedPermissions.length}`,
    `  from the CLI:\n${table(summary.messages.fromCli)}`,
    `  to the CLI:\n${table(summary.messages.toCli)}`,
    `  stderr: ${summary.stderrBytes} bytes; non-JSON stdout lines: ${summary.nonJsonLines}`,
  ];
  if (summary.outcome) lines.push(`  outcome: ${JSON.stringify(summary.outcome)}`);
  return `${lines.join("\n")}\n`;
}

async function fixtures(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values } = flags(rest, {
    versions: { type: "string" },
    scenarios: { type: "string" },
    out: { type: "string" },
    cli: { type: "string" },
    version: { type: "string" },
    against: { type: "string" },
    json: { type: "boolean" },
  });
  const text = (value: string | boolean | undefined) => (typeof value === "string" ? value : undefined);
  if (sub === "record") return recordFixtures({ versions: text(values.versions), scenarios: text(values.scenarios), out: text(values.out) }, io);
  const cli = text(values.cli);
  const version = text(values.version);
  if (sub === "compare" && (cli === undefined) !== (version === undefined)) {
    return compareFixtures({ cli, version, against: text(values.against), scenarios: text(values.scenarios), json: values.json === true }, io);
  }
  io.stderr(USAGE);
  return 2;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case "status":
      return runStatus(args, io);
    case "doctor":
      return runDoctor(args, io);
    case "transcript":
      return transcript(args);
    case "fixtures":
      return fixtures(args);
    case undefined:
    case "help":
    case "--help":
    case "-h":
      io.stdout(USAGE);
      return command === undefined ? 2 : 0;
    default:
      io.stderr(`Unknown command ${JSON.stringify(command)}.\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    io.stderr(`${ClaudeCodeError.isInstance(error) ? `${error.name}: ${error.message}` : String((error as Error)?.stack ?? error)}\n`);
    process.exitCode = 1;
  },
);
