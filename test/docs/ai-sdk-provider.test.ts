/**
 * The example of docs/guides/ai-sdk-provider.md, run as the page has it (public imports, its own process) on
 * the real CLI against the scripted API on the first-party path: the only change is options a test needs,
 * spread in front of the provider's own (the test's environment with its login, no spares, pass-through names).
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, expect, it } from "vitest";
import { type RecordedRequest, type ScriptedTurn, turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, cleanup, cliOption, firstPartyApi, firstPartyEnv, remainingChildren, tempDir, testEnv } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const page = readFileSync(new URL("../../docs/guides/ai-sdk-provider.md", import.meta.url), "utf8");

function example(): string {
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

it("runs: one turn, a loop with the app's tool, a stream; everything reaped", { timeout: 180_000 }, async () => {
  const api = await firstPartyApi(script);
  // Inside the package, so `ktx-claude-code/provider` and `ai` resolve as they would for a user.
  const file = join(import.meta.dirname, `.provider-example-${process.pid}.mjs`);
  writeFileSync(file, example());
  try {
    const env = firstPartyEnv(api);
    const options = { env, warm: false, passEnv: TEST_PASS_ENV, ...cliOption() };
    const run = await execa(process.execPath, [file], { cwd: tempDir("project"), env: { ...testEnv(), HOME: env.HOME!, PROVIDER_EXAMPLE_OPTIONS: JSON.stringify(options) }, extendEnv: false, reject: false });
    expect(run.stderr).toBe("");
    expect(run.exitCode).toBe(0);
    expect(run.stdout.split("\n")).toEqual(["7", "step: tool-calls", "step: stop", "It is sunny in Paris.", "Hello there!"]);
  } finally {
    rmSync(file, { force: true });
  }
  expect(api.messageRequests).toHaveLength(4);
  expect(await remainingChildren()).toEqual([]);
});
