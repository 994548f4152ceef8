/**
 * What the packed-package tests share: the tarball (`npm pack`, once per build of dist/: test files run in
 * separate workers, so the cache is a directory keyed by package.json and dist/, created atomically), and
 * a nested npm that sees only where the registry is, not the outer `npm test`'s variables.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, inject } from "vitest";

export const run = promisify(execFile);
export const root = resolve(import.meta.dirname, "../..");

// A nested npm must not inherit the outer `npm test`'s variables (its prefix, package, lifecycle), only where
// the registry is and how to reach it; nor the suite's loopback trap, which is for the CLIs tests start.
const keptNpmConfig = /^npm_config_(registry|cache|userconfig|globalconfig|proxy|https_proxy|noproxy|cafile|strict_ssl|.*registry.*|.*_auth.*)$/i;
export function npmEnv(): NodeJS.ProcessEnv {
  const trap = inject("trapProxyUrl");
  return Object.fromEntries(Object.entries(process.env).filter(([name, value]) => (!/^npm_/i.test(name) || keptNpmConfig.test(name)) && value !== trap));
}

export const npm = (args: string[], cwd: string) => run("npm", args, { cwd, env: npmEnv(), maxBuffer: 64 * 1024 * 1024 });

/** `--prefer-offline`: what npm ci already fetched (the lockfile's CLI among it) comes from the cache. */
export const INSTALL_FLAGS = ["--no-audit", "--no-fund", "--prefer-offline"];

function distFingerprint(): string {
  const hash = createHash("sha256").update(readFileSync(join(root, "package.json")));
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const stat = statSync(path);
      if (stat.isDirectory()) walk(path);
      else hash.update(`${path}\0${stat.size}\0${stat.mtimeMs}\n`);
    }
  };
  walk(join(root, "dist"));
  return hash.digest("hex").slice(0, 16);
}

/** The packed package's path; packs when this build of dist/ has not been packed yet. */
export async function packedTarball(): Promise<string> {
  if (!existsSync(join(root, "dist/index.d.ts"))) await npm(["run", "build"], root);
  // Named by checkout and build: other checkouts on the machine keep their own packs.
  const prefix = `ktx-claude-code-pack-${createHash("sha256").update(root).digest("hex").slice(0, 8)}-`;
  const dir = join(tmpdir(), `${prefix}${distFingerprint()}`);
  const find = () => (existsSync(dir) ? readdirSync(dir).find((name) => name.endsWith(".tgz")) : undefined);
  let tarball = find();
  if (tarball === undefined) {
    const staging = mkdtempSync(join(tmpdir(), "ktx-claude-code-packing-"));
    await npm(["pack", "--ignore-scripts", "--pack-destination", staging], root);
    try {
      renameSync(staging, dir);
    } catch {
      // Another worker packed the same build first: use its tarball.
      rmSync(staging, { recursive: true, force: true });
    }
    tarball = find();
    // Packs of earlier builds are no use any more.
    for (const name of readdirSync(tmpdir())) {
      if (name.startsWith(prefix) && join(tmpdir(), name) !== dir) rmSync(join(tmpdir(), name), { recursive: true, force: true });
    }
  }
  if (tarball === undefined) throw new Error(`npm pack left no tarball in ${dir}`);
  return join(dir, tarball);
}

/**
 * A scratch app in a temp dir, removed after the file's tests: `install` adds packages without install
 * scripts or platform binaries (no CLI is needed to type-check), `tsc` compiles its tsconfig.json with this
 * repository's TypeScript and gives its output ("" when clean).
 */
export function scratchApp(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const install = (specs: string[]) => npm(["install", "--ignore-scripts", "--omit=optional", ...INSTALL_FLAGS, ...specs], dir);
  const tsc = () =>
    run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(dir, "tsconfig.json")], { cwd: dir }).then(
      () => "",
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ""}${error.stderr ?? ""}` || String(error),
    );
  return { dir, install, tsc };
}
