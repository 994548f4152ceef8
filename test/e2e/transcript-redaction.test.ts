/** Planted secrets never reach a transcript: in our lines, the CLI's lines, and its stderr (real CLI). */
import { readFileSync } from "node:fs";
import { afterEach, expect, it } from "vitest";
import { REDACTED } from "../../src/transcripts/redact.js";
import { turn } from "../../src/testing/scripted-api.js";
import { SCRIPTED_ACCESS_TOKEN } from "../../src/testing/first-party.js";
import { cleanup, firstPartyApi, firstPartyEnv, realCli, remainingChildren, runtimeFor, script, tempDir } from "../support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

it("redacts credential values and token shapes in every direction", async () => {
  const apiKey = "sk-ant-api03-PLANTED-parent-key-0123456789";
  const oauth = "planted-oauth-token-value-abcdef";
  const api = await firstPartyApi([turn.text(`echoing ${apiKey} and Bearer abcdefghijklmnopqrstuvwxyz`)]);
  const noisy = script("claude-noisy", `echo "debug: using ${oauth}" >&2\nexec '${realCli()}' "$@"`);
  const runtime = runtimeFor(api, {
    cliPath: noisy,
    // The first-party path: the login's own token is a secret the transcript must not hold either.
    env: firstPartyEnv(api, { ANTHROPIC_API_KEY: apiKey, CLAUDE_CODE_OAUTH_TOKEN: oauth }),
    transcript: { dir: tempDir("transcripts") },
  });
  const result = await runtime.generateTextResult({ prompt: `my key is ${apiKey}`, system: `token ${oauth}` });
  const text = readFileSync(result.transcriptPath!, "utf8");
  for (const secret of [apiKey, oauth, SCRIPTED_ACCESS_TOKEN, "abcdefghijklmnopqrstuvwxyz"]) expect(text).not.toContain(secret);
  const records = text.trim().split("\n").map((line) => JSON.parse(line) as { kind: string; text?: string });
  for (const kind of ["out", "in", "stderr"]) {
    expect(records.some((record) => record.kind === kind && record.text?.includes(REDACTED)), kind).toBe(true);
  }
});
