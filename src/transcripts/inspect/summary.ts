/** `transcript summary`: one screen of figures about a run, built one record at a time. */
import type { LoadedTranscript } from "../reader.js";
import { parse, asJson, messageKey, usageOf, type Usage, type Json, type Rec } from "./text.js";

export interface TranscriptSummary {
  path: string;
  cliVersion: string;
  durationMs: number;
  messages: { fromCli: Record<string, number>; toCli: Record<string, number> };
  /** Model responses (distinct assistant message ids). */
  turns: number;
  toolCalls: Array<{ name: string; isError: boolean }>;
  deniedPermissions: string[];
  result?: { subtype: string; isError: boolean; numTurns?: number; terminalReason?: string; stopReason?: string; costUsd?: number; apiErrorStatus?: number };
  /** From the `result` lines (summed over processes); from the assistant lines when there is no result. */
  tokens: Usage & { source: "result" | "assistant" | "none" };
  costUsd?: number;
  exit?: { exitCode: number | null; signal: string | null };
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
  private readonly resultUsage: Usage = { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 };
  private results = 0;

  constructor(path: string) {
    this.summary = {
      path,
      cliVersion: "?",
      durationMs: 0,
      messages: { fromCli: {}, toCli: {} },
      turns: 0,
      toolCalls: [],
      deniedPermissions: [],
      tokens: { input: 0, output: 0, cacheRead: 0, cacheCreation: 0, source: "none" },
      stderrBytes: 0,
      nonJsonLines: 0,
    };
  }

  add(record: Rec): void {
    const summary = this.summary;
    if (record.kind === "header" && summary.cliVersion === "?") summary.cliVersion = record.cliVersion;
    if ("t" in record) summary.durationMs = Math.max(summary.durationMs, Number(record.t));
    if (record.kind === "stderr") summary.stderrBytes += record.text.length;
    if (record.kind === "exit") summary.exit = { exitCode: record.exitCode, signal: record.signal };
    if (record.kind === "outcome") summary.outcome = record.outcome;
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
    if (message.type === "assistant" && message.parent_tool_use_id == null) {
      const inner = asJson(message.message);
      this.assistantUsage.set(String(inner.id), usageOf(inner.usage) ?? { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 });
      for (const block of blocks) if (block.type === "tool_use") this.toolNames.set(String(block.id), String(block.name));
    }
    if (message.type === "user") {
      for (const block of blocks) {
        if (block.type === "tool_result") this.summary.toolCalls.push({ name: this.toolNames.get(String(block.tool_use_id)) ?? "?", isError: block.is_error === true });
      }
    }
    if (message.type === "result") this.result(message);
  }

  private result(message: Json): void {
    this.results += 1;
    const usage = usageOf(message.usage);
    if (usage) addUsage(this.resultUsage, usage);
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
