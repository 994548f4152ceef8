/**
 * Installs other Claude Code versions on demand (fixture recording, drift reports) into a cache
 * directory with npm, by exact version. They are never package dependencies, so `npm ci` keeps
 * exactly one CLI.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { CliNotFoundError } from "../errors/index.js";

export const DEFAULT_CLI_CACHE = fileURLToPath(new URL("../../.cache/cli", import.meta.url));

function binaryIn(prefix: string): string | undefined {
  const scope = join(prefix, "node_modules", "@anthropic-ai");
  const candidates = [
    join(scope, `claude-code-${process.platform}-${process.arch}`, "claude"),
    join(scope, `claude-code-${process.platform}-${process.arch}-musl`, "claude"),
    join(scope, "claude-code", "bin", "claude.exe"),
  ];
  return candidates.find((path) => existsSync(path));
}

/**
 * Path of the `claude` binary of `version`, installing it into `cacheDir/<version>` when missing.
 * npm's output goes to `progress` (default: stderr), never to stdout, which may carry a JSON report.
 */
export async function ensureCliVersion(version: string, cacheDir = DEFAULT_CLI_CACHE, progress: (text: string) => void = (text) => process.stderr.write(text)): Promise<string> {
  if (!/^\d+\.\d+\.\d+$/.test(version)) throw new CliNotFoundError(undefined, `${JSON.stringify(version)} is not an exact version`);
  const prefix = join(cacheDir, version);
  const existing = binaryIn(prefix);
  if (existing) return existing;
  progress(`Installing @anthropic-ai/claude-code@${version} into ${prefix} with npm…\n`);
  const started = performance.now();
  const install = execa("npm", ["install", "--prefix", prefix, "--no-save", "--no-audit", "--no-fund", "--loglevel=error", `@anthropic-ai/claude-code@${version}`], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  install.stdout?.on("data", (chunk: Buffer) => progress(chunk.toString()));
  install.stderr?.on("data", (chunk: Buffer) => progress(chunk.toString()));
  await install;
  progress(`Installed ${version} in ${((performance.now() - started) / 1000).toFixed(1)} s.\n`);
  const installed = binaryIn(prefix);
  if (!installed) throw new CliNotFoundError(prefix, `npm installed @anthropic-ai/claude-code@${version} but no binary for ${process.platform}-${process.arch} was found`);
  return installed;
}
