/** `ktx-claude-code fixtures record|compare`: golden fixtures per verified CLI version, and the drift report. */
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { bundledCliVersion, locateBundledCli, cliVersion } from "../binary/locate.js";
import { defaultCliCache, ensureCliVersion } from "../binary/install.js";
import { NEWEST_VERIFIED_CLI_VERSION, VERIFIED_CLI_VERSIONS, isVerifiedVersion } from "../binary/versions.js";
import type { Scenario } from "../testing/scenarios.js";
import { SCENARIO_NAMES, SESSION_SCENARIO_NAMES } from "../testing/scenario-names.js";
import { InvalidInputError, UnverifiedFixturesError } from "../errors/index.js";
import { loadTranscript, projectDirLength } from "../transcripts/reader.js";
import { differs, driftReport, renderDriftReport, scenarioDrift, type DriftReport, type ScenarioDrift } from "./drift.js";
import { type FixtureWrite, writeFixture } from "./fixture-paths.js";
import { terminalText } from "./terminal-text.js";

export type { ScenarioDrift, DriftReport };

/**
 * The recorded fixtures, found relative to this package (they ship in it), not to the current
 * directory: `fixtures compare` works the same from a checkout and from node_modules.
 */
export const FIXTURE_ROOT = fileURLToPath(new URL("../../fixtures/transcripts", import.meta.url));

export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** The binary of a version: the installed one for the installed version, else a checked install in the cache. */
export async function binaryFor(version: string, cacheDir: string | undefined, io?: Io): Promise<string> {
  if (version === bundledCliVersion()) return locateBundledCli();
  return ensureCliVersion(version, cacheDir ?? defaultCliCache(), io && ((text) => io.stderr(text)));
}

export interface CompareTarget {
  /** A binary to run as is. */
  cli?: string;
  /** An exact version, installed into the cache when missing (the installed CLI's own version is that binary). */
  version?: string;
  /** Where versions are installed (default: the user's cache directory, see `defaultCliCache`). */
  cacheDir?: string;
}

/** The binary `fixtures compare` runs: exactly one of `cli` (an existing executable file) and `version`. */
export async function compareCliPath(target: CompareTarget, install: (version: string) => Promise<string> = (version) => binaryFor(version, target.cacheDir)): Promise<string> {
  if ((target.cli === undefined) === (target.version === undefined)) throw new InvalidInputError("fixtures compare needs exactly one of --cli PATH and --version X.Y.Z.");
  if (target.version !== undefined) return install(target.version);
  const cli = resolve(target.cli!);
  if (!existsSync(cli)) throw new InvalidInputError(`--cli ${cli} does not exist; pass the path of a Claude Code binary (or use --version X.Y.Z to install one).`);
  if (!statSync(cli).isFile()) throw new InvalidInputError(`--cli ${cli} is not a file; pass the path of a Claude Code binary.`);
  try {
    accessSync(cli, constants.X_OK);
  } catch {
    throw new InvalidInputError(`--cli ${cli} is not executable; \`chmod +x ${cli}\`, or pass another binary.`);
  }
  return cli;
}

/**
 * The scenario names asked for (comma-separated), every one known, or the whole catalog's. Checked
 * against the names alone: the catalog (the runtime, the MCP SDK) is loaded only to run them (`catalog`).
 */
export function pickScenarios(names: string | undefined, sessions = false): readonly string[] {
  if (!names) return SCENARIO_NAMES;
  const known = sessions ? [...SCENARIO_NAMES, ...SESSION_SCENARIO_NAMES] : SCENARIO_NAMES;
  const wanted = names.split(",").map((name) => name.trim()).filter(Boolean);
  const unknown = wanted.filter((name) => !known.includes(name));
  if (unknown.length > 0 || wanted.length === 0) {
    const replayOnly = !sessions && unknown.some((name) => SESSION_SCENARIO_NAMES.includes(name)) ? " (session scenarios are recorded by `fixtures record` and replayed in tests; `fixtures compare` does not run them yet)" : "";
    throw new InvalidInputError(`Unknown --scenarios ${unknown.map((name) => JSON.stringify(name)).join(", ") || "(none given)"}; known: ${known.join(", ")}${replayOnly}.`);
  }
  return wanted;
}

/** Runs one scenario by name, a KTX call of the catalog or a session (session-scenarios.ts). */
async function runNamed(name: string, options: import("../testing/scenarios.js").ScenarioRunOptions): Promise<Record<string, unknown>> {
  if (SESSION_SCENARIO_NAMES.includes(name)) {
    const { findSessionScenario, runSessionScenario } = await import("../testing/session-scenarios.js");
    return runSessionScenario(findSessionScenario(name), options);
  }
  const { findScenario, runScenario } = await import("../testing/scenarios.js");
  return runScenario(findScenario(name), options);
}

/** The catalog's scenarios of `names` (known ones: see pickScenarios), and the runner. */
async function catalog(names: readonly string[]): Promise<{ scenarios: readonly Scenario[]; runScenario: typeof import("../testing/scenarios.js").runScenario }> {
  const { findScenario, runScenario } = await import("../testing/scenarios.js");
  return { scenarios: names.map(findScenario), runScenario };
}

export interface RecordOptions {
  versions?: string;
  scenarios?: string;
  out?: string;
  cacheDir?: string;
  /**
   * Part of a verification (`fixtures verify`, or `--verification` by hand): a version the table does
   * not hold yet is recorded too. Without it such a version is refused before anything is installed.
   */
  verification?: boolean;
  /** The binary to record with (one version only), instead of the bundled or a cached install. */
  cli?: string;
}

/** Records the catalog per version. Throws (exit 2) for an unverified version unless `verification`. */
export async function recordFixtures(options: RecordOptions, io: Io): Promise<number> {
  const versions = options.versions ? options.versions.split(",").map((v) => v.trim()) : Object.keys(VERIFIED_CLI_VERSIONS);
  const root = resolve(options.out ?? FIXTURE_ROOT);
  const names = pickScenarios(options.scenarios, true);
  const unverified = versions.filter((version) => !Object.hasOwn(VERIFIED_CLI_VERSIONS, version));
  if (unverified.length > 0 && !options.verification) throw new UnverifiedFixturesError(unverified[0]!, Object.keys(VERIFIED_CLI_VERSIONS));
  if (options.cli !== undefined && versions.length !== 1) throw new InvalidInputError("fixtures record --cli records one version: pass --versions with exactly that binary's version.");
  const scenarios = names.map((name) => ({ name }));
  const counts: Record<FixtureWrite, number> = { new: 0, written: 0, unchanged: 0 };
  for (const version of versions) {
    const cliPath = options.cli ?? (await binaryFor(version, options.cacheDir, io));
    const dir = join(root, version);
    mkdirSync(dir, { recursive: true });
    // Recorded elsewhere, then written into the fixture only when it differs (fixture-paths.ts).
    const work = mkdtempSync(join(tmpdir(), "ktx-record-"));
    try {
      for (const scenario of scenarios) {
        const started = performance.now();
        const fixture = join(dir, `${scenario.name}.jsonl`);
        // In a project dir as long as the fixture's: the token counts follow its length.
        const projectDir = existsSync(fixture) ? { projectDirLength: projectDirLength(loadTranscript(fixture).header) } : {};
        const outcome = await runNamed(scenario.name, { cliPath, transcriptDir: work, allowUnverifiedCli: options.verification === true, ...projectDir });
        const written = writeFixture(fixture, readFileSync(join(work, `${scenario.name}.jsonl`), "utf8"));
        counts[written] += 1;
        io.stdout(terminalText(`${version} ${scenario.name.padEnd(26)} ${Math.round(performance.now() - started)} ms  ${written.padEnd(9)}  ${JSON.stringify(outcome).slice(0, 120)}\n`));
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  io.stdout(`Fixtures: ${counts.new} new, ${counts.written} written (the recording differs), ${counts.unchanged} unchanged (left as they were).\n`);
  return 0;
}

/** Checks that need no CLI: exact versions, recorded fixtures; a message for exit 2, or undefined. */
function compareInputProblem(options: CompareTarget & { against?: string }, against: string): string | undefined {
  for (const version of [options.version, options.against]) {
    if (version !== undefined && !/^\d+\.\d+\.\d+$/.test(version)) return `${JSON.stringify(version)} is not an exact version (X.Y.Z); \`npm view @anthropic-ai/claude-code versions\` lists them.`;
  }
  const fixtureDir = join(FIXTURE_ROOT, against);
  if (!existsSync(fixtureDir)) {
    const known = existsSync(FIXTURE_ROOT) ? readdirSync(FIXTURE_ROOT).filter((name) => /^\d/.test(name)).join(", ") : "none";
    return `No recorded fixtures for CLI ${against} at ${fixtureDir} (recorded: ${known}). Pass --against with one of those, or record them from a checkout of ktx-claude-code with \`npm run fixtures:record -- --versions ${against}\`.`;
  }
  return undefined;
}

/** The installed CLI's version when it is verified (its fixtures ship), else the newest verified version. */
function defaultAgainst(): string {
  const installed = bundledCliVersion();
  return installed !== undefined && isVerifiedVersion(installed) ? installed : NEWEST_VERIFIED_CLI_VERSION;
}

/**
 * Runs the catalog live on the target CLI and diffs each run against the recorded fixture of
 * `against`. Exit code by the report's verdict: 0 `same`, 1 any drift (`additive only`, `changed`,
 * `outcome differs`; `--json` carries which), a gate for CI. Anything that
 * keeps it from running (bad arguments, no fixtures, an install that fails, a missing binary)
 * throws, and the command turns that into exit 2 with one line. Progress goes to stderr, the
 * report to stdout.
 */
export async function compareFixtures(options: CompareTarget & { against?: string; scenarios?: string; json?: boolean }, io: Io): Promise<number> {
  const against = options.against ?? defaultAgainst();
  const problem = compareInputProblem(options, against);
  if (problem) throw new InvalidInputError(problem);
  const names = pickScenarios(options.scenarios);
  const cliPath = await compareCliPath(options, (version) => binaryFor(version, options.cacheDir, io));
  const liveVersion = await cliVersion(cliPath).catch((error: unknown) => {
    throw new InvalidInputError(`${cliPath} does not answer \`--version\` as Claude Code does (${String((error as Error).message).split("\n")[0]!.split(". Reinstall")[0]}); pass a Claude Code binary.`);
  });
  const { scenarios, runScenario } = await catalog(names);
  const work = mkdtempSync(join(tmpdir(), "ktx-compare-"));
  const drifts: ScenarioDrift[] = [];
  let keep = false;
  try {
    for (const [index, scenario] of scenarios.entries()) {
      const fixture = join(FIXTURE_ROOT, against, `${scenario.name}.jsonl`);
      const step = `[${index + 1}/${scenarios.length}] ${scenario.name}`;
      if (!existsSync(fixture)) {
        drifts.push({ scenario: scenario.name, outcome: "no fixture" });
        io.stderr(`${step}: no ${against} fixture\n`);
        continue;
      }
      const started = performance.now();
      const recorded = loadTranscript(fixture);
      // A project dir as long as the recording's: the CLI names it in every request, so the token counts compare exactly.
      const after = await runScenario(scenario, { cliPath, allowUnverifiedCli: true, transcriptDir: work, projectDirLength: projectDirLength(recorded.header) });
      const live = join(work, `${scenario.name}.jsonl`);
      const drift = scenarioDrift(scenario.name, recorded, after, live);
      drifts.push(drift);
      keep ||= differs(drift);
      io.stderr(`${step}: ${((performance.now() - started) / 1000).toFixed(1)} s, outcome ${drift.outcome}, ${differs(drift) ? "differs" : "same"}${drift.crash ? `, CLI crashed (exit ${drift.crash.exitCode ?? drift.crash.signal})` : ""}\n`);
    }
  } finally {
    // The live transcripts hold the cause of any difference (a crash's stderr): kept then.
    if (!keep) rmSync(work, { recursive: true, force: true });
  }
  const report = driftReport({ cli: cliPath, version: liveVersion, against, drifts, transcripts: keep ? work : null });
  io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : terminalText(renderDriftReport(report)));
  return report.verdict === "same" ? 0 : 1;
}
