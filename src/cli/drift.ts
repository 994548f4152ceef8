/**
 * The drift report of `fixtures compare`: a verdict first (same, additive only, changed, outcome
 * differs), outcomes per scenario, crashes with their cause, then every protocol change across all
 * scenarios (added / removed / changed, with whole values, and whether the runtime reads it; what
 * the runtime depends on first), then each scenario's diff.
 */
import { existsSync } from "node:fs";
import { loadTranscript, projectDirLength, type LoadedTranscript } from "../transcripts/reader.js";
import { diffTranscripts, isEmptyDiff, renderDiff, summarizeTranscript, type TranscriptDiff } from "../transcripts/inspect.js";
import { ANSWERED_CONTROL_REQUESTS, runtimeReadsField, runtimeReadsType } from "./drift-reads.js";

export interface ScenarioDrift {
  scenario: string;
  /** `same`: the runtime call returned the same outcome as recorded. */
  outcome: "same" | "changed" | "no fixture";
  before?: unknown;
  after?: unknown;
  diff?: TranscriptDiff;
  /** The CLI died in this scenario: its exit, stderr and the kept transcript that holds the cause. */
  crash?: { exitCode: number | null; signal: string | null; stderr: string; transcript: string };
  /**
   * Set when the live project dir could not be made as long as the recorded one (no temp root short
   * enough): the CLI names it in every request, so input tokens and costs differ by its length.
   */
  projectDirLength?: { recorded: number; live: number };
}

/** One protocol change and the scenarios it showed up in. */
export interface StructuralChange {
  /** `added`: only the live CLI has it; `removed`: only the fixtures; `changed`: both, differently. */
  change: "added" | "removed" | "changed";
  /** What it is, whole: `<< system/init: field sandbox_enabled = false`. */
  what: string;
  /** The message type (`system/init`, `control_response/success to initialize`), when it is about one. */
  key?: string;
  /** The field or list (`sandbox_enabled`, `capabilities`), when it is about one. */
  field?: string;
  /** A field's values (distinct, normalised) in the run that has it; a list item itself. */
  values?: unknown[];
  /** Whether the runtime parses this (the wire schemas' fields, the control requests it answers, …). */
  runtimeReads: boolean;
  scenarios: string[];
}

/**
 * What a maintainer acts on: `same` (nothing differs; exit 0), `additive only` (only new message
 * types, fields or list items; outcomes and every value the same), `changed` (something removed or
 * changed, outcomes the same), `outcome differs` (a runtime call returned something else, or the
 * CLI crashed, or a scenario has no fixture). Every verdict but `same` exits 1.
 */
export type Verdict = "same" | "additive only" | "changed" | "outcome differs";

export interface DriftReport {
  verdict: Verdict;
  cli: string;
  version: string;
  against: string;
  outcomes: { same: number; changed: number; missingFixtures: number };
  structure: StructuralChange[];
  scenarios: ScenarioDrift[];
  differing: number;
  /** Where the live transcripts are kept (when anything differs), else null. */
  transcripts: string | null;
}

const ERROR_NAMES = /CliCrashError|CliNotFoundError/;

/** The crash details of a live run whose outcome is a crashed CLI, from its transcript. */
export function crashOf(outcome: unknown, transcriptPath: string): ScenarioDrift["crash"] {
  if (!ERROR_NAMES.test(JSON.stringify(outcome) ?? "") || !existsSync(transcriptPath)) return undefined;
  const transcript = loadTranscript(transcriptPath);
  const stderr = transcript.records.flatMap((record) => (record.kind === "stderr" ? [record.text] : [])).join("");
  const summary = summarizeTranscript(transcript);
  return { exitCode: summary.exit?.exitCode ?? null, signal: summary.exit?.signal ?? null, stderr: stderr.slice(-4_000), transcript: transcriptPath };
}

const arrow = (direction: "in" | "out") => (direction === "in" ? "<<" : ">>");
const json = (value: unknown) => (value === undefined ? "(none)" : JSON.stringify(value));

/** Changes that are about the protocol's shape, gathered over every scenario, what the runtime depends on first. */
export function structuralChanges(drifts: readonly ScenarioDrift[]): StructuralChange[] {
  const found = new Map<string, StructuralChange>();
  const note = (change: Omit<StructuralChange, "scenarios" | "values">, scenario: string, values?: unknown[]) => {
    const entry = found.get(change.what) ?? { ...change, ...(values ? { values: [] as unknown[] } : {}), scenarios: [] };
    if (!entry.scenarios.includes(scenario)) entry.scenarios.push(scenario);
    for (const value of values ?? []) if (!entry.values!.some((known) => JSON.stringify(known) === JSON.stringify(value))) entry.values!.push(value);
    found.set(change.what, entry);
  };
  for (const drift of drifts) {
    const diff = drift.diff;
    if (!diff) continue;
    for (const key of diff.addedMessageTypes) note({ change: "added", what: `<< message type ${key}`, key, runtimeReads: runtimeReadsType(key) }, drift.scenario);
    for (const key of diff.removedMessageTypes) note({ change: "removed", what: `<< message type ${key}`, key, runtimeReads: runtimeReadsType(key) }, drift.scenario);
    for (const [change, fields, values] of [["added", diff.addedFields, diff.addedFieldValues], ["removed", diff.removedFields, diff.removedFieldValues]] as const) {
      for (const [key, names] of Object.entries(fields)) {
        for (const field of names) note({ change, what: `<< ${key}: field ${field}`, key, field, runtimeReads: runtimeReadsField(key, field) }, drift.scenario, values?.[key]?.[field] ?? []);
      }
    }
    for (const change of diff.valueChanges) {
      // A list of plain values (capabilities, tools, models, output styles): its items are structure.
      if (!change.added && !change.removed) continue;
      const where = `${arrow(change.direction)} ${change.key} ${change.path}`;
      const reads = runtimeReadsField(change.key, change.path);
      for (const item of change.added ?? []) note({ change: "added", what: `${where}: item ${JSON.stringify(item)}`, key: change.key, field: change.path, runtimeReads: reads }, drift.scenario, [item]);
      for (const item of change.removed ?? []) note({ change: "removed", what: `${where}: item ${JSON.stringify(item)}`, key: change.key, field: change.path, runtimeReads: reads }, drift.scenario, [item]);
    }
    if (diff.controlRequests) {
      const { before, after } = diff.controlRequests;
      // The runtime depends on the requests it answers (tool calls, permission questions) arriving as before.
      const answered = (list: string[]) => list.filter((key) => ANSWERED_CONTROL_REQUESTS.some((subtype) => key.startsWith(`control_request/${subtype}`))).join(" ");
      note({ change: "changed", what: `control requests: ${before.join(" ")} -> ${after.join(" ")}`, runtimeReads: answered(before) !== answered(after) }, drift.scenario);
    }
    if (diff.hostLines) note({ change: "changed", what: `our lines: ${diff.hostLines.before.join(" ")} -> ${diff.hostLines.after.join(" ")}`, runtimeReads: true }, drift.scenario);
    if (diff.result) note({ change: "changed", what: `result: ${json(diff.result.before)} -> ${json(diff.result.after)}`, runtimeReads: true }, drift.scenario);
  }
  // Read by the runtime before not read, changed before removed, additions last.
  const rank = (change: StructuralChange) => (change.change === "added" ? 4 : 0) + (change.runtimeReads ? 0 : 2) + (change.change === "removed" ? 1 : 0);
  // Stable: within a rank, the order the scenarios showed them in.
  return [...found.values()].map((change, index) => ({ change, index })).sort((a, b) => rank(a.change) - rank(b.change) || a.index - b.index).map(({ change }) => change);
}

/** Value changes outside the structure (a token count, a model id, a text), over every scenario. */
function valueChangeCount(drifts: readonly ScenarioDrift[]): number {
  // A list whose items are the same in another order counts here too (it has no item to list as structure).
  return drifts.reduce((sum, drift) => sum + (drift.diff?.valueChanges.filter((change) => !change.added?.length && !change.removed?.length).length ?? 0) + (drift.diff?.call ? 1 : 0), 0);
}

/** The verdict from the outcomes, the structure and the values (see `Verdict`). */
export function verdictOf(drifts: readonly ScenarioDrift[], structure: readonly StructuralChange[]): Verdict {
  if (drifts.some((drift) => drift.outcome !== "same" || drift.crash)) return "outcome differs";
  if (structure.some((change) => change.change !== "added") || valueChangeCount(drifts) > 0) return "changed";
  if (structure.length > 0 || drifts.some(differs)) return "additive only";
  return "same";
}

/** The report's first line: the verdict and what it rests on. */
export function verdictLine(report: DriftReport): string {
  const total = report.scenarios.length;
  const count = (change: StructuralChange["change"]) => report.structure.filter((entry) => entry.change === change);
  const read = (list: StructuralChange[]) => list.filter((entry) => entry.runtimeReads).length;
  const [added, removed, changed] = [count("added"), count("removed"), count("changed")];
  const values = valueChangeCount(report.scenarios);
  switch (report.verdict) {
    case "same":
      return `Verdict: same: no scenario differs (${total} of ${total} the same: outcomes, protocol structure and values).`;
    case "additive only":
      return `Verdict: additive only: ${added.length} addition${added.length === 1 ? "" : "s"} (${read(added)} read by the runtime), nothing removed or changed; outcomes identical in all ${total} scenarios.`;
    case "changed":
      return `Verdict: changed: ${removed.length} removed (${read(removed)} read by the runtime), ${changed.length} changed (${read(changed)} the runtime depends on), ${added.length} added, ${values} value${values === 1 ? "" : "s"} changed; outcomes identical in all ${total} scenarios.`;
    case "outcome differs": {
      const { changed: outcomes, missingFixtures } = report.outcomes;
      const crashes = report.scenarios.filter((drift) => drift.crash).length;
      return `Verdict: outcome differs: ${outcomes} of ${total} scenarios returned another outcome${crashes ? `, ${crashes} crashed` : ""}${missingFixtures ? `, ${missingFixtures} without a fixture` : ""}; ${removed.length} removed, ${changed.length} changed, ${added.length} added in the protocol.`;
    }
  }
}

/** One scenario's drift: the recorded fixture against the live run's outcome and transcript (when it wrote one). */
export function scenarioDrift(scenario: string, recorded: LoadedTranscript, after: unknown, livePath: string): ScenarioDrift {
  const before = recorded.records.find((record) => record.kind === "outcome")?.outcome;
  const same = JSON.stringify(before) === JSON.stringify(after);
  const crash = crashOf(after, livePath);
  const live = existsSync(livePath) ? loadTranscript(livePath) : undefined;
  const recordedLength = projectDirLength(recorded.header);
  const liveLength = live ? projectDirLength(live.header) : recordedLength;
  return {
    scenario,
    outcome: same ? "same" : "changed",
    ...(same ? {} : { before, after }),
    ...(live ? { diff: diffTranscripts(recorded, live) } : {}),
    ...(crash ? { crash } : {}),
    ...(liveLength !== recordedLength ? { projectDirLength: { recorded: recordedLength, live: liveLength } } : {}),
  };
}

/** The report over every scenario's drift, with its verdict. */
export function driftReport(run: Pick<DriftReport, "cli" | "version" | "against" | "transcripts"> & { drifts: ScenarioDrift[] }): DriftReport {
  const { drifts, ...rest } = run;
  const structure = structuralChanges(drifts);
  return {
    verdict: verdictOf(drifts, structure),
    ...rest,
    outcomes: {
      same: drifts.filter((drift) => drift.outcome === "same").length,
      changed: drifts.filter((drift) => drift.outcome === "changed").length,
      missingFixtures: drifts.filter((drift) => drift.outcome === "no fixture").length,
    },
    structure,
    scenarios: drifts,
    differing: drifts.filter(differs).length,
  };
}

export function differs(drift: ScenarioDrift): boolean {
  return drift.outcome !== "same" || (drift.diff !== undefined && !isEmptyDiff(drift.diff));
}

export function renderDriftReport(report: DriftReport): string {
  const total = report.scenarios.length;
  const lines = [
    verdictLine(report),
    `Drift of CLI ${report.version} (${report.cli}) against the ${report.against} fixtures`,
    `(before = the recorded ${report.against} fixtures, after = the live ${report.version} runs; "added" is what only ${report.version} has)`,
    "",
  ];
  const { same, changed, missingFixtures } = report.outcomes;
  lines.push(changed === 0 && missingFixtures === 0 ? `Outcomes: identical in all ${total} scenarios.` : `Outcomes: ${same} of ${total} the same, ${changed} changed${missingFixtures ? `, ${missingFixtures} without a fixture` : ""}.`);
  const width = Math.max(...report.scenarios.map((drift) => drift.scenario.length)) + 2;
  for (const drift of report.scenarios) {
    const detail =
      drift.outcome === "changed" ? `CHANGED: ${json(drift.before)} -> ${json(drift.after)}` : drift.outcome === "no fixture" ? `no ${report.against} fixture recorded` : "same";
    const protocol = drift.diff && !isEmptyDiff(drift.diff) ? "; protocol differs" : drift.diff ? "; protocol the same" : "";
    lines.push(`  ${drift.scenario.padEnd(width)}${detail}${protocol}`);
  }
  const crashes = report.scenarios.filter((drift) => drift.crash);
  if (crashes.length > 0) {
    lines.push("", `Crashes (${crashes.length}): the CLI exited before answering`);
    for (const { scenario, crash } of crashes) {
      lines.push(`  ${scenario}: exit code ${crash!.exitCode ?? "none"}${crash!.signal ? `, signal ${crash!.signal}` : ""}; transcript ${crash!.transcript}`);
      const stderr = crash!.stderr.trim() ? crash!.stderr.trim().split("\n").slice(-8) : ["(nothing on stderr)"];
      lines.push(...stderr.map((line) => `    stderr: ${line}`));
    }
  }
  const paths = report.scenarios.filter((drift) => drift.projectDirLength);
  if (paths.length > 0) {
    lines.push("", `Project dir: no temp root is short enough for a dir as long as the recording's in ${paths.length} scenarios (${paths.map(({ scenario, projectDirLength }) => `${scenario} ${projectDirLength!.live} chars, recorded ${projectDirLength!.recorded}`).join("; ")}): the CLI names it in every request, so input tokens and costs differ by its length. Set TMPDIR to a shorter dir.`);
  }
  const depends = report.structure.filter((change) => change.runtimeReads).length;
  lines.push("", report.structure.length === 0 ? "Protocol structure: no change." : `Protocol structure (${report.structure.length} changes, ${depends} the runtime reads or depends on; whole values):`);
  for (const change of report.structure) {
    const where = change.scenarios.length === total ? "all scenarios" : change.scenarios.join(", ");
    const values = change.values?.length && !change.what.includes(": item ") ? ` = ${change.values.map((value) => JSON.stringify(value)).join(" | ")}` : "";
    lines.push(`  ${change.change.toUpperCase().padEnd(8)} ${change.what}${values}  [${where}] ${change.runtimeReads ? "RUNTIME READS IT" : "not read by the runtime"}`);
  }
  lines.push("", "Per scenario:");
  for (const drift of report.scenarios) {
    if (!drift.diff) continue;
    const body = renderDiff(drift.diff).filter((line) => !line.startsWith("CLI "));
    lines.push(`== ${drift.scenario}`, ...body.map((line) => `  ${line}`));
  }
  lines.push("", `${report.differing} of ${total} scenarios differ.${report.transcripts ? ` The live transcripts are kept in ${report.transcripts}.` : ""}`);
  return `${lines.join("\n")}\n`;
}

