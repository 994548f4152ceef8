/**
 * A verified version whose shape file does not load (docs/isolation.md, "The wire check"): doctor and
 * status say so with the file's problem and the fix, and a runtime (the interceptor on by default) refuses
 * the version before starting any process. The broken file is written to a temp dir and taken in through
 * `withdrawUnloadableWireShapes`, so the committed fixtures stay as they are; a stand-in CLI answers, behind
 * a script of the test's own (the helper's own path would run without the interceptor).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { NEWEST_VERIFIED_CLI_VERSION } from "../../src/binary/versions.js";
import { ClaudeCodeRuntime } from "../../src/claude-code/runtime.js";
import { loadWireShapes, WIRE_VERSIONS, wireShapeFor, wireShapePath, withdrawUnloadableWireShapes } from "../../src/claude-code/wire/shape.js";
import { renderDoctor, renderStatus, runDoctor } from "../../src/cli/status.js";
import { IsolationError } from "../../src/errors/index.js";
import { cliMessage, createScriptedCli } from "../../src/testing/scripted-cli.js";

const version = NEWEST_VERIFIED_CLI_VERSION;
const dirs: string[] = [];
const undo: Array<() => void> = [];
const temp = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), `ktx-${prefix}-`));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  // The unit files share one module graph: the package's shapes must be back for the next file (last undo first).
  for (const restore of undo.splice(0).reverse()) restore();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("a verified version whose shape file does not load", () => {
  it("fails doctor and status with the file's problem and the fix; a runtime refuses it before any process starts unless wire: false", async () => {
    const root = temp("shapes");
    mkdirSync(join(root, version));
    const broken = join(root, version, "wire-shape.json");
    writeFileSync(broken, JSON.stringify({ ...JSON.parse(readFileSync(wireShapePath(version), "utf8")), reminders: [{ kind: "x", template: "{nope}" }] }));
    undo.push(withdrawUnloadableWireShapes(root));
    expect(wireShapeFor(version)).toBeUndefined();
    // What the loader says of the file: its path and what is wrong in it.
    const problem = loadWireShapes(root).problems[version]!;
    expect(problem.startsWith(`${broken}: reminders[0] (x): unknown placeholder {nope}`)).toBe(true);

    const projectDir = temp("project");
    writeFileSync(join(projectDir, "ktx.yaml"), "llm:\n  provider:\n    backend: claude-code\n  models:\n    default: sonnet\n");
    const cli = createScriptedCli([cliMessage.text("OK"), cliMessage.result({ result: "OK" })], { version, dir: temp("cli") });
    const cliPath = join(temp("bin"), "claude");
    writeFileSync(cliPath, `#!/bin/sh\nexec '${cli.path}' "$@"\n`, { mode: 0o755 });
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: temp("home") };
    let stdout = "";
    const io = { stdout: (text: string) => void (stdout += text), stderr: () => {}, stderrIsTTY: false, env };
    expect(await runDoctor(["--json", "--project-dir", projectDir, "--cli-path", cliPath], io)).toBe(1);
    const report = JSON.parse(stdout);
    // The version itself is fine (verified, the probe answered, unchecked): the shape is the only failure.
    expect(report.cli).toMatchObject({ version, verified: true });
    expect(report.session).toMatchObject({ ok: true });
    expect(report.network.interceptor).toBe("off");
    expect(report.failures).toHaveLength(1);
    const [failure] = report.failures;
    expect(failure.check).toBe("wire");
    expect(failure.message).toContain(`Claude Code ${version} has no recorded first-party request shape (recorded: ${WIRE_VERSIONS.join(", ")}; its shape file did not load: ${problem})`);
    expect(WIRE_VERSIONS).not.toContain(version);
    expect(failure.message).toMatch(/every call is refused with IsolationError unless `wire: false` \(the probe ran without the interceptor, unchecked\)/);
    expect(failure.fix).toMatch(/^Reinstall the package \(npm ci\) so its shape files are intact, or run with `wire: false`/);
    expect(renderDoctor(report)).toContain(`  FAIL ${failure.message}\n       fix: ${failure.fix}\n`);
    expect(renderStatus(report)).toContain(`    x ${failure.message}\n      fix: ${failure.fix}\n`);
    expect(cli.invocations()).toHaveLength(1);

    const runtime = new ClaudeCodeRuntime({ projectDir, models: { default: "sonnet" }, cliPath, env, warm: false, reuse: false });
    const error = await runtime.generateText({ role: "default", prompt: "hi" }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    await runtime.close();
    expect(error).toBeInstanceOf(IsolationError);
    expect((error as Error).message).toContain(`its shape file did not load: ${problem}`);
    expect(cli.invocations()).toHaveLength(1);
  }, 30_000);

  it("takes only shapes away: a file that loads changes nothing, and the undo brings the package's back", () => {
    const root = temp("shapes");
    mkdirSync(join(root, version));
    writeFileSync(join(root, version, "wire-shape.json"), JSON.stringify({ ...JSON.parse(readFileSync(wireShapePath(version), "utf8")), betas: ["any-beta"] }));
    const shape = wireShapeFor(version);
    const versions = WIRE_VERSIONS;
    undo.push(withdrawUnloadableWireShapes(root));
    expect(wireShapeFor(version)).toBe(shape);
    expect(WIRE_VERSIONS).toEqual(versions);
    writeFileSync(join(root, version, "wire-shape.json"), "{");
    undo.push(withdrawUnloadableWireShapes(root));
    expect(wireShapeFor(version)).toBeUndefined();
    for (const restore of undo.splice(0).reverse()) restore();
    expect(wireShapeFor(version)).toBe(shape);
    expect(WIRE_VERSIONS).toEqual(versions);
  });
});
