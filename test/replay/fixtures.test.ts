/**
 * Replay: every recorded golden fixture (fixtures/transcripts/<cli-version>/<scenario>.jsonl) is
 * played back by the stand-in CLI against the runtime, which must reach the outcome the live run had.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CliCrashError } from "../../src/errors/index.js";
import { ClaudeCodeRuntime } from "../../src/runtime/runtime.js";
import { createReplayCli } from "../../src/testing/replay.js";
import { SCENARIOS, findScenario, runScenario } from "../../src/testing/scenarios.js";
import { loadTranscript } from "../../src/transcripts/reader.js";
import { cleanup, remainingChildren, tempDir } from "../support.js";

const ROOT = join(import.meta.dirname, "../../fixtures/transcripts");
const versions = readdirSync(ROOT).filter((name) => /^\d+\.\d+\.\d+$/.test(name));

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

function recordedOutcome(path: string) {
  const outcome = loadTranscript(path).records.find((record) => record.kind === "outcome");
  if (!outcome || outcome.kind !== "outcome") throw new Error(`${path} has no outcome record`);
  return outcome.outcome;
}

describe("golden fixtures", () => {
  it("cover every scenario of the catalog for at least 2.1.142 and 2.1.330", () => {
    expect(versions).toEqual(expect.arrayContaining(["2.1.142", "2.1.330"]));
    for (const version of versions) {
      for (const scenario of SCENARIOS) expect(existsSync(join(ROOT, version, `${scenario.name}.jsonl`)), `${version}/${scenario.name}`).toBe(true);
    }
  });

  for (const version of versions) {
    describe(`CLI ${version}`, () => {
      for (const scenario of SCENARIOS) {
        it(`replays ${scenario.name} to the recorded outcome`, async () => {
          const path = join(ROOT, version, `${scenario.name}.jsonl`);
          const outcome = await runScenario(scenario, { cliPath: createReplayCli(path, tempDir("replay")), fakeEndpoint: true });
          expect(outcome).toEqual(recordedOutcome(path));
        });
      }
    });
  }
});

describe("the replayer", () => {
  const textFixture = join(ROOT, "2.1.330", "text.jsonl");

  it("reports a divergence with the recorded line, expected and actual", async () => {
    const runtime = new ClaudeCodeRuntime({
      projectDir: tempDir("project"),
      models: { default: "sonnet" },
      cliPath: createReplayCli(textFixture, tempDir("replay")),
      env: { PATH: process.env.PATH ?? "" },
      apiEndpoint: { baseUrl: "http://127.0.0.1:9", apiKey: "sk-test" },
      warm: false,
    });
    const error = (await runtime.generateText({ prompt: "a different prompt", system: "You are a KTX test." }).catch((e: unknown) => e)) as CliCrashError;
    expect(error).toBeInstanceOf(CliCrashError);
    expect(error.exitCode).toBe(86);
    expect(error.stderrTail).toMatch(/diverged: host line does not match the recording at line \d+/);
    expect(error.stderrTail).toContain('"text":"a different prompt"');
    expect(error.stderrTail).toContain('"text":"say hello"');
  });

  it("refuses a call whose CLI arguments differ from the recording", async () => {
    const outcome = await runScenario(
      { ...findScenario("text"), name: "text" },
      { cliPath: createReplayCli(textFixture, tempDir("replay")), fakeEndpoint: true, extra: { models: { default: "opus" } } },
    );
    expect(outcome).toMatchObject({ error: "CliCrashError" });
  });
});
