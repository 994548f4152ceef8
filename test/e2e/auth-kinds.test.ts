/**
 * `auth` kinds apiKey and oauthToken on the real CLI, first-party path behind the interceptor (on by default),
 * against the scripted API's front. The user's own claude.ai login sits in HOME and every provider's variables
 * in the caller's environment: the chosen credential is the one sent, the child's environment holds it and
 * nothing else of the caller's, and the result and transcript header name the kind.
 */
import { afterEach, expect, it } from "vitest";
import { loadTranscript } from "../../src/transcripts/reader.js";
import { turn } from "../../src/testing/scripted-api.js";
import { SCRIPTED_ACCESS_TOKEN } from "../../src/testing/first-party.js";
import type { AuthOption } from "../../src/transport/auth.js";
import { createKtxClaudeCodeEnv } from "../../src/transport/env.js";
import { TEST_PASS_ENV, cleanup, firstPartyApi, firstPartyEnv, remainingChildren, runtimeFor, tempDir } from "../support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

/** What a caller's environment may hold beside the test's own: every other provider's variables and an application secret. */
const PLANTED: Record<string, string> = {
  ANTHROPIC_API_KEY: "sk-ant-api03-planted-caller-key",
  ANTHROPIC_BASE_URL: "http://127.0.0.1:9/planted",
  AWS_REGION: "eu-west-1",
  AWS_ACCESS_KEY_ID: "AKIAPLANTED",
  AWS_SECRET_ACCESS_KEY: "planted-aws-secret",
  CLAUDE_CODE_USE_BEDROCK: "1",
  CLOUD_ML_REGION: "us-east5",
  ANTHROPIC_VERTEX_PROJECT_ID: "planted-project",
  ANTHROPIC_FOUNDRY_API_KEY: "planted-foundry-key",
  CLAUDE_CODE_OAUTH_TOKEN: "sk-ant-oat01-planted-caller-token",
  DB_PASSWORD: "Pg-s3cret-Passw0rd",
};

/** The interceptor's own proxy and CA variables, which replace the caller's (env.ts `interceptedEnv`). */
const INTERCEPTOR_NAMES = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NODE_EXTRA_CA_CERTS"];

/** Names compared as the transcript header lists them (one per name, whatever its case). */
const upper = (names: readonly string[]) => [...new Set(names.map((name) => name.toUpperCase()))].sort();

async function runWith(auth: AuthOption) {
  const api = await firstPartyApi([turn.text("OK")]);
  const env = firstPartyEnv(api, PLANTED);
  const dir = tempDir("transcripts");
  const runtime = runtimeFor(api, { env, auth, transcript: { dir } });
  const result = await runtime.generateTextResult({ prompt: "hi" });
  await runtime.close();
  const transcript = loadTranscript(result.transcriptPath!);
  const expectedNames = upper([...Object.keys(createKtxClaudeCodeEnv(env, { auth, passEnv: TEST_PASS_ENV })), ...INTERCEPTOR_NAMES]);
  return { api, result, transcript, expectedNames };
}

it("apiKey: the key given is sent as x-api-key (not the claude.ai login in HOME, not the caller's ANTHROPIC_API_KEY); the child gets it and nothing else of the caller's", async () => {
  const key = "sk-ant-api03-auth-option-key";
  const { api, result, transcript, expectedNames } = await runWith({ kind: "apiKey", apiKey: key });
  expect(result.text).toBe("OK");
  expect(result.network?.interceptor).toBe("on");
  expect(result.login).toMatchObject({ billing: "api-key", source: "ANTHROPIC_API_KEY", auth: "apiKey" });
  expect(transcript.header.login).toMatchObject({ billing: "api-key", auth: "apiKey" });
  const [messages] = api.messageRequests;
  expect(messages!.headers["x-api-key"]).toBe(key);
  expect(messages!.headers.authorization).toBeUndefined();
  const names = upper(transcript.header.envNames);
  expect(names).toEqual(expectedNames);
  expect(names).toContain("ANTHROPIC_API_KEY");
  for (const planted of Object.keys(PLANTED).filter((name) => name !== "ANTHROPIC_API_KEY")) expect(names).not.toContain(planted);
  expect(api.firstParty!.refused).toEqual([]);
  // The key is redacted in the transcript.
  expect(JSON.stringify(transcript)).not.toContain(key);
}, 90_000);

it("oauthToken: the token given is sent as the bearer (not the claude.ai login in HOME, not the caller's token variable); the child gets it and nothing else of the caller's", async () => {
  const token = "sk-ant-oat01-auth-option-setup-token";
  const { api, result, transcript, expectedNames } = await runWith({ kind: "oauthToken", token });
  expect(result.text).toBe("OK");
  expect(result.network?.interceptor).toBe("on");
  expect(result.login).toMatchObject({ billing: "subscription", source: "CLAUDE_CODE_OAUTH_TOKEN", auth: "oauthToken" });
  expect(transcript.header.login).toMatchObject({ billing: "subscription", auth: "oauthToken" });
  const [messages] = api.messageRequests;
  expect(messages!.headers.authorization).toBe(`Bearer ${token}`);
  expect(messages!.headers.authorization).not.toContain(SCRIPTED_ACCESS_TOKEN);
  expect(messages!.headers["x-api-key"]).toBeUndefined();
  const names = upper(transcript.header.envNames);
  expect(names).toEqual(expectedNames);
  expect(names).toContain("CLAUDE_CODE_OAUTH_TOKEN");
  for (const planted of Object.keys(PLANTED).filter((name) => name !== "CLAUDE_CODE_OAUTH_TOKEN")) expect(names).not.toContain(planted);
  expect(JSON.stringify(transcript)).not.toContain(token);
}, 90_000);
