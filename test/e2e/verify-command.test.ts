/**
 * `fixtures verify` refuses what it cannot run before it writes anything (exit 2, one line). Its full
 * run (compare, probe, record, wire shape, write, build, suites) is what verified 2.1.331 and 2.1.332 (before the wire-shape phase existed)
 * (docs/guides/verify-cli.md has the phases' times).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const MAIN = join(ROOT, "dist/cli/main.js");
const run = (...args: string[]) => execa(process.execPath, [MAIN, "fixtures", "verify", ...args], { reject: false, env: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" } });
const table = () => readFileSync(join(ROOT, "src/binary/versions.ts"), "utf8") + readFileSync(join(ROOT, "package.json"), "utf8");

describe("fixtures verify", () => {
  it("exits 2 with one line for wrong arguments, a missing binary or an inexact version, and writes nothing", async () => {
    const before = table();
    const neither = await run();
    expect(neither.exitCode).toBe(2);
    expect(neither.stderr).toContain("fixtures verify: pass exactly one of --cli PATH and --version X.Y.Z");
    const suites = await run("--cli", "/nonexistent/claude", "--suites", "replay,unit");
    expect(suites.exitCode).toBe(2);
    expect(suites.stderr).toContain("unknown --suites unit (replay, e2e, none)");
    const missing = await run("--cli", "/nonexistent/claude");
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/^fixtures verify could not run: InvalidInputError: --cli \/nonexistent\/claude does not exist/m);
    const latest = await run("--version", "latest");
    expect(latest.exitCode).toBe(2);
    expect(latest.stderr).toMatch(/^fixtures verify could not run: CliInstallError: .*"?latest"?.*not an exact version/m);
    for (const result of [missing, latest]) expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(table()).toBe(before);
  });
});
