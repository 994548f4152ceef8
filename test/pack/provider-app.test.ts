/**
 * `ktx-claude-code/provider` in a strict TypeScript app (test/fixtures/provider-app: `strict`,
 * `noUncheckedIndexedAccess`, `verbatimModuleSyntax`, `skipLibCheck: false`; not `exactOptionalPropertyTypes`, under
 * which `ai` 6.0.188's own declarations do not compile, whoever the provider): the packed
 * package installed beside `ai` 6.0.188 and zod 4.4.3 (KTX's pins) compiles, with one copy of
 * `@ai-sdk/provider` (ai's own); then beside the newest `ai` 7, which takes the provider's `LanguageModelV3`
 * through its V3 adapter. With each, the guide's example (docs/guides/ai-sdk-provider.md) runs in the app on the
 * real CLI, as test/docs/ai-sdk-provider.test.ts runs it with this repository's `ai`. Needs the npm registry (or a
 * warm npm cache).
 */
import { copyFileSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { locateBundledCli } from "../../src/binary/locate.js";
import { EXAMPLE_OUTPUT, runProviderExample } from "../docs/provider-example.js";
import { cleanup, remainingChildren } from "../support.js";
import { npm, packedTarball, root, scratchApp } from "./pack.js";

const { dir: scratch, install, tsc } = scratchApp("ktx-provider-app-");
afterAll(async () => {
  await cleanup();
});

/** Versions of a package anywhere in the scratch tree (npm ls, deduped copies once). */
async function copies(name: string): Promise<string[]> {
  const { stdout } = await npm(["ls", name, "--all", "--json"], scratch).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "{}" }));
  const found = new Set<string>();
  const walk = (node: { dependencies?: Record<string, { version?: string; dependencies?: unknown }> }) => {
    for (const [dep, child] of Object.entries(node.dependencies ?? {})) {
      if (dep === name && child.version) found.add(child.version);
      walk(child as never);
    }
  };
  walk(JSON.parse(stdout));
  return [...found];
}

it("a strict AI SDK app compiles against the provider beside ai 6.0.188 (one @ai-sdk/provider) and the newest ai 7, and runs the guide's example with each", { timeout: 400_000 }, async () => {
  const tarball = await packedTarball();
  writeFileSync(join(scratch, "package.json"), JSON.stringify({ name: "provider-app-scratch", private: true, type: "module" }));
  for (const file of readdirSync(join(root, "test/fixtures/provider-app"))) copyFileSync(join(root, "test/fixtures/provider-app", file), join(scratch, file));
  const nodeTypes = JSON.parse(readFileSync(join(root, "node_modules/@types/node/package.json"), "utf8")).version as string;
  // `@types/json-schema`: `@ai-sdk/provider`'s declarations import it without depending on it (any ai app checking its libraries needs it).
  await install([tarball, "ai@6.0.188", "zod@4.4.3", `@types/node@${nodeTypes}`, "@types/json-schema@7"]);
  expect(await copies("@ai-sdk/provider")).toEqual(["3.0.10"]);
  expect(await tsc()).toBe("");
  await runsTheGuide();

  await install(["ai@7"]);
  const ai = JSON.parse(readFileSync(join(scratch, "node_modules/ai/package.json"), "utf8")).version as string;
  expect(ai).toMatch(/^7\./);
  expect(await tsc()).toBe("");
  await runsTheGuide();
});

/** The guide's example, run in the app with the `ai` it has now: the same output and requests as with the repository's. */
async function runsTheGuide() {
  // The app was installed without optional dependencies: the CLI this repository installed.
  const run = await runProviderExample(scratch, locateBundledCli());
  expect(run.stderr).toBe("");
  expect([run.exitCode, run.stdout.split("\n"), run.messageRequests]).toEqual([0, EXAMPLE_OUTPUT, 4]);
  expect(await remainingChildren()).toEqual([]);
}
