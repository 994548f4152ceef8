#!/usr/bin/env node
/**
 * The `ktx-claude-code` command: log in (the pinned CLI's own login), inspect transcripts, record and compare golden fixtures, and check
 * a project's claude-code backend (status, doctor).
 */
import { parseArgs } from "node:util";
import { ClaudeCodeError, InvalidInputError } from "../errors/index.js";
import { compareFixtures, recordFixtures, type Io } from "./fixtures.js";
import { LOGIN_USAGE, runLogin } from "./login.js";
import { runDoctor, runStatus } from "./status.js";
import { TRANSCRIPT_USAGE, transcriptCommand } from "./transcript.js";

const USAGE = `Usage: ktx-claude-code <command>

${LOGIN_USAGE}  status [--project-dir DIR] [--json]        what the claude-code backend will use
  doctor [--project-dir DIR] [--json]        the same checks; exits 1 on any failure, with the fix
${TRANSCRIPT_USAGE}  fixtures record [--versions V,V] [--scenarios S,S]
                                             record the scenario catalog with each CLI version
  fixtures compare (--cli PATH | --version V) [--against V] [--scenarios S,S] [--json]
                                             run the catalog on another CLI and report drift
`;

const io: Io = { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) };

function flags(args: string[], options: Record<string, { type: "string" | "boolean" }>) {
  return parseArgs({ args, options, allowPositionals: true, strict: true });
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
    // Bad input (an unreadable or malformed file, a missing path) is 2, as for usage errors: a gate
    // (`transcript diff`, `fixtures compare`) keeps 1 for "differs".
    const errno = (error as NodeJS.ErrnoException)?.code;
    const badInput = error instanceof InvalidInputError || errno === "ENOENT" || errno === "EISDIR" || errno === "EACCES";
    io.stderr(`${ClaudeCodeError.isInstance(error) || badInput ? `${(error as Error).name}: ${(error as Error).message}` : String((error as Error)?.stack ?? error)}\n`);
    process.exitCode = badInput ? 2 : 1;
  },
);
