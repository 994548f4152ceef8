/**
 * The examples of the agent-loops and rate-limits guides, run as the pages have them (public imports, their
 * own process): the only change is options a test needs, spread in front of the runtime's own (the test's
 * login and the scripted API's front in `env` where the page talks to the user's login, the pass-through
 * names, the CLI). The agent loop runs first party behind the interceptor; the rate-limits page brings its own
 * scripted API in subscription mode.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, expect, it } from "vitest";
import { turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, cleanup, cliOption, firstPartyApi, firstPartyEnv, remainingChildren, tempDir, testEnv } from "../support.js";

afterEach(async () => {
  await cleanup();
});

/** A page's first ts example, its runtime given `options` first; run from inside the package. */
async function runExample(page: string, options: Record<string, unknown>, env: Record<string, string> = testEnv()) {
  const code = /```ts\n([\s\S]*?)```/.exec(readFileSync(new URL(`../../docs/guides/${page}`, import.meta.url), "utf8"))?.[1];
  expect(code, `${page}: a ts example`).toMatch(/new ClaudeCodeRuntime\(\{\s/);
  const file = join(import.meta.dirname, `.guide-example-${process.pid}.mjs`);
  writeFileSync(file, code!.replace(/new ClaudeCodeRuntime\(\{\s/, "new ClaudeCodeRuntime({ ...JSON.parse(process.env.GUIDE_EXAMPLE_OPTIONS), "));
  try {
    return await execa(process.execPath, [file], { cwd: tempDir("project"), env: { ...env, GUIDE_EXAMPLE_OPTIONS: JSON.stringify(options) }, extendEnv: false, reject: false });
  } finally {
    rmSync(file, { force: true });
  }
}

it("agent-loops.md: a loop with a tool, its steps, stop reason, tool calls and failure count", { timeout: 120_000 }, async () => {
  const api = await firstPartyApi([turn.tools({ name: "mcp__ktx__lookup", input: { term: "grain" } }), turn.text("Grain is the level of detail of one row.")]);
  const env = firstPartyEnv(api);
  const run = await runExample("agent-loops.md", { env, warm: false, passEnv: TEST_PASS_ENV, ...cliOption() }, { ...testEnv(), HOME: env.HOME! });
  expect(run.stderr).toBe("");
  expect([run.exitCode, run.stdout.split("\n")]).toEqual([0, ["step 1 done", "step 2 done", "natural 2 mcp__ktx__lookup", "Grain is the level of detail of one row.", "tool failures: 0"]]);
  // The tool's output reached the model.
  expect(JSON.stringify(api.messageRequests[1]!.body.messages)).toContain("**grain**: the level of detail of one row");
  expect(await remainingChildren()).toEqual([]);
});

it("rate-limits.md: a reached 5-hour limit is waited out and the call runs again", { timeout: 120_000 }, async () => {
  const run = await runExample("rate-limits.md", { passEnv: TEST_PASS_ENV, warm: false, ...cliOption() });
  expect(run.stderr).toBe("");
  expect([run.exitCode, run.stdout.split("\n")]).toEqual([0, ["wait_started", "call_retry", "after the reset"]]);
  expect(await remainingChildren()).toEqual([]);
});
