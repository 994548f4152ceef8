/** `ktx-claude-code fixtures record|compare`: golden fixtures per verified CLI version, and the drift report. */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { locateBundledCli, cliVersion } from "../binary/locate.js";
import { ensureCliVersion } from "../binary/install.js";
import { PINNED_CLI_VERSION, VERIFIED_CLI_VERSIONS } from "../binary/versions.js";
import { SCENARIOS, findScenario, runScenario, type Scenario } from "../testing/scenarios.js";
import { InvalidInputError } from "../errors/index.js";
import { loadTranscript } from "../transcripts/reader.js";
import { diffTranscripts, isEmptyDiff, renderDiff, type TranscriptDiff } from "../transcripts/inspect.js";

/**
 * The recorded fixtures, found relative to this package (they ship in it), not to the current
 * directory: `fixtures compare` works the same from a checkout and from node_modules.
 */
export const FIXTURE_ROOT = fileURLToPath(new URL("../../fixtures/transcripts", import.meta.url));

export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
}

async function binaryFor(version: string, io?: Io): Promise<string> {
  if (version === PINNED_CLI_VERSION) return locateBundledCli();
  return ensureCliVersion(version, undefined, io && ((text) => io.stderr(text)));
}

export interface CompareTarget {
  /** A binary to run as is. */
  cli?: string;
  /** An exact version, installed into the cache when missing (the pinned one is the bundled binary). */
  version?: string;
}

/** The binary `fixtures compare` runs: exactly one of `cli` and `version`. */
export async function compareCliPath(target: CompareTarget, install: (version: string) => Promise<string> = (version) => binaryFor(version)): Promise<string> {
  if ((target.cli === undefined) === (target.version === undefined)) throw new InvalidInputError("fixtures compare needs exactly one of --cli PATH and --version X.Y.Z.");
  return target.cli !== undefined ? resolve(target.cli) : install(target.version!);
}

function pick(names: string | undefined): readonly Scenario[] {
  return names ? names.split(",").map((name) => findScenario(name.trim())) : SCENARIOS;
}

export async function recordFixtures(options: { versions?: string; scenarios?: string; out?: string }, io: Io): Promise<number> {
  const versions = options.versions ? options.versions.split(",").map((v) => v.trim()) : Object.keys(VERIFIED_CLI_VERSIONS);
  const root = resolve(options.out ?? FIXTURE_ROOT);
  for (const version of versions) {
    const cliPath = await binaryFor(version, io);
    const dir = join(root, version);
    mkdirSync(dir, { recursive: true });
    for (const scenario of pick(options.scenarios)) {
      const started = performance.now();
      const outcome = await runScenario(scenario, { cliPath, transcriptDir: dir });
      io.stdout(`${version} ${scenario.name.padEnd(26)} ${Math.round(performance.now() - started)} ms  ${JSON.stringify(outcome).slice(0, 120)}\n`);
    }
  }
  return 0;
}

export interface ScenarioDrift {
  scenario: string;
  diff?: TranscriptDiff;
  missingFixture?: boolean;
}

/**
 * Runs the catalog live on the target CLI and diffs each run against the recorded fixture of
 * `against`. Exit code: 0 when no scenario differs, 1 when any does (a gate for CI), 2 when it cannot
 * compare (no fixtures for that version). Progress goes to stderr, the report to stdout.
 */
export async function compareFixtures(options: CompareTarget & { against?: string; scenarios?: string; json?: boolean }, io: Io): Promise<number> {
  const against = options.against ?? PINNED_CLI_VERSION;
  for (const version of [options.version, options.against]) {
    if (version !== undefined && !/^\d+\.\d+\.\d+$/.test(version)) {
      io.stderr(`${JSON.stringify(version)} is not an exact version (X.Y.Z); \`npm view @anthropic-ai/claude-code versions\` lists them.\n`);
      return 2;
    }
  }
  const fixtureDir = join(FIXTURE_ROOT, against);
  if (!existsSync(fixtureDir)) {
    const known = existsSync(FIXTURE_ROOT) ? readdirSync(FIXTURE_ROOT).join(", ") : "none";
    io.stderr(
      `No recorded fixtures for CLI ${against} at ${fixtureDir} (recorded: ${known}). Pass --against with one of those, or record them from a checkout of ktx-claude-code with \`npm run fixtures:record -- --versions ${against}\`.\n`,
    );
    return 2;
  }
  if (options.version !== undefined && options.version !== PINNED_CLI_VERSION) io.stderr(`Getting Claude Code ${options.version} (installed once into the cache, then reused)…\n`);
  const cliPath = await compareCliPath(options, (version) => binaryFor(version, io));
  const liveVersion = await cliVersion(cliPath);
  const work = mkdtempSync(join(tmpdir(), "ktx-compare-"));
  const drifts: ScenarioDrift[] = [];
  const scenarios = pick(options.scenarios);
  try {
    for (const [index, scenario] of scenarios.entries()) {
      const fixture = join(fixtureDir, `${scenario.name}.jsonl`);
      const step = `[${index + 1}/${scenarios.length}] ${scenario.name}`;
      if (!existsSync(fixture)) {
        drifts.push({ scenario: scenario.name, missingFixture: true });
        io.stderr(`${step}: no ${against} fixture\n`);
        continue;
      }
      const started = performance.now();
      await runScenario(scenario, { cliPath, allowUnverifiedCli: true, transcriptDir: work });
      const diff = diffTranscripts(loadTranscript(fixture), loadTranscript(join(work, `${scenario.name}.jsonl`)));
      drifts.push({ scenario: scenario.name, diff });
      io.stderr(`${step}: ${((performance.now() - started) / 1000).toFixed(1)} s, ${isEmptyDiff(diff) ? "same" : "differs"}\n`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const changed = drifts.filter((drift) => drift.missingFixture || (drift.diff && !isEmptyDiff(drift.diff)));
  if (options.json) io.stdout(`${JSON.stringify({ cli: cliPath, version: liveVersion, against, drifts, differing: changed.length }, null, 2)}\n`);
  else {
    io.stdout(`Drift of CLI ${liveVersion} (${cliPath}) against the ${against} fixtures:\n`);
    for (const drift of drifts) {
      const lines = drift.missingFixture ? [`no ${against} fixture recorded`] : renderDiff(drift.diff!);
      io.stdout(`\n== ${drift.scenario}\n${lines.map((line) => `  ${line}`).join("\n")}\n`);
    }
    io.stdout(`\n${changed.length} of ${drifts.length} scenarios differ.\n`);
  }
  return changed.length > 0 ? 1 : 0;
}
