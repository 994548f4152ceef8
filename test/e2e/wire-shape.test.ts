/**
 * The committed first-party shape of the CLI in use (fixtures/transcripts/<version>/wire-shape.json)
 * is what a recording of it gives: a quick recording of a few call kinds (the full one is
 * `ktx-claude-code fixtures record-wire --check`) must add nothing to the committed file.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { wireShapeChanges } from "../../src/cli/record-wire.js";
import { wireShapePath } from "../../src/claude-code/wire/shape.js";
import { validateWireShapeFile } from "../../src/claude-code/wire/shape-file.js";
import { deriveWireShape, recordWire } from "../../src/testing/wire-recorder.js";
import { realCli } from "../support.js";

describe("the recorded first-party shape", () => {
  it("a recording of the CLI in use (a text call, a nudged object, a 2-tool loop) adds nothing to its committed shape", async () => {
    const recording = await recordWire({ cliPath: realCli(), only: ["object, nudged", "agent loop, 2 tool calls"] });
    expect(recording.calls.map((call) => call.name)).toEqual(["text, fresh login", "object, nudged", "agent loop, 2 tool calls"]);
    const partial = deriveWireShape(recording);
    const committed = validateWireShapeFile(JSON.parse(readFileSync(wireShapePath(recording.version), "utf8")), recording.version);
    // A partial recording may lack what other call kinds add (REMOVED); anything it adds or changes is drift.
    expect(wireShapeChanges(committed, partial).filter((change) => !change.startsWith("REMOVED"))).toEqual([]);
    expect(partial.preamble).toBe(committed.preamble);
    expect(partial.billingLine.template).toBe(committed.billingLine.template);
    expect(partial.context.head === "" || partial.context.head === committed.context.head).toBe(true);
    // Three CLI starts (the duration is in the report: docs/compatibility.md).
  }, 180_000);
});
