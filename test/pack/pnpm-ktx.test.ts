/**
 * KTX's own install: `pnpm add` of the packed package with KTX 0.12.0's pnpm (11.4.0, which needs Node >= 22.13)
 * and its workspace settings — `minimumReleaseAge: 10080` (7 days) and `allowBuilds` naming only its three native
 * packages, so pnpm 11's strict builds fail an install that brings any other install script
 * (`ERR_PNPM_IGNORED_BUILDS`, as the CLI wrapper's postinstall did). The add must succeed, leave the workspace file
 * as it was, bring a verified CLI with process reuse, and the runtime must find it.
 *
 * Node 22 and pnpm come from the npm registry (`node-<platform>-<arch>@22`, as .ci/run gets Node 22) into a tools
 * directory under the temp dir that later runs reuse; pnpm's own store and metadata cache keep the CLI's platform
 * package, so after the first run (about 60-90 s: the CLI binary is the one large download) a run takes 10-20 s.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { npm, npmEnv, packedTarball, run } from "./pack.js";

/** KTX 0.12.0's pnpm (`packageManager`) and its pnpm-workspace.yaml settings that decide what an add may install. */
const KTX_PNPM = "11.4.0";
const KTX_WORKSPACE = ["minimumReleaseAge: 10080", "allowBuilds:", "  better-sqlite3: true", "  esbuild: true", "  sharp: true", ""].join("\n");

const scratch = mkdtempSync(join(tmpdir(), "ktx-pnpm-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Node 22 and KTX's pnpm, installed once into a directory later runs reuse (staged, then renamed into place). */
async function tools(): Promise<{ node: string; pnpm: string; bin: string }> {
  const dir = join(tmpdir(), `ktx-claude-code-test-tools-node22-pnpm${KTX_PNPM}`);
  const bin = join(dir, "node_modules", `node-${process.platform}-${process.arch}`, "bin");
  const paths = { node: join(bin, "node"), pnpm: join(dir, "node_modules", "pnpm", "bin", "pnpm.mjs"), bin };
  if (existsSync(paths.node) && existsSync(paths.pnpm)) return paths;
  const staging = mkdtempSync(join(tmpdir(), "ktx-claude-code-test-tools-staging-"));
  await npm(["install", "--no-save", "--no-audit", "--no-fund", "--prefer-offline", "--prefix", staging, `node-${process.platform}-${process.arch}@22`, `pnpm@${KTX_PNPM}`], staging);
  try {
    renameSync(staging, dir);
  } catch {
    rmSync(staging, { recursive: true, force: true }); // another worker installed them first
  }
  return paths;
}

it(`KTX's pnpm ${KTX_PNPM} adds the package under KTX's workspace settings (7-day release age, strict builds): exit 0, workspace file untouched, a verified CLI with reuse`, { timeout: 300_000 }, async () => {
  const [tarball, { node, pnpm, bin }] = await Promise.all([packedTarball(), tools()]);
  const app = join(scratch, "app");
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "ktx-pnpm-scratch", private: true, type: "module" }));
  writeFileSync(join(app, "pnpm-workspace.yaml"), KTX_WORKSPACE);
  const env = { ...npmEnv(), PATH: `${bin}:${process.env.PATH ?? ""}`, CI: "true" };

  const started = Date.now();
  const added = await run(node, [pnpm, "add", "--prefer-offline", tarball, "zod@4.4.3"], { cwd: app, env, maxBuffer: 64 * 1024 * 1024 }).then(
    (done) => ({ code: 0, output: `${done.stdout}${done.stderr}` }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? -1, output: `${error.stdout ?? ""}${error.stderr ?? ""}` }),
  );
  console.log(`pnpm ${KTX_PNPM} add: exit ${added.code} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  expect(added.output).not.toMatch(/ERR_PNPM|Ignored build scripts/);
  expect(added.code, added.output).toBe(0);
  // pnpm 11 writes a placeholder for a refused build into the workspace file: nothing of that.
  expect(readFileSync(join(app, "pnpm-workspace.yaml"), "utf8")).toBe(KTX_WORKSPACE);

  const probe = "import('ktx-claude-code').then((m) => m.resolveCli({})).then((cli) => console.log(JSON.stringify({ version: cli.version, verified: cli.verified, reuse: cli.facts.reuse !== false, path: cli.path })))";
  const found = JSON.parse((await run(node, ["--input-type=module", "-e", probe], { cwd: app, env })).stdout) as { version: string; verified: boolean; reuse: boolean; path: string };
  console.log(`pnpm ${KTX_PNPM} installed CLI ${found.version}`);
  expect(found).toMatchObject({ verified: true, reuse: true });
  expect(found.path).toContain(`@anthropic-ai/claude-code-${process.platform}-${process.arch}`);
  // No wrapper package, so no install script in the tree.
  expect(readdirSync(join(app, "node_modules", ".pnpm")).filter((name) => name.startsWith("@anthropic-ai+claude-code@"))).toEqual([]);
});
