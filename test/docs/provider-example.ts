/**
 * The example of docs/guides/ai-sdk-provider.md, run as the page has it (public imports, its own process) on
 * the real CLI against the scripted API on the first-party path: the only change is options a test needs,
 * spread in front of the provider's own (the test's environment with its login, no spares, pass-through
 * names). Shared by the docs test (this repository's `ai`) and the packed-package test (an app with KTX's
 * `ai` 6.0.188, then the newest `ai` 7).
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { expect } from "vitest";
import { type RecordedRequest, type ScriptedTurn, turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, cliOption, firstPartyApi, firstPartyEnv, tempDir, testEnv } from "../support.js";

/** What the example prints: a one-turn answer, a loop's two steps and its answer, a stream. */
export const EXAMPLE_OUTPUT = ["7", "step: tool-calls", "step: stop", "It is sunny in Paris.", "Hello there!"];

function example(): string {
  const page = readFileSync(new URL("../../docs/guides/ai-sdk-provider.md", import.meta.url), "utf8");
  const code = /```ts\n([\s\S]*?)```/.exec(page)?.[1];
  expect(code, "a ts block on the page").toBeDefined();
  expect(code).toContain("createClaudeCode({ ");
  return code!.replace("createClaudeCode({ ", "createClaudeCode({ ...JSON.parse(process.env.PROVIDER_EXAMPLE_OPTIONS), ");
}

function script(request: RecordedRequest): ScriptedTurn {
  const body = JSON.stringify(request.body?.messages?.[0] ?? "");
  const step = (request.body?.messages ?? []).filter((m: { role: string }) => m.role === "assistant").length;
  if (body.includes("prime")) return turn.text("7");
  if (body.includes("weather")) return step === 0 ? turn.tools({ name: "mcp__ktx__weather", input: { city: "Paris" } }) : turn.text("It is sunny in Paris.");
  return turn.text("Hello there!");
}

/**
 * Runs the example from `dir` (a package, or an app that installed it, so `ktx-claude-code/provider` and `ai`
 * resolve from there as they would for a user); gives its output and the Messages requests it made.
 * `cliPath`: for an app installed without the CLI's platform package.
 */
export async function runProviderExample(dir: string, cliPath?: string) {
  const api = await firstPartyApi(script);
  const file = join(dir, `.provider-example-${process.pid}.mjs`);
  writeFileSync(file, example());
  try {
    const env = firstPartyEnv(api);
    const options = { env, warm: false, passEnv: TEST_PASS_ENV, ...cliOption(), ...(cliPath ? { cliPath } : {}) };
    const run = await execa(process.execPath, [file], { cwd: tempDir("project"), env: { ...testEnv(), HOME: env.HOME!, PROVIDER_EXAMPLE_OPTIONS: JSON.stringify(options) }, extendEnv: false, reject: false });
    return { stdout: run.stdout, stderr: run.stderr, exitCode: run.exitCode, messageRequests: api.messageRequests.length };
  } finally {
    rmSync(file, { force: true });
  }
}
