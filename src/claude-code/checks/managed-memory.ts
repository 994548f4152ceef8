/**
 * Reading policy files as regular files only, and the managed directory's memory and instructions
 * (`CLAUDE.md`, `.claude/`), which the CLI applies whatever flags are passed. Split from
 * managed-policy.ts, which checks the settings files' keys.
 */
import { existsSync, lstatSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { NotRegularFileError, readRegularFile } from "../../transport/files.js";

/**
 * The file's text; undefined when it does not exist (asked first: a failed open's exception costs more
 * than the check). A FIFO, device or socket is a problem at once: reading it would block the host or
 * never end, and what the CLI makes of it cannot be checked.
 */
export function read(path: string, problems: string[]): string | undefined {
  if (!existsSync(path)) return undefined;
  try {
    return readRegularFile(path);
  } catch (error) {
    if (error instanceof NotRegularFileError) problems.push(`${path} is ${error.kind}, not a regular file, so what the CLI makes of it cannot be checked (and reading it could block)`);
    return undefined;
  }
}

/** The first non-empty line of a text, cut to 120 characters, for naming what a memory file says. */
function firstLine(text: string): string {
  const line = text.split("\n").find((candidate) => candidate.trim() !== "")?.trim() ?? "";
  return line.length > 120 ? `${line.slice(0, 117)}…` : line;
}

/** Files under `dir` (depth-first, sorted, at most `limit`), as the CLI would walk rules, skills, agents and commands. */
function filesUnder(dir: string, limit = 20): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    let entries: string[];
    try {
      entries = readdirSync(at).sort();
    } catch {
      return;
    }
    for (const entry of entries) {
      if (found.length >= limit) return;
      const path = join(at, entry);
      try {
        if (lstatSync(path).isDirectory()) walk(path);
        else found.push(path);
      } catch {
        found.push(path);
      }
    }
  };
  walk(dir);
  return found;
}

/**
 * Managed memory and instructions: 2.1.330 reads `<dir>/CLAUDE.md` as "Managed" memory and
 * `<dir>/.claude/rules/*.md`, `.claude/skills`, `.claude/agents`, `.claude/commands`,
 * `.claude/output-styles` as policy sources, whatever `--setting-sources` says (read from the binary:
 * `case "Managed": return join(managedDir, "CLAUDE.md")`, `join(managedDir, ".claude", "rules")`,
 * `policySettings: join(managedDir, ".claude", kind)`). Their text reaches every request, so any file
 * there stops the call, named with its first line; the whole `.claude` dir is refused, not only the
 * kinds known today (fail closed, as for settings keys).
 */
export function memoryProblems(dir: string): string[] {
  const problems: string[] = [];
  const memory = join(dir, "CLAUDE.md");
  const text = read(memory, problems);
  if (text !== undefined && text.trim() !== "") {
    problems.push(`${memory} is managed memory, which the CLI adds to every request whatever flags are passed; it begins: ${JSON.stringify(firstLine(text))}`);
  }
  const claudeDir = join(dir, ".claude");
  if (!existsSync(claudeDir)) return problems;
  const files = filesUnder(claudeDir);
  if (files.length === 0) return problems;
  for (const file of files) {
    const where = relative(dir, file);
    const kind = where.split(/[\\/]/)[1] ?? "";
    const role = kind === "rules" ? "a managed rule, which the CLI adds to every request" : `managed ${kind || "content"} the CLI loads whatever flags are passed`;
    const body = read(file, problems);
    problems.push(`${file} is ${role}${body !== undefined && body.trim() !== "" ? `; it begins: ${JSON.stringify(firstLine(body))}` : ""}`);
  }
  return problems;
}
