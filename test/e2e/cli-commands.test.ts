/**
 * The command line itself: --help everywhere, --version, wrong arguments, and the exit codes of
 * `fixtures compare` when it cannot run (2) or the CLI crashes (1, with the cause). Installs use a
 * stand-in `npm` on PATH: no test downloads a CLI version.
 */
import { chmodSync, existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { LIBRARY_VERSION } from "../../src/version.js";
import { cleanup, script, tempDir } from "../support.js";

const MAIN = join(import.meta.dirname, "../../dist/cli/main.js");
const DEMO = join(import.meta.dirname, "../../dist/cli/demo.js");
const BASE_ENV = { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" };
const run = (args: string[], env: Record<string, string> = {}) => execa(process.execPath, [MAIN, ...args], { reject: false, env: { ...BASE_ENV, ...env } });

afterEach(cleanup);

const COMMANDS = [
  ["login"],
  ["status"],
  ["doctor"],
  ["transcript", "show"],
  ["transcript", "summary"],
  ["transcript", "diff"],
  ["transcript", "trace"],
  ["transcript", "import"],
  ["fixtures", "record"],
  ["fixtures", "compare"],
  ["fixtures", "verify"],
  // The groups too: the README promises an example from every `<command> --help`.
  ["transcript"],
  ["fixtures"],
];

describe("every command", () => {
  for (const command of COMMANDS) {
    it(`${command.join(" ")} --help: usage, options, an example, exit 0`, async () => {
      const { exitCode, stdout, stderr } = await run([...command, "--help"]);
      expect(stderr).toBe("");
      expect(exitCode).toBe(0);
      expect(stdout).toMatch(/^Usage: ktx-claude-code /);
      expect(stdout).toContain("--help");
      expect(stdout).toMatch(/\nExamples?:\n {2}(npx (--no-install )?)?ktx-claude-code /);
    });
  }

  it("--version prints the package version", async () => {
    for (const flag of ["--version", "-V"]) {
      const { exitCode, stdout } = await run([flag]);
      expect(exitCode).toBe(0);
      expect(stdout.trim()).toBe(LIBRARY_VERSION);
    }
  });

  it("wrong arguments say what is wrong, with the usage, exit 2", async () => {
    const one = await run(["transcript", "diff", "a.jsonl"]);
    expect(one.exitCode).toBe(2);
    expect(one.stderr).toMatch(/^ktx-claude-code transcript diff: takes 2 files \(<before> <after>\), got 1 \("a\.jsonl"\)\.\nUsage: ktx-claude-code transcript diff <before> <after>/);
    const flag = await run(["transcript", "summary", "x.jsonl", "--jsn"]);
    expect(flag.exitCode).toBe(2);
    expect(flag.stderr).toMatch(/^ktx-claude-code transcript summary: Unknown option '--jsn'\./);
    const sub = await run(["fixtures", "frobnicate"]);
    expect(sub.exitCode).toBe(2);
    expect(sub.stderr).toMatch(/unknown subcommand "frobnicate" \(record, compare, verify, record-wire\)/);
  });

  it("the demo rejects an unknown flag instead of running the scripted demo", async () => {
    const { exitCode, stdout, stderr } = await execa(process.execPath, [DEMO, "--lvie"], { reject: false, env: BASE_ENV });
    expect(exitCode).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^demo: Unknown option '--lvie'\./);
    const help = await execa(process.execPath, [DEMO, "--help"], { reject: false, env: BASE_ENV });
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toMatch(/--live/);
  });
});

/**
 * A stand-in `npm` on PATH: `body` runs with the install prefix in $PREFIX; `npm view` answers the
 * integrity that `lockFor` writes into the install's lockfile (installs are checked against it).
 */
function fakeNpm(body: string): Record<string, string> {
  const bin = tempDir("fake-npm");
  writeFileSync(join(bin, "npm"), `#!/bin/sh\nif [ "$1" = view ]; then echo sha512-stand-in; exit 0; fi\nPREFIX="$3"\n${body}\n`);
  chmodSync(join(bin, "npm"), 0o755);
  return { PATH: `${bin}:${process.env.PATH}` };
}

/** No stack trace, exactly one line on stderr after the progress. */
function expectOneLine(stderr: string, pattern: RegExp): void {
  const lines = stderr.trim().split("\n").filter((line) => line.startsWith("fixtures compare could not run"));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(stderr).not.toMatch(/\n\s+at /);
}

describe("fixtures compare exit codes", () => {
  it("a version npm does not have: exit 2, one line, nothing left behind", async () => {
    const parent = tempDir("cache-parent");
    const cacheDir = join(parent, "cli");
    const env = fakeNpm(
      `mkdir -p "$PREFIX/node_modules/.staging"\necho "npm error code ETARGET" >&2\necho "npm error notarget No matching version found for @anthropic-ai/claude-code@9.9.9." >&2\necho "npm error A complete log of this run can be found in: /x/y.log" >&2\nexit 1`,
    );
    const { exitCode, stdout, stderr } = await run(["fixtures", "compare", "--version", "9.9.9", "--cache-dir", cacheDir], env);
    expect(exitCode).toBe(2);
    expect(stdout).toBe("");
    expectOneLine(stderr, /CliInstallError: Could not install @anthropic-ai\/claude-code@9\.9\.9: ETARGET: No matching version found .* No such version/);
    // npm's text once, in that line, not echoed before it.
    expect(stderr.match(/No matching version/g)).toHaveLength(1);
    expect(readdirSync(parent)).toEqual([]);
  });

  it("a missing or non-executable --cli, or an unknown scenario: exit 2, one line", async () => {
    const missing = await run(["fixtures", "compare", "--cli", "/nonexistent/claude"]);
    expect(missing.exitCode).toBe(2);
    expectOneLine(missing.stderr, /--cli \/nonexistent\/claude does not exist/);
    const plain = join(tempDir("not-executable"), "claude");
    writeFileSync(plain, "#!/bin/sh\n");
    const notExecutable = await run(["fixtures", "compare", "--cli", plain]);
    expect(notExecutable.exitCode).toBe(2);
    expectOneLine(notExecutable.stderr, /is not executable; `chmod \+x/);
    const notClaude = await run(["fixtures", "compare", "--cli", script("not-claude", "echo hello")]);
    expect(notClaude.exitCode).toBe(2);
    expectOneLine(notClaude.stderr, /does not answer `--version` as Claude Code does/);
    const unknown = await run(["fixtures", "compare", "--cli", plain, "--scenarios", "text,nope"]);
    expect(unknown.exitCode).toBe(2);
    expectOneLine(unknown.stderr, /Unknown --scenarios "nope"; known: text, object/);
  });

  it("a version that ships cli.js runs under Node; a CLI that crashes is reported with stderr, exit code and the kept transcript (exit 1)", { timeout: 60_000 }, async () => {
    const cacheDir = join(tempDir("cache"), "cli");
    // What 2.0.27 does with our flags: it refuses one and exits 1.
    const cliJs = [
      'if (process.argv.includes("--version")) { console.log("2.0.27 (Claude Code)"); process.exit(0); }',
      'process.stderr.write("error: option \'--permission-mode <mode>\' argument \'dontAsk\' is invalid. Allowed choices are acceptEdits, bypassPermissions, default, plan.\\n");',
      "process.exit(1);",
    ].join("\n");
    const lock = JSON.stringify({ packages: { "node_modules/@anthropic-ai/claude-code": { version: "2.0.27", integrity: "sha512-stand-in" } } });
    const env = fakeNpm(`mkdir -p "$PREFIX/node_modules/@anthropic-ai/claude-code"\necho '${lock}' > "$PREFIX/node_modules/.package-lock.json"\ncat > "$PREFIX/node_modules/@anthropic-ai/claude-code/cli.js" <<'EOF'\n${cliJs}\nEOF`);
    const { exitCode, stdout, stderr } = await run(["fixtures", "compare", "--version", "2.0.27", "--cache-dir", cacheDir, "--scenarios", "text,tool-loop", "--json"], env);
    expect(stderr).toMatch(/Installing @anthropic-ai\/claude-code@2\.0\.27 into /);
    expect(stderr).toMatch(/Installed 2\.0\.27 in \d+ s \(\d+ MiB\); it ships cli\.js, run under this Node/);
    expect(exitCode, stderr).toBe(1);
    const report = JSON.parse(stdout);
    expect(report.version).toBe("2.0.27");
    expect(report.cli).toBe(join(cacheDir, "2.0.27", "claude-node"));
    expect(report.outcomes).toEqual({ same: 0, changed: 2, missingFixtures: 0 });
    for (const drift of report.scenarios) {
      expect(JSON.stringify(drift.after)).toContain("CliCrashError");
      expect(drift.crash).toMatchObject({ exitCode: 1, stderr: expect.stringContaining("argument 'dontAsk' is invalid") });
      expect(existsSync(drift.crash.transcript)).toBe(true);
    }
    // The text report says the same, without a literal undefined.
    const text = await run(["fixtures", "compare", "--version", "2.0.27", "--cache-dir", cacheDir, "--scenarios", "text"], env);
    expect(text.exitCode).toBe(1);
    expect(text.stdout).toMatch(/^Outcomes: 0 of 1 the same, 1 changed\./m);
    expect(text.stdout).toMatch(/Crashes \(1\)[^\n]*\n {2}text: exit code 1; transcript .*text\.jsonl\n {4}stderr: error: option '--permission-mode <mode>' argument 'dontAsk' is invalid/);
    expect(text.stdout).not.toContain("undefined");
    // Installed once: the second run found it in the cache.
    expect(text.stderr).not.toMatch(/Installing/);
    // The kept transcripts are this test's to remove.
    for (const dir of [report.transcripts, /kept in (\S+)\.$/m.exec(text.stdout)![1]!]) rmSync(dir, { recursive: true, force: true });
  });
});

it("keeps the cache dir out of the package directory by default", async () => {
  const { defaultCliCache } = await import("../../src/binary/install.js");
  expect(defaultCliCache({ XDG_CACHE_HOME: "/x/cache" })).toBe("/x/cache/ktx-claude-code/cli");
  expect(defaultCliCache({})).not.toContain("node_modules");
});
