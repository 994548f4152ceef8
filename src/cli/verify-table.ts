/**
 * What `fixtures verify` writes for the maintainer to review: a VERIFIED_CLI_VERSIONS entry in
 * src/binary/versions.ts (inserted newest first, or replacing the version's own entry) and the
 * `||` union of verified versions each CLI platform package is declared with in package.json. Plain text edits, so the diff shows
 * exactly the new entry and nothing else of the file moves.
 */
import { BUILTIN_TOOLS, type CliVersionFacts } from "../binary/versions.js";

const TABLE_START = "export const VERIFIED_CLI_VERSIONS: Readonly<Record<string, CliVersionFacts>> = {\n";

/** Orders X.Y.Z versions, newest first. */
function newerFirst(a: string, b: string): number {
  const [x, y] = [a.split(".").map(Number), b.split(".").map(Number)];
  for (let i = 0; i < 3; i += 1) if (x[i] !== y[i]) return y[i]! - x[i]!;
  return 0;
}

const key = (name: string) => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name));
const record = (values: Readonly<Record<string, string>>) => `{ ${Object.entries(values).map(([name, value]) => `${key(name)}: ${JSON.stringify(value)}`).join(", ")} }`;
const list = (values: readonly string[]) => `[${values.map((value) => JSON.stringify(value)).join(", ")}]`;

/** The entry as versions.ts writes it: built-in tools after the shared base list when they start with it. */
export function renderEntry(entry: CliVersionFacts): string {
  const sharesBase = BUILTIN_TOOLS.every((tool, index) => entry.builtinTools[index] === tool);
  const tools = sharesBase ? `[...BUILTIN_TOOLS${entry.builtinTools.slice(BUILTIN_TOOLS.length).map((tool) => `, ${JSON.stringify(tool)}`).join("")}]` : list(entry.builtinTools);
  return [
    `  ${JSON.stringify(entry.version)}: {`,
    `    version: ${JSON.stringify(entry.version)},`,
    `    builtinPlugins: ${list(entry.builtinPlugins)},`,
    `    builtinTools: ${tools},`,
    `    hasDisableSlashCommands: ${entry.hasDisableSlashCommands},`,
    ...(entry.modelSwitch ? [`    modelSwitch: ${JSON.stringify(entry.modelSwitch)},`] : []),
    ...(entry.reuse === false ? ["    reuse: false,"] : []),
    ...(entry.structuredOutputInOneRequest === false ? ["    structuredOutputInOneRequest: false,"] : []),
    `    duplicateMcpInitialize: ${entry.duplicateMcpInitialize},`,
    `    aliases: ${record(entry.aliases)},`,
    ...(entry.binarySha256 ? [`    binarySha256: ${record(entry.binarySha256)},`] : []),
    "  },",
    "",
  ].join("\n");
}

/** versions.ts with `entry` in the table: its version's entry replaced, or inserted before the first older one. */
export function upsertEntry(source: string, entry: CliVersionFacts): string {
  const start = source.indexOf(TABLE_START);
  if (start < 0) throw new Error("src/binary/versions.ts has no VERIFIED_CLI_VERSIONS table to write into");
  const body = start + TABLE_START.length;
  const end = source.indexOf("\n};\n", body) + 1;
  const entries = [...source.slice(body, end).matchAll(/^ {2}"(\d+\.\d+\.\d+)": \{\n[\s\S]*?^ {2}\},\n/gm)].map((match) => ({ version: match[1]!, from: body + match.index, to: body + match.index + match[0].length }));
  const same = entries.find((found) => found.version === entry.version);
  if (same) return source.slice(0, same.from) + renderEntry(entry) + source.slice(same.to);
  const older = entries.find((found) => newerFirst(entry.version, found.version) < 0);
  const at = older ? older.from : end;
  return source.slice(0, at) + renderEntry(entry) + source.slice(at);
}

/** The dependency range: the `||` union of the verified versions, oldest first (#23's declaration). */
export function dependencyRange(versions: readonly string[]): string {
  return [...new Set(versions)].sort((a, b) => newerFirst(b, a)).join(" || ");
}

/** package.json with each CLI platform package (optional dependencies) naming `versions`; only those lines change. */
export function withDependencyRange(packageJson: string, versions: readonly string[]): string {
  const line = /("@anthropic-ai\/claude-code-[a-z0-9-]+":\s*)"[^"]*"/g;
  if (!line.test(packageJson)) throw new Error("package.json declares no @anthropic-ai/claude-code-<platform> dependency");
  return packageJson.replace(line, `$1${JSON.stringify(dependencyRange(versions))}`);
}
