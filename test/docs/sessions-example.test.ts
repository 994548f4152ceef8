/**
 * The example of docs/guides/sessions.md, run as the page has it (public import, its own process) against the
 * scripted API on the first-party path, behind the interceptor as the page's host is by default: the
 * only change is options a test needs, spread in front of the host's own (the test's login and the API's
 * front in `env`, no spares, the test's pass-through names).
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, expect, it } from "vitest";
import { ClaudeCodeHost } from "../../src/index.js";
import { turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, cleanup, cliOption, firstPartyApi, firstPartyEnv, remainingChildren, tempDir, testEnv } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const page = readFileSync(new URL("../../docs/guides/sessions.md", import.meta.url), "utf8");

it("runs: a two-turn chat with a tool, streamed to stdout, the second turn's request carrying the first", { timeout: 120_000 }, async () => {
  const code = /```ts\n([\s\S]*?)```/.exec(page)?.[1];
  expect(code).toContain("new ClaudeCodeHost({ ");
  const api = await firstPartyApi([turn.tools({ name: "mcp__ktx__lookup", input: { term: "grain" } }), turn.text("Grain is the level of detail of one row."), turn.text("Detail per row.")]);
  // Inside the package, so `ktx-claude-code` resolves to its own build as it would for a user.
  const file = join(import.meta.dirname, `.sessions-example-${process.pid}.mjs`);
  writeFileSync(file, code!.replace("new ClaudeCodeHost({ ", "new ClaudeCodeHost({ ...JSON.parse(process.env.HOST_EXAMPLE_OPTIONS), "));
  try {
    const options = { env: firstPartyEnv(api), warm: false as const, passEnv: TEST_PASS_ENV, ...cliOption() };
    // The page's host with these options has the interceptor on (its default): every turn is checked.
    const same = new ClaudeCodeHost({ ...options, projectDir: tempDir("project") });
    expect(same.interceptor).toBe("on");
    await same.close();
    const run = await execa(process.execPath, [file], { cwd: tempDir("project"), env: { ...testEnv(), HOST_EXAMPLE_OPTIONS: JSON.stringify(options) }, extendEnv: false, reject: false });
    expect(run.stderr).toBe("");
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(/^\[mcp__ktx__lookup\] Grain is the level of detail of one row\.\n\(1 tool call\(s\), \d+ tokens out\)\nDetail per row\.\n\(0 tool call\(s\), \d+ tokens out\)$/);
  } finally {
    rmSync(file, { force: true });
  }
  expect(api.messageRequests).toHaveLength(3);
  expect(JSON.stringify(api.messageRequests[2]!.body.messages)).toContain("What does grain mean?");
  expect(JSON.stringify(api.messageRequests[2]!.body.messages)).toContain("the level of detail of one row");
  expect(await remainingChildren()).toEqual([]);
});
