/**
 * Issue 40, finding 4: secrets in clear. (a) `\u`-escaped secrets in an imported raw capture
 * (`\u0041KIA…`, `sk-\u0061nt-…`, `ghp_\u0052…`) were "redacted in 0": redaction now matches the
 * decoded text too. (b) With `includePartialMessages`, a key streamed in two `stream_event` deltas kept
 * its second half in clear (25 of 64 characters): each delta is now redacted against its block's
 * earlier text, in a recording and in an import.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { transcriptCommand } from "../../src/cli/transcript.js";
import { Redactor } from "../../src/transcripts/redact.js";
import { openRunTranscript } from "../../src/transcripts/recorder.js";
import { tempDir } from "../support.js";

const INIT = { type: "system", subtype: "init", cwd: "/p", session_id: "s", tools: [], mcp_servers: [], model: "claude-sonnet-4-6", claude_code_version: "2.1.330" };

async function importCapture(lines: string[]): Promise<{ written: string; stderr: string }> {
  const capture = join(tempDir("capture"), "run.ndjson");
  writeFileSync(capture, `${lines.join("\n")}\n`);
  const out = join(tempDir("imported"), "run.jsonl");
  let stderr = "";
  const status = await transcriptCommand(["import", capture, "--out", out], { stdout: () => undefined, stderr: (text) => void (stderr += text) }, "usage");
  expect(status, stderr).toBe(0);
  return { written: readFileSync(out, "utf8"), stderr };
}

describe("\\u-escaped secrets are redacted (finding 4)", () => {
  const AWS = "AKIAIOSFODNN7CAPTUR2";
  const ANTHROPIC = "sk-ant-api03-EscapedKey0123456789abcdefXYZ";
  const GITHUB = "ghp_RscapedGithubToken0123456789abcdefAB";

  it("transcript import of a capture holding \\u0041KIA…, sk-\\u0061nt-… and ghp_\\u0052… (and one level deeper) redacts them and counts the lines", async () => {
    const toolResult = (content: string) => JSON.stringify({ type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content }] } });
    const escapedOnce = toolResult(`aws ${AWS} key ${ANTHROPIC} gh ${GITHUB}`).replace("AKIA", "\\u0041KIA").replace("sk-ant", "sk-\\u0061nt").replace("ghp_R", "ghp_\\u0052");
    // A tool's own JSON output inside the line: the escape is itself escaped (`\\u0041`).
    const escapedTwice = toolResult(JSON.stringify({ log: `aws ${AWS}` }).replace("AKIA", "\\u0041KIA"));
    expect(escapedOnce).toContain("\\u0041KIA");
    expect(escapedTwice).toContain("\\\\u0041KIA");
    const { written, stderr } = await importCapture([JSON.stringify(INIT), escapedOnce, escapedTwice]);
    for (const secret of [AWS, ANTHROPIC, GITHUB]) {
      expect(written, secret).not.toContain(secret.slice(5));
      expect(written, secret).not.toContain(secret);
    }
    expect(JSON.parse(written.split("\n")[0]!).redacted).toMatchObject({ linesChanged: 2 });
    expect(stderr).toMatch(/secrets redacted in 2 of them/);
  });

  it("a line whose escapes hide no secret is recorded as it was, escapes and all", () => {
    const line = JSON.stringify({ type: "assistant", text: "caf\u00e9" }).replace("caf\u00e9", "caf\\u00e9 \\u0041BC \\u0022quoted\\u0022");
    expect(new Redactor([]).redact(line)).toBe(line);
  });
});

/** One CLI `stream_event` line. */
const streamEvent = (event: object, index = 0) => JSON.stringify({ type: "stream_event", event: { index, ...event }, session_id: "s", parent_tool_use_id: null, uuid: `u-${Math.random()}` });
const delta = (text: string, index = 0) => streamEvent({ type: "content_block_delta", delta: { type: "text_delta", text } }, index);
const streamed = (pieces: string[]) => [
  streamEvent({ type: "message_start", message: { id: "msg_1", content: [] } }),
  streamEvent({ type: "content_block_start", content_block: { type: "text", text: "" } }),
  ...pieces.map((piece) => delta(piece)),
  streamEvent({ type: "content_block_stop" }),
];

/** The text of a transcript's recorded deltas, joined: what a reader of the file can put together. */
function streamedText(written: string): string {
  return written
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line))
    .filter((record) => record.kind === "in")
    .map((record) => JSON.parse(record.text))
    .filter((message) => message.type === "stream_event" && message.event.type === "content_block_delta")
    .map((message) => message.event.delta.text)
    .join("");
}

/** A 64-character key: `sk-ant-api03-` and 51 more. */
const KEY = `sk-ant-api03-${"Zq9Xk2Lm8Np4Rs6Tv1Wy3Ab5Cd7Ef0Gh2Ij4Kl6Mn8Op1Qr3St5U"}`;

describe("a key streamed in several deltas leaves no fragment in clear (finding 4)", () => {
  const splits: Record<string, string[]> = {
    "two deltas (39 + 25 characters)": [`the key is ${KEY.slice(0, 39)}`, `${KEY.slice(39)} (keep it safe)`],
    "three deltas, the middle one holding no prefix": [`the key is ${KEY.slice(0, 20)}`, KEY.slice(20, 42), `${KEY.slice(42)} (keep it safe)`],
    "one character per delta": [`the key is `, ...KEY.split(""), " (keep it safe)"],
    "a GitHub token cut after its prefix": ["token ghp_", "0123456789abcdefghijABCDEFGHIJ012345", " (keep it safe)"],
  };

  for (const [name, pieces] of Object.entries(splits)) {
    const secret = pieces.join("").replace(/^(the key is |token )/, "").replace(" (keep it safe)", "");
    // The part after the shape's public prefix: none of it may be read, in one record or across the deltas.
    const body = secret.startsWith("ghp_") ? secret.slice(4) : secret.slice(13);
    const check = (written: string) => {
      const recorded = streamedText(written);
      for (let at = 0; at + 4 <= body.length; at += 1) expect(recorded, `the deltas as recorded: ${recorded}`).not.toContain(body.slice(at, at + 4));
      for (let at = 0; at + 8 <= body.length; at += 1) expect(written).not.toContain(body.slice(at, at + 8));
      expect(recorded).toContain("(keep it safe)");
    };

    it(`in a recording: ${name}`, async () => {
      const transcript = await openRunTranscript(tempDir("transcripts"), { secrets: [] });
      for (const line of streamed(pieces)) transcript.observer.wire!("in", line);
      await transcript.close();
      check(readFileSync(transcript.path, "utf8"));
    });

    it(`in an imported capture: ${name}`, async () => {
      check((await importCapture([JSON.stringify(INIT), ...streamed(pieces)])).written);
    });
  }
});
