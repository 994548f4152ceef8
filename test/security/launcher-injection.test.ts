/**
 * Issue 40, finding 2: the `claude-node` launcher that runs a cli.js-only version (2.0.x, 2.1.100)
 * held its paths in `JSON.stringify` quotes, which the shell expands: a cache dir (`--cache-dir`,
 * `XDG_CACHE_HOME`, HOME) holding `$(…)` or backticks ran that text whenever the version was compared.
 * Here the launcher is built into a hostile install prefix around a tiny stand-in cli.js and run: it
 * must run that cli.js with the arguments as given, and nothing else may execute. No network, no npm.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { binaryIn, launcherScript, NODE_LAUNCHER } from "../../src/binary/install.js";
import { tempDir } from "../support.js";
import { endSuiteAfterAll } from "./harness.js";

endSuiteAfterAll(() => undefined);

/** Prints the file it runs as and its arguments, as JSON. */
const CLI_JS = "process.stdout.write(JSON.stringify({ file: __filename, args: process.argv.slice(2) }));\n";

/**
 * Path parts that a shell would act on, each trying to create a file in `markers` (`/` cannot be in a
 * name, so every injected command spans directories: that is still one path string).
 */
function hostileParts(markers: string): string[] {
  return [
    `$(touch ${markers}/dollar-paren)`,
    `\`touch ${markers}/backtick\``,
    `a"b" ; touch ${markers}/double-quote ; "`,
    `c'd' ; touch ${markers}/single-quote ; '`,
    `back\\slash \\" $HOME \${IFS} e\\`,
    `  spaced  name  `,
  ];
}

function installPrefix(root: string, markers: string): string {
  const prefix = join(root, ...hostileParts(markers), "2.0.27");
  const pkg = join(prefix, "node_modules", "@anthropic-ai", "claude-code");
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(pkg, "package.json"), '{"type":"commonjs"}\n');
  writeFileSync(join(pkg, "cli.js"), CLI_JS);
  return prefix;
}

/** Runs the launcher; what it printed, once the markers are checked (an injected command runs before any failure). */
function runLauncher(launcher: string, args: string[], markers: string, options: { cwd?: string } = {}): { file: string; args: string[] } {
  const run = spawnSync(launcher, args, { cwd: options.cwd, env: { PATH: "/usr/bin:/bin" }, encoding: "utf8" });
  expect(readdirSync(markers), "commands injected through the path ran").toEqual([]);
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
}

/** Arguments that would do something if a shell re-read them. */
const ARGS = ["--version", "$(touch x)", "`id`", "a'b\"c", "two words", "\\"];

describe.runIf(process.platform !== "win32")("the claude-node launcher in a hostile cache dir", () => {
  it("runs the cli.js next to it with the arguments as given, and executes nothing from the path", () => {
    const root = tempDir("launcher");
    const markers = join(root, "markers");
    mkdirSync(markers);
    const prefix = installPrefix(root, markers);
    const launcher = binaryIn(prefix);
    expect(launcher).toBe(join(prefix, NODE_LAUNCHER));
    const cwd = tempDir("launcher-cwd");
    const out = runLauncher(launcher!, ARGS, markers, { cwd });
    expect(realpathSync(out.file)).toBe(realpathSync(join(prefix, "node_modules", "@anthropic-ai", "claude-code", "cli.js")));
    expect(out.args).toEqual(ARGS);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it("quotes the Node it runs under literally, whatever its path holds", () => {
    const root = tempDir("launcher-node");
    const markers = join(root, "markers");
    mkdirSync(markers);
    const nodeDir = join(root, ...hostileParts(markers), "bin");
    mkdirSync(nodeDir, { recursive: true });
    const node = join(nodeDir, "node");
    symlinkSync(process.execPath, node);
    const prefix = installPrefix(join(root, "plain"), markers);
    const launcher = join(prefix, NODE_LAUNCHER);
    writeFileSync(launcher, launcherScript(node), { mode: 0o755 });
    expect(runLauncher(launcher, ["x"], markers).args).toEqual(["x"]);
  });

  it("replaces a launcher an earlier version left in the cache", () => {
    const root = tempDir("launcher-old");
    const markers = join(root, "markers");
    mkdirSync(markers);
    const prefix = installPrefix(root, markers);
    const script = join(prefix, "node_modules", "@anthropic-ai", "claude-code", "cli.js");
    // What the launcher used to be: the paths in JSON quotes, expanded by the shell.
    writeFileSync(join(prefix, NODE_LAUNCHER), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(script)} "$@"\n`, { mode: 0o755 });
    const launcher = binaryIn(prefix)!;
    expect(realpathSync(runLauncher(launcher, ["x"], markers).file)).toBe(realpathSync(script));
  });
});
