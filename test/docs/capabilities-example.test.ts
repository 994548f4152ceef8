/**
 * The example of docs/guides/capabilities.md, run as the page has it (public import, its own process) against the
 * scripted API on the first-party path, behind the interceptor as the page's host is by default. Changed only:
 * options a test needs, spread in front of the host's own, and the server's path (the page's `notes-server.mjs`
 * is test/fixtures/mcp-notes-server.mjs). The project dir holds a CLAUDE.md, whose line must reach the request.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { execa } from "execa";
import { afterEach, expect, it } from "vitest";
import { turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, cleanup, cliOption, firstPartyApi, firstPartyEnv, remainingChildren, tempDir, testEnv, toolResultsIn } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const page = readFileSync(new URL("../../docs/guides/capabilities.md", import.meta.url), "utf8");
const SERVER = resolve(import.meta.dirname, "../fixtures/mcp-notes-server.mjs");
const LINE = "The orders table has one row per order line.";

it("runs: the project's CLAUDE.md reaches the request and the CLI-run notes server answers a tool call", { timeout: 120_000 }, async () => {
  const code = /```ts\n([\s\S]*?)```/.exec(page)?.[1];
  expect(code).toContain("new ClaudeCodeHost({ ");
  expect(code).toContain('args: ["notes-server.mjs"]');
  const api = await firstPartyApi((request) =>
    toolResultsIn(request.body).length === 0 ? { toolCalls: [{ name: "mcp__notes__lookup", input: { key: "grain" }, id: "toolu_g" }] } : turn.text(`The grain is ${toolResultsIn(request.body)[0]!.text.replace("note grain: ", "")}.`),
  );
  const projectDir = tempDir("project");
  writeFileSync(join(projectDir, "CLAUDE.md"), `${LINE}\n`);
  const file = join(import.meta.dirname, `.capabilities-example-${process.pid}.mjs`);
  writeFileSync(file, code!.replace("new ClaudeCodeHost({ ", "new ClaudeCodeHost({ ...JSON.parse(process.env.HOST_EXAMPLE_OPTIONS), ").replace('"node", args: ["notes-server.mjs"]', `${JSON.stringify(process.execPath)}, args: [${JSON.stringify(SERVER)}]`));
  try {
    const options = { env: firstPartyEnv(api), warm: false as const, passEnv: TEST_PASS_ENV, ...cliOption() };
    const run = await execa(process.execPath, [file], { cwd: projectDir, env: { ...testEnv(), HOST_EXAMPLE_OPTIONS: JSON.stringify(options) }, extendEnv: false, reject: false });
    expect(run.stderr).toBe("");
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe("The grain is one row per order line.\nmcp__notes__lookup");
  } finally {
    rmSync(file, { force: true });
  }
  expect(api.messageRequests).toHaveLength(2);
  expect(api.messageRequests[0]!.rawBody).toContain(LINE);
  expect(await remainingChildren()).toEqual([]);
});
