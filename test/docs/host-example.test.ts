/**
 * The example of docs/guides/one-host.md, run as the page has it (public import,
 * its own process) against the scripted API: the only change is options a test needs, spread in front of
 * the host's own (the API's base URL, no spares, the test's pass-through names).
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, expect, it } from "vitest";
import { turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, cleanup, cliOption, remainingChildren, scriptedApi, tempDir, testEnv } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const page = readFileSync(new URL("../../docs/guides/one-host.md", import.meta.url), "utf8");

function example(): string {
  const section = page;
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  expect(code, "a ts block in the section").toBeDefined();
  expect(code).toContain("new ClaudeCodeHost({ ");
  return code!.replace("new ClaudeCodeHost({ ", "new ClaudeCodeHost({ ...JSON.parse(process.env.HOST_EXAMPLE_OPTIONS), ");
}

it("runs: two runtimes on one host, the second call served by the first call's process, everything reaped", { timeout: 120_000 }, async () => {
  const answers = ["COUNT", "SUM"];
  const api = await scriptedApi(() => turn.text(answers.shift() ?? "no more"));
  // Inside the package, so `ktx-claude-code` resolves to its own build as it would for a user.
  const file = join(import.meta.dirname, `.host-example-${process.pid}.mjs`);
  writeFileSync(file, example());
  try {
    const options = { apiEndpoint: { baseUrl: api.baseUrl, apiKey: "sk-test-scripted" }, warm: false, passEnv: TEST_PASS_ENV, ...cliOption() };
    const run = await execa(process.execPath, [file], { cwd: tempDir("project"), env: { ...testEnv(), HOST_EXAMPLE_OPTIONS: JSON.stringify(options) }, extendEnv: false, reject: false });
    expect(run.stderr).toBe("");
    expect(run.exitCode).toBe(0);
    const lines = run.stdout.split("\n");
    // Only the runtime with the listener hears its call's step.
    expect(lines.slice(0, 3)).toEqual(["COUNT", "review: step done", "SUM"]);
    expect(run.stdout).toMatch(/started: 1,\s+reusedCalls: 1/);
  } finally {
    rmSync(file, { force: true });
  }
  expect(api.messageRequests).toHaveLength(2);
  expect(await remainingChildren()).toEqual([]);
});
