#!/usr/bin/env node
/**
 * The `ktx-claude-code` command: log in (the installed CLI's own login), inspect transcripts, record and
 * compare golden fixtures, and check a project's claude-code backend (status, doctor). Exit codes: 0
 * done (same), 1 found a difference or a failure, 2 could not run (wrong arguments, bad input, an
 * install that failed).
 */
import { ClaudeCodeError, InvalidInputError, OutputWriteError } from "../errors/index.js";
import { LIBRARY_VERSION } from "../version.js";
import { isStop, parseCommand, stop, text, type CommandSpec } from "./args.js";
import type { Io } from "./fixtures.js";
import { terminalIo, terminalText } from "./terminal-text.js";
import { LOGIN_USAGE, TRANSCRIPT_USAGE } from "./usage.js";
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
      verification: { type: "boolean", help: "record a version the verified table does not hold yet (a step of verifying it; `fixtures verify` does the whole)" },
    },
    notes: ["A version that is not verified is refused (exit 2) unless --verification."],
    examples: ["ktx-claude-code fixtures record --versions 2.1.330 --scenarios text,tool-loop --out /tmp/fixtures"],
  },
  compare: {
    name: "fixtures compare",
    positionals: { shown: "", count: 0, what: "positional arguments" },
    summary:
      "Runs the scenario catalog live on another CLI (a binary, or a version installed on demand) and reports the drift against recorded fixtures: a verdict, outcomes, crashes, protocol structure (what the runtime reads first), and each scenario's differences.",
    options: {
      cli: { type: "string", value: "PATH", help: "a Claude Code binary to run" },
      version: { type: "string", value: "X.Y.Z", help: "a version to install (once, into the cache) and run; the installed CLI's own version is that binary" },
      against: { type: "string", value: "X.Y.Z", help: "whose fixtures to compare with (default: the installed CLI's version when verified, else the newest verified)" },
      scenarios: SCENARIO_OPTION,
      "cache-dir": CACHE_OPTION,
      json: { type: "boolean", help: "the report as JSON, every value whole" },
    },
    notes: [
      "Exactly one of --cli and --version.",
      "The report leads with a verdict: same, additive only (new fields, message types or list items only), changed (something removed or changed), outcome differs; --json carries it as `verdict`.",
      "Exit codes: 0 same, 1 any other verdict, 2 it could not run (wrong arguments, no fixtures, an install that failed, a missing binary).",
      "Progress goes to stderr, the report to stdout.",
    ],
    examples: ["ktx-claude-code fixtures compare --version 2.1.286", "ktx-claude-code fixtures compare --cli ./claude --against 2.1.286 --scenarios text,tool-loop --json"],
  },
  verify: {
    name: "fixtures verify",
    positionals: { shown: "", count: 0, what: "positional arguments" },
    summary:
      "Verifies a CLI version in one command, from a checkout: the drift report against the pinned fixtures, the facts probed from the binary, the fixtures recorded into fixtures/transcripts/<X>/, its first-party wire shape recorded there (wire-shape.json), its entry written into src/binary/versions.ts and package.json's dependency union, then the replay and e2e suites run against it (KTX_CC_CLI). Nothing is committed: review the diff.",
    options: {
      cli: { type: "string", value: "PATH", help: "a Claude Code binary to verify" },
      version: { type: "string", value: "X.Y.Z", help: "a version to install (checked, once, into the cache) and verify" },
      suites: { type: "string", value: "S,S", help: "suites to run against it: replay, e2e, or none (default: replay,e2e)" },
      "cache-dir": CACHE_OPTION,
    },
    notes: [
      "Exactly one of --cli and --version.",
      "Exit codes: 0 every phase ran and the suites passed, 1 a suite failed (the written entry and fixtures are left for a look), 2 it could not run.",
      "Each phase's time is printed; progress goes to stderr, the summary to stdout.",
      "It writes into the checkout it runs from (`node dist/cli/main.js fixtures verify …` after `npm run build`), never into an installed package.",
    ],
    examples: ["ktx-claude-code fixtures verify --version 2.1.332"],
  },
  "record-wire": {
    name: "fixtures record-wire",
    positionals: { shown: "", count: 0, what: "positional arguments" },
    summary:
      "Records a CLI version's first-party wire shape: runs the CLI on the first-party path against the scripted API (loopback only, a throwaway login), through the runtime's interceptor in record mode, over text, object (with the structured-output nudge), a 2-tool loop, thinking, a reused process, a request answered 503 once (what the CLI sends again) and an expired login, and writes fixtures/transcripts/<X>/wire-shape.json, the file the interceptor checks that version's requests against (docs/isolation.md, \"The wire check\").",
    options: {
      cli: { type: "string", value: "PATH", help: "a Claude Code binary to record" },
      version: { type: "string", value: "X.Y.Z", help: "a version to install (checked, once, into the cache) and record; the installed CLI's own version is that binary" },
      out: { type: "string", value: "FILE", help: "where to write (default: the package's fixtures/transcripts/<X>/wire-shape.json)" },
      check: { type: "boolean", help: "compare the recording with the file instead of writing it" },
      "cache-dir": CACHE_OPTION,
    },
    notes: [
      "Exactly one of --cli and --version.",
      "Exit codes: 0 written (or, with --check, the same), 1 with --check: the recording differs from the file, 2 it could not run or the recording holds something the recorder cannot explain (named).",
      "Progress goes to stderr; the summary and what changed against the previous file to stdout.",
    ],
    examples: ["ktx-claude-code fixtures record-wire --version 2.1.332", "ktx-claude-code fixtures record-wire --cli ./claude --check"],
  },
};

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
