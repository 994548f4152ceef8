/**
 * Real accounts behind the interceptor, on by default (issue 45): a Console (API-key) login passes, with the
 * organisation requests it sends as essential traffic; a variant no recorded shape admits is refused as one.
 */
import { afterEach, expect, it } from "vitest";
import { IsolationError } from "../../src/errors/index.js";
import { turn } from "../../src/testing/scripted-api.js";
import { SCRIPTED_CONSOLE_KEY } from "../../src/testing/first-party.js";
import { cleanup, failure, firstPartyApi, realCli, remainingChildren, runtimeFor, script, testEnv } from "../support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

it("a Console (API-key) login: its x-api-key request and its policy_limits and settings fetches pass the interceptor (the default)", async () => {
  const api = await firstPartyApi([turn.text("OK")], { onExhausted: "repeat-last" });
  const env: Record<string, string> = { ...testEnv(), ...api.firstParty!.env() };
  api.firstParty!.login(env.HOME!, { console: true });
  const runtime = runtimeFor(api, { env });
  const result = await runtime.generateTextResult({ prompt: "hi" });
  expect(result.text).toBe("OK");
  expect(result.network?.interceptor).toBe("on");
  expect(result.login).toMatchObject({ billing: "api-key" });
  const seen = api.requests.map((request) => `${request.method} ${request.path}`);
  expect(seen).toEqual(expect.arrayContaining(["GET /api/claude_code/policy_limits", "GET /api/claude_code/settings", "POST /v1/messages"]));
  const [messages] = api.messageRequests;
  expect(messages!.headers["x-api-key"]).toBe(SCRIPTED_CONSOLE_KEY);
  expect(messages!.headers.authorization).toBeUndefined();
  expect(api.firstParty!.refused).toEqual([]);
  await runtime.close();
}, 60_000);

it("a newer model's beta (per-turn-control) on a model the version's shape records without it is refused as text the call did not give, naming wire: false, with 0 requests at the API", async () => {
  const api = await firstPartyApi([turn.text("should not be reached")]);
  const env: Record<string, string> = { ...testEnv(), ...api.firstParty!.env() };
  api.firstParty!.login(env.HOME!, { console: true });
  // The CLI's own ANTHROPIC_BETAS adds the beta as a newer model does (the library never passes the variable: a wrapper does).
  // The shape records it for the models that send it (shape-variants.ts), so on claude-sonnet-4-6 it is no CLI variant.
  const variant = script("claude-5-5-beta", `export ANTHROPIC_BETAS=per-turn-control-2026-07-01\nexec '${realCli()}' "$@"`);
  const error = await failure(runtimeFor(api, { env, cliPath: variant }).generateText({ prompt: "hi" }));
  expect(error).toBeInstanceOf(IsolationError);
  expect(error!.message).toMatch(/beta "per-turn-control-2026-07-01" is not one the CLI version sends/);
  expect(error!.message).not.toMatch(/a CLI variant for your account or model/);
  expect(error!.message).toMatch(/Text the call did not give: .*`wire: false` turns the check off/);
  expect(api.messageRequests).toHaveLength(0);
}, 60_000);
