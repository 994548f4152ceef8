/**
 * What adding the packed package costs an app that already has KTX's dependency set (ai 6.0.188, zod 4.4.3,
 * @modelcontextprotocol/sdk 1.29.0, yaml 2.9.0; /work/shared/ktx/README.md): packages and MiB added,
 * printed, held under a budget, with the CLI counted on its own; no second copy of any of KTX's packages
 * and no `@ai-sdk/anthropic`. The app pins the CLI's platform package as a host may (docs/compatibility.md): the
 * lockfile's version, which npm ci already fetched, so on a fresh CI machine the one real download is the small
 * rest. Install scripts are off (as in KTX's pnpm workspace; the platform package has none), and the runtime finds
 * a verified CLI with no wrapper package installed.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, expect, it } from "vitest";
import { INSTALL_FLAGS, npm, packedTarball, root, run } from "./pack.js";

/** KTX 0.12.0's copies of what this package also uses. */
const KTX_SET = { ai: "6.0.188", zod: "4.4.3", "@modelcontextprotocol/sdk": "1.29.0", yaml: "2.9.0" } as const;
/**
 * Budget for everything but the CLI: measured 2026-11-29 at 40 packages and 9.6 MiB — ktx-claude-code 5.2 MiB
 * (docs, fixtures of six CLI versions, gitleaks' rules as data), execa and its 16 small dependencies 0.6 MiB,
 * and the wire interceptor's: undici 1.6 MiB, @peculiar/x509 with its asn1 packages, tsyringe,
 * reflect-metadata and tslib (22 packages, 2.9 MiB together). The margin leaves room for a few small
 * dependencies, not for a second copy of anything KTX has (ai 6.0.326 alone took 8.5 MiB on disk).
 */
const BUDGET = { packages: 44, mib: 11 };

const scratch = mkdtempSync(join(tmpdir(), "ktx-footprint-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Installed {
  name: string;
  version: string;
  bytes: number;
}

/** Every package under node_modules (nested ones too) by its path, with the bytes of its own files (hard links once). */
function inventory(dir: string): Map<string, Installed> {
  const packages = new Map<string, Installed>();
  const seen = new Set<string>();
  const sizeOf = (path: string): number => {
    let bytes = 0;
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules") bytes += sizeOf(full);
      } else if (entry.isFile()) {
        const stat = statSync(full);
        const key = `${stat.dev}:${stat.ino}`;
        if (!seen.has(key)) (seen.add(key), (bytes += stat.size));
      }
    }
    return bytes;
  };
  const walk = (modules: string): void => {
    let entries: string[];
    try {
      entries = readdirSync(modules);
    } catch {
      return;
    }
    for (const name of entries) {
      if (name.startsWith(".")) continue;
      const dirs = name.startsWith("@") ? readdirSync(join(modules, name)).map((inner) => join(modules, name, inner)) : [join(modules, name)];
      for (const pkgDir of dirs) {
        let manifest: { name?: string; version?: string };
        try {
          manifest = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
        } catch {
          continue;
        }
        packages.set(relative(dir, pkgDir), { name: manifest.name ?? relative(modules, pkgDir), version: manifest.version ?? "?", bytes: sizeOf(pkgDir) });
        walk(join(pkgDir, "node_modules"));
      }
    }
  };
  walk(join(dir, "node_modules"));
  return packages;
}

const mib = (bytes: number) => bytes / 1024 / 1024;
const isCli = (name: string) => /^@anthropic-ai\/claude-code(-|$)/.test(name);

it("adds to KTX's dependency set no second copy of ai, @ai-sdk/provider, zod, the MCP SDK or yaml, no @ai-sdk/anthropic, and stays under its budget", { timeout: 300_000 }, async () => {
  const tarball = await packedTarball();
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as { packages: Record<string, { version?: string }> };
  const platformPackage = `@anthropic-ai/claude-code-${process.platform}-${process.arch}`;
  const cliVersion = lock.packages[`node_modules/${platformPackage}`]!.version!;
  writeFileSync(join(scratch, "package.json"), JSON.stringify({ name: "ktx-footprint-scratch", private: true, type: "module" }));
  await npm(["install", "--ignore-scripts", ...INSTALL_FLAGS, ...Object.entries(KTX_SET).map(([name, version]) => `${name}@${version}`)], scratch);
  const before = inventory(scratch);

  await npm(["install", "--ignore-scripts", ...INSTALL_FLAGS, tarball, `${platformPackage}@${cliVersion}`], scratch);
  const after = inventory(scratch);

  const added = [...after].filter(([path, pkg]) => before.get(path)?.version !== pkg.version);
  const cli = added.filter(([, pkg]) => isCli(pkg.name));
  const rest = added.filter(([, pkg]) => !isCli(pkg.name));
  const restBytes = rest.reduce((sum, [, pkg]) => sum + pkg.bytes, 0);
  const cliBytes = cli.reduce((sum, [, pkg]) => sum + pkg.bytes, 0);
  const line = ([path, pkg]: [string, Installed]) => `  ${pkg.name}@${pkg.version}  ${mib(pkg.bytes).toFixed(2)} MiB  (${path})`;
  console.log(
    [
      `Added to an app with KTX's set (${Object.entries(KTX_SET).map(([n, v]) => `${n}@${v}`).join(", ")}):`,
      `${rest.length} packages, ${mib(restBytes).toFixed(1)} MiB (budget: ${BUDGET.packages} packages, ${BUDGET.mib} MiB)`,
      ...rest.map(line),
      `the CLI: ${cli.length} packages, ${mib(cliBytes).toFixed(1)} MiB`,
      ...cli.map(line),
    ].join("\n"),
  );

  // One copy of each of KTX's packages, KTX's own, untouched.
  for (const [name, version] of Object.entries(KTX_SET)) {
    const copies = [...after.values()].filter((pkg) => pkg.name === name).map((pkg) => pkg.version);
    expect(copies, name).toEqual([version]);
  }
  expect([...after.values()].filter((pkg) => pkg.name === "@ai-sdk/anthropic")).toEqual([]);
  // The provider entry's types come from ai's own @ai-sdk/provider (a dependency in a range that dedupes with it).
  expect([...after.values()].filter((pkg) => pkg.name === "@ai-sdk/provider").map((pkg) => pkg.version)).toEqual(["3.0.10"]);
  expect(rest.map(([, pkg]) => pkg.name)).toContain("ktx-claude-code");
  expect(rest.length).toBeLessThanOrEqual(BUDGET.packages);
  expect(mib(restBytes)).toBeLessThanOrEqual(BUDGET.mib);
  // The host's pin is the one CLI in the tree, and no wrapper package (with its install script) came with it.
  expect([...after.values()].filter((pkg) => isCli(pkg.name)).map((pkg) => `${pkg.name}@${pkg.version}`)).toEqual([`${platformPackage}@${cliVersion}`]);

  // No install script ran: the runtime takes the platform package's binary.
  const probe = "import('ktx-claude-code').then((m) => m.resolveCli({})).then((cli) => console.log(JSON.stringify({ version: cli.version, verified: cli.verified, path: cli.path })))";
  const found = JSON.parse((await run(process.execPath, ["--input-type=module", "-e", probe], { cwd: scratch })).stdout) as { version: string; verified: boolean; path: string };
  expect(found).toMatchObject({ version: cliVersion, verified: true });
  expect(found.path).toContain(`node_modules/${platformPackage}`);
});
