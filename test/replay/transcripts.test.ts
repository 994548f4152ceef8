/** The recorder, redaction on a real run, and the inspection helpers, driven through the replay stand-in. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ClaudeCodeRuntime } from "../../src/runtime/runtime.js";
import { createReplayCli } from "../../src/testing/replay.js";
import { diffTranscripts, isEmptyDiff, renderTranscript, summarizeTranscript } from "../../src/transcripts/inspect.js";
import { loadTranscript } from "../../src/transcripts/reader.js";
import { cleanup, remainingChildren, tempDir } from "../support.js";

const ROOT = join(import.meta.dirname, "../../fixtures/transcripts");

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

describe("recording a run", () => {
  it("writes a header with env names only, every line both ways with rising offsets, and the exit; secrets are redacted", async () => {
    const dir = tempDir("transcripts");
    const secret = "sk-ant-planted-secret-0123456789";
    const runtime = new ClaudeCodeRuntime({
      projectDir: tempDir("project"),
      models: { default: "sonnet" },
      cliPath: createReplayCli(join(ROOT, "2.1.330", "text.jsonl"), tempDir("replay")),
      env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent", MY_SERVICE_TOKEN: secret },
      apiEndpoint: { baseUrl: "http://127.0.0.1:9", apiKey: "sk-test-scripted" },
      warm: false,
    });
    const result = await runtime.generateText({ prompt: "say hello", system: "You are a KTX test.", transcript: { dir, name: "run" } });
    expect(result.transcriptPath).toBe(join(dir, "run.jsonl"));
    const raw = readFileSync(result.transcriptPath!, "utf8");
    expect(raw).not.toContain(secret);
    const transcript = loadTranscript(result.transcriptPath!);
    expect(transcript.header.envNames).toEqual(expect.arrayContaining(["PATH", "HOME", "MY_SERVICE_TOKEN", "ANTHROPIC_API_KEY", "DISABLE_AUTOUPDATER"]));
    expect(JSON.stringify(transcript.header)).not.toContain("sk-test-scripted");
    const kinds = transcript.records.map((record) => record.kind);
    expect(kinds[0]).toBe("header");
    expect(kinds.at(-1)).toBe("exit");
    expect(kinds).toContain("in");
    expect(kinds).toContain("out");
    const offsets = transcript.records.flatMap((record) => ("t" in record ? [Number(record.t)] : []));
    expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
    const summary = summarizeTranscript(transcript);
    expect(summary.result).toMatchObject({ subtype: "success", isError: false });
    expect(summary.messages.toCli).toMatchObject({ "control_request/initialize": 1, user: 1 });
  });
});

describe("inspection", () => {
  const loop = loadTranscript(join(ROOT, "2.1.330", "tool-loop.jsonl"));

  it("renders one line per record with direction arrows and message keys", () => {
    const lines = renderTranscript(loop);
    expect(lines.some((line) => /<< control_request\/mcp_message\/tools\/call/.test(line))).toBe(true);
    expect(lines.some((line) => /<< assistant +tool_use mcp__ktx__lookup/.test(line))).toBe(true);
    expect(lines.some((line) => /exit code=0/.test(line))).toBe(true);
  });

  it("summarises tool calls and the result", () => {
    const summary = summarizeTranscript(loop);
    expect(summary.toolCalls).toEqual([{ name: "mcp__ktx__lookup", isError: false }, { name: "mcp__ktx__count", isError: false }]);
    expect(summary.outcome).toMatchObject({ stopReason: "natural" });
  });

  it("finds no difference between a transcript and itself, and real differences between CLI versions", () => {
    expect(isEmptyDiff(diffTranscripts(loop, loop))).toBe(true);
    const old = loadTranscript(join(ROOT, "2.1.142", "tool-loop.jsonl"));
    const diff = diffTranscripts(loop, old);
    expect(diff.controlRequests?.after.filter((key) => key === "control_request/mcp_message/initialize")).toHaveLength(2);
    expect(diff.removedFields["system/init"]).toEqual(expect.arrayContaining(["capabilities"]));
  });
});
