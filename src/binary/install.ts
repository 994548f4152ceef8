/**
 * Installs other Claude Code versions on demand (fixture recording, drift reports) into a cache
 * directory with npm, by exact version. They are never package dependencies, so `npm ci` keeps
 * exactly one CLI. An install goes to a staging dir first and is moved into place only when it
 * holds a runnable CLI, so a failed one (a version that does not exist) leaves nothing behind.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { CliInstallError } from "../errors/index.js";

/**
 * The user's cache directory for installed CLI versions (64–361 MB each): `$XDG_CACHE_HOME` or
 * `~/.cache` (`~/Library/Caches` on macOS, `%LOCALAPPDATA%` on Windows), never the package directory.
 */
export function defaultCliCache(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_CACHE_HOME ||
    (process.platform === "darwin" ? join(homedir(), "Library", "Caches") : process.platform === "win32" ? env.LOCALAPPDATA || join(homedir(), "AppData", "Local") : join(homedir(), ".cache"));
  return join(base, "ktx-claude-code", "cli");
}

/** The file `fixtures compare` runs for a version whose package ships `cli.js` and no native binary. */
export const NODE_LAUNCHER = "claude-node";

/**
 * The runnable CLI in an install prefix: the platform package's native binary, or — for versions that
 * ship only `cli.js` (2.0.x, 2.1.100) — a launcher that runs it under this Node.
 */
export function binaryIn(prefix: string, writeLauncher = true): string | undefined {
  const scope = join(prefix, "node_modules", "@anthropic-ai");
  const candidates = [
    join(scope, `claude-code-${process.platform}-${process.arch}`, "claude"),
    join(scope, `claude-code-${process.platform}-${process.arch}-musl`, "claude"),
    join(scope, "claude-code", "bin", "claude.exe"),
  ];
  const native = candidates.find((path) => existsSync(path));
  if (native) return native;
  const script = join(scope, "claude-code", "cli.js");
  if (!existsSync(script)) return undefined;
  const launcher = join(prefix, NODE_LAUNCHER);
  // Not in a staging dir: the launcher holds the absolute path of cli.js, valid once moved into place.
  if (writeLauncher && !existsSync(launcher)) {
    // An absolute Node: the run's scrubbed PATH may lead to another Node, or to none.
    writeFileSync(launcher, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(script)} "$@"\n`);
    chmodSync(launcher, 0o755);
  }
  return launcher;
}

function sizeOf(path: string): number {
  let total = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const full = join(path, entry.name);
    if (entry.isDirectory()) total += sizeOf(full);
    else if (entry.isFile()) total += statSync(full).size;
  }
  return total;
}

/** npm's cause in one line: its error code and the first line that says what is wrong. */
function npmCause(stderr: string): string {
  const lines = stderr.split("\n").map((line) => line.replace(/^npm (error|ERR!)\s*/, "").trim()).filter(Boolean);
  const code = /^code (\S+)/.exec(lines.find((line) => line.startsWith("code ")) ?? "")?.[1];
  const said = lines.find((line) => !/^(code|errno|syscall|A complete log|$)/.test(line) && !line.startsWith("/"));
  return ([code, said?.replace(/^notarget\s+/, "")].filter(Boolean).join(": ") || "npm failed without saying why").replace(/[.\s]+$/, "");
}

/**
 * Path of the CLI of `version`, installing it into `cacheDir/<version>` when missing. Progress (the
 * install, a line every 10 s while npm works, its size) goes to `progress`, never to stdout, which
 * may carry a JSON report. Throws `CliInstallError` with npm's cause in one line.
 */
export async function ensureCliVersion(version: string, cacheDir = defaultCliCache(), progress: (text: string) => void = (text) => process.stderr.write(text)): Promise<string> {
  if (!/^\d+\.\d+\.\d+$/.test(version)) throw new CliInstallError(version, "it is not an exact version (X.Y.Z)", "`npm view @anthropic-ai/claude-code versions` lists them.");
  const prefix = join(cacheDir, version);
  const existing = binaryIn(prefix);
  if (existing) return existing;
  if (existsSync(prefix)) rmSync(prefix, { recursive: true, force: true });
  // The first directory this call creates (undefined when the cache dir existed).
  const created = mkdirSync(cacheDir, { recursive: true });
  const staging = mkdtempSync(join(cacheDir, `.${version}-installing-`));
  progress(`Installing @anthropic-ai/claude-code@${version} into ${prefix} with npm (--cache-dir chooses another place)…\n`);
  const started = performance.now();
  const seconds = () => ((performance.now() - started) / 1000).toFixed(0);
  const ticker = setInterval(() => progress(`  … still installing (${seconds()} s)\n`), 10_000);
  try {
    const install = await execa("npm", ["install", "--prefix", staging, "--no-save", "--no-audit", "--no-fund", "--loglevel=error", `@anthropic-ai/claude-code@${version}`], {
      stdin: "ignore",
      reject: false,
    });
    if (install.failed) {
      const stderr = String(install.stderr ?? "");
      // No stderr: npm itself did not run (not on PATH); execa's own text says so.
      const cause = stderr.trim() ? npmCause(stderr) : (install.originalMessage ?? install.shortMessage ?? "npm did not run");
      const missing = /E404|ETARGET|No matching version/.test(cause);
      throw new CliInstallError(
        version,
        cause,
        missing ? "No such version: `npm view @anthropic-ai/claude-code versions` lists them." : "Check the network access to the npm registry and npm's own configuration, then retry.",
      );
    }
    if (!binaryIn(staging, false)) {
      throw new CliInstallError(version, `the package has no binary for ${process.platform}-${process.arch} and no cli.js`, "Use a version published for this platform, or pass --cli with a binary you have.");
    }
    renameSync(staging, prefix);
  } catch (error) {
    // Nothing is left behind: not the staging dir, nor a cache dir this call created.
    rmSync(staging, { recursive: true, force: true });
    if (created && readdirSync(cacheDir).length === 0) rmSync(created, { recursive: true, force: true });
    throw error;
  } finally {
    clearInterval(ticker);
  }
  const installed = binaryIn(prefix)!;
  progress(`Installed ${version} in ${seconds()} s (${(sizeOf(prefix) / 2 ** 20).toFixed(0)} MiB)${installed.endsWith(NODE_LAUNCHER) ? "; it ships cli.js, run under this Node" : ""}.\n`);
  return installed;
}
