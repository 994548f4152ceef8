/** `transcript summary`: one screen of figures about a run, built one record at a time. */
import { isRawCapture, type LoadedTranscript } from "../reader.js";
import type { CallRecord, RequestRecord, TurnEndRecord, TurnRecord } from "../format.js";
import { parse, asJson, messageKey, usageOf, billedUsageOf, runEnd, apiStatusOf, addUsage, dollars, isSyntheticAssistant, ZERO_USAGE, type RunEnd, type Usage, type Json, type Rec } from "./text.js";

/**
 * Where the token figures come from, widest scope first: `call` (the call record: this call's own
 * figures as the runtime computed them), `billed` (the results' per-model usage: every model,
 * subagents included, the scope `total_cost_usd` covers), `result` (the results' `usage`: the main
 * thread only, from a CLI that reports nothing per model), `assistant` (no result: early snapshots).
 */
export type TokenSource = "call" | "billed" | "result" | "assistant" | "none";

/** A request record without its body. */
export type RequestSummary = Omit<RequestRecord, "body">;

export interface TranscriptSummary {
  path: string;
  /** `stream-json` for a raw capture (the CLI's stdout only: no timing, no host lines, no exit). */
  source: "transcript" | "stream-json";
  cliVersion: string;
  /** null when no timing was recorded (a raw capture). */
  durationMs: number | null;
  messages: { fromCli: Record<string, number>; toCli: Record<string, number> };
  /** Main-thread model responses (distinct assistant message ids; a synthetic API-error line is none). */
  turns: number;
  /** Model responses of subagents (messages with a `parent_tool_use_id`). */
  subagentTurns: number;
  /**
   * Every tool result, named by its tool_use; `subagent` for a subagent's own calls; then every
   * tool_use that got no result (an interrupted or crashed run), with `noResult`.
   */
  toolCalls: Array<{ name: string; isError: boolean; subagent?: true; noResult?: true }>;
  deniedPermissions: string[];
  result?: { subtype: string; isError: boolean; numTurns?: number; terminalReason?: string; stopReason?: string; costUsd?: number; apiErrorStatus?: number };
  /** How the run ended by its last result: ok, budget, interrupted or failed, with the cause. */
  end?: RunEnd;
  /** What the reader noticed about the file, e.g. a truncated last line. */
  notes: string[];
  /** Tokens over the same scope as `costUsd` (see `TokenSource`); `models` when billed per model. */
  tokens: Usage & { source: TokenSource; models?: string[] };
  /** The main thread's own tokens (the results' `usage`), when they differ from `tokens`. */
  mainThreadTokens?: Usage;
  costUsd?: number;
  exit?: { exitCode: number | null; signal: string | null };
  /** The call record (written by the runtime at the end of each call; older transcripts lack it). */
  call?: { costUsd: number | null; usage: Usage | null; ending: string; launch: string | null; callOnProcess: number | null };
  /** What each Messages request carried, as the runtime's interceptor saw it (the call record's `requests`; docs/transcript-format.md). */
  requests?: RequestSummary[];
  /** What the interceptor refused while the call ran (the call record's `refused`). */
  refused?: string[];
  /** How the CLI process ended for this run: the call record's ending, else the exit record. */
  ending: string;
  /** Bytes the CLI wrote to stderr; null for a raw capture, which records no stderr (unknown, not 0). */
  stderrBytes: number | null;
  nonJsonLines: number;
  outcome?: Json;
  /** A session's transcript (docs/transcript-format.md, "Sessions"): its turns, the processes they ran on, how it was closed. */
  session?: SessionSummary;
}

/** One turn of a session, from its `turn` and `turn_end` records and its call record. */
export interface SessionTurnSummary {
  turn: number;
  input: string;
  history: "native" | "replayed";
  /** `running` when the file has no end for it (a host that died mid-turn). */
  outcome: "ok" | "interrupted" | "failed" | "running";
  durationMs?: number;
  usage?: Usage;
  costUsd?: number;
  stopReason?: string;
  /** The process: its pid, launch id and this turn's call number on it. */
  pid?: number;
  launch?: string;
  callOnProcess?: number;
  /** How the process ended for this turn (its call record's ending). */
  ending?: string;
  interrupted: boolean;
  error?: { name: string; code: string; message: string };
}

export interface SessionSummary {
  turns: SessionTurnSummary[];
  /** The CLI processes the session's turns ran on, in order (launch ids). */
  processes: string[];
  closed: boolean;
}

function count(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

const sameUsage = (a: Usage, b: Usage) => a.input === b.input && a.output === b.output && a.cacheRead === b.cacheRead && a.cacheCreation === b.cacheCreation;

/** The results of one CLI process (one header): per-model figures are per result or running totals. */
class ProcessFigures {
  results = 0;
  /** Sum of `model_usage_since_last_result` (each result's own). */
  sinceLast: Usage | undefined;
  sinceLastCost: number | undefined = 0;
  /** The last `modelUsage` (a running total over the process). */
  running: Usage | undefined;
  /** The last `total_cost_usd` (a running total too). */
  runningCost: number | undefined;
  models = new Set<string>();
  mainThread: Usage = { ...ZERO_USAGE };

  add(result: Json): void {
    this.results += 1;
    const since = billedUsageOf(result.model_usage_since_last_result);
    if (since) {
      this.sinceLast = addUsage(this.sinceLast ?? ZERO_USAGE, since);
      this.sinceLastCost = since.costUsd !== undefined && this.sinceLastCost !== undefined ? this.sinceLastCost + since.costUsd : undefined;
      since.models.forEach((model) => this.models.add(model));
    }
    const running = billedUsageOf(result.modelUsage);
    if (running) {
      this.running = running;
      running.models.forEach((model) => this.models.add(model));
    }
    if (typeof result.total_cost_usd === "number") this.runningCost = result.total_cost_usd;
    const usage = usageOf(result.usage);
    if (usage) this.mainThread = addUsage(this.mainThread, usage);
  }

  /** Tokens and cost over one scope. */
  totals(): { tokens: Usage; billed: boolean; cost: number | undefined } {
    if (this.sinceLast) return { tokens: this.sinceLast, billed: true, cost: this.sinceLastCost ?? (this.results === 1 ? this.runningCost : undefined) };
    if (this.running) return { tokens: this.running, billed: true, cost: this.runningCost };
    return { tokens: this.mainThread, billed: false, cost: this.runningCost };
  }
}

/** Builds a summary one record at a time. */
export class SummaryBuilder {
  private readonly summary: TranscriptSummary;
  private readonly toolNames = new Map<string, string>();
  /** tool_use ids still waiting for their tool_result, with whether a subagent made them. */
  private readonly pendingToolUses = new Map<string, { subagent: boolean }>();
  /** Last usage seen per assistant message id (the CLI repeats a message once per content block). */
  private readonly assistantUsage = new Map<string, Usage>();
  private readonly subagentIds = new Set<string>();
  private readonly processes: ProcessFigures[] = [];
  private raw = false;
  /** A header that names a reused process (transcripts before the call record): no exit is expected. */
  private reusedProcess = false;
  /** Every call record of a session's file (each turn's): a session's figures are their sum. */
  private readonly sessionCalls: CallRecord[] = [];
  private sessionTurn: SessionTurnSummary | undefined;

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
      tokens: { ...ZERO_USAGE, source: "none" },
      ending: "no exit recorded",
      stderrBytes: 0,
      nonJsonLines: 0,
    };
  }

  add(record: Rec): void {
    const summary = this.summary;
    if (record.kind === "header") {
      if (summary.cliVersion === "unknown") summary.cliVersion = record.cliVersion;
      if (isRawCapture(record)) this.raw = true;
      if ((record as { process?: unknown }).process !== undefined) this.reusedProcess = true;
      this.processes.push(new ProcessFigures());
    }
    if (record.kind === "note") summary.notes.push(record.text);
    if ("t" in record && typeof record.t === "number" && summary.durationMs !== null) summary.durationMs = Math.max(summary.durationMs, record.t);
    if (record.kind === "stderr") summary.stderrBytes = (summary.stderrBytes ?? 0) + record.text.length;
    if (record.kind === "exit") summary.exit = { exitCode: record.exitCode, signal: record.signal };
    if (record.kind === "header" && (record as { session?: unknown }).session === true) {
      summary.session ??= { turns: [], processes: [], closed: false };
      const launch = (record as { process?: { launch?: unknown } }).process?.launch;
      if (typeof launch === "string") summary.session.processes.push(launch);
    }
    if (record.kind === "turn") this.turn(record);
    if (record.kind === "turn_end") this.turnEnd(record);
    if (record.kind === "interrupt" && this.sessionTurn?.turn === record.turn) this.sessionTurn.interrupted = true;
    if (record.kind === "session_end" && summary.session) summary.session.closed = true;
    if (record.kind === "call") this.call(record);
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
    if (this.raw) {
      summary.source = "stream-json";
      summary.durationMs = null;
      summary.stderrBytes = null;
    }
    for (const [id, { subagent }] of this.pendingToolUses) summary.toolCalls.push({ name: this.toolNames.get(id)!, isError: false, noResult: true, ...(subagent ? { subagent: true as const } : {}) });
    summary.turns = this.assistantUsage.size;
    summary.subagentTurns = this.subagentIds.size;
    const withResults = this.processes.filter((figures) => figures.results > 0);
    if (withResults.length > 0) {
      const totals = withResults.map((figures) => figures.totals());
      const billed = totals.every((total) => total.billed);
      const tokens = totals.reduce<Usage>((sum, total) => addUsage(sum, total.tokens), { ...ZERO_USAGE });
      const models = [...new Set(withResults.flatMap((figures) => [...figures.models]))];
      summary.tokens = { ...tokens, source: billed ? "billed" : "result", ...(billed ? { models } : {}) };
      const mainThread = withResults.reduce<Usage>((sum, figures) => addUsage(sum, figures.mainThread), { ...ZERO_USAGE });
      if (billed && !sameUsage(mainThread, tokens)) summary.mainThreadTokens = mainThread;
      if (totals.every((total) => total.cost !== undefined)) summary.costUsd = dollars(totals.reduce((sum, total) => sum + total.cost!, 0));
    } else if (this.assistantUsage.size > 0) {
      summary.tokens = { ...[...this.assistantUsage.values()].reduce<Usage>(addUsage, { ...ZERO_USAGE }), source: "assistant" };
    }
    // The call record is the runtime's own account of this call: it wins over the result lines,
    // which on a reused process carry the process's running totals.
    const call = summary.call;
    if (call?.usage) summary.tokens = { ...call.usage, source: "call" };
    if (call && call.costUsd !== null && !summary.session) summary.costUsd = dollars(call.costUsd);
    // A session's figures are its turns' together (each call record is one turn's own).
    if (summary.session && this.sessionCalls.length > 0) {
      const usages = this.sessionCalls.map((record) => record.usage);
      summary.tokens = { ...usages.reduce<Usage>((sum, usage) => (usage ? addUsage(sum, { input: usage.inputTokens, output: usage.outputTokens, cacheRead: usage.cacheReadInputTokens, cacheCreation: usage.cacheCreationInputTokens }) : sum), { ...ZERO_USAGE }), source: "call" };
      // A turn that failed (interrupted, crashed) has no cost of its own: the sum is of the turns that reported one.
      summary.costUsd = dollars(this.sessionCalls.reduce((sum, record) => sum + (record.costUsd ?? 0), 0));
    }
    if (call) summary.ending = call.ending;
    else if (this.raw) summary.ending = "not recorded (raw capture)";
    else if (summary.exit) summary.ending = exitEnding(summary.exit);
    else if (this.reusedProcess) summary.ending = "no exit recorded: a call on a reused process, which may have stayed up for later calls";
    return summary;
  }

  private turn(record: TurnRecord): void {
    const session = (this.summary.session ??= { turns: [], processes: [], closed: false });
    this.sessionTurn = {
      turn: record.turn,
      input: record.input,
      history: record.history,
      outcome: "running",
      interrupted: false,
      ...(record.process ? { pid: record.process.pid, launch: record.process.launch, callOnProcess: record.process.call } : {}),
    };
    session.turns.push(this.sessionTurn);
  }

  private turnEnd(record: TurnEndRecord): void {
    const turn = this.summary.session?.turns.find((candidate) => candidate.turn === record.turn);
    if (!turn) return;
    turn.outcome = record.outcome;
    turn.durationMs = record.durationMs;
    if (record.usage) turn.usage = { input: record.usage.inputTokens, output: record.usage.outputTokens, cacheRead: record.usage.cacheReadInputTokens, cacheCreation: record.usage.cacheCreationInputTokens };
    if (record.costUsd !== undefined) turn.costUsd = dollars(record.costUsd);
    if (typeof record.stopReason === "string") turn.stopReason = record.stopReason;
    if (record.error) turn.error = record.error;
  }

  private call(record: CallRecord): void {
    if (this.summary.session) {
      this.sessionCalls.push(record);
      if (this.sessionTurn) this.sessionTurn.ending = record.ending;
    }
    const usage = record.usage
      ? { input: record.usage.inputTokens, output: record.usage.outputTokens, cacheRead: record.usage.cacheReadInputTokens, cacheCreation: record.usage.cacheCreationInputTokens }
      : null;
    this.summary.call = { costUsd: record.costUsd, usage, ending: record.ending, launch: record.process?.launch ?? null, callOnProcess: record.process?.call ?? null };
    const { requests, refused } = record as { requests?: unknown; refused?: unknown };
    if (Array.isArray(requests)) this.summary.requests = requests.map(({ body: _body, ...rest }: RequestRecord) => rest);
    if (Array.isArray(refused) && refused.length > 0) this.summary.refused = refused.map(String);
  }

  private fromCli(message: Json): void {
    const content = asJson(message.message).content;
    const blocks = Array.isArray(content) ? content.map(asJson) : [];
    const subagent = message.parent_tool_use_id != null;
    if (message.type === "assistant") {
      const inner = asJson(message.message);
      // A subagent's tool calls are named too; its turns are counted apart from the run's own. A
      // synthetic API-error line is the CLI's report, not a model response.
      if (subagent) this.subagentIds.add(String(inner.id));
      else if (!isSyntheticAssistant(message)) this.assistantUsage.set(String(inner.id), usageOf(inner.usage) ?? { ...ZERO_USAGE });
      for (const block of blocks) {
        if (block.type !== "tool_use") continue;
        this.toolNames.set(String(block.id), String(block.name));
        this.pendingToolUses.set(String(block.id), { subagent });
      }
      if (isSyntheticAssistant(message)) this.syntheticStatus = apiStatusOf(message.api_error_status, ...blocks.map((block) => block.text));
    }
    if (message.type === "system" && message.subtype === "init" && this.summary.cliVersion === "unknown" && typeof message.claude_code_version === "string") {
      this.summary.cliVersion = message.claude_code_version;
    }
    if (message.type === "user") {
      for (const block of blocks) {
        if (block.type !== "tool_result") continue;
        const name = this.toolNames.get(String(block.tool_use_id)) ?? `(unknown tool ${String(block.tool_use_id)})`;
        this.pendingToolUses.delete(String(block.tool_use_id));
        this.summary.toolCalls.push({ name, isError: block.is_error === true, ...(subagent ? { subagent: true as const } : {}) });
      }
    }
    if (message.type === "result") this.result(message);
  }

  /** The status of the last synthetic API-error line, for a result that names none. */
  private syntheticStatus: number | undefined;

  private result(message: Json): void {
    if (this.processes.length === 0) this.processes.push(new ProcessFigures());
    this.processes.at(-1)!.add(message);
    this.summary.end = runEnd(message);
    const apiErrorStatus = apiStatusOf(message.api_error_status, message.result, ...(Array.isArray(message.errors) ? message.errors : [])) ?? (message.is_error === true ? this.syntheticStatus : undefined);
    this.summary.result = {
      subtype: String(message.subtype),
      isError: message.is_error === true,
      ...(typeof message.num_turns === "number" ? { numTurns: message.num_turns } : {}),
      ...(typeof message.terminal_reason === "string" ? { terminalReason: message.terminal_reason } : {}),
      ...(typeof message.stop_reason === "string" ? { stopReason: message.stop_reason } : {}),
      ...(typeof message.total_cost_usd === "number" ? { costUsd: dollars(message.total_cost_usd) } : {}),
      ...(apiErrorStatus !== undefined ? { apiErrorStatus } : {}),
    };
  }
}

export function exitEnding(exit: { exitCode: number | null; signal: string | null }): string {
  return exit.signal ? `signal ${exit.signal}` : `exited ${exit.exitCode ?? "(no code)"}`;
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
