/** The text of `transcript summary`: one screen, every line at most LINE_WIDTH characters. */
import { clip, endLabel, tokenText, LINE_WIDTH } from "../transcripts/inspect/text.js";
import type { TranscriptSummary } from "../transcripts/inspect.js";

const TOKEN_SOURCES: Record<TranscriptSummary["tokens"]["source"], string> = {
  call: "the call record: this call's own, as the runtime computed them",
  billed: "the per-model usage the cost is billed on: every model, subagents included",
  result: "the result lines' usage: the main thread; no per-model figures in this run",
  assistant: "the assistant lines, no result: output counts are early snapshots",
  none: "nothing: no usage recorded",
};

/** `name ×3 (1 error, 1 without a result)`, in order of first use; a subagent's calls apart. */
function toolCallCounts(calls: TranscriptSummary["toolCalls"]): string {
  const counts = new Map<string, { calls: number; errors: number; unanswered: number }>();
  for (const call of calls) {
    const key = `${call.name}${call.subagent ? " (subagent)" : ""}`;
    const entry = counts.get(key) ?? { calls: 0, errors: 0, unanswered: 0 };
    entry.calls += 1;
    if (call.isError) entry.errors += 1;
    if (call.noResult) entry.unanswered += 1;
    counts.set(key, entry);
  }
  return [...counts]
    .map(([name, { calls: n, errors, unanswered }]) => {
      const notes = [errors ? `${errors} error${errors === 1 ? "" : "s"}` : "", unanswered ? `${unanswered} without a result` : ""].filter(Boolean);
      return `${name} ×${n}${notes.length ? ` (${notes.join(", ")})` : ""}`;
    })
    .join(", ");
}

/** A session's turns, one line each: how it ended, how long, its tokens and cost, which process. */
function sessionLines(session: NonNullable<TranscriptSummary["session"]>): string[] {
  const lines = [`  session: ${session.turns.length} turn(s) on ${session.processes.length} CLI process(es)${session.closed ? ", closed" : ", not closed in this file"}`];
  for (const turn of session.turns) {
    const how = { ok: "ok", interrupted: "INTERRUPTED", failed: "FAILED", running: "no end recorded" }[turn.outcome];
    const figures = [
      turn.durationMs !== undefined ? `${turn.durationMs} ms` : "",
      turn.usage ? `tokens ${tokenText(turn.usage)}` : "",
      turn.costUsd !== undefined ? `$${turn.costUsd.toFixed(6)}` : "",
      turn.pid !== undefined || turn.launch ? `pid ${turn.pid ?? "?"} (process ${turn.launch ?? "?"}, call ${turn.callOnProcess ?? "?"})` : "no process",
      turn.history === "replayed" ? "history replayed" : "",
      // A failed call's ending repeats its error, which the next line gives whole.
      turn.ending ? `process: ${turn.error ? turn.ending.replace(/^(retired: call failed):.*$/s, "$1") : turn.ending}` : "",
    ].filter(Boolean);
    lines.push(`  turn ${turn.turn}: ${how}${turn.interrupted && turn.outcome !== "interrupted" ? " (interrupt asked)" : ""}; ${figures.join("; ")}`);
    if (turn.error) lines.push(`    ${turn.error.name} (${turn.error.code}): ${turn.error.message}`);
  }
  return lines;
}

export function renderSummary(summary: TranscriptSummary): string {
  const table = (counts: Record<string, number>) =>
    Object.entries(counts)
      .sort()
      .map(([key, n]) => `    ${String(n).padStart(4)}  ${key}`)
      .join("\n");
  const raw = summary.source === "stream-json";
  const { tokens } = summary;
  const end = summary.end ? endLabel(summary.end) : "no result line: the run did not finish (or the capture was cut)";
  const calls = summary.toolCalls.length;
  const failed = summary.toolCalls.filter((call) => call.isError).length;
  const unanswered = summary.toolCalls.filter((call) => call.noResult).length;
  const callNotes = [failed ? `${failed} failed` : "", unanswered ? `${unanswered} without a result` : ""].filter(Boolean);
  const lines = [
    `${summary.path}${raw ? " (raw stream-json capture: the CLI's stdout only, no timing)" : ""}`,
    `  CLI ${summary.cliVersion}, ${summary.durationMs === null ? "duration not recorded" : `${summary.durationMs.toFixed(0)} ms`}, process: ${summary.ending}`,
    ...(summary.call?.launch && !summary.session ? [`  call ${summary.call.callOnProcess} on process launch ${summary.call.launch}`] : []),
    `  ended: ${end}`,
    `  result: ${summary.result ? JSON.stringify(summary.result) : "none"}`,
    `  turns: ${summary.turns}${summary.subagentTurns ? ` (and ${summary.subagentTurns} subagent turns)` : ""}${summary.session ? " model responses over the session (its own turns are listed below)" : ""}`,
    ...(summary.session ? [`  (a session: "ended", "result" and "process" are its last turn's; tokens and cost are its turns' together, a failed turn's counting 0)`] : []),
    `  tokens: ${tokenText(tokens)}${tokens.models?.length ? ` over ${tokens.models.join(", ")}` : ""} (from ${summary.session && tokens.source === "call" ? "the call records: each turn's own, summed" : TOKEN_SOURCES[tokens.source]})`,
    ...(summary.mainThreadTokens ? [`  of which the main thread: ${tokenText(summary.mainThreadTokens)}`] : []),
    `  cost: ${summary.costUsd === undefined ? "unknown" : `$${summary.costUsd.toFixed(6)}`}${summary.costUsd !== undefined && tokens.source !== "none" ? " (the same scope as the tokens)" : ""}`,
    `  tool calls: ${calls === 0 ? "none" : `${calls}${callNotes.length ? ` (${callNotes.join(", ")})` : ""}: ${toolCallCounts(summary.toolCalls)}`}`,
    ...(raw ? [] : [`  permission denials sent: ${summary.deniedPermissions.length}`]),
    `  from the CLI:\n${table(summary.messages.fromCli) || "    none"}`,
    ...(raw ? [] : [`  to the CLI:\n${table(summary.messages.toCli) || "    none"}`]),
    `  stderr: ${raw ? "not recorded" : `${summary.stderrBytes} bytes`}; non-JSON stdout lines: ${summary.nonJsonLines}`,
  ];
  if (summary.session) lines.push(...sessionLines(summary.session));
  for (const [index, request] of (summary.requests ?? []).entries()) {
    const { bytes, usage } = request;
    const tokens = usage ? `, tokens in ${usage.input_tokens ?? "?"} out ${usage.output_tokens ?? "?"}` : "";
    lines.push(`  request ${index + 1}: ${bytes.total} B (system ${bytes.system}, messages ${bytes.messages}, tools ${bytes.tools}, rest ${bytes.rest}), ${request.betas.length} betas, status ${request.status ?? request.error ?? "?"}${tokens}, first byte ${request.firstByteMs ?? "?"} ms, last ${request.lastByteMs ?? "?"} ms`);
  }
  if (summary.refused) lines.push(`  refused by the interceptor: ${summary.refused.join(", ")}`);
  for (const note of summary.notes) lines.push(`  note: ${note}`);
  if (summary.outcome) lines.push(`  outcome: ${JSON.stringify(summary.outcome)}`);
  return `${lines.flatMap((line) => line.split("\n")).map((line) => clip(line, LINE_WIDTH)).join("\n")}\n`;
}
