/** `transcript summary`: one screen of figures about a run, built one record at a time. */
import { isRawCapture, type LoadedTranscript } from "../reader.js";
import { parse, asJson, messageKey, usageOf, resultUsage, runEnd, type RunEnd, type Usage, type Json, type Rec } from "./text.js";

export interface TranscriptSummary {
  path: string;
  /** `stream-json` for a raw capture (the CLI's stdout only: no timing, no host lines, no exit). */
  source: "transcript" | "stream-json";
  cliVersion: string;
  /** 0 for a raw capture (no timing recorded). */
  durationMs: number;
  messages: { fromCli: Record<string, number>; toCli: Record<string, number> };
  /** Model responses (distinct assistant message ids). */
  turns: number;
  /** Main-thread model responses and those of subagents (messages with a `parent_tool_use_id`). */
  subagentTurns: number;
  /** Every tool result, named by its tool_use; `subagent` for a subagent's own calls. */
  toolCalls: Array<{ name: string; isError: boolean; subagent?: true }>;
  deniedPermissions: string[];
  result?: { subtype: string; isError: boolean; numTurns?: number; terminalReason?: string; stopReason?: string; costUsd?: number; apiErrorStatus?: number };
  /** How the run ended by its last result: ok, interrupted or failed, with the cause. */
  end?: RunEnd;
  /** What the reader noticed about the file, e.g. a truncated last line. */
  notes: string[];
  /**
   * From the `result` lines (summed over processes; per-model figures when `usage` is all zeros);
   * from the assistant lines when there is no result (input exact, output only message_start's count).
   */
  tokens: Usage & { source: "result" | "assistant" | "none" };
  costUsd?: number;
  exit?: { exitCode: number | null; signal: string | null };
  /** From the `call` record: how the process ended for this call, and the launch it ran on. */
  process?: { ending: string; launch: string; call: number };
  stderrBytes: number;
  nonJsonLines: number;
  outcome?: Json;
}

function count(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

function addUsage(total: Usage, usage: Usage): void {
  total.input += usage.input;
  total.output += usage.output;
  total.cacheRead += usage.cacheRead;
  total.cacheCreation += usage.cacheCreation;
}

/** Builds a summary one record at a time. */
export class SummaryBuilder {
  private readonly summary: TranscriptSummary;
  private readonly toolNames = new Map<string, string>();
  /** Last usage seen per assistant message id (the CLI repeats a message once per content block). */
  private readonly assistantUsage = new Map<string, Usage>();
  private readonly subagentIds = new Set<string>();
  private readonly resultUsage: Usage = { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 };
  private results = 0;

  constructor(path: string) {
    this.summary = {
      path,
      source: "transcript",
      cliVersion: "unknown",
      durationMs: 0,
      messages: { fromCli: {}, toCli: {} },
      turns: 0,
      subagentTurns: 0,
      toolCalls: [],
      notes: [],
      deniedPermissions: [],
      tokens: { input: 0, output: 0, cacheRead: 0, cacheCreation: 0, source: "none" },
      stderrBytes: 0,
      nonJsonLines: 0,
    };
  }

  add(record: Rec): void {
    const summary = this.summary;
    if (record.kind === "header" && summary.cliVersion === "unknown") summary.cliVersion = record.cliVersion;
    if (record.kind === "header" && isRawCapture(record)) summary.source = "stream-json";
    if (record.kind === "note") summary.notes.push(record.text);
    if ("t" in record && typeof record.t === "number") summary.durationMs = Math.max(summary.durationMs, record.t);
    if (record.kind === "stderr") summary.stderrBytes += record.text.length;
    if (record.kind === "exit") summary.exit = { exitCode: record.exitCode, signal: record.signal };
    if (record.kind === "outcome") summary.outcome = record.outcome;
    if (record.kind === "call") {
      summary.process = { ending: record.ending, launch: record.process.launch, call: record.process.call };
      // The call's own cost: a reused process's result line carries the process's running total.
      if (record.costUsd !== null) summary.costUsd = record.costUsd;
      return;
    }
    if (record.kind !== "in" && record.kind !== "out") return;
    const message = parse(record.text);
    if (!message) {
      summary.nonJsonLines += 1;
      return;
    }
    count(record.kind === "in" ? summary.messages.fromCli : summary.messages.toCli, messageKey(message));
    if (record.kind === "out") {
      const response = asJson(asJson(message.response).response);
      if (response.behavior === "deny") summary.deniedPermissions.push(String(response.message ?? ""));
      return;
    }
    this.fromCli(message);
  }

  finish(): TranscriptSummary {
    const summary = this.summary;
    summary.turns = this.assistantUsage.size;
    summary.subagentTurns = this.subagentIds.size;
    if (this.results > 0) summary.tokens = { ...this.resultUsage, source: "result" };
    else if (this.assistantUsage.size > 0) {
      const total: Usage = { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 };
      for (const usage of this.assistantUsage.values()) addUsage(total, usage);
      summary.tokens = { ...total, source: "assistant" };
    }
    return summary;
  }

  private fromCli(message: Json): void {
    const content = asJson(message.message).content;
    const blocks = Array.isArray(content) ? content.map(asJson) : [];
    const subagent = message.parent_tool_use_id != null;
    if (message.type === "assistant") {
      const inner = asJson(message.message);
      // A subagent's tool calls are named too; its turns are counted apart from the run's own.
      if (subagent) this.subagentIds.add(String(inner.id));
      else this.assistantUsage.set(String(inner.id), usageOf(inner.usage) ?? { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 });
      for (const block of blocks) if (block.type === "tool_use") this.toolNames.set(String(block.id), String(block.name));
    }
    if (message.type === "system" && message.subtype === "init" && this.summary.cliVersion === "unknown" && typeof message.claude_code_version === "string") {
      this.summary.cliVersion = message.claude_code_version;
    }
    if (message.type === "user") {
      for (const block of blocks) {
        if (block.type !== "tool_result") continue;
        const name = this.toolNames.get(String(block.tool_use_id)) ?? `(unknown tool ${String(block.tool_use_id)})`;
        this.summary.toolCalls.push({ name, isError: block.is_error === true, ...(subagent ? { subagent: true as const } : {}) });
      }
    }
    if (message.type === "result") this.result(message);
  }

  private result(message: Json): void {
    this.results += 1;
    const usage = resultUsage(message);
    if (usage) addUsage(this.resultUsage, usage);
    this.summary.end = runEnd(message);
    if (typeof message.total_cost_usd === "number") this.summary.costUsd = (this.summary.costUsd ?? 0) + message.total_cost_usd;
    this.summary.result = {
      subtype: String(message.subtype),
      isError: message.is_error === true,
      numTurns: message.num_turns as number | undefined,
      terminalReason: message.terminal_reason as string | undefined,
      stopReason: message.stop_reason as string | undefined,
      costUsd: message.total_cost_usd as number | undefined,
      apiErrorStatus: (message.api_error_status as number | null | undefined) ?? undefined,
    };
  }
}

export function summarizeTranscript(transcript: LoadedTranscript): TranscriptSummary {
  const builder = new SummaryBuilder(transcript.path);
  for (const record of transcript.records) builder.add(record);
  return builder.finish();
}

export async function summarizeRecords(path: string, records: AsyncIterable<Rec>): Promise<TranscriptSummary> {
  const builder = new SummaryBuilder(path);
  for await (const record of records) builder.add(record);
  return builder.finish();
}
