/**
 * The example of docs/guides/ai-sdk-provider.md runs as the page has it (provider-example.ts), with this
 * repository's `ai` 6; test/pack/provider-app.test.ts runs it again in an app with `ai` 6.0.188 and `ai` 7.
 */
import { afterEach, expect, it } from "vitest";
import { cleanup, remainingChildren } from "../support.js";
import { EXAMPLE_OUTPUT, runProviderExample } from "./provider-example.js";

afterEach(async () => {
  await cleanup();
});

it("runs: one turn, a loop with the app's tool, a stream; everything reaped", { timeout: 180_000 }, async () => {
  // Inside the package, so `ktx-claude-code/provider` and `ai` resolve as they would for a user.
  const run = await runProviderExample(import.meta.dirname);
  expect(run.stderr).toBe("");
  expect(run.exitCode).toBe(0);
  expect(run.stdout.split("\n")).toEqual(EXAMPLE_OUTPUT);
  expect(run.messageRequests).toBe(4);
  expect(await remainingChildren()).toEqual([]);
});
