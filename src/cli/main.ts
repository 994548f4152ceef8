#!/usr/bin/env node
/**
 * The `ktx-claude-code` command: log in (the installed CLI's own login), inspect transcripts, record and
 * compare golden fixtures, and check a project's claude-code backend (status, doctor). Exit codes: 0
 * done (same), 1 found a difference or a failure, 2 could not run (wrong arguments, bad input, an
 * install that failed).
 */
import { ClaudeCodeError, InvalidInputError, OutputWriteError } from "../errors/index.js";
import { LIBRARY_VERSION } from "../version.js";
import { isStop, parseCommand, stop, text } from "./args.js";
import type { Io } from "./fixtures.js";
import { terminalIo, terminalText } from "./terminal-text.js";
import { LOGIN_USAGE, TRANSCRIPT_USAGE } from "./usage.js";
import { FIXTURE_COMMANDS } from "./fixture-commands.js";
// Each command's modules are imported when it runs (below): `--version`, `--help` and a wrong argument
// start in a fraction of the time the whole graph takes (the runtime, the MCP SDK, zod, the scenarios).

const USAGE = `Usage: ktx-claude-code <command>   (ktx-claude-code <command> --help for its options and an example)

${LOGIN_USAGE}  status [--project-dir DIR] [--json]        what the claude-code backend will use
  doctor [--project-dir DIR] [--json] [--live]
                                             the same checks; exits 1 on any failure, with the fix
${TRANSCRIPT_USAGE}  fixtures record [--versions V,V] [--scenarios S,S]
                                             record the scenario catalog with each CLI version
  fixtures compare (--cli PATH | --version V) [--against V] [--scenarios S,S] [--cache-dir DIR] [--json]
                                             run the catalog on another CLI and report drift
  fixtures verify (--cli PATH | --version V) [--suites replay,e2e] [--cache-dir DIR]
                                             verify a CLI version: compare, probe, record, wire shape, table entry, suites
  fixtures record-wire (--cli PATH | --version V) [--out FILE] [--check] [--cache-dir DIR]
                                             record a CLI version's first-party wire shape (what the interceptor checks)
  --version                                  the version of ktx-claude-code
`;

// `ktx-claude-code transcript show big.jsonl | head`: a reader that went away ends the command quietly.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw error;
});

const io: Io = { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) };

/**
 * Every `fixtures` command's output, made safe for a terminal (issue 40, finding 3): its lines carry
 * paths given on the command line (`--cli`, `--cache-dir`, `--out`), npm's stderr and error messages
 * that quote them. `--json` output is JSON.stringify's, which has no raw control character to escape.
 */
const fixturesIo: Io = terminalIo(io);

async function fixtures(args: string[]): Promise<number> {
  const io = fixturesIo;
  const [sub, ...rest] = args;
  const spec = sub ? FIXTURE_COMMANDS[sub] : undefined;
  if (!spec) {
    if (sub === "--help" || sub === "-h") {
      const summaries = Object.entries(FIXTURE_COMMANDS).map(([name, command]) => `  fixtures ${name.padEnd(11)} ${command.summary}`);
      const examples = Object.values(FIXTURE_COMMANDS).flatMap((command) => command.examples ?? []);
      io.stdout(`Usage: ktx-claude-code fixtures <record|compare|verify|record-wire> …\n\n${summaries.join("\n")}\n\nExamples:\n${examples.map((line) => `  ${line}`).join("\n")}\n\nEach answers --help.\n`);
      return 0;
    }
    io.stderr(`ktx-claude-code fixtures: ${sub === undefined ? "which subcommand?" : `unknown subcommand ${JSON.stringify(sub)}`} (record, compare, verify, record-wire).\n\n${USAGE}`);
    return 2;
  }
  const parsed = parseCommand(spec, rest);
  if (isStop(parsed)) return stop(io, parsed);
  const { values } = parsed;
  const cacheDir = text(values["cache-dir"]);
  if (sub === "record") {
    try {
      const { recordFixtures } = await import("./fixtures.js");
      return await recordFixtures({ versions: text(values.versions), scenarios: text(values.scenarios), out: text(values.out), cacheDir, verification: values.verification === true }, io);
    } catch (error) {
      io.stderr(`fixtures record could not run: ${oneLine(error)}\n`);
      return 2;
    }
  }
  const [cli, version] = [text(values.cli), text(values.version)];
  if ((cli === undefined) === (version === undefined)) {
    return stop(io, { exitCode: 2, stderr: `ktx-claude-code fixtures ${sub}: pass exactly one of --cli PATH and --version X.Y.Z.\n(ktx-claude-code fixtures ${sub} --help for the options and an example)\n` });
  }
  if (sub === "record-wire") {
    try {
      const { binaryFor, compareCliPath } = await import("./fixtures.js");
      const { recordWireShape } = await import("./record-wire.js");
      const cliPath = await compareCliPath({ cli, version, cacheDir }, (wanted) => binaryFor(wanted, cacheDir, io));
      return (await recordWireShape({ cliPath, out: text(values.out), check: values.check === true }, io)).exitCode;
    } catch (error) {
      // The recorder's own refusal names every request part it could not explain: all of it, not one line.
      io.stderr(terminalText(`fixtures record-wire could not run: ${error instanceof Error && error.name === "WireRecordingError" ? `${error.name}: ${error.message}` : oneLine(error)}\n`));
      return 2;
    }
  }
  if (sub === "verify") {
    const suites = (text(values.suites) ?? "replay,e2e").split(",").map((name) => name.trim()).filter((name) => name && name !== "none");
    const unknown = suites.filter((name) => name !== "replay" && name !== "e2e");
    if (unknown.length > 0) return stop(io, { exitCode: 2, stderr: `ktx-claude-code fixtures verify: unknown --suites ${unknown.join(", ")} (replay, e2e, none).\n` });
    try {
      const { verifyVersion } = await import("./verify.js");
      return await verifyVersion({ cli, version, cacheDir, suites: suites as ("replay" | "e2e")[] }, io);
    } catch (error) {
      io.stderr(`fixtures verify could not run: ${oneLine(error)}\n`);
      return 2;
    }
  }
  try {
    const { compareFixtures } = await import("./fixtures.js");
    return await compareFixtures({ cli, version, cacheDir, against: text(values.against), scenarios: text(values.scenarios), json: values.json === true }, io);
  } catch (error) {
    // Whatever kept the comparison from running is no drift: exit 2, one line, no stack.
    io.stderr(terminalText(`fixtures compare could not run: ${oneLine(error)}\n`));
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
      return (await import("./login.js")).runLogin(args, io);
    case "status":
      return (await import("./status.js")).runStatus(args, io);
    case "doctor":
      return (await import("./status.js")).runDoctor(args, io);
    case "transcript":
      return (await import("./transcript.js")).transcriptCommand(args, io, USAGE);
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
      io.stderr(terminalText(`ktx-claude-code: unknown command ${JSON.stringify(command)}.\n\n${USAGE}`));
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
    const badInput = error instanceof InvalidInputError || error instanceof OutputWriteError || errno === "ENOENT" || errno === "EISDIR" || errno === "EACCES";
    io.stderr(terminalText(`${ClaudeCodeError.isInstance(error) || badInput ? oneLine(error) : String((error as Error)?.stack ?? error)}\n`));
    process.exitCode = badInput ? 2 : 1;
  },
);
