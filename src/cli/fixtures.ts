/** `ktx-claude-code fixtures record|compare`: golden fixtures per verified CLI version, and the drift report. */
import { mkdirSync, mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { locateBundledCli, cliVersion } from "../binary/locate.js";
import { ensureCliVersion } from "../binary/install.js";
import { PINNED_CLI_VERSION, VERIFIED_CLI_VERSIONS } from "../binary/versions.js";
import { SCENARIOS, findScenario, runScenario, type Scenario } from "../testing/scenarios.js";
import { InvalidInputError } from "../errors/index.js";
import { loadTranscript } from "../transcripts/reader.js";
import { diffTranscripts, isEmptyDiff, renderDiff, type TranscriptDiff } from "../transcripts/inspect.js";

export const FIXTURE_ROOT = "fixtures/transcripts";

export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
}

async function binaryFor(version: string): Promise<string> {
  return version === PINNED_CLI_VERSION ? locateBundledCli() : ensureCliVersion(version);
}

export interface CompareTarget {
  /** A binary to run as is. */
  cli?: string;
  /** An exact version, installed into the cache when missing (the pinned one is the bundled binary). */
  version?: string;
}

/** The binary `fixtures compare` runs: exactly one of `cli` and `version`. */
export async function compareCliPath(target: CompareTarget, install: (version: string) => Promise<string> = binaryFor): Promise<string> {
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
    const cliPath = await binaryFor(version);
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

/** Runs the catalog live on the target CLI and diffs each run against the recorded fixture of `against`. */
export async function compareFixtures(options: CompareTarget & { against?: string; scenarios?: string; json?: boolean }, io: Io): Promise<number> {
  const cliPath = await compareCliPath(options);
  const liveVersion = await cliVersion(cliPath);
  const against = options.against ?? PINNED_CLI_VERSION;
  const work = mkdtempSync(join(tmpdir(), "ktx-compare-"));
  const drifts: ScenarioDrift[] = [];
  try {
    for (const scenario of pick(options.scenarios)) {
      const fixture = resolve(FIXTURE_ROOT, against, `${scenario.name}.jsonl`);
      if (!existsSync(fixture)) {
        drifts.push({ scenario: scenario.name, missingFixture: true });
        continue;
      }
      await runScenario(scenario, { cliPath, allowUnverifiedCli: true, transcriptDir: work });
      drifts.push({ scenario: scenario.name, diff: diffTranscripts(loadTranscript(fixture), loadTranscript(join(work, `${scenario.name}.jsonl`))) });
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
  return 0;
}
