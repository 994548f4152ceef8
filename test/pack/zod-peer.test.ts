/**
 * The packed package beside KTX's zod: `npm pack`, installed into a scratch project with zod 4.4.3
 * (KTX 0.12.0's pin), then with the newest zod 4; `tsc` over KTX-shaped glue (test/fixtures/ktx-glue:
 * the port restated in test/ktx/port-conformance.ts, KTX tool descriptors, a bare `generateObject`
 * reading a field) must report nothing, and the package must run on that zod (smoke.mjs).
 * It needs the npm registry (or a warm npm cache) and takes about 30 s.
 */
import { execFile } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, inject, it } from "vitest";

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "../..");
const glueDir = join(root, "test/fixtures/ktx-glue");
const scratch = mkdtempSync(join(tmpdir(), "ktx-pack-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// A nested npm must not inherit the outer `npm test`'s variables (its prefix, package, lifecycle), only where
// the registry is and how to reach it; nor the suite's loopback trap, which is for the CLIs tests start.
const keptNpmConfig = /^npm_config_(registry|cache|userconfig|globalconfig|proxy|https_proxy|noproxy|cafile|strict_ssl|.*registry.*|.*_auth.*)$/i;
const trap = inject("trapProxyUrl");
const env = Object.fromEntries(
  Object.entries(process.env).filter(([name, value]) => (!/^npm_/i.test(name) || keptNpmConfig.test(name)) && value !== trap),
);
const npm = (args: string[], cwd: string) => run("npm", args, { cwd, env, maxBuffer: 64 * 1024 * 1024 });
// No install scripts (the CLI's binary is not needed to type-check), no platform binaries.
const install = (specs: string[]) => npm(["install", "--ignore-scripts", "--omit=optional", "--no-audit", "--no-fund", "--prefer-offline", ...specs], scratch);
const tsc = () =>
  run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(scratch, "tsconfig.json")], { cwd: scratch }).then(
    () => "",
    (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ""}${error.stderr ?? ""}` || String(error),
  );
const smoke = async () => JSON.parse((await run(process.execPath, ["smoke.mjs"], { cwd: scratch })).stdout) as { zodVersion: string; nestedZod: boolean; rejected: string };

it("type-checks KTX-shaped glue and runs beside zod 4.4.3 and the newest zod 4", { timeout: 240_000 }, async () => {
  if (!existsSync(join(root, "dist/index.d.ts"))) await npm(["run", "build"], root);
  const packed = JSON.parse((await npm(["pack", "--ignore-scripts", "--json", "--pack-destination", scratch], root)).stdout) as Array<{ filename: string }>;
  const tarball = packed[0]!.filename;
  writeFileSync(join(scratch, "package.json"), JSON.stringify({ name: "ktx-glue-scratch", private: true, type: "module" }));
  for (const file of readdirSync(glueDir)) copyFileSync(join(glueDir, file), join(scratch, file));
  // The port as KTX defines it, restated once in this repository; here it imports the packed package.
  const port = readFileSync(join(root, "test/ktx/port-conformance.ts"), "utf8").replaceAll('"../../src/index.js"', '"ktx-claude-code"');
  writeFileSync(join(scratch, "port-conformance.ts"), port);
  const nodeTypes = JSON.parse(readFileSync(join(root, "node_modules/@types/node/package.json"), "utf8")).version as string;
  // @types/json-schema: @ai-sdk/provider's declarations import it without depending on it; with
  // skipLibCheck off (so our own declarations are checked against this zod too) tsc needs it.
  await install([`./${tarball}`, "zod@4.4.3", `@types/node@${nodeTypes}`, "@types/json-schema"]);

  expect(await tsc()).toBe("");
  expect(await smoke()).toEqual({ zodVersion: "4.4.3", nestedZod: false, rejected: "ProjectDirNotFoundError" });

  await install(["zod@4"]);
  const newest = await smoke();
  expect(newest.zodVersion).toMatch(/^4\./);
  expect(await tsc()).toBe("");
  expect(newest).toMatchObject({ nestedZod: false, rejected: "ProjectDirNotFoundError" });
});
