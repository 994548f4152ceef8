/**
 * The packed package in a strict TypeScript app beside KTX's zod: the tarball (pack.ts) installed into a
 * scratch project with zod 4.4.3 (KTX 0.12.0's pin), then with the newest zod 4; `tsc` over KTX-shaped glue
 * (test/fixtures/ktx-glue: the port restated in test/ktx/port-conformance.ts, KTX tool descriptors, a bare
 * `generateObject` reading a field, the `ktx-claude-code/testing` helpers) under `strict`,
 * `exactOptionalPropertyTypes`, `noUncheckedIndexedAccess`, `verbatimModuleSyntax`, NodeNext and
 * `skipLibCheck: false` must report nothing, with no `@types/*` but `@types/node` (the glue is Node code) and
 * without `ai` (an optional peer of `ktx-claude-code/ai-sdk` only). The package must run on that zod
 * (smoke.mjs). It needs the npm registry (or a warm npm cache) and takes about 30 s.
 */
import { copyFileSync, readFileSync, readdirSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { packedTarball, root, run, scratchApp } from "./pack.js";

const glueDir = join(root, "test/fixtures/ktx-glue");
const { dir: scratch, install, tsc } = scratchApp("ktx-pack-");
const smoke = async () => JSON.parse((await run(process.execPath, ["smoke.mjs"], { cwd: scratch })).stdout) as { zodVersion: string; nestedZod: boolean; rejected: string };

it("a strict app (exactOptionalPropertyTypes, skipLibCheck off, no extra @types) compiles KTX-shaped glue and runs beside zod 4.4.3 and the newest zod 4", { timeout: 240_000 }, async () => {
  const tarball = await packedTarball();
  writeFileSync(join(scratch, "package.json"), JSON.stringify({ name: "ktx-glue-scratch", private: true, type: "module" }));
  for (const file of readdirSync(glueDir)) copyFileSync(join(glueDir, file), join(scratch, file));
  // The port as KTX defines it, restated once in this repository; here it imports the packed package.
  const port = readFileSync(join(root, "test/ktx/port-conformance.ts"), "utf8").replaceAll('"../../src/index.js"', '"ktx-claude-code"');
  writeFileSync(join(scratch, "port-conformance.ts"), port);
  const tsconfig = JSON.parse(readFileSync(join(scratch, "tsconfig.json"), "utf8")) as { compilerOptions: Record<string, unknown> };
  expect(tsconfig.compilerOptions).toMatchObject({ strict: true, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, verbatimModuleSyntax: true, skipLibCheck: false, module: "NodeNext" });
  const nodeTypes = JSON.parse(readFileSync(join(root, "node_modules/@types/node/package.json"), "utf8")).version as string;
  await install([tarball, "zod@4.4.3", `@types/node@${nodeTypes}`]);
  const types = readdirSync(join(scratch, "node_modules/@types"));
  expect(types).toEqual(["node"]);
  expect(existsSync(join(scratch, "node_modules/ai"))).toBe(false);

  expect(await tsc()).toBe("");
  expect(await smoke()).toEqual({ zodVersion: "4.4.3", nestedZod: false, rejected: "ProjectDirNotFoundError" });

  await install(["zod@4"]);
  const newest = await smoke();
  expect(newest.zodVersion).toMatch(/^4\./);
  expect(await tsc()).toBe("");
  expect(newest).toMatchObject({ nestedZod: false, rejected: "ProjectDirNotFoundError" });
});
