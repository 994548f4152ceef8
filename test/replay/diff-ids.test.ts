/**
 * `transcript diff` numbers each run's ids (the API's message, tool-use and request ids, uuids) by their
 * first appearance (issue 39, item 3): a run whose API numbered every id differently compares the same,
 * while a tool result naming another tool use, or fewer distinct ids, still differs.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { diffTranscripts, isEmptyDiff, renderDiff } from "../../src/transcripts/inspect.js";
import { RunNoise } from "../../src/transcripts/inspect/run-noise.js";
import { loadTranscript } from "../../src/transcripts/reader.js";
import { cleanup, tempDir } from "../support.js";

afterEach(cleanup);

const FIXTURE = join(import.meta.dirname, "../../fixtures/transcripts/2.1.331/tool-loop.jsonl");

function copyWith(rewrite: (text: string) => string): string {
  const path = join(tempDir("diff-ids"), "tool-loop.jsonl");
  writeFileSync(path, rewrite(readFileSync(FIXTURE, "utf8")));
  return path;
}

/** Every id as another API would have numbered it: other message and tool-use names, fresh uuids. */
function renumbered(text: string): string {
  const fresh = new Map<string, string>();
  const once = (id: string, make: () => string) => fresh.get(id) ?? (fresh.set(id, make()), fresh.get(id)!);
  // A real API's shape: `msg_01` and 22 random letters and digits.
  const tail = () => `01${randomUUID().replaceAll("-", "").slice(0, 22)}`;
  return text
    .replace(/\b(req|msg|toolu)_(?:msg_)?scripted_[\d_]*\d/g, (id, kind: string) => once(id, () => `${kind}_${tail()}`))
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (uuid) => once(uuid, randomUUID));
}

it("two runs whose API gave other message, tool-use, request ids and uuids compare the same", () => {
  const text = readFileSync(FIXTURE, "utf8");
  expect(text).toContain("toolu_scripted_0_0");
  expect(text).toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
  const other = copyWith(renumbered);
  expect(readFileSync(other, "utf8")).not.toContain("_scripted_");
  const diff = diffTranscripts(loadTranscript(FIXTURE), loadTranscript(other));
  expect(isEmptyDiff(diff), renderDiff(diff).join("\n")).toBe(true);
  // The scripted API's own numbering, shifted (its `ids` option), compares the same too.
  const shifted = copyWith((t) => t.replace(/\b(msg|toolu)_scripted_(\d+)/g, (_, kind: string, n: string) => `${kind}_other_${Number(n) + 7}`));
  expect(isEmptyDiff(diffTranscripts(loadTranscript(FIXTURE), loadTranscript(shifted)))).toBe(true);
});

it("a tool result that names another tool use than before still differs", () => {
  // The result line answers a tool use the run never made: the id structure changed.
  const other = copyWith((t) => t.replace(/(tool_use_id\\":\\")toolu_scripted_0_0/, "$1toolu_scripted_9_9"));
  const diff = diffTranscripts(loadTranscript(FIXTURE), loadTranscript(other));
  expect(isEmptyDiff(diff)).toBe(false);
  expect(diff.valueChanges.some((change) => change.path.endsWith("tool_use_id"))).toBe(true);
});

it("fewer distinct ids still differ: two answers with one message id", () => {
  const text = readFileSync(FIXTURE, "utf8");
  expect(text).toContain("msg_scripted_1");
  const other = copyWith((t) => t.replaceAll("msg_scripted_1", "msg_scripted_0"));
  const diff = diffTranscripts(loadTranscript(FIXTURE), loadTranscript(other));
  expect(isEmptyDiff(diff)).toBe(false);
  expect(renderDiff(diff).join("\n")).toMatch(/msg_1/);
});

it("numbers ids per kind by first appearance, and keeps names that are not ids", () => {
  const noise = new RunNoise("/p", undefined);
  const line = JSON.stringify({ a: "msg_01XFDUDYJgAACzvnptvVoYEL", b: "toolu_scripted_3_1", c: "msg_scripted_4", d: "msg_01XFDUDYJgAACzvnptvVoYEL", e: "req_msg_scripted_4", f: "msg_lifecycle_v1", g: "7d0c9a57-3f7e-4d0e-9a3b-2f1c0b1e2d3a" });
  expect(noise.comparable(line)).toEqual({ a: "msg_1", b: "toolu_1", c: "msg_2", d: "msg_1", e: "req_1", f: "msg_lifecycle_v1", g: "uuid_1" });
});

it("our reply to the CLI's MCP initialize going out after our prompt instead of before is the same run; a reply left out is not", () => {
  const lines = readFileSync(FIXTURE, "utf8").split("\n");
  const kindOf = (index: number) => {
    const record = JSON.parse(lines[index]!) as { kind: string; text: string };
    return `${record.kind} ${(JSON.parse(record.text) as { type: string }).type}`;
  };
  // The recorded order: our reply to mcp initialize (line 4), the initialize reply (5), our prompt (6).
  expect([kindOf(3), kindOf(4), kindOf(5)]).toEqual(["out control_response", "in control_response", "out user"]);
  const raced = [...lines];
  [raced[3], raced[4], raced[5]] = [lines[4]!, lines[5]!, lines[3]!];
  const racedPath = copyWith(() => raced.join("\n"));
  expect(isEmptyDiff(diffTranscripts(loadTranscript(FIXTURE), loadTranscript(racedPath)))).toBe(true);
  const missing = copyWith(() => lines.filter((_, index) => index !== 3).join("\n"));
  const diff = diffTranscripts(loadTranscript(FIXTURE), loadTranscript(missing));
  expect(diff.hostLines).toBeDefined();
});
