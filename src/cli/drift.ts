/**
 * The drift report of `fixtures compare`: outcomes first (per scenario, same or changed), then what
 * changed in the protocol across all scenarios (message types, fields, list items such as
 * capabilities and tools, with whole values), crashes with their cause, then each scenario's diff.
 */
import { existsSync } from "node:fs";
import { loadTranscript } from "../transcripts/reader.js";
import { isEmptyDiff, renderDiff, summarizeTranscript, type TranscriptDiff } from "../transcripts/inspect.js";

export interface ScenarioDrift {
  scenario: string;
  /** `same`: the runtime call returned the same outcome as recorded. */
  outcome: "same" | "changed" | "no fixture";
  before?: unknown;
  after?: unknown;
  diff?: TranscriptDiff;
  /** The CLI died in this scenario: its exit, stderr and the kept transcript that holds the cause. */
  crash?: { exitCode: number | null; signal: string | null; stderr: string; transcript: string };
}

/** One protocol change and the scenarios it showed up in. */
export interface StructuralChange {
  what: string;
  scenarios: string[];
}

export interface DriftReport {
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

/** Changes that are about the protocol's shape, gathered over every scenario. */
export function structuralChanges(drifts: readonly ScenarioDrift[]): StructuralChange[] {
  const found = new Map<string, Set<string>>();
  const note = (what: string, scenario: string) => found.set(what, (found.get(what) ?? new Set()).add(scenario));
  for (const drift of drifts) {
    const diff = drift.diff;
    if (!diff) continue;
    for (const type of diff.addedMessageTypes) note(`new message type ${type}`, drift.scenario);
    for (const type of diff.removedMessageTypes) note(`removed message type ${type}`, drift.scenario);
    for (const [key, fields] of Object.entries(diff.addedFields)) for (const field of fields) note(`${key}: new field ${field}`, drift.scenario);
    for (const [key, fields] of Object.entries(diff.removedFields)) for (const field of fields) note(`${key}: removed field ${field}`, drift.scenario);
    for (const change of diff.valueChanges) {
      // A list of plain values (capabilities, tools, models, output styles): its items are structure.
      if (!change.added && !change.removed) continue;
      const where = `${change.direction === "in" ? "<<" : ">>"} ${change.key} ${change.path}`;
      for (const item of change.added ?? []) note(`${where}: added ${JSON.stringify(item)}`, drift.scenario);
      for (const item of change.removed ?? []) note(`${where}: removed ${JSON.stringify(item)}`, drift.scenario);
    }
    if (diff.controlRequests) note(`control requests: ${diff.controlRequests.before.join(" ")} -> ${diff.controlRequests.after.join(" ")}`, drift.scenario);
  }
  return [...found].map(([what, scenarios]) => ({ what, scenarios: [...scenarios] }));
}

export function differs(drift: ScenarioDrift): boolean {
  return drift.outcome !== "same" || (drift.diff !== undefined && !isEmptyDiff(drift.diff));
}

export function renderDriftReport(report: DriftReport): string {
  const total = report.scenarios.length;
  const lines = [
    `Drift of CLI ${report.version} (${report.cli}) against the ${report.against} fixtures`,
    `(before = the recorded ${report.against} fixtures, after = the live ${report.version} runs; "added" is what only ${report.version} has)`,
    "",
  ];
  const { same, changed, missingFixtures } = report.outcomes;
  lines.push(changed === 0 && missingFixtures === 0 ? `Outcomes: identical in all ${total} scenarios.` : `Outcomes: ${same} of ${total} the same, ${changed} changed${missingFixtures ? `, ${missingFixtures} without a fixture` : ""}.`);
  const width = Math.max(...report.scenarios.map((drift) => drift.scenario.length)) + 2;
  for (const drift of report.scenarios) {
    const json = (value: unknown) => (value === undefined ? "(none)" : JSON.stringify(value));
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
  lines.push("", report.structure.length === 0 ? "Protocol structure: no change." : `Protocol structure (${report.structure.length} changes, whole values):`);
  for (const change of report.structure) {
    const where = change.scenarios.length === total ? "all scenarios" : change.scenarios.join(", ");
    lines.push(`  ${change.what}  [${where}]`);
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

