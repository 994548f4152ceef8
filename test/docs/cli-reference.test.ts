/**
 * docs/cli.md is the command-line tool's reference: checked against the parsers themselves (the command specs
 * of args.ts's parseCommand, and status/doctor's own options), so a command or flag added to the tool without
 * its row fails here, and so does a row for one that does not exist.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { CommandSpec } from "../../src/cli/args.js";
import { FIXTURE_COMMANDS } from "../../src/cli/fixture-commands.js";
import { LOGIN_COMMAND_SPEC } from "../../src/cli/login.js";
import { STATUS_OPTIONS } from "../../src/cli/status.js";
import { TRANSCRIPT_COMMANDS } from "../../src/cli/transcript.js";

const page = readFileSync(join(import.meta.dirname, "../../docs/cli.md"), "utf8");

/** Each `### \`ktx-claude-code …\`` section of the page: its command and every `--flag` it names. */
function sections(): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  let current: Set<string> | undefined;
  for (const line of page.split("\n")) {
    const heading = /^#{2,3}\s+(.*)$/.exec(line);
    if (heading) {
      const command = /^`ktx-claude-code ([^`]+)`$/.exec(heading[1]!.trim());
      current = command ? new Set() : undefined;
      if (command) found.set(command[1]!, current!);
      continue;
    }
    // The Claude Code CLI's own flags, quoted as `claude …`, are not this tool's.
    for (const flag of line.replace(/`claude [^`]*`/g, "").matchAll(/(?<![\w-])--([a-z][a-z-]*)/g)) current?.add(flag[1]!);
  }
  return found;
}

/** Every command the tool has, with its flags (besides --help), from the parsers. */
function commands(): Map<string, Set<string>> {
  const flags = (spec: CommandSpec) => new Set(Object.keys(spec.options));
  const status = new Set(Object.keys(STATUS_OPTIONS).filter((name) => name !== "help"));
  return new Map<string, Set<string>>([
    ["--version", new Set()],
    [LOGIN_COMMAND_SPEC.name, flags(LOGIN_COMMAND_SPEC)],
    // One parser serves both; --live is doctor's (status ignores it), the hidden test flags are named under doctor.
    ["status", new Set([...status].filter((name) => name === "project-dir" || name === "json"))],
    ["doctor", status],
    ...Object.values(TRANSCRIPT_COMMANDS).map((spec) => [spec.name, flags(spec)] as [string, Set<string>]),
    ...Object.values(FIXTURE_COMMANDS).map((spec) => [spec.name, flags(spec)] as [string, Set<string>]),
  ]);
}

it("docs/cli.md has a section for every command and no other", () => {
  expect([...sections().keys()].sort()).toEqual([...commands().keys()].sort());
});

it("each command's section names every flag it takes and none it does not", () => {
  const page = sections();
  for (const [command, flags] of commands()) {
    const named = new Set([...page.get(command)!].filter((flag) => flag !== "help" && !(command === "--version" && flag === "version")));
    expect([...named].sort(), command).toEqual([...flags].sort());
  }
});

it("the page's sections match the parsers' names (a renamed flag fails)", () => {
  // The check itself: a flag the parser lacks is caught.
  const copy = new Map(sections());
  copy.get("transcript diff")!.add("jsn");
  expect([...copy.get("transcript diff")!].sort()).not.toEqual([...commands().get("transcript diff")!].sort());
});
