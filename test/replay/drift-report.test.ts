/**
 * The drift report of `fixtures compare`, on recorded and crafted transcripts (no CLI is installed or
 * run here): the verdict first, then outcomes, the structural section with whole values and what the
 * runtime reads, version strings masked.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { driftReport, renderDriftReport, type DriftReport, type ScenarioDrift } from "../../src/cli/drift.js";
import { diffTranscripts, renderDiff } from "../../src/transcripts/inspect.js";
import { loadTranscript, projectDirLength } from "../../src/transcripts/reader.js";
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
  return driftReport({ cli: "/cache/claude", version, against: "2.1.330", drifts, transcripts: "/tmp/ktx-compare-x" });
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
  expect(built.structure).toEqual([
    { change: "removed", what: '<< system/init capabilities: item "withdrawn_tools_v1"', key: "system/init", field: "capabilities", values: ["withdrawn_tools_v1"], runtimeReads: false, scenarios },
  ]);
  // Something the fixtures have is gone: not additive.
  expect(built.verdict).toBe("changed");
  for (const drift of drifts) {
    expect(drift.diff!.cliVersions).toEqual({ before: "2.1.330", after: "2.1.329" });
    expect(drift.diff!.valueChanges).toHaveLength(1);
  }
  const text = renderDriftReport(built);
  const lines = text.split("\n");
  expect(lines[0]).toBe("Verdict: changed: 1 removed (0 read by the runtime), 0 changed (0 the runtime depends on), 0 added, 0 values changed; outcomes identical in all 3 scenarios.");
  expect(lines[4]).toBe("Outcomes: identical in all 3 scenarios.");
  expect(text).toMatch(/Protocol structure \(1 changes, 0 the runtime reads or depends on; whole values\):\n {2}REMOVED {2}<< system\/init capabilities: item "withdrawn_tools_v1" {2}\[all scenarios\] not read by the runtime/);
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
    expect(built.structure).toContainEqual(expect.objectContaining({ change: "added", what: `<< system/init capabilities: item ${JSON.stringify(capability)}`, values: [capability], scenarios: ["text"] }));
    expect(text).toContain(`ADDED    << system/init capabilities: item ${JSON.stringify(capability)}  [all scenarios] not read by the runtime`);
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
  const built = report([drift]);
  expect(built.verdict).toBe("outcome differs");
  const text = renderDriftReport(built);
  expect(text.split("\n")[0]).toBe("Verdict: outcome differs: 1 of 1 scenarios returned another outcome; 0 removed, 0 changed, 0 added in the protocol.");
  expect(text.split("\n")[4]).toBe("Outcomes: 0 of 1 the same, 1 changed.");
  expect(text.split("\n")[5]).toBe('  api-429  CHANGED: {"error":"ClaudeCodeApiError","status":429} -> {"error":"ClaudeCodeApiError"}');
});

/** The input tokens the 2.1.330 text fixture recorded (the scripted API's count; read, so a re-recording keeps the tests). */
const TEXT_TOKENS = Number(/\\"input_tokens\\":(\d+)/.exec(readFileSync(join(ROOT, "2.1.330", "text.jsonl"), "utf8"))![1]);
const tokens = (count: number) => `\\"input_tokens\\":${count}`;

/** A copy of a 2.1.330 fixture with its lines rewritten (`[from, to]` pairs, in the JSON-escaped text). */
function rewritten(scenario: string, pairs: Array<[string, string]>, version = "2.1.330"): string {
  let text = readFileSync(join(ROOT, version, `${scenario}.jsonl`), "utf8");
  for (const [from, to] of pairs) {
    expect(text, `${scenario} holds ${from}`).toContain(from);
    text = text.replaceAll(from, to);
  }
  const path = join(tempDir("drift"), `${scenario}.jsonl`);
  writeFileSync(path, text);
  return path;
}

/**
 * A shipped fixture as a live run on some machine would have written it: its placeholders (the
 * fixture names no machine path) replaced by this project dir, its slug, this HOME and a socket dir.
 */
function asLive(scenario: string, cwd: string, home: string, pairs: Array<[string, string]> = []): string {
  const header = loadTranscript(join(ROOT, "2.1.330", `${scenario}.jsonl`)).header;
  return rewritten(scenario, [
    [`"cwd":"<cwd>","cwdLength":${projectDirLength(header)}`, `"cwd":${JSON.stringify(cwd)}`],
    ["<cwd-slug>", cwd.replace(/[^A-Za-z0-9]/g, "-")],
    ["<cwd>", cwd],
    ["<home>", home],
    ["<tmp>/", "/tmp/cc-socks/"],
    ...pairs,
  ]);
}

/** What 2.1.332 adds (docs/compatibility.md): `sandbox_enabled: false` in init and the initialize reply, one capability in both. */
const AS_2_1_332: Array<[string, string]> = [
  ["2.1.330", "2.1.332"],
  ['\\"subtype\\":\\"init\\",', '\\"subtype\\":\\"init\\",\\"sandbox_enabled\\":false,'],
  ['\\"response\\":{\\"commands\\":', '\\"response\\":{\\"sandbox_enabled\\":false,\\"commands\\":'],
  ['\\"capabilities\\":[', '\\"capabilities\\":[\\"mcp_call_soft_error_result_v1\\",'],
];

const driftOf = (scenario: string, before: string, after: string): ScenarioDrift => ({ scenario, outcome: "same", diff: diffTranscripts(loadTranscript(before), loadTranscript(after)) });

it("additive only: new fields with their values and a new capability, none read by the runtime; --json carries the verdict", () => {
  const scenarios = ["text", "tool-loop"];
  const built = report(scenarios.map((scenario) => driftOf(scenario, join(ROOT, "2.1.330", `${scenario}.jsonl`), rewritten(scenario, AS_2_1_332))), "2.1.332");
  expect(built.verdict).toBe("additive only");
  expect(built.structure).toEqual([
    { change: "added", what: "<< control_response/success to initialize: field response.response.sandbox_enabled", key: "control_response/success to initialize", field: "response.response.sandbox_enabled", values: [false], runtimeReads: false, scenarios },
    { change: "added", what: "<< system/init: field sandbox_enabled", key: "system/init", field: "sandbox_enabled", values: [false], runtimeReads: false, scenarios },
    { change: "added", what: '<< control_response/success to initialize response.response.capabilities: item "mcp_call_soft_error_result_v1"', key: "control_response/success to initialize", field: "response.response.capabilities", values: ["mcp_call_soft_error_result_v1"], runtimeReads: false, scenarios },
    { change: "added", what: '<< system/init capabilities: item "mcp_call_soft_error_result_v1"', key: "system/init", field: "capabilities", values: ["mcp_call_soft_error_result_v1"], runtimeReads: false, scenarios },
  ]);
  const text = renderDriftReport(built);
  expect(text.split("\n")[0]).toBe("Verdict: additive only: 4 additions (0 read by the runtime), nothing removed or changed; outcomes identical in all 2 scenarios.");
  expect(text).toContain("ADDED    << system/init: field sandbox_enabled = false  [all scenarios] not read by the runtime");
  expect(JSON.parse(JSON.stringify(built)).verdict).toBe("additive only");
});

it("a field the runtime reads, added, is marked so; an added field among changed values is not additive", () => {
  // `slash_commands` is in the wire schema of system/init: the runtime reads it (the isolation check).
  const added = rewritten("text", [['\\"slash_commands\\":[]', '\\"slash_commands\\":[\\"/review\\"]']]);
  const built = report([driftOf("text", join(ROOT, "2.1.330", "text.jsonl"), added)], "2.1.330");
  expect(built.verdict).toBe("additive only");
  expect(built.structure).toEqual([expect.objectContaining({ change: "added", what: '<< system/init slash_commands: item "/review"', runtimeReads: true })]);
  expect(renderDriftReport(built)).toContain("[all scenarios] RUNTIME READS IT");
  // The same addition beside a changed token count: `changed`.
  const both = rewritten("text", [['\\"slash_commands\\":[]', '\\"slash_commands\\":[\\"/review\\"]'], [tokens(TEXT_TOKENS), tokens(TEXT_TOKENS + 3)]]);
  expect(report([driftOf("text", join(ROOT, "2.1.330", "text.jsonl"), both)], "2.1.330").verdict).toBe("changed");
});

it("what the runtime depends on comes first: 2.1.142's doubled MCP handshake before the fields it lacks", () => {
  const scenarios = ["tool-loop", "text"];
  const built = report(scenarios.map((scenario) => driftOf(scenario, join(ROOT, "2.1.142", `${scenario}.jsonl`), join(ROOT, "2.1.330", `${scenario}.jsonl`))), "2.1.330");
  expect(built.verdict).toBe("changed");
  expect(built.structure[0]).toMatchObject({ change: "changed", what: expect.stringMatching(/^control requests: .*mcp_message\/initialize.*mcp_message\/initialize.* -> /), runtimeReads: true, scenarios: ["tool-loop"] });
  // Ranked: changed then removed, read by the runtime before not read, additions last.
  const rank = (change: (typeof built.structure)[number]) => (change.change === "added" ? 4 : 0) + (change.runtimeReads ? 0 : 2) + (change.change === "removed" ? 1 : 0);
  const ranks = built.structure.map(rank);
  expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
  expect(built.structure.filter((change) => change.change === "added" && !change.runtimeReads).length).toBeGreaterThan(10);
  const text = renderDriftReport(built);
  expect(text.indexOf("CHANGED  control requests:")).toBeLessThan(text.indexOf("ADDED "));
});

it("same: a fixture against itself and against a run in other paths (project dir of the same length, another HOME and temp root, other ids) exits as same", () => {
  const fixture = join(ROOT, "2.1.330", "text.jsonl");
  const length = projectDirLength(loadTranscript(fixture).header);
  // Another machine: the project dir as long as the recording's under another root, HOME far away and longer.
  const otherCwd = `/var/t/${"q".repeat(length - "/var/t/".length)}`;
  const moved = asLive("text", otherCwd, "/home/someone-else/with/a/much/longer/home", [["msg_scripted_0", "msg_scripted_0"]]);
  for (const after of [fixture, moved]) {
    const built = report([driftOf("text", fixture, after)], "2.1.330");
    expect(built.verdict, renderDriftReport(built)).toBe("same");
    expect(renderDriftReport(built).split("\n")[0]).toBe("Verdict: same: no scenario differs (1 of 1 the same: outcomes, protocol structure and values).");
  }
  expect(readFileSync(moved, "utf8")).toContain("/home/someone-else/with/a/much/longer/home/.claude/output-styles");
  expect(loadTranscript(moved).header.cwd).toBe(otherCwd);
});

it("a real change in the request size still shows: more input tokens are a changed value, not noise", () => {
  const fixture = join(ROOT, "2.1.330", "text.jsonl");
  const bigger = rewritten("text", [[tokens(TEXT_TOKENS), tokens(TEXT_TOKENS + 31)]]);
  const built = report([driftOf("text", fixture, bigger)], "2.1.330");
  expect(built.verdict).toBe("changed");
  const text = renderDriftReport(built);
  expect(text).toContain(`message.usage.input_tokens: ${TEXT_TOKENS} -> ${TEXT_TOKENS + 31}`);
});

it("a project dir that could not be made as long as the recording's is named, with both lengths", () => {
  const drift: ScenarioDrift = { ...driftOf("text", join(ROOT, "2.1.330", "text.jsonl"), join(ROOT, "2.1.330", "text.jsonl")), projectDirLength: { recorded: 30, live: 71 } };
  expect(renderDriftReport(report([drift], "2.1.330"))).toMatch(/Project dir: no temp root is short enough .*\(text 71 chars, recorded 30\)/);
});

it("transcript diff says when two runs' project dirs differ in length, and still lists the token counts that follow", () => {
  const fixture = join(ROOT, "2.1.330", "text.jsonl");
  const length = projectDirLength(loadTranscript(fixture).header);
  const longer = "/tmp/a-much-longer-temporary-directory-name-for-the-gate/ktx-scenario-text-Q1w2e3";
  const moved = asLive("text", longer, "/tmp/ktx-scenario-home-r4t5y6", [[tokens(TEXT_TOKENS), tokens(TEXT_TOKENS + 13)]]);
  const diff = diffTranscripts(loadTranscript(fixture), loadTranscript(moved));
  expect(diff.projectDirLengths).toEqual({ before: length, after: longer.length });
  const lines = renderDiff(diff);
  expect(lines[0]).toMatch(new RegExp(`^note: the project dirs are ${length} and ${longer.length} characters long; the CLI names its project dir in every API request`));
  expect(lines.join("\n")).toContain(`message.usage.input_tokens: ${TEXT_TOKENS} -> ${TEXT_TOKENS + 13}`);
});
