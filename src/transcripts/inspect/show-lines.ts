/** One-line readings of single records in the timeline: the call record, the exit, system messages, a result. */
import type { CallRecord, InterruptRecord, SessionEndRecord, TurnEndRecord, TurnRecord } from "../format.js";
import { asJson, clip, quoted, compact, resultUsage, runEnd, endLabel, apiStatusOf, dollars, tokenText, opt, LINE_WIDTH, type Json } from "./text.js";

/** The call record: this call's own cost and tokens, and how the process ended for it. */
export function callText(record: CallRecord): string[] {
  const usage = record.usage
    ? tokenText({ input: record.usage.inputTokens, output: record.usage.outputTokens, cacheRead: record.usage.cacheReadInputTokens, cacheCreation: record.usage.cacheCreationInputTokens })
    : "not reported";
  const cost = record.costUsd === null ? "unknown" : `$${dollars(record.costUsd)}`;
  const where = record.process ? `call ${record.process.call} on process ${record.process.launch}` : "call (no process)";
  const error = record.error as { name?: unknown; message?: unknown } | undefined;
  const failed = error ? [clip(`the call failed: ${String(error.name)}: ${String(error.message)}`, LINE_WIDTH)] : [];
  return [`${where}: ${record.ending}`, `this call's tokens ${usage}; cost ${cost}`, ...failed];
}

export function exitText(record: { exitCode: number | null; signal: string | null }): string {
  const failed = (record.exitCode !== null && record.exitCode !== 0) || record.signal !== null;
  return `exit code=${record.exitCode ?? "none"}${record.signal ? ` signal=${record.signal}` : ""}${failed ? "  ERROR" : ""}`;
}

export function system(message: Json): string {
  if (message.subtype === "init") {
    const servers = Array.isArray(message.mcp_servers) ? message.mcp_servers.map((s) => `${String(asJson(s).name)}:${String(asJson(s).status)}`) : [];
    const tools = Array.isArray(message.tools) ? ` tools=${compact(message.tools, 100)}` : "";
    const mcp = Array.isArray(message.mcp_servers) ? ` mcp=${JSON.stringify(servers)}` : "";
    return `init${opt("model", message.model)}${tools}${mcp}${opt("permission", message.permissionMode)}${opt("version", message.claude_code_version)}`;
  }
  if (message.subtype === "api_retry") {
    const attempt = message.attempt !== undefined ? ` ${String(message.attempt)}${message.max_retries !== undefined ? `/${String(message.max_retries)}` : ""}` : "";
    const delay = typeof message.retry_delay_ms === "number" ? ` in ${Math.round(message.retry_delay_ms)} ms` : "";
    return `API retry${attempt}${delay} after ERROR${opt("status", message.error_status)} ${compact(message.error ?? "", 80)}`.trimEnd();
  }
  if (message.subtype === "compact_boundary") {
    const meta = asJson(message.compact_metadata);
    return `COMPACTED the conversation (${String(meta.trigger ?? "?")}): ${String(meta.pre_tokens ?? "?")} -> ${String(meta.post_tokens ?? "?")} tokens; a summary now stands for the turns before`;
  }
  if (message.subtype === "permission_denied") {
    return `permission DENIED by the CLI: ${String(message.tool_name)}${message.decision_reason_type ? ` (${String(message.decision_reason_type)})` : ""} ${quoted(String(message.message ?? ""))}`;
  }
  const { type: _type, subtype, session_id: _session, uuid: _uuid, ...rest } = message;
  return `system${subtype === undefined ? "" : `/${String(subtype)}`} ${compact(rest)}`;
}

export function result(message: Json): string[] {
  const end = runEnd(message);
  const flag = { ok: "", budget: " BUDGET STOP", interrupted: " INTERRUPTED", failed: " ERROR" }[end.state];
  const status = apiStatusOf(message.api_error_status, message.result, ...(Array.isArray(message.errors) ? message.errors : []));
  // The cause first: what went wrong reads before the figures.
  const lines = end.state === "ok" ? [] : [clip(endLabel(end), LINE_WIDTH - 40)];
  lines.push(`result ${String(message.subtype ?? "(no subtype)")}${flag}${opt("turns", message.num_turns)}${opt("stop", message.stop_reason)}${opt("terminal", message.terminal_reason)}${opt("api_status", status)}`);
  const usage = resultUsage(message);
  // Both over every model the run billed (subagents included); on a reused process, running totals.
  const cost = typeof message.total_cost_usd === "number" ? `; cost $${dollars(message.total_cost_usd)}` : "";
  lines.push(`tokens ${usage ? tokenText(usage) : "not reported"}${cost}`);
  const denials = Array.isArray(message.permission_denials) ? message.permission_denials.map((d) => String(asJson(d).tool_name)) : [];
  if (denials.length) lines.push(`permission denials: ${compact(denials)}`);
  return lines;
}


/** Where a session's turn ran: the process's pid, launch and the turn's call number on it. */
export function turnProcess(process: TurnRecord["process"]): string {
  if (!process) return "no process";
  return `pid ${process.pid ?? "?"}, process ${process.launch}, call ${process.call} on it`;
}

/** A session's turn begins (docs/transcript-format.md, "Sessions"). */
export function turnText(record: TurnRecord): string[] {
  const history = record.history === "replayed" ? " · history REPLAYED as text (a new process: the earlier one ended)" : "";
  return [clip(`══ session turn ${record.turn} · ${turnProcess(record.process)}${history} ══`, LINE_WIDTH), `input ${quoted(record.input)}`];
}

/** A session's turn ended: how, in how long, its tokens and cost. */
export function turnEndText(record: TurnEndRecord): string[] {
  const how = { ok: "ok", interrupted: "INTERRUPTED", failed: "FAILED" }[record.outcome];
  const usage = record.usage ? `; tokens ${tokenText({ input: record.usage.inputTokens, output: record.usage.outputTokens, cacheRead: record.usage.cacheReadInputTokens, cacheCreation: record.usage.cacheCreationInputTokens })}` : "";
  const cost = typeof record.costUsd === "number" ? `; cost $${dollars(record.costUsd)}` : "";
  const stop = typeof record.stopReason === "string" ? `, stop ${record.stopReason}` : "";
  const error = record.error ? [clip(`${record.error.name} (${record.error.code}): ${record.error.message}`, LINE_WIDTH)] : [];
  return [`end of session turn ${record.turn}: ${how}${stop} in ${record.durationMs} ms${usage}${cost}`, ...error];
}

export function interruptText(record: InterruptRecord): string {
  return `INTERRUPT asked by the caller (session turn ${record.turn})`;
}

export function sessionEndText(record: SessionEndRecord): string {
  return `session closed after ${record.turns} turn(s)`;
}
