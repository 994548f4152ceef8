/**
 * `npm run demo -- --live` passes `process.env` as KTX does; it must get past option parsing and reach
 * the local session. With an empty HOME (no login) that is Claude Code's own "not logged in" answer.
 */
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, expect, it } from "vitest";
import { cleanup, remainingChildren, testEnv } from "../support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

it("demo --live reaches the session: a not-logged-in error, not an options error", async () => {
  const demo = join(import.meta.dirname, "../../dist/cli/demo.js");
  const result = await execa(process.execPath, [demo, "--live"], { reject: false, env: testEnv(), extendEnv: false, timeout: 90_000 });
  expect(result.stderr).not.toMatch(/Invalid ClaudeCodeRuntime options/);
  expect(result.stderr).toMatch(/^ClaudeCodeAuthError: Claude Code is not authenticated \(Not logged in/m);
  expect(result.exitCode).toBe(1);
}, 120_000);
