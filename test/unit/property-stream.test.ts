/** Property tests: random splits, junk and odd-but-valid messages never crash, hang or lose a line. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { CliCrashError } from "../../src/errors/index.js";
import { INFORMATIONAL_TYPES, parseCliMessage } from "../../src/protocol/messages.js";
import { initializeRequest } from "../../src/protocol/outbound.js";
import { PooledProcess } from "../../src/session/pooled-process.js";
import { NdjsonFramer } from "../../src/transport/ndjson.js";
import { cleanup, remainingChildren, tempDir, testEnv } from "../support.js";

const STAND_IN = join(import.meta.dirname, "../fixtures/stand-in-cli.mjs");

/** Splits `bytes` at the given cut points (sorted, deduplicated, in range). */
function split(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const point of points) {
    chunks.push(bytes.subarray(start, point));
    start = point;
  }
  chunks.push(bytes.subarray(start));
  return chunks;
}

function frameAll(chunks: Buffer[], limit?: number) {
  const lines: string[] = [];
  let oversized = 0;
  const framer = new NdjsonFramer({ line: (line) => lines.push(line), oversized: () => (oversized += 1) }, limit);
  for (const chunk of chunks) framer.push(chunk);
  framer.end();
  return { lines, oversized };
}

/** What framing must give, computed without the framer: split on `\n`, limit on raw bytes, drop one trailing `\r` and empty lines. */
function expectedFraming(bytes: Buffer, limit: number) {
  const lines: string[] = [];
  let oversized = 0;
  let start = 0;
  while (start < bytes.length) {
    const newline = bytes.indexOf(0x0a, start);
    const segment = bytes.subarray(start, newline === -1 ? bytes.length : newline);
    start = newline === -1 ? bytes.length : newline + 1;
    if (segment.length > limit) oversized += 1;
    else {
      const end = segment.at(-1) === 0x0d ? segment.length - 1 : segment.length;
      if (end > 0) lines.push(segment.toString("utf8", 0, end));
    }
  }
  return { lines, oversized };
}

const jsonValue = fc.jsonValue({ maxDepth: 3 });
const text = fc.string({ unit: "binary", maxLength: 40 });
/** Messages of every kind the session hands on (no control messages: those are answered, not delivered). */
const validMessage = fc.oneof(
  fc.record({
    type: fc.constant("assistant"),
    message: fc.record({ id: fc.string(), content: fc.array(fc.record({ type: fc.constant("text"), text }), { maxLength: 3 }) }),
    parent_tool_use_id: fc.constant(null),
    extra: jsonValue,
  }),
  fc.record({ type: fc.constant("user"), message: fc.record({ role: fc.constant("user"), content: text }), parent_tool_use_id: fc.constant(null) }),
  fc.record({ type: fc.constant("system"), subtype: fc.constantFrom("status", "compact_boundary", "api_retry"), session_id: text }),
  fc.record({ type: fc.constant("stream_event"), event: jsonValue }),
  fc.record({ type: fc.constant("keep_alive") }),
  fc.record({ type: fc.constantFrom(...INFORMATIONAL_TYPES), data: jsonValue }),
  fc.record({ type: fc.constantFrom("zzz_future", "hologram"), payload: jsonValue }),
);
/** A line that is never JSON (the `~`), in valid Unicode so it survives the UTF-8 round trip unchanged. */
const junkLine = fc.string({ unit: "grapheme", maxLength: 60 }).map((value) => `~${value.replace(/[\n\r]/g, " ")}`);
const stream = fc.array(fc.oneof(validMessage.map((message) => ({ message })), junkLine.map((junk) => ({ junk }))), { maxLength: 12 });
const lineOf = (item: { message: unknown } | { junk: string }) => ("junk" in item ? item.junk : JSON.stringify(item.message));

const oddMessage = fc.oneof(
  fc.record({ type: fc.constantFrom("assistant", "user", "result", "system", "control_request", "control_response", "stream_event", "keep_alive", "zzz_future") }, { requiredKeys: [] }),
  fc.dictionary(fc.string(), jsonValue),
  fc.record({ type: fc.constant("result"), subtype: fc.string(), is_error: fc.boolean(), extra: jsonValue }),
  fc.record({ type: fc.constant("system"), subtype: fc.string(), session_id: fc.string() }),
);

describe("NDJSON framing under random chunking", () => {
  it("delivers exactly the non-empty lines, in order, however the bytes are split", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "binary" }).map((s) => s.replace(/[\n\r]/g, " ")), { maxLength: 30 }), fc.array(fc.nat(), { maxLength: 20 }), (texts, cuts) => {
        const bytes = Buffer.from(texts.map((text) => `${text}\n`).join(""));
        const { lines } = frameAll(split(bytes, cuts));
        expect(lines).toEqual(texts.filter((text) => text.length > 0));
      }),
    );
  });

  it("turns binary junk into exactly the lines and oversized reports a plain split predicts", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2_000 }), fc.array(fc.nat(), { maxLength: 20 }), fc.integer({ min: 1, max: 64 }), (junk, cuts, limit) => {
        const bytes = Buffer.from(junk);
        expect(frameAll(split(bytes, cuts), limit)).toEqual(expectedFraming(bytes, limit));
      }),
    );
  });

  it("keeps ASCII lines up to the limit intact and reports longer ones", () => {
    const asciiLine = fc.string({ unit: fc.integer({ min: 32, max: 126 }).map((code) => String.fromCharCode(code)), minLength: 1, maxLength: 80 });
    fc.assert(
      fc.property(fc.array(asciiLine, { maxLength: 30 }), fc.array(fc.nat(), { maxLength: 20 }), fc.integer({ min: 1, max: 64 }), (texts, cuts, limit) => {
        const { lines, oversized } = frameAll(split(Buffer.from(texts.map((text) => `${text}\n`).join("")), cuts), limit);
        expect(lines).toEqual(texts.filter((text) => text.length <= limit));
        expect(oversized).toBe(texts.filter((text) => text.length > limit).length);
      }),
    );
  });
});

describe("message parsing of odd but valid JSON", () => {
  it("classifies every JSON line without throwing, keeping every field of known and unknown types", () => {
    const known = new Set(["assistant", "user", "result", "system", "control_request", "control_response", "control_cancel_request", "stream_event", "keep_alive", ...INFORMATIONAL_TYPES]);
    fc.assert(
      fc.property(fc.array(oddMessage, { maxLength: 20 }), fc.array(fc.nat(), { maxLength: 10 }), (messages, cuts) => {
        const bytes = Buffer.from(messages.map((message) => `${JSON.stringify(message)}\n`).join(""));
        const { lines } = frameAll(split(bytes, cuts));
        expect(lines).toHaveLength(messages.length);
        lines.forEach((line, index) => {
          const sent = JSON.parse(JSON.stringify(messages[index]));
          const parsed = parseCliMessage(JSON.parse(line));
          // A known type is checked against its schema (valid or invalid), never passed through as unknown.
          expect(parsed.kind === "unknown_message").toBe(!known.has(sent.type));
          expect(parsed.kind === "invalid" ? parsed.value : parsed.message).toEqual(sent);
        });
      }),
    );
  });

  it("delivers every valid message of a stream interleaved with junk exactly once, in order, and sets the junk apart", () => {
    fc.assert(
      fc.property(stream, fc.array(fc.nat(), { maxLength: 20 }), (items, cuts) => {
        const bytes = Buffer.from(items.map((item) => `${lineOf(item)}\n`).join(""));
        const messages: unknown[] = [];
        const junk: string[] = [];
        for (const line of frameAll(split(bytes, cuts)).lines) {
          const value = tryJson(line);
          if (value === undefined) junk.push(line);
          else {
            const parsed = parseCliMessage(value);
            expect(parsed.kind).not.toBe("invalid");
            messages.push(parsed.kind === "invalid" ? undefined : parsed.message);
          }
        }
        expect(messages).toEqual(items.flatMap((item) => ("message" in item ? [JSON.parse(JSON.stringify(item.message))] : [])));
        expect(junk).toEqual(items.flatMap((item) => ("junk" in item ? [item.junk] : [])));
      }),
    );
  });
});

function tryJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

describe("a real CLI process (PooledProcess) over a stand-in CLI writing random splits of a stream", () => {
  afterEach(async () => {
    expect(await remainingChildren()).toEqual([]);
    await cleanup();
  });

  const result = { type: "result", subtype: "success", is_error: false, result: "done", num_turns: 1, session_id: "s" };

  /** What the session must deliver, computed from the bytes without the framer or the session. */
  function expectedFrom(bytes: Buffer) {
    const messages: unknown[] = [];
    const junk: string[] = [];
    for (const line of bytes.toString("utf8").split("\n")) {
      if (line === "") continue;
      const value = tryJson(line);
      if (value === undefined) junk.push(line.slice(0, 200));
      else messages.push(value);
    }
    return { messages, junk, hasResult: messages.at(-1) !== undefined && (messages.at(-1) as { type?: string }).type === "result" };
  }

  async function runSession(chunks: Buffer[]) {
    const dir = tempDir("stream");
    const file = join(dir, "stream.json");
    writeFileSync(file, JSON.stringify({ chunks: chunks.map((chunk) => chunk.toString("base64")) }));
    const messages: unknown[] = [];
    const junk: string[] = [];
    const noise = "ignored a non-JSON stdout line: ";
    const proc = new PooledProcess({
      process: { path: STAND_IN, args: [], cwd: dir, env: testEnv({ STAND_IN_MODE: "replay-stream", STAND_IN_STREAM_FILE: file }) },
      logger: { debug() {}, info() {}, error() {}, warn: (message) => message.startsWith(noise) && junk.push(message.slice(noise.length)) },
    });
    const started = Date.now();
    const outcome = await proc
      .call({
        initialize: initializeRequest({ systemPrompt: "s", mcpServers: [] }),
        prompt: "go",
        keep: false,
        control: { canUseTool: async () => ({ behavior: "deny", message: "no tools here" }) },
        onMessage: (message) => messages.push(message.message),
        // Far above what a run takes: a hang shows up as the elapsed-time assertion failing, not as a pass.
        timeoutMs: 20_000,
      })
      .then(
        (end) => end.result as unknown,
        (error: unknown) => error,
      );
    await proc.settled;
    return { outcome, messages, junk, ms: Date.now() - started };
  }

  it("always ends with the result or a CliCrashError, in bounded time, having delivered every valid message once", async () => {
    await fc.assert(
      fc.asyncProperty(stream, fc.boolean(), fc.option(fc.nat()), fc.array(fc.nat(), { maxLength: 8 }), async (items, withResult, truncateAt, cuts) => {
        const lines = [...items.map(lineOf), ...(withResult ? [JSON.stringify(result)] : [])];
        const whole = Buffer.from(lines.map((line) => `${line}\n`).join(""));
        // Sometimes the CLI dies mid-stream: the bytes stop anywhere, even inside a line or a UTF-8 sequence.
        const bytes = truncateAt === null ? whole : whole.subarray(0, truncateAt % (whole.length + 1));
        const expected = expectedFrom(bytes);
        const run = await runSession(split(bytes, cuts));
        expect(run.ms).toBeLessThan(5_000);
        expect(run.messages).toEqual(expected.messages);
        expect(run.junk).toEqual(expected.junk);
        if (expected.hasResult) {
          expect(run.outcome).toEqual(result);
        } else {
          expect(run.outcome).toBeInstanceOf(CliCrashError);
          expect((run.outcome as Error).message).toMatch(/^The Claude Code CLI exited with code 0 before its init message\./);
        }
      }),
      { numRuns: 15 },
    );
  }, 60_000);
});
