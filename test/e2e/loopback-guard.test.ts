/** The suite's loopback guard (test/loopback-guard.ts) really catches a CLI that reaches for another host. */
import { afterEach, expect, inject, it } from "vitest";
import { SELF_TEST_HOST } from "../loopback-guard.js";
import { cleanup, remainingChildren, runtimeFor, testEnv } from "../support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

it("routes a CLI's connection to a non-loopback host into the trap, where it is refused and recorded", async () => {
  // An explicit endpoint off loopback (the only way to point the CLI elsewhere); no retries, so it fails fast.
  const runtime = runtimeFor(undefined, {
    apiEndpoint: { baseUrl: `https://${SELF_TEST_HOST}`, apiKey: "sk-test-guard" },
    env: testEnv({ CLAUDE_CODE_MAX_RETRIES: "0" }),
  });
  const error = await runtime.generateTextResult({ prompt: "hi" }).catch((caught: unknown) => caught);
  expect((error as Error).name).toBe("ClaudeCodeApiError");
  const attempts = (await (await fetch(`${inject("trapProxyUrl")}/__attempts`)).json()) as string[];
  expect(attempts).toContain(`CONNECT ${SELF_TEST_HOST}:443`);
});
