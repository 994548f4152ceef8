/**
 * Issue 40, finding 3: `fixtures verify` printed raw terminal escapes from a `--cli` path or npm's
 * stderr (its "could not run" line, its phase lines). Every command of the tool is walked here with a
 * path holding CSI 2J (screen clear), OSC 52 (clipboard write), BEL and CR, and — where a command runs
 * something — a stand-in that writes the same to its stderr: a CLI whose `--version` fails so, and an
 * `npm` (first on PATH) that fails an install so. No raw control byte may reach stdout or stderr.
 * Nothing here leaves loopback: the stand-in npm answers for the registry.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { script, tempDir, testEnv } from "../support.js";
import { endSuiteAfterAll } from "./harness.js";

endSuiteAfterAll(() => undefined);

const MAIN = join(import.meta.dirname, "../../dist/cli/main.js");
const FIXTURE = join(import.meta.dirname, "../../fixtures/transcripts/2.1.330/text.jsonl");

const HOSTILE = "x\x1b[2J\x1b]52;c;ZXZpbA==\x07\ry";
/** C0 controls but tab and newline, DEL and C1 (0x9B is a one-byte CSI). */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const HOSTILE_STDERR = String.raw`printf '\033[2J\033]52;c;ZXZpbA==\007\rboom\n' >&2`;

/** A directory whose name holds the escapes, and in it a missing path and an executable stand-in CLI. */
function hostilePlaces() {
  const dir = join(tempDir("hostile-cli"), `dir-${HOSTILE}`);
  mkdirSync(dir, { recursive: true });
  const cli = join(dir, `claude-${HOSTILE}`);
  // A stand-in whose `--version` fails with the escapes on stderr (anything else too).
  const standIn = script("claude", `${HOSTILE_STDERR}\nexit 3`);
  spawnSync("cp", [standIn, cli]);
  // npm first on PATH: any install fails with the escapes on stderr, as a hostile registry's answer would show.
  const npm = script("npm", `${HOSTILE_STDERR}\nexit 1`);
  return { dir, missing: join(dir, `missing-${HOSTILE}.jsonl`), cli, npmDir: join(npm, "..") };
}

function run(args: string[], npmDir: string): { status: number | null; stdout: string; stderr: string } {
  const env = testEnv();
  const result = spawnSync(process.execPath, [MAIN, ...args], { env: { ...env, PATH: `${npmDir}:${env.PATH}`, TERM: "xterm-256color" }, encoding: "utf8", timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("every command prints hostile paths and stderr visibly escaped, never raw", () => {
  const places = hostilePlaces();
  const { dir, missing, cli } = places;
  const cases: Array<[string, string[]]> = [
    ["fixtures verify --cli (missing)", ["fixtures", "verify", "--cli", missing, "--suites", "none"]],
    ["fixtures verify --cli (a stand-in whose --version fails)", ["fixtures", "verify", "--cli", cli, "--suites", "none"]],
    ["fixtures verify --version (npm fails)", ["fixtures", "verify", "--version", "9.9.9", "--cache-dir", dir, "--suites", "none"]],
    ["fixtures compare --cli (missing)", ["fixtures", "compare", "--cli", missing]],
    ["fixtures compare --cli (stand-in)", ["fixtures", "compare", "--cli", cli]],
    ["fixtures compare --version (npm fails)", ["fixtures", "compare", "--version", "9.9.9", "--cache-dir", dir]],
    ["fixtures record-wire --cli (missing)", ["fixtures", "record-wire", "--cli", missing]],
    ["fixtures record-wire --cli (stand-in)", ["fixtures", "record-wire", "--cli", cli, "--out", join(dir, `shape-${HOSTILE}.json`)]],
    ["fixtures record-wire --version (npm fails)", ["fixtures", "record-wire", "--version", "9.9.9", "--cache-dir", dir]],
    ["fixtures record --versions (hostile)", ["fixtures", "record", "--versions", HOSTILE, "--out", dir]],
    ["fixtures record --verification (npm fails)", ["fixtures", "record", "--versions", "9.9.9", "--verification", "--cache-dir", dir, "--out", dir]],
    ["fixtures (unknown subcommand)", ["fixtures", HOSTILE]],
    ["transcript show", ["transcript", "show", missing]],
    ["transcript summary", ["transcript", "summary", missing]],
    ["transcript diff", ["transcript", "diff", missing, missing]],
    ["transcript trace", ["transcript", "trace", missing]],
    ["transcript trace --out (unwritable)", ["transcript", "trace", FIXTURE, "--out", join(missing, "trace.json")]],
    ["transcript import", ["transcript", "import", missing]],
    ["transcript (unknown subcommand)", ["transcript", HOSTILE]],
    ["status --project-dir", ["status", "--project-dir", missing]],
    ["doctor --project-dir", ["doctor", "--project-dir", missing]],
    ["status --project-dir --json", ["status", "--project-dir", missing, "--json"]],
  ];

  it.each(cases)("%s", (_name, args) => {
    const { status, stdout, stderr } = run(args, places.npmDir);
    // It failed (nothing of this can run; `status` reports and exits 0) and said something about it.
    if (args[0] === "status") expect(status, stdout + stderr).toBe(0);
    else expect(status, stdout + stderr).toBeGreaterThan(0);
    expect(`${stdout}${stderr}`.length).toBeGreaterThan(0);
    expect(stdout, JSON.stringify(stdout)).not.toMatch(RAW_CONTROL);
    expect(stderr, JSON.stringify(stderr)).not.toMatch(RAW_CONTROL);
  });

  it("the escapes come out visible: the reader sees what was there", () => {
    const { stderr } = run(["fixtures", "verify", "--cli", missing, "--suites", "none"], places.npmDir);
    expect(stderr).toContain("\\u001b[2J");
    expect(stderr).toContain("\\u0007");
    const npm = run(["fixtures", "verify", "--version", "9.9.9", "--cache-dir", dir, "--suites", "none"], places.npmDir);
    expect(npm.stderr).toContain("boom");
    expect(npm.stderr).toContain("\\u001b]52;c;ZXZpbA==");
  });
});
