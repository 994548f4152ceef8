/**
 * `capabilities.projectInstructions` (issue 43): the project's CLAUDE.md, `.claude/CLAUDE.md` and `.claude/rules/`
 * reach the model the CLI's own way (`--setting-sources=project`), and nothing else that source loads.
 *
 * Measured on 2.1.330 (real CLI, scripted API, a project dir holding every kind of file the project source reads):
 * - CLAUDE.md, .claude/CLAUDE.md and .claude/rules/**\/*.md arrive as one `<system-reminder>` in the first user turn
 *   ("Codebase and user instructions are shown below. …", then `Contents of <path> (project instructions, checked
 *   into the codebase):\n\n<text>` per file, joined by a blank line). Each text is trimmed and a rule's front matter
 *   dropped; rules come in directory order (not sorted), so the wire check matches the files in any order.
 *   CLAUDE.md, .claude/CLAUDE.md and .claude/rules/ in the directories above the project dir load too (HOME's
 *   ~/.claude/CLAUDE.md and rules among them when the project is under HOME), as do `@path` imports: none is one of
 *   the project's own files, so the first are refused here and the second by the wire check (its text is not a file's).
 * - `.claude/settings.json` is read: its `env` reached the CLI (CLAUDE_CODE_MAX_OUTPUT_TOKENS changed max_tokens),
 *   `outputStyle` changed the system prompt, `permissions` are ignored only while the workspace is untrusted (a
 *   user's own HOME may trust it), `model` lost to `--model`, hooks did not run (`disableAllHooks` in the flag
 *   settings). Only keys the launch provably overrides are accepted; any other key is refused, naming it.
 * - `.claude/agents/*.md` are listed in `init.agents` (usable by any agent tool): refused.
 * - `.claude/skills`, `.claude/commands`: `init.skills` and `init.slash_commands` stayed empty
 *   (`--disable-slash-commands`, no Skill tool); on a version without that flag they are refused.
 * - `.claude/output-styles/`: only used when a setting names one; the flag settings pin `outputStyle: "default"`
 *   (init then reports "default" and the request has no style text).
 * - `.mcp.json`: `init.mcp_servers` stayed empty (`--strict-mcp-config`). `CLAUDE.local.md` and
 *   `.claude/settings.local.json` belong to the "local" source, which is not loaded (its env did not apply).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { realpathSync } from "node:fs";
import { ProjectSourceError } from "../../errors/index.js";
import type { CliVersionFacts } from "../../binary/versions.js";

/** One instruction file as the CLI puts it into the request: its absolute path and its text, trimmed, front matter dropped. */
export interface InstructionFile {
  path: string;
  text: string;
}

/** `.claude/settings.json` keys the launch overrides or turns off (measured, above); any other key is refused. */
export const NEUTRAL_PROJECT_SETTINGS: Readonly<Record<string, string>> = {
  $schema: "a schema reference, read by editors only",
  hooks: "off: the flag settings set disableAllHooks",
  outputStyle: 'overridden: the flag settings set outputStyle "default"',
  model: "overridden: --model names the call's model",
};

/** The flag settings projectInstructions adds: the project's output style, if any, is not used. */
export const PROJECT_FLAG_SETTINGS = { outputStyle: "default" } as const;

const isFile = (path: string) => {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
};

const isDir = (path: string) => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/** Every `.md` file under `dir`, at any depth. */
function markdownUnder(dir: string): string[] {
  if (!isDir(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownUnder(path);
    return entry.name.endsWith(".md") && isFile(path) ? [path] : [];
  });
}

/** A front matter block at the start of a rule (`---` lines), or undefined. */
function frontMatter(raw: string): { block: string; body: string } | undefined {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(raw);
  return match ? { block: match[1]!, body: raw.slice(match[0].length) } : undefined;
}

function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/**
 * The project's instruction files in the order the CLI reads them first (CLAUDE.md, .claude/CLAUDE.md, then the
 * rules); `projectDir` with symlinks resolved, as the CLI names them.
 */
export function projectInstructionFiles(projectDir: string): InstructionFile[] {
  const root = canonical(projectDir);
  const paths = [join(root, "CLAUDE.md"), join(root, ".claude", "CLAUDE.md")].filter(isFile);
  paths.push(...markdownUnder(join(root, ".claude", "rules")));
  return paths.map((path) => {
    const raw = readFileSync(path, "utf8");
    const body = path.includes(`${join(root, ".claude", "rules")}`) ? (frontMatter(raw)?.body ?? raw) : raw;
    return { path, text: body.trim() };
  });
}

/**
 * Refuses, before any process starts, what the project source would load besides the instructions and the launch
 * cannot switch off (`ProjectSourceError`, naming the file and what to do). Checked at every call: the files may change.
 */
export function checkProjectSources(projectDir: string, facts: CliVersionFacts): void {
  const root = canonical(projectDir);
  const settingsPath = join(root, ".claude", "settings.json");
  if (existsSync(settingsPath)) {
    let settings: unknown;
    try {
      settings = JSON.parse(readFileSync(settingsPath, "utf8"));
    } catch {
      throw new ProjectSourceError(settingsPath, "is project settings the CLI would read, and is not valid JSON", "Fix or remove the file.");
    }
    const keys = settings !== null && typeof settings === "object" && !Array.isArray(settings) ? Object.keys(settings) : ["(not an object)"];
    const others = keys.filter((key) => !Object.hasOwn(NEUTRAL_PROJECT_SETTINGS, key));
    if (others.length > 0) {
      throw new ProjectSourceError(
        settingsPath,
        `sets ${others.map((key) => JSON.stringify(key)).join(", ")}, project settings the CLI would apply (environment, permissions, helpers, plugins…)`,
        `Move those keys out of the project's settings (only ${Object.keys(NEUTRAL_PROJECT_SETTINGS).join(", ")} are switched off by the launch), or run without projectInstructions.`,
      );
    }
  }
  const agents = join(root, ".claude", "agents");
  const agentFiles = markdownUnder(agents);
  if (agentFiles.length > 0) {
    throw new ProjectSourceError(agentFiles[0]!, "defines a subagent the CLI would offer (it lists it in init.agents)", "Move the project's .claude/agents/ away, or run without projectInstructions.");
  }
  if (!facts.hasDisableSlashCommands) {
    for (const name of ["skills", "commands"]) {
      const dir = join(root, ".claude", name);
      if (markdownUnder(dir).length > 0) {
        throw new ProjectSourceError(dir, `holds ${name} that Claude Code ${facts.version} would load (it has no --disable-slash-commands)`, `Move it away, or use a newer CLI version.`);
      }
    }
  }
  for (const path of markdownUnder(join(root, ".claude", "rules"))) {
    const matter = frontMatter(readFileSync(path, "utf8"));
    if (matter && /^paths\s*:/m.test(matter.block)) {
      throw new ProjectSourceError(path, "is a conditional rule (front matter `paths:`), which the CLI adds mid-call when a matching file is read", "Drop its `paths:` (it then always applies) or move it out of .claude/rules/.");
    }
  }
  // The CLI walks up from its working directory: instructions above the project dir are not the project's.
  for (let dir = dirname(root); ; dir = dirname(dir)) {
    for (const path of [join(dir, "CLAUDE.md"), join(dir, ".claude", "CLAUDE.md")]) {
      if (isFile(path)) throw new ProjectSourceError(path, "is a CLAUDE.md above the project dir, which the CLI would load too", "Move it, or choose a project dir with no CLAUDE.md above it.");
    }
    if (markdownUnder(join(dir, ".claude", "rules")).length > 0) {
      throw new ProjectSourceError(join(dir, ".claude", "rules"), "holds rules above the project dir, which the CLI would load too", "Move them, or choose a project dir with no .claude/rules above it.");
    }
    if (dirname(dir) === dir) break;
  }
}

/** How the CLI writes the instructions reminder, as recorded per version (wire-shape.json `projectInstructions`). */
export interface InstructionsFormat {
  /** The reminder's text before the first file. */
  head: string;
  /** One file: `{path}` and `{text}` stand for its path and text (no other braces). */
  file: string;
  /** Between two files. */
  separator: string;
}

/** One file's section, as the CLI writes it. */
export function instructionSection(format: InstructionsFormat, file: InstructionFile): string {
  return format.file.replace("{path}", () => file.path).replace("{text}", () => file.text);
}

/**
 * Whether a reminder's text (without its tags) is exactly the instructions of `files`, each once, in any order
 * (the CLI reads rules in directory order); no other text fits.
 */
export function isInstructionsReminder(text: string, format: InstructionsFormat, files: readonly InstructionFile[]): boolean {
  if (files.length === 0 || !text.startsWith(format.head)) return false;
  const sections = files.map((file) => instructionSection(format, file));
  const used = new Set<number>();
  const match = (at: number): boolean => {
    if (used.size === sections.length) return at === text.length;
    if (used.size > 0) {
      if (!text.startsWith(format.separator, at)) return false;
      at += format.separator.length;
    }
    for (const [index, section] of sections.entries()) {
      if (used.has(index) || !text.startsWith(section, at)) continue;
      used.add(index);
      if (match(at + section.length)) return true;
      used.delete(index);
    }
    return false;
  };
  return match(format.head.length);
}
