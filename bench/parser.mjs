/**
 * Section 3: parser throughput. Our path — NdjsonFramer over 64 KiB Buffer chunks (what a pipe
 * delivers), then JSON.parse and parseCliMessage per line, as the session does — against
 *   jsonParse      plain JSON.parse of the same lines, already split into strings (no bytes to decode)
 *   minimalReader  the least a pipe reader must do: the same 64 KiB chunks through a StringDecoder,
 *                  split on newlines, JSON.parse (no framing limits, no validation)
 * Two corpora:
 *   recorded   real CLI 2.1.330 stdout (shared/protocol transcripts, else the repo's fixtures), repeated
 *   big-lines  synthetic assistant / tool_result / result lines of 256 KiB to 4 MiB
 * Each rep runs every contender, in a rotating order; the median throughput of each is reported,
 * with a per-MiB breakdown (UTF-8 decode alone, framing + decode, JSON.parse, parseCliMessage).
 *
 *   node bench/parser.mjs [--reps 5] [--recorded-mb 8] [--big-mb 16]
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { ROOT, argValue, dist, emit, log, percentile } from "./lib/common.mjs";

const reps = argValue("reps", 5);
const recordedMb = argValue("recorded-mb", 8);
const bigMb = argValue("big-mb", 16);
const CHUNK = 64 * 1024;

const { NdjsonFramer } = await import(dist("transport/ndjson.js"));
const { parseCliMessage } = await import(dist("protocol/messages.js"));

// ---------------------------------------------------------------- corpora

function recordedLines() {
  const dirs = [join(ROOT, "..", "shared", "protocol", "transcripts-2.1.330"), "/work/shared/protocol/transcripts-2.1.330", join(ROOT, "fixtures", "protocol-2.1.330")];
  const dir = dirs.find((candidate) => existsSync(candidate) && readdirSync(candidate).some((f) => f.endsWith(".stdout.ndjson")));
  if (!dir) throw new Error("no recorded stdout transcripts found");
  const lines = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".stdout.ndjson")).sort()) {
    for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
      if (!line.trim()) continue;
      try {
        JSON.parse(line);
        lines.push(line);
      } catch {
        // a non-JSON stdout line (noise) is not a parser workload
      }
    }
  }
  return { source: dir.replace(ROOT, "."), lines };
}

function bigLines() {
  const lines = [];
  const filler = (bytes, seed) => {
    const words = ["orders", "customer_id", "billing", "shipping", "glossary", "term", "candidate", "ΚΤΧ", "naïve", "表"];
    let out = "";
    let i = seed;
    while (out.length < bytes) out += `${words[i++ % words.length]} ${i} \\ "quoted" \n\t`;
    return out.slice(0, bytes);
  };
  const sizes = [256 * 1024, 1024 * 1024, 4 * 1024 * 1024];
  for (const [i, size] of sizes.entries()) {
    lines.push(JSON.stringify({ type: "assistant", message: { id: `msg_big_${i}`, type: "message", role: "assistant", model: "claude-sonnet-5-5", content: [{ type: "text", text: filler(size, i) }], stop_reason: null, usage: { input_tokens: 10, output_tokens: 5 } }, parent_tool_use_id: null, session_id: "s" }));
    lines.push(JSON.stringify({ type: "user", message: { role: "user", content: [{ tool_use_id: `toolu_${i}`, type: "tool_result", content: [{ type: "text", text: filler(size, i + 3) }] }] }, parent_tool_use_id: null, session_id: "s", tool_use_result: [{ type: "text", text: filler(size, i + 5) }] }));
    lines.push(JSON.stringify({ type: "result", subtype: "success", is_error: false, num_turns: 3, session_id: "s", result: filler(size, i + 7), usage: { input_tokens: 10, output_tokens: 5 }, total_cost_usd: 0.01 }));
  }
  return { source: "synthetic: assistant text, user tool_result, result; 256 KiB, 1 MiB, 4 MiB each", lines };
}

/** Repeats `lines` until they hold at least `mb` MiB; returns the lines and the same bytes as one Buffer. */
function corpus(lines, mb) {
  const out = [];
  let bytes = 0;
  while (bytes < mb * 2 ** 20) {
    for (const line of lines) {
      out.push(line);
      bytes += Buffer.byteLength(line) + 1;
    }
  }
  return { lines: out, buffer: Buffer.from(`${out.join("\n")}\n`, "utf8") };
}

// ---------------------------------------------------------------- the contenders

let sink = 0;

function ours(buffer) {
  let messages = 0;
  const framer = new NdjsonFramer({
    line(text) {
      const parsed = parseCliMessage(JSON.parse(text));
      if (parsed.kind === "invalid") throw new Error(`invalid line: ${parsed.issues}`);
      messages += 1;
    },
    oversized() {
      throw new Error("oversized");
    },
  });
  for (let offset = 0; offset < buffer.length; offset += CHUNK) framer.push(buffer.subarray(offset, offset + CHUNK));
  framer.end();
  sink += messages;
}

function baseline(lines) {
  for (const line of lines) sink += JSON.parse(line) ? 1 : 0;
}

function minimalReader(buffer) {
  const decoder = new StringDecoder("utf8");
  let parts = [];
  for (let offset = 0; offset < buffer.length; offset += CHUNK) {
    const text = decoder.write(buffer.subarray(offset, offset + CHUNK));
    let start = 0;
    let newline;
    while ((newline = text.indexOf("\n", start)) !== -1) {
      parts.push(text.slice(start, newline));
      const line = parts.length === 1 ? parts[0] : parts.join("");
      parts = [];
      if (line.length > 0) sink += JSON.parse(line) ? 1 : 0;
      start = newline + 1;
    }
    if (start < text.length) parts.push(text.slice(start));
  }
}

function framerOnly(buffer) {
  const framer = new NdjsonFramer({ line: (text) => (sink += text.length), oversized() {} });
  for (let offset = 0; offset < buffer.length; offset += CHUNK) framer.push(buffer.subarray(offset, offset + CHUNK));
  framer.end();
}

function schemaOnly(values) {
  for (const value of values) sink += parseCliMessage(value).kind.length;
}

function time(fn) {
  const started = performance.now();
  fn();
  return performance.now() - started;
}

function measure(name, { lines, buffer }) {
  const mb = buffer.length / 2 ** 20;
  const values = lines.map((line) => JSON.parse(line));
  const lineBuffers = lines.map((line) => Buffer.from(line, "utf8"));
  const contenders = {
    ours: () => ours(buffer),
    jsonParse: () => baseline(lines),
    minimalReader: () => minimalReader(buffer),
    framerOnly: () => framerOnly(buffer),
    parseCliMessageOnly: () => schemaOnly(values),
    // The least any reader of a pipe pays before JSON.parse can start: each line's bytes to a string
    // (per line, as a reader does; one string for the whole corpus would lose V8's ASCII fast path).
    utf8DecodeOnly: () => {
      for (const bytes of lineBuffers) sink += bytes.toString("utf8").length;
    },
  };
  const names = Object.keys(contenders);
  const ms = Object.fromEntries(names.map((n) => [n, []]));
  for (const n of names) contenders[n](); // warm-up
  for (let rep = 0; rep < reps; rep += 1) {
    for (let i = 0; i < names.length; i += 1) {
      const n = names[(i + rep) % names.length];
      ms[n].push(time(contenders[n]));
    }
  }
  const p50 = (n) => percentile(ms[n], 50);
  const mbps = (n) => Math.round((mb / (p50(n) / 1000)) * 10) / 10;
  const perMiB = (n) => Math.round((p50(n) / mb) * 1000) / 1000;
  const result = {
    mib: Math.round(mb * 10) / 10,
    lines: lines.length,
    avgLineBytes: Math.round(buffer.length / lines.length),
    oursMBps: mbps("ours"),
    jsonParseMBps: mbps("jsonParse"),
    minimalReaderMBps: mbps("minimalReader"),
    ratioVsJsonParse: Math.round((p50("jsonParse") / p50("ours")) * 1000) / 1000,
    ratioVsMinimalReader: Math.round((p50("minimalReader") / p50("ours")) * 1000) / 1000,
    // The best ratio to plain JSON.parse that any reader of bytes can reach: decoding alone costs this much.
    ceilingVsJsonParse: Math.round((p50("jsonParse") / (p50("jsonParse") + p50("utf8DecodeOnly"))) * 1000) / 1000,
    breakdownMsPerMiB: { utf8Decode: perMiB("utf8DecodeOnly"), framerAndDecode: perMiB("framerOnly"), jsonParse: perMiB("jsonParse"), parseCliMessage: perMiB("parseCliMessageOnly"), ours: perMiB("ours") },
  };
  log(`  parser ${name}: ours ${result.oursMBps} MB/s, JSON.parse ${result.jsonParseMBps} MB/s (${result.ratioVsJsonParse}x), minimal reader ${result.minimalReaderMBps} MB/s (${result.ratioVsMinimalReader}x)`);
  return result;
}

const recorded = recordedLines();
const big = bigLines();
const out = {
  chunkBytes: CHUNK,
  reps,
  recorded: { source: recorded.source, distinctLines: recorded.lines.length, ...measure("recorded", corpus(recorded.lines, recordedMb)) },
  bigLines: { source: big.source, ...measure("big-lines", corpus(big.lines, bigMb)) },
};
if (sink === 0) throw new Error("nothing parsed");
emit(out);
