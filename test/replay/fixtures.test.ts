/**
 * Replay: every recorded golden fixture (fixtures/transcripts/<cli-version>/<scenario>.jsonl) is
 * played back by the stand-in CLI against the runtime, which must reach the outcome the live run had.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { CliCrashError, IsolationError, ProtocolError } from "../../src/errors/index.js";
import { ClaudeCodeRuntime } from "../../src/claude-code/runtime.js";
import { createReplayCli, REPLAY_CLI_SCRIPT } from "../../src/testing/replay.js";
import { SCENARIOS, runScenario } from "../../src/testing/scenarios.js";
import { SCENARIO_NAMES } from "../../src/testing/scenario-names.js";
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

/** A runtime whose CLI is the replay of `fixture` (recorded with "sonnet", sent as its pinned id claude-sonnet-4-6). */
const replayRuntime = (fixture: string, models = { default: "sonnet" }) =>
  new ClaudeCodeRuntime({
    projectDir: tempDir("project"),
    models,
    cliPath: createReplayCli(fixture, tempDir("replay")),
    env: { PATH: process.env.PATH ?? "" },
    apiEndpoint: { baseUrl: "http://127.0.0.1:9", apiKey: "sk-test-scripted" },
    warm: false, reuse: false,
  });

/** The text scenario's call; returns the error it must fail with. */
const failingText = (runtime: ClaudeCodeRuntime, prompt = "say hello") =>
  runtime.generateTextResult({ prompt, system: "You are a KTX test." }).then(
    () => {
      throw new Error("the call succeeded");
    },
    (error: unknown) => error,
  );

describe("golden fixtures", () => {
  it("cover every scenario of the catalog for at least 2.1.142 and 2.1.330", () => {
    expect(versions).toEqual(expect.arrayContaining(["2.1.142", "2.1.330"]));
    // The names `fixtures compare|record` check --scenarios against before loading the catalog.
    expect(SCENARIOS.map((scenario) => scenario.name)).toEqual(SCENARIO_NAMES);
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

  it("answers --version from its shell wrapper exactly as the stand-in itself does", async () => {
    const wrapper = createReplayCli(textFixture, tempDir("replay"));
    const fromShell = await execa(wrapper, ["--version"]);
    const fromNode = await execa(process.execPath, [REPLAY_CLI_SCRIPT, textFixture, "--version"]);
    expect(fromShell.stdout).toBe("2.1.330 (Claude Code)");
    expect(fromShell.stdout).toBe(fromNode.stdout);
    // A transcript without a readable header goes to the stand-in, which reports it.
    const headless = join(tempDir("replay"), "headless.jsonl");
    writeFileSync(headless, "not json\n");
    const failed = await execa(createReplayCli(headless, tempDir("replay")), ["--version"], { reject: false });
    expect(failed.exitCode).not.toBe(0);
    expect(failed.stdout).toBe("");
  });

  it("reports a divergence with the recorded line, expected and actual", async () => {
    const error = (await failingText(replayRuntime(textFixture), "a different prompt")) as CliCrashError;
    expect(error).toBeInstanceOf(CliCrashError);
    expect(error.exitCode).toBe(86);
    expect(error.stderrTail).toMatch(/diverged: host line does not match the recording at line \d+/);
    expect(error.stderrTail).toContain('"text":"a different prompt"');
    expect(error.stderrTail).toContain('"text":"say hello"');
  });

  it("refuses a call whose CLI arguments differ from the recording, naming the missing and unexpected arguments", async () => {
    const error = (await failingText(replayRuntime(textFixture, { default: "opus" }))) as CliCrashError;
    expect(error).toBeInstanceOf(CliCrashError);
    expect(error.exitCode).toBe(86);
    expect(error.stderrTail).toContain("diverged: arguments differ from the recording");
    expect(error.stderrTail).toContain('missing: ["--model=claude-sonnet-4-6"]');
    expect(error.stderrTail).toContain('unexpected: ["--model=claude-opus-4-7"]');
  });
});

describe("a tampered recording", () => {
  const textFixture = join(ROOT, "2.1.330", "text.jsonl");

  /** A copy of `fixture` whose recorded `system/init` line went through `edit`. */
  function tamperInit(fixture: string, edit: (init: Record<string, unknown>) => Record<string, unknown>): string {
    const lines = readFileSync(fixture, "utf8").split("\n");
    const index = lines.findIndex((line) => line.includes('"kind":"in"') && line.includes('\\"subtype\\":\\"init\\"'));
    expect(index).toBeGreaterThan(0);
    const record = JSON.parse(lines[index]!);
    const before = record.text;
    record.text = JSON.stringify(edit(JSON.parse(record.text)));
    expect(record.text).not.toBe(before);
    lines[index] = JSON.stringify(record);
    const path = join(tempDir("tampered"), "text.jsonl");
    writeFileSync(path, lines.join("\n"));
    return path;
  }

  it("with `tools` renamed to `tool_list` in init is stopped as a ProtocolError naming the missing field and quoting the line", async () => {
    // Renamed in place, so the field keeps its position in the line.
    const path = tamperInit(textFixture, (init) => Object.fromEntries(Object.entries(init).map(([key, value]) => [key === "tools" ? "tool_list" : key, value])));
    const error = (await failingText(replayRuntime(path))) as ProtocolError;
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toContain("does not match the stream-json protocol");
    // zod's report names the path of the field that is missing.
    expect(error.message).toMatch(/expected array, received undefined\s*→ at tools/);
    expect(error.message).toMatch(/Line: \{"type":"system","subtype":"init".*"tool_list":\[\]/);
  });

  it("with a second MCP server in init is stopped as an IsolationError naming the servers", async () => {
    const path = tamperInit(textFixture, (init) => ({ ...init, mcp_servers: [{ name: "filesystem", status: "connected" }] }));
    const error = (await failingText(replayRuntime(path))) as IsolationError;
    expect(error).toBeInstanceOf(IsolationError);
    expect(error.differences).toEqual(['mcp_servers were ["filesystem"], expected []']);
  });
});
