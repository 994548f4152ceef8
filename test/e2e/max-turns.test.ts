/** MaxTurnsError on the real CLI: the allowed count as given, and the transcript that was written. */
import { existsSync } from "node:fs";
import { afterEach, expect, it } from "vitest";
import { MaxTurnsError } from "../../src/errors/index.js";
import { turn } from "../../src/testing/scripted-api.js";
import { lookup } from "../../src/testing/scenarios.js";
import { cleanup, firstPartyApi, remainingChildren, runtimeFor, tempDir } from "../support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

it("names the allowed count for --max-turns=1 (the CLI reports num_turns 2) and carries the transcript path", async () => {
  const api = await firstPartyApi([turn.tools({ name: "mcp__ktx__lookup", input: { term: "again" } })], { onExhausted: "repeat-last" });
  const error = await runtimeFor(api)
    .generateText({ prompt: "keep looking", tools: [lookup], maxTurns: 1, transcript: { dir: tempDir("transcripts"), name: "budget" } })
    .then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(MaxTurnsError);
  expect((error as MaxTurnsError).maxTurns).toBe(1);
  expect((error as Error).message).toMatch(/used all 1 model turns? it was allowed/);
  expect((error as MaxTurnsError).transcriptPath).toMatch(/budget\.jsonl$/);
  expect(existsSync((error as MaxTurnsError).transcriptPath!)).toBe(true);
});
