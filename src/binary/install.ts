/**
 * Installs other Claude Code versions on demand (fixture recording, drift reports) into a cache
 * directory with npm, by exact version. They are never package dependencies, so `npm ci` keeps
 * exactly one CLI. An install goes to a staging dir first and is moved into place only when it
 * holds a runnable CLI whose packages match the registry's integrity, so a failed one (a version
 * that does not exist) leaves nothing behind. npm runs with an allowlisted environment and
 * `--ignore-scripts`; the binary's sha256 is checked against the verified table (or the install's
 * own record) every time a cached version is used.
 */
import { createHash } from "node:crypto";
import { chmodSync, createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import { execa } from "execa";
import { CliChecksumError, CliInstallError } from "../errors/index.js";
import { VERIFIED_CLI_VERSIONS } from "./versions.js";

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

/** A string as one POSIX shell word that the shell takes literally: in single quotes, each `'` as `'\''`. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * The `claude-node` launcher: a fixed script that finds cli.js from its own location (`$0`), so no cache
 * path is ever shell text (a dir named `$(…)` would run it), and runs it under an absolute Node, quoted
 * literally: the run's scrubbed PATH may lead to another Node, or to none.
 */
export function launcherScript(node: string): string {
  return [
    "#!/bin/sh",
    'case "$0" in */*) here="${0%/*}" ;; *) here=. ;; esac',
    `exec ${shellQuote(node)} "$here/node_modules/@anthropic-ai/claude-code/cli.js" "$@"`,
    "",
  ].join("\n");
}

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
  if (writeLauncher) {
    const text = launcherScript(process.execPath);
    // Rewritten when it differs: a launcher an earlier version wrote held the paths in shell-expanded quotes.
    if (!existsSync(launcher) || readFileSync(launcher, "utf8") !== text) writeFileSync(launcher, text);
    chmodSync(launcher, 0o755);
  }
  return launcher;
}

/**
 * The environment npm runs with: what it needs to run and reach the registry (PATH, HOME, the
 * temp dir, proxy and CA variables) and npm's own `npm_config_*` settings, nothing else — no API
 * key, no `BUN_OPTIONS` or `NODE_OPTIONS` for the scripts it could run. `npm_config_registry` and
 * npm's credential settings are dropped: `npm run` exports the caller's, and the registry is chosen
 * by npm's own config files (`~/.npmrc`), where a mirror belongs.
 */
export function npmEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const keep = /^(PATH|HOME|TMPDIR|TEMP|TMP|HTTPS?_PROXY|NO_PROXY|ALL_PROXY|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|SYSTEMROOT|COMSPEC|APPDATA|LOCALAPPDATA|USERPROFILE|PATHEXT)$/i;
  const npmConfig = /^npm_config_/i;
  const npmSecret = /registry|auth|token|password|_pass|username|email|otp|^(key|cert|certfile|keyfile)$/i;
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (keep.test(name) || (npmConfig.test(name) && !npmSecret.test(name.slice("npm_config_".length)))) result[name] = value;
  }
  return result;
}

/** The facts table's key for a binary: its platform package's suffix (`linux-x64`, `linux-x64-musl`), or `cli.js`. */
export function binaryKey(binary: string): string {
  if (basename(binary) === NODE_LAUNCHER || basename(binary) === "cli.js") return "cli.js";
  const name = basename(dirname(binary));
  // A binary outside its platform package (the wrapper's bin/, a copy): this machine's platform.
  return name.startsWith("claude-code-") ? name.slice("claude-code-".length) : `${process.platform}-${process.arch}`;
}

/** The platform package a binary came from, when it is inside one. */
function platformPackageOf(binary: string): string | undefined {
  const name = basename(dirname(binary));
  return name.startsWith("claude-code-") ? `@anthropic-ai/${name}` : undefined;
}

/** The file whose bytes are the CLI: the native binary, or the `cli.js` a launcher (next to node_modules) runs. */
export function binaryFile(binary: string): string {
  return basename(binary) === NODE_LAUNCHER ? join(dirname(binary), "node_modules", "@anthropic-ai", "claude-code", "cli.js") : binary;
}

export async function sha256Of(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** Written next to an install after its checks: what a later run compares the cached binary with. */
export const INSTALL_RECORD = ".ktx-install.json";

interface InstallRecord {
  version: string;
  key: string;
  sha256: string;
  integrity: Record<string, string>;
}

/** The sha256 a version's binary must have: the verified table's, else the checked install's own record. */
function expectedSha(version: string, key: string, prefix: string): { sha256: string; recordedIn: string } | undefined {
  const verified = VERIFIED_CLI_VERSIONS[version]?.binarySha256?.[key];
  if (verified) return { sha256: verified, recordedIn: `the verified table's ${version} ${key} entry` };
  try {
    const record = JSON.parse(readFileSync(join(prefix, INSTALL_RECORD), "utf8")) as InstallRecord;
    if (record.version === version && record.key === key && /^[0-9a-f]{64}$/.test(record.sha256)) return { sha256: record.sha256, recordedIn: `the install record ${join(prefix, INSTALL_RECORD)}` };
  } catch {
    // no record: an install from before checked installs, or a planted dir
  }
  return undefined;
}

/**
 * A cached binary runs only when its sha256 is the expected one. With nothing to compare it with
 * (an old install without a record), undefined: the caller installs afresh.
 */
async function checkedCachedBinary(prefix: string, version: string, binary: string): Promise<string | undefined> {
  const key = binaryKey(binary);
  const expected = expectedSha(version, key, prefix);
  if (!expected) return undefined;
  const actual = await sha256Of(binaryFile(binary));
  if (actual !== expected.sha256) throw new CliChecksumError(binary, version, expected.sha256, actual, expected.recordedIn);
  return binary;
}

/** What a registry says a package's tarball is (`dist.integrity`), asked with the same environment as the install. */
async function registryIntegrity(spec: string, env: Record<string, string>): Promise<string> {
  const view = await execa("npm", ["view", spec, "dist.integrity", "--loglevel=error"], { env, extendEnv: false, stdin: "ignore", reject: false });
  const integrity = String(view.stdout ?? "").trim().replace(/^"|"$/g, "");
  if (view.failed || !/^sha\d+-/.test(integrity)) throw new CliInstallError(spec.split("@").pop()!, `\`npm view ${spec} dist.integrity\` gave no integrity (${npmCause(String(view.stderr ?? "")) || "no output"})`, "Check the network access to the npm registry, then retry.");
  return integrity;
}

/**
 * The wrapper package and the platform package the binary came from, as npm installed them
 * (`node_modules/.package-lock.json`), must carry the registry's `dist.integrity`.
 */
async function checkIntegrity(staging: string, version: string, binary: string, env: Record<string, string>): Promise<Record<string, string>> {
  let lock: { packages?: Record<string, { version?: string; integrity?: string }> };
  try {
    lock = JSON.parse(readFileSync(join(staging, "node_modules", ".package-lock.json"), "utf8"));
  } catch (error) {
    throw new CliInstallError(version, `npm left no node_modules/.package-lock.json to check the packages against (${(error as Error).message})`, "Use npm 7 or later.");
  }
  const platformPackage = platformPackageOf(binary);
  const names = ["@anthropic-ai/claude-code", ...(platformPackage ? [platformPackage] : [])];
  const checked: Record<string, string> = {};
  for (const name of names) {
    const entry = lock.packages?.[`node_modules/${name}`];
    if (!entry?.integrity || entry.version !== version) throw new CliInstallError(version, `npm recorded no integrity for ${name}@${version}`, "Remove the cache directory and retry.");
    const registry = await registryIntegrity(`${name}@${version}`, env);
    if (registry !== entry.integrity) throw new CliInstallError(version, `${name}@${version} was installed with integrity ${entry.integrity}, the registry says ${registry}`, "Do not use this install; check the npm cache (`npm cache verify`) and the registry, then retry.");
    checked[name] = entry.integrity;
  }
  return checked;
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
  if (existing && (await checkedCachedBinary(prefix, version, existing))) return existing;
  if (existsSync(prefix)) rmSync(prefix, { recursive: true, force: true });
  // The first directory this call creates (undefined when the cache dir existed).
  const created = mkdirSync(cacheDir, { recursive: true });
  const staging = mkdtempSync(join(cacheDir, `.${version}-installing-`));
  progress(`Installing @anthropic-ai/claude-code@${version} into ${prefix} with npm (--cache-dir chooses another place)…\n`);
  const started = performance.now();
  const seconds = () => ((performance.now() - started) / 1000).toFixed(0);
  const ticker = setInterval(() => progress(`  … still installing (${seconds()} s)\n`), 10_000);
  try {
    const env = npmEnv();
    // --ignore-scripts: the wrapper's postinstall only copies the platform binary into bin/; binaryIn
    // runs the platform package's binary itself (measured on 2.1.331/2.1.332, docs/guides/verify-cli.md, "Installs are checked").
    const install = await execa("npm", ["install", "--prefix", staging, "--no-save", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error", `@anthropic-ai/claude-code@${version}`], {
      env,
      extendEnv: false,
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
    const staged = binaryIn(staging, false);
    if (!staged) {
      throw new CliInstallError(version, `the package has no binary for ${process.platform}-${process.arch} and no cli.js`, "Use a version published for this platform, or pass --cli with a binary you have.");
    }
    const integrity = await checkIntegrity(staging, version, staged, env);
    const key = binaryKey(staged);
    const sha256 = await sha256Of(binaryFile(staged));
    const verified = VERIFIED_CLI_VERSIONS[version]?.binarySha256?.[key];
    if (verified && verified !== sha256) throw new CliChecksumError(staged, version, verified, sha256, `the verified table's ${version} ${key} entry`);
    const record: InstallRecord = { version, key, sha256, integrity };
    writeFileSync(join(staging, INSTALL_RECORD), `${JSON.stringify(record, null, 2)}\n`);
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
