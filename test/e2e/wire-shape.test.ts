/**
 * The committed first-party shape of the CLI in use (fixtures/transcripts/<version>/wire-shape.json)
 * is what a recording of it gives: a quick recording of a few call kinds (the full one is
 * `ktx-claude-code fixtures record-wire --check`) must add nothing to the committed file.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { wireShapeChanges } from "../../src/cli/record-wire.js";
import { wireShapePath } from "../../src/claude-code/wire/shape.js";
import { validateWireShapeFile } from "../../src/claude-code/wire/shape-file.js";
import { BASH_CALL, BUILTIN_TOOLS_CALL, COMPACTION_CALLS, PROJECT_INSTRUCTIONS_CALL, SUBAGENTS_CALL, WEB_SEARCH_CALL, recordWire } from "../../src/testing/wire-recorder.js";
import { deriveWireShape } from "../../src/testing/wire-shape-derive.js";
import { realCli } from "../support.js";

describe("the recorded first-party shape", () => {
  it("a recording of the CLI in use (a text call, a nudged object, a 2-tool loop, the built-in file tools, the project instructions, Bash, web search, a subagent, a session's compactions) adds nothing to its committed shape", async () => {
    const recording = await recordWire({ cliPath: realCli(), only: ["object, nudged", "agent loop, 2 tool calls", BUILTIN_TOOLS_CALL, PROJECT_INSTRUCTIONS_CALL, BASH_CALL, WEB_SEARCH_CALL, SUBAGENTS_CALL, ...COMPACTION_CALLS] });
    expect(recording.calls.map((call) => call.name)).toEqual(["text, fresh login", "object, nudged", "agent loop, 2 tool calls", BUILTIN_TOOLS_CALL, PROJECT_INSTRUCTIONS_CALL, BASH_CALL, WEB_SEARCH_CALL, SUBAGENTS_CALL, ...COMPACTION_CALLS]);
    const partial = deriveWireShape(recording);
    const committed = validateWireShapeFile(JSON.parse(readFileSync(wireShapePath(recording.version), "utf8")), recording.version);
    // A partial recording may lack what other call kinds add (REMOVED); anything it adds or changes is drift.
    expect(wireShapeChanges(committed, partial).filter((change) => !change.startsWith("REMOVED"))).toEqual([]);
    expect(partial.preamble).toBe(committed.preamble);
    expect(partial.billingLine.template).toBe(committed.billingLine.template);
    expect(partial.context.head === "" || partial.context.head === committed.context.head).toBe(true);
    // The built-in tools' definitions (Bash's too), recorded whole, are the committed ones.
    expect(partial.builtinTools).toEqual(committed.builtinTools);
    // So is the format of the project instructions reminder (capabilities.projectInstructions).
    expect(partial.projectInstructions).toEqual(committed.projectInstructions);
    // So is the CLI's own web search request.
    expect(partial.webSearch).toEqual(committed.webSearch);
    expect(partial.subagents).toEqual(committed.subagents);
    // A session's compaction (its instructions, headers, billing fields, continuation text), recorded whole, is the committed one.
    expect(partial.compaction).toEqual(committed.compaction);
  }, 180_000);

  it("fixtures record-wire: --help, and exit 2 with one line for wrong arguments or a missing binary", async () => {
    const main = join(import.meta.dirname, "../../dist/cli/main.js");
    const run = (...args: string[]) => execa(process.execPath, [main, "fixtures", "record-wire", ...args], { reject: false, env: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" } });
    const help = await run("--help");
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toMatch(/^Usage: ktx-claude-code fixtures record-wire \[--cli PATH\] \[--version X\.Y\.Z\] \[--out FILE\] \[--check\]/);
    const neither = await run();
    expect(neither.exitCode).toBe(2);
    expect(neither.stderr).toContain("fixtures record-wire: pass exactly one of --cli PATH and --version X.Y.Z");
    const missing = await run("--cli", "/nonexistent/claude");
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/^fixtures record-wire could not run: InvalidInputError: --cli \/nonexistent\/claude does not exist/m);
  });
});
