#!/usr/bin/env node
/**
 * The `ktx-claude-code` command: log in (the pinned CLI's own login), inspect transcripts, record and
 * compare golden fixtures, and check a project's claude-code backend (status, doctor). Exit codes: 0
 * done (same), 1 found a difference or a failure, 2 could not run (wrong arguments, bad input, an
 * install that failed).
 */
import { ClaudeCodeError, InvalidInputError } from "../errors/index.js";
import { LIBRARY_VERSION } from "../version.js";
import { isStop, parseCommand, text, type CommandSpec } from "./args.js";
import { compareFixtures, recordFixtures, type Io } from "./fixtures.js";
import { LOGIN_USAGE, runLogin } from "./login.js";
import { runDoctor, runStatus } from "./status.js";
import { stop, TRANSCRIPT_USAGE, transcriptCommand } from "./transcript.js";

const USAGE = `Usage: ktx-claude-code <command>   (ktx-claude-code <command> --help for its options and an example)

${LOGIN_USAGE}  status [--project-dir DIR] [--json]        what the claude-code backend will use
  doctor [--project-dir DIR] [--json]        the same checks; exits 1 on any failure, with the fix
${TRANSCRIPT_USAGE}  fixtures record [--versions V,V] [--scenarios S,S]
                                             record the scenario catalog with each CLI version
  fixtures compare (--cli PATH | --version V) [--against V] [--scenarios S,S] [--cache-dir DIR] [--json]
                                             run the catalog on another CLI and report drift
  --version                                  the version of ktx-claude-code
`;

const SCENARIO_OPTION = { type: "string", value: "S,S", help: "only these scenarios of the catalog (default: all 13)" } as const;
const CACHE_OPTION = { type: "string", value: "DIR", help: "where other CLI versions are installed (default: ~/.cache/ktx-claude-code/cli, or $XDG_CACHE_HOME)" } as const;

const FIXTURE_COMMANDS: Record<string, CommandSpec> = {
  record: {
    name: "fixtures record",
    positionals: { shown: "", count: 0, what: "positional arguments" },
    summary: "Records the scenario catalog with the real CLI against the scripted Messages API, one transcript per scenario and version.",
    options: {
      versions: { type: "string", value: "V,V", help: "CLI versions (default: every verified one); others are installed on demand" },
      scenarios: SCENARIO_OPTION,
      out: { type: "string", value: "DIR", help: "where to write (default: the package's fixtures/transcripts)" },
      "cache-dir": CACHE_OPTION,
    },
    examples: ["ktx-claude-code fixtures record --versions 2.1.330 --scenarios text,tool-loop --out /tmp/fixtures"],
  },
  compare: {
    name: "fixtures compare",
    positionals: { shown: "", count: 0, what: "positional arguments" },
    summary:
      "Runs the scenario catalog live on another CLI (a binary, or a version installed on demand) and reports the drift against recorded fixtures: outcomes first, then protocol structure, crashes, and each scenario's differences.",
    options: {
      cli: { type: "string", value: "PATH", help: "a Claude Code binary to run" },
      version: { type: "string", value: "X.Y.Z", help: "a version to install (once, into the cache) and run; the pinned one is the bundled binary" },
      against: { type: "string", value: "X.Y.Z", help: "whose fixtures to compare with (default: the pinned version)" },
      scenarios: SCENARIO_OPTION,
      "cache-dir": CACHE_OPTION,
      json: { type: "boolean", help: "the report as JSON, every value whole" },
    },
    notes: [
      "Exactly one of --cli and --version.",
      "Exit codes: 0 no scenario differs, 1 some differ (outcome or protocol), 2 it could not run (wrong arguments, no fixtures, an install that failed, a missing binary).",
      "Progress goes to stderr, the report to stdout.",
    ],
    examples: ["ktx-claude-code fixtures compare --version 2.1.286", "ktx-claude-code fixtures compare --cli ./claude --against 2.1.286 --scenarios text,tool-loop --json"],
  },
};

// `ktx-claude-code transcript show big.jsonl | head`: a reader that went away ends the command quietly.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw error;
});

const io: Io = { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) };

async function fixtures(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const spec = sub ? FIXTURE_COMMANDS[sub] : undefined;
  if (!spec) {
    if (sub === "--help" || sub === "-h") {
      const summaries = Object.entries(FIXTURE_COMMANDS).map(([name, command]) => `  fixtures ${name.padEnd(8)} ${command.summary}`);
      const examples = Object.values(FIXTURE_COMMANDS).flatMap((command) => command.examples ?? []);
      io.stdout(`Usage: ktx-claude-code fixtures <record|compare> …\n\n${summaries.join("\n")}\n\nExamples:\n${examples.map((line) => `  ${line}`).join("\n")}\n\nEach answers --help.\n`);
      return 0;
    }
    io.stderr(`ktx-claude-code fixtures: ${sub === undefined ? "which subcommand?" : `unknown subcommand ${JSON.stringify(sub)}`} (record, compare).\n\n${USAGE}`);
    return 2;
  }
  const parsed = parseCommand(spec, rest);
  if (isStop(parsed)) return stop(io, parsed);
  const { values } = parsed;
  const cacheDir = text(values["cache-dir"]);
  if (sub === "record") return recordFixtures({ versions: text(values.versions), scenarios: text(values.scenarios), out: text(values.out), cacheDir }, io);
  const [cli, version] = [text(values.cli), text(values.version)];
  if ((cli === undefined) === (version === undefined)) {
    return stop(io, { exitCode: 2, stderr: `ktx-claude-code fixtures compare: pass exactly one of --cli PATH and --version X.Y.Z.\n(ktx-claude-code fixtures compare --help for the options and an example)\n` });
  }
  try {
    return await compareFixtures({ cli, version, cacheDir, against: text(values.against), scenarios: text(values.scenarios), json: values.json === true }, io);
  } catch (error) {
    // Whatever kept the comparison from running is no drift: exit 2, one line, no stack.
    io.stderr(`fixtures compare could not run: ${oneLine(error)}\n`);
    return 2;
  }
}

function oneLine(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.split("\n")[0]!;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case "login":
      return runLogin(args, io);
    case "status":
      return runStatus(args, io);
    case "doctor":
      return runDoctor(args, io);
    case "transcript":
      return transcriptCommand(args, io, USAGE);
    case "fixtures":
      return fixtures(args);
    case "--version":
    case "-V":
    case "version":
      io.stdout(`${LIBRARY_VERSION}\n`);
      return 0;
    case "help":
    case "--help":
    case "-h":
      io.stdout(USAGE);
      return 0;
    case undefined:
      io.stderr(`ktx-claude-code: which command?\n\n${USAGE}`);
      return 2;
    default:
      io.stderr(`ktx-claude-code: unknown command ${JSON.stringify(command)}.\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // Bad input (an unreadable or malformed file, a missing path) is 2, as for usage errors: a gate
    // (`transcript diff`) keeps 1 for "differs".
    const errno = (error as NodeJS.ErrnoException)?.code;
    const badInput = error instanceof InvalidInputError || errno === "ENOENT" || errno === "EISDIR" || errno === "EACCES";
    io.stderr(`${ClaudeCodeError.isInstance(error) || badInput ? oneLine(error) : String((error as Error)?.stack ?? error)}\n`);
    process.exitCode = badInput ? 2 : 1;
  },
);
