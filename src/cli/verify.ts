/**
 * `ktx-claude-code fixtures verify (--version X | --cli PATH)`: a new CLI version verified in one
 * command, from a checkout of ktx-claude-code. Phases, each timed:
 * 1. the binary (a checked install into the cache for --version);
 * 2. compare: the drift report against the pinned version's fixtures (its exit code is reported);
 * 3. probe: the verified-table entry, read from the binary (src/cli/probe-facts.ts);
 * 4. record: the catalog into fixtures/transcripts/<X>/;
 *    wire shape: the first-party shape into fixtures/transcripts/<X>/wire-shape.json (record-wire.ts);
 * 5. write: the entry into src/binary/versions.ts, the version into package.json's dependency union,
 *    and the lockfile's root entry to match (npm --package-lock-only; the locked CLI stays);
 * 6. build, then the replay and e2e suites with KTX_CC_CLI naming the binary.
 * Nothing is committed: the maintainer reviews `git diff` and commits. Exit 0 when every phase ran
 * and the suites passed, 1 when a suite failed, 2 when it could not run.
 */
import { createWriteStream, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { npmEnv } from "../binary/install.js";
import { bundledCliVersion, cliVersion } from "../binary/locate.js";
import { NEWEST_VERIFIED_CLI_VERSION, VERIFIED_CLI_VERSIONS } from "../binary/versions.js";
import { InvalidInputError } from "../errors/index.js";
import { binaryFor, compareCliPath, compareFixtures, type Io, recordFixtures } from "./fixtures.js";
import { probeCliFacts } from "./probe-facts.js";
import { recordWireShape } from "./record-wire.js";
import { terminalIo } from "./terminal-text.js";
import { upsertEntry, withDependencyRange } from "./verify-table.js";

/** The checkout this command runs from (dist/cli/ → the package root). */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface VerifyOptions {
  version?: string;
  cli?: string;
  cacheDir?: string;
  /** Which suites to run with the binary (default both). */
  suites?: readonly ("replay" | "e2e")[];
}

interface Phase {
  name: string;
  seconds: number;
  result: string;
}

/** Runs one suite folder with KTX_CC_CLI; its output goes to a log file, its summary to stderr. */
async function runSuite(folder: string, cliPath: string, logDir: string, io: Io): Promise<{ ok: boolean; result: string }> {
  const log = join(logDir, `${folder.replace(/\W+/g, "-")}.log`);
  io.stderr(`  KTX_CC_CLI=${cliPath} npx vitest run ${folder}  (output: tail -f ${log})\n`);
  const suite = execa("npx", ["vitest", "run", folder], { cwd: ROOT, env: { ...process.env, KTX_CC_CLI: cliPath }, reject: false, all: true, stdin: "ignore" });
  suite.all.pipe(createWriteStream(log));
  const run = await suite;
  const plain = String(run.all ?? "").replace(/\x1b\[[0-9;]*m/g, "");
  const tests = /^\s*Tests\s+(.+)$/m.exec(plain)?.[1]?.trim() ?? "no summary";
  const failed = plain.split("\n").filter((line) => /^\s*(FAIL|×)\s/.test(line)).slice(0, 20);
  for (const line of failed) io.stderr(`    ${line.trim()}\n`);
  return { ok: run.exitCode === 0, result: `${tests}; log ${log}` };
}

export async function verifyVersion(options: VerifyOptions, rawIo: Io): Promise<number> {
  // Phase lines carry the --cli path, npm's stderr and the suites' failures: all made safe for a terminal.
  const io = terminalIo(rawIo);
  if (!existsSync(join(ROOT, "src", "binary", "versions.ts")) || !existsSync(join(ROOT, "test", "e2e"))) {
    throw new InvalidInputError(`fixtures verify writes the table, fixtures and package.json of a checkout of ktx-claude-code, and ${ROOT} is not one (no src/binary/versions.ts or test/e2e). Run it as \`node dist/cli/main.js fixtures verify\` in a checkout.`);
  }
  const phases: Phase[] = [];
  const phase = async <T>(name: string, work: () => Promise<T>, describe: (value: T) => string): Promise<T> => {
    io.stderr(`\n== ${name}\n`);
    const started = performance.now();
    const value = await work();
    const entry = { name, seconds: (performance.now() - started) / 1000, result: describe(value) };
    phases.push(entry);
    io.stderr(`== ${name}: ${entry.seconds.toFixed(1)} s, ${entry.result}\n`);
    return value;
  };
  const logDir = mkdtempSync(join(tmpdir(), "ktx-verify-"));

  const cliPath = await phase("binary", () => compareCliPath(options, (version) => binaryFor(version, options.cacheDir, io)), (path) => path);
  const version = await cliVersion(cliPath);
  if (options.version !== undefined && version !== options.version) throw new InvalidInputError(`${cliPath} says it is ${version}, not ${options.version}.`);

  // The report goes to stdout as it is; its verdict line (when the report has one) is repeated in the summary.
  let verdict: string | undefined;
  const compareIo: Io = { stdout: (text) => ((verdict ??= /^Verdict: .*$/m.exec(text)?.[0]), io.stdout(text)), stderr: io.stderr };
  const compare = await phase("compare", () => compareFixtures({ cli: cliPath }, compareIo), (code) => `exit ${code} against the ${bundledCliVersion() ?? NEWEST_VERIFIED_CLI_VERSION} fixtures${verdict ? `; ${verdict}` : code === 0 ? " (no drift)" : code === 1 ? " (drift: read the report above)" : ""}`);

  const probed = await phase("probe", () => probeCliFacts(cliPath), (facts) => `${facts.entry.builtinTools.length} built-in tools, plugins ${facts.entry.builtinPlugins.join(", ") || "none"}, ${facts.entry.modelSwitch ?? "no model switch"}`);
  if (probed.entry.version !== version) throw new InvalidInputError(`the probe read version ${probed.entry.version} from ${cliPath}, not ${version}.`);
  // Other platforms' checksums of a re-verified version stay.
  // What the probe cannot read (a missing feature, found by the suites) stays as the table says.
  const known = VERIFIED_CLI_VERSIONS[version];
  const entry = {
    ...probed.entry,
    ...(known?.reuse === false ? { reuse: false as const } : {}),
    ...(known?.structuredOutputInOneRequest === false ? { structuredOutputInOneRequest: false as const } : {}),
    binarySha256: { ...known?.binarySha256, ...probed.entry.binarySha256 },
  };

  await phase("record", () => recordFixtures({ versions: version, cli: cliPath, verification: true }, { stdout: (text) => io.stderr(text), stderr: io.stderr }), () => `fixtures/transcripts/${version}/`);

  await phase(
    "wire shape",
    () => recordWireShape({ cliPath }, { stdout: (text) => io.stderr(text), stderr: io.stderr }),
    (done) => `fixtures/transcripts/${version}/wire-shape.json${done.changes.length > 0 ? `, ${done.changes.length} change(s) against the previous file` : ""}`,
  );

  await phase(
    "write",
    async () => {
      const versionsTs = join(ROOT, "src", "binary", "versions.ts");
      writeFileSync(versionsTs, upsertEntry(readFileSync(versionsTs, "utf8"), entry));
      const packageJson = join(ROOT, "package.json");
      const versions = [...Object.keys(VERIFIED_CLI_VERSIONS), version];
      writeFileSync(packageJson, withDependencyRange(readFileSync(packageJson, "utf8"), versions));
      // The lockfile's root entry must name the same range, or `npm ci` refuses; the locked CLI stays.
      const lock = await execa("npm", ["install", "--ignore-scripts", "--package-lock-only", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: ROOT, env: npmEnv(), extendEnv: false, reject: false, stdin: "ignore" });
      if (lock.failed) throw new InvalidInputError(`npm install --package-lock-only failed: ${String(lock.stderr).trim().split("\n")[0]}`);
      const locked = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")).packages?.["node_modules/@anthropic-ai/claude-code-linux-x64"]?.version;
      return locked as string;
    },
    (locked) => `src/binary/versions.ts, package.json, package-lock.json (npm ci still installs ${locked})`,
  );

  await phase("build", async () => {
    const build = await execa("npm", ["run", "build"], { cwd: ROOT, reject: false, all: true, stdin: "ignore" });
    if (build.failed) throw new InvalidInputError(`npm run build failed after writing the entry: ${String(build.all).trim().split("\n").slice(-3).join(" ")}`);
  }, () => "dist/");

  let suitesOk = true;
  for (const suite of options.suites ?? ["replay", "e2e"]) {
    const outcome = await phase(`${suite} suite`, () => runSuite(`test/${suite}`, cliPath, logDir, io), (run) => `${run.ok ? "passed" : "FAILED"}: ${run.result}`);
    suitesOk &&= outcome.ok;
  }

  const total = phases.reduce((sum, entry) => sum + entry.seconds, 0);
  io.stdout(`\nVerification of CLI ${version} (${cliPath})\n`);
  for (const entry of phases) io.stdout(`  ${entry.name.padEnd(13)} ${entry.seconds.toFixed(1).padStart(7)} s  ${entry.result}\n`);
  io.stdout(`  ${"total".padEnd(13)} ${total.toFixed(1).padStart(7)} s\n`);
  io.stdout(
    suitesOk
      ? `\nReview and commit: git diff -- src/binary/versions.ts package.json package-lock.json; git status fixtures/transcripts/${version} (its wire-shape.json too). Add its row to docs/compatibility.md with the drift report's findings (compare exit ${compare}).\n`
      : `\nA suite failed against ${version}: the written entry and fixtures are left for a look (git diff), not to commit as they are.\n`,
  );
  return suitesOk ? 0 : 1;
}
