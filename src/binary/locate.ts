/**
 * Finds the installed Claude Code binary (any verified version the host's install chose) and reads its version once per path.
 * This package depends on the CLI's platform packages (`@anthropic-ai/claude-code-<os>-<cpu>[-musl]`) directly, as
 * optional dependencies: the package manager installs the one for the host, with no install script and no `engines`
 * pick (docs/compatibility.md). A host that also has the wrapper package `@anthropic-ai/claude-code` (this package's
 * 0.1.0 tarballs depended on it) still works: its platform package is looked up through it, then its `bin/`.
 */
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { execa } from "execa";
import { CliNotFoundError, UnsupportedCliVersionError } from "../errors/index.js";
import { type Env, type KtxClaudeCodeEnvOptions, createKtxClaudeCodeEnv } from "../transport/env.js";
import { type CliVersionFacts, VERIFIED_CLI_VERSIONS, factsFor, isVerifiedVersion } from "./versions.js";

const require = createRequire(import.meta.url);

/** The platform packages that may hold this host's binary, in the order they are tried. */
export function platformPackageNames(platform: NodeJS.Platform = process.platform, arch: string = process.arch): string[] {
  if (platform === "win32") return [`@anthropic-ai/claude-code-win32-${arch}`];
  if (platform === "darwin") return [`@anthropic-ai/claude-code-darwin-${arch}`];
  // glibc first; musl distributions fall through to the -musl package.
  return [`@anthropic-ai/claude-code-linux-${arch}`, `@anthropic-ai/claude-code-linux-${arch}-musl`];
}

const WRAPPER_PACKAGE = "@anthropic-ai/claude-code";

function resolveFrom(from: NodeRequire, name: string): string | undefined {
  try {
    return dirname(from.resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}

/**
 * A package's directory as this module sees it, else (a platform package) as the CLI wrapper sees it: when a
 * host installs the wrapper too, a strict layout (pnpm without hoisting) shows the wrapper's platform package to
 * the wrapper only.
 */
export function packageDirResolver(from: NodeRequire): (name: string) => string | undefined {
  return (name) => {
    const own = resolveFrom(from, name);
    if (own || name === WRAPPER_PACKAGE) return own;
    const wrapperDir = resolveFrom(from, WRAPPER_PACKAGE);
    return wrapperDir ? resolveFrom(createRequire(join(wrapperDir, "package.json")), name) : undefined;
  };
}

const resolvePackageDir = packageDirResolver(require);

function packageVersion(dir: string): string | undefined {
  try {
    const version = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version?: unknown }).version;
    return typeof version === "string" ? version : undefined;
  } catch {
    return undefined;
  }
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const binaryName = () => (process.platform === "win32" ? "claude.exe" : "claude");

/**
 * The version of the installed CLI (read from the package.json of the platform package whose binary would run,
 * else the wrapper's; nothing started), or undefined when none is installed. Which verified version that is,
 * is the host's install (docs/compatibility.md).
 */
export function bundledCliVersion(packageDir: (name: string) => string | undefined = resolvePackageDir): string | undefined {
  const platformDirs = platformPackageNames().map(packageDir).filter((dir): dir is string => dir !== undefined);
  const dir = platformDirs.find((found) => isExecutableFile(join(found, binaryName()))) ?? platformDirs[0] ?? packageDir(WRAPPER_PACKAGE);
  return dir === undefined ? undefined : packageVersion(dir);
}

/**
 * The bundled binary: the platform package first, then the wrapper's `bin` entry.
 * `packageDir` finds an installed package's directory (replaceable in tests).
 */
export function locateBundledCli(packageDir: (name: string) => string | undefined = resolvePackageDir): string {
  const candidates: string[] = [];
  for (const name of platformPackageNames()) {
    const dir = packageDir(name);
    if (dir) candidates.push(join(dir, binaryName()));
  }
  const wrapperDir = packageDir(WRAPPER_PACKAGE);
  if (wrapperDir) candidates.push(join(wrapperDir, "bin", "claude.exe"));
  const found = candidates.find(isExecutableFile);
  if (found) return found;
  throw new CliNotFoundError(
    undefined,
    candidates.length === 0
      ? `the CLI's platform package (${platformPackageNames().join(" or ")}) is not installed (an install with --omit=optional or --no-optional leaves it out)`
      : `no executable binary among ${candidates.join(", ")}`,
  );
}

export interface ResolvedCli {
  path: string;
  version: string;
  verified: boolean;
  facts: CliVersionFacts;
}

const versionCache = new Map<string, Promise<string>>();

/** What the probe's environment is built from: the same allowlist and options as every run. */
export interface ProbeEnvOptions extends KtxClaudeCodeEnvOptions {
  /** Base environment (default `process.env`). */
  env?: Env;
}

async function readVersion(path: string, envOptions: ProbeEnvOptions): Promise<string> {
  let stdout: string;
  // The probe is a process like any run: a preload or routing variable in the parent must not reach it.
  const env = createKtxClaudeCodeEnv(envOptions.env ?? process.env, { ...envOptions, telemetry: false });
  try {
    ({ stdout } = await execa(path, ["--version"], {
      timeout: 15_000,
      env,
      extendEnv: false,
      stdin: "ignore",
    }));
  } catch (error) {
    const code = (error as { code?: string }).code;
    const reason =
      code === "ENOENT" ? "file not found" : code === "EACCES" ? "not executable" : `\`--version\` failed: ${(error as Error).message.split("\n")[0]}`;
    throw new CliNotFoundError(path, reason, { cause: error });
  }
  const match = /^(\d+\.\d+\.\d+)\s+\(Claude Code\)/m.exec(stdout.trim());
  if (!match) {
    throw new CliNotFoundError(path, `it is not Claude Code (\`--version\` printed ${JSON.stringify(stdout.slice(0, 120))})`);
  }
  return match[1]!;
}

/** Reads `--version` once per path (cached, failures are not cached). */
export function cliVersion(path: string, envOptions: ProbeEnvOptions = {}): Promise<string> {
  let pending = versionCache.get(path);
  if (!pending) {
    pending = readVersion(path, envOptions);
    versionCache.set(path, pending);
    pending.catch(() => versionCache.delete(path));
  }
  return pending;
}

export async function resolveCli(options: { cliPath?: string; allowUnverifiedCli?: boolean } & ProbeEnvOptions): Promise<ResolvedCli> {
  const path = options.cliPath ?? locateBundledCli();
  const version = await cliVersion(path, options);
  const verified = isVerifiedVersion(version);
  if (!verified && !options.allowUnverifiedCli) {
    throw new UnsupportedCliVersionError(path, version, Object.keys(VERIFIED_CLI_VERSIONS));
  }
  return { path, version, verified, facts: factsFor(version) };
}
