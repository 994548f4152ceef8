/**
 * Each subcommand's arguments, help text and errors in one place: `--help` prints usage, options and
 * an example (exit 0); a wrong argument says what is wrong and how to call the command (exit 2).
 * Parsing is node:util's parseArgs (strict), which needs no dependency.
 */
import { parseArgs } from "node:util";
import { terminalText } from "./terminal-text.js";

export interface OptionSpec {
  type: "string" | "boolean";
  /** Shown in --help; `value` names the argument of a string option. */
  help: string;
  value?: string;
}

export interface CommandSpec {
  /** e.g. `transcript show`. */
  name: string;
  /** The positionals, as shown in the usage line, e.g. `<file>`; `count` how many it takes. */
  positionals: { shown: string; count: number | [number, number]; what: string };
  summary: string;
  options: Record<string, OptionSpec>;
  examples: string[];
  /** Extra lines after the options (exit codes, notes). */
  notes?: string[];
}

const BIN = "ktx-claude-code";

export function usageLine(spec: CommandSpec): string {
  const options = Object.entries(spec.options).map(([name, option]) => (option.type === "boolean" ? `[--${name}]` : `[--${name} ${option.value ?? "VALUE"}]`));
  return [BIN, spec.name, spec.positionals.shown, ...options].filter(Boolean).join(" ");
}

export function helpText(spec: CommandSpec): string {
  const rows: Array<[string, string]> = Object.entries(spec.options).map(([name, option]) => [`--${name}${option.type === "string" ? ` ${option.value ?? "VALUE"}` : ""}`, option.help]);
  rows.push(["-h, --help", "this help"]);
  const width = Math.max(...rows.map(([flag]) => flag.length)) + 2;
  return [
    `Usage: ${usageLine(spec)}`,
    "",
    spec.summary,
    "",
    "Options:",
    ...rows.map(([flag, help]) => `  ${flag.padEnd(width)}${help}`),
    ...(spec.notes?.length ? ["", ...spec.notes] : []),
    "",
    spec.examples.length === 1 ? "Example:" : "Examples:",
    ...spec.examples.map((example) => `  ${example}`),
    "",
  ].join("\n");
}

export type Parsed = { values: Record<string, string | boolean | undefined>; positionals: string[] };
/** What to do instead of running: print help (exit 0) or an error (exit 2). */
export type Stop = { exitCode: 0 | 2; stdout?: string; stderr?: string };

/** Parses a subcommand's arguments, or says what to print and the exit code. */
export function parseCommand(spec: CommandSpec, args: string[]): Parsed | Stop {
  if (args.includes("--help") || args.includes("-h")) return { exitCode: 0, stdout: helpText(spec) };
  const options = Object.fromEntries(Object.entries(spec.options).map(([name, option]) => [name, { type: option.type }]));
  let parsed: Parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true }) as Parsed;
  } catch (error) {
    // node's text names the option and the fix ("Unknown option '--jsn'. To specify a positional …"); its first sentence is enough.
    const message = (error as Error).message.split(". To specify")[0]!.replace(/\.$/, "");
    return usageError(spec, message);
  }
  const [min, max] = typeof spec.positionals.count === "number" ? [spec.positionals.count, spec.positionals.count] : spec.positionals.count;
  const got = parsed.positionals;
  if (got.length < min || got.length > max) {
    const wanted = min === max ? `${min}` : `${min} to ${max}`;
    const given = got.length === 0 ? "none" : `${got.length} (${got.map((arg) => JSON.stringify(arg)).join(", ")})`;
    return usageError(spec, `takes ${wanted} ${spec.positionals.what}, got ${given}`);
  }
  return parsed;
}

export function usageError(spec: CommandSpec, message: string): Stop {
  return { exitCode: 2, stderr: `${BIN} ${spec.name}: ${message}.\nUsage: ${usageLine(spec)}\n(${BIN} ${spec.name} --help for the options and an example)\n` };
}

export function isStop(value: Parsed | Stop): value is Stop {
  return "exitCode" in value;
}

export const text = (value: string | boolean | undefined) => (typeof value === "string" ? value : undefined);

/** Writes a stop's output (made safe for a terminal) and returns its exit code. */
export function stop(io: { stdout(text: string): void; stderr(text: string): void }, result: Stop): number {
  if (result.stdout) io.stdout(terminalText(result.stdout));
  if (result.stderr) io.stderr(terminalText(result.stderr));
  return result.exitCode;
}
