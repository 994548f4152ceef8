/**
 * The drift report of `fixtures compare`, on recorded and crafted transcripts (no CLI is installed or
 * run here): outcomes first, the structural section with whole values, version strings masked.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { renderDriftReport, structuralChanges, type DriftReport, type ScenarioDrift } from "../../src/cli/drift.js";
import { diffTranscripts, isEmptyDiff } from "../../src/transcripts/inspect.js";
import { loadTranscript } from "../../src/transcripts/reader.js";
import { cleanup, tempDir } from "../support.js";

afterEach(cleanup);

const ROOT = join(import.meta.dirname, "../../fixtures/transcripts");

/** The 2.1.330 fixture as 2.1.329 wrote it: another version string everywhere, one capability fewer in system/init. */
function as2_1_329(scenario: string): string {
  const text = readFileSync(join(ROOT, "2.1.330", `${scenario}.jsonl`), "utf8").replaceAll("2.1.330", "2.1.329").replaceAll('\\"withdrawn_tools_v1\\",', "");
  const path = join(tempDir("drift"), `${scenario}.jsonl`);
  writeFileSync(path, text);
  return path;
}

function report(drifts: ScenarioDrift[], version = "2.1.329"): DriftReport {
  return {
    cli: "/cache/claude",
    version,
    against: "2.1.330",
    outcomes: { same: drifts.filter((d) => d.outcome === "same").length, changed: drifts.filter((d) => d.outcome === "changed").length, missingFixtures: 0 },
    structure: structuralChanges(drifts),
    scenarios: drifts,
    differing: drifts.filter((d) => d.outcome !== "same" || (d.diff && !isEmptyDiff(d.diff))).length,
    transcripts: "/tmp/ktx-compare-x",
  };
}

it("names the one changed capability, leads with identical outcomes, and lists no version string", () => {
  const scenarios = ["text", "tool-loop", "api-429"];
  const drifts: ScenarioDrift[] = scenarios.map((scenario) => {
    const before = loadTranscript(join(ROOT, "2.1.330", `${scenario}.jsonl`));
    const after = loadTranscript(as2_1_329(scenario));
    expect(readFileSync(after.path, "utf8")).toContain("2.1.329");
    return { scenario, outcome: "same", diff: diffTranscripts(before, after) };
  });
  const built = report(drifts);
  expect(built.structure).toEqual([{ what: '<< system/init capabilities: removed "withdrawn_tools_v1"', scenarios }]);
  for (const drift of drifts) {
    expect(drift.diff!.cliVersions).toEqual({ before: "2.1.330", after: "2.1.329" });
    expect(drift.diff!.valueChanges).toHaveLength(1);
  }
  const text = renderDriftReport(built);
  const lines = text.split("\n");
  expect(lines[3]).toBe("Outcomes: identical in all 3 scenarios.");
  expect(text).toMatch(/Protocol structure \(1 changes, whole values\):\n {2}<< system\/init capabilities: removed "withdrawn_tools_v1" {2}\[all scenarios\]/);
  expect(text).not.toMatch(/claude_code_version|clientInfo/);
  expect(text).toContain("3 of 3 scenarios differ. The live transcripts are kept in /tmp/ktx-compare-x.");
});

it("lists whole values: a long capability list is never cut, in text or JSON", () => {
  const before = loadTranscript(join(ROOT, "2.1.286", "text.jsonl"));
  const after = loadTranscript(join(ROOT, "2.1.330", "text.jsonl"));
  const drift: ScenarioDrift = { scenario: "text", outcome: "same", diff: diffTranscripts(before, after) };
  const built = report([drift], "2.1.330");
  const initOf = (transcript: typeof before) => JSON.parse((transcript.records.find((record) => record.kind === "in" && record.text.includes('"subtype":"init"')) as { text: string }).text);
  const [old, init] = [initOf(before), initOf(after)];
  const added = (init.capabilities as string[]).filter((capability) => !(old.capabilities as string[]).includes(capability));
  expect(added.length).toBeGreaterThan(5);
  const text = renderDriftReport(built);
  for (const capability of added) {
    expect(built.structure).toContainEqual({ what: `<< system/init capabilities: added ${JSON.stringify(capability)}`, scenarios: ["text"] });
    expect(text).toContain(`added ${JSON.stringify(capability)}`);
  }
  // JSON: the whole before/after of every change, however long.
  const json = JSON.parse(JSON.stringify(built));
  // `msg_lifecycle_v1` is a capability, not a message id: not masked.
  expect(init.capabilities).toContain("msg_lifecycle_v1");
  const change = json.scenarios[0].diff.valueChanges.find((c: { path: string; key: string }) => c.key === "system/init" && c.path === "capabilities");
  expect(JSON.parse(change.after)).toEqual(init.capabilities);
  expect(text).not.toContain("undefined");
});

it("a changed outcome comes first, with both values", () => {
  const drift: ScenarioDrift = { scenario: "api-429", outcome: "changed", before: { error: "ClaudeCodeApiError", status: 429 }, after: { error: "ClaudeCodeApiError" } };
  const text = renderDriftReport(report([drift]));
  expect(text.split("\n")[3]).toBe("Outcomes: 0 of 1 the same, 1 changed.");
  expect(text.split("\n")[4]).toBe('  api-429  CHANGED: {"error":"ClaudeCodeApiError","status":429} -> {"error":"ClaudeCodeApiError"}');
});
