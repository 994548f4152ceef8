/**
 * Reading aids for transcripts: a timeline of a run, a summary of its figures, and a diff of two
 * runs (used for debugging and for the CLI-version drift report). The timeline and the summary take
 * records one at a time, so a large transcript can be streamed through them.
 */
import type { AnyRecord, LoadedTranscript } from "./reader.js";
import { normalizeLine } from "./normalize.js";

type Json = Record<string, unknown>;
type Rec = AnyRecord & { lineNumber?: number };

/** Longest text or JSON value shown in a timeline line; more is cut with a `… [+N chars]` marker. */
export const VALUE_WIDTH = 160;
/** No timeline line is longer than this (plus the marker); values are cut well before it. */
export const LINE_WIDTH = 300;

function parse(text: string): Json | undefined {
  try {
    const value = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}

const asJson = (value: unknown): Json => (value && typeof value === "object" && !Array.isArray(value) ? (value as Json) : {});

export function clip(text: string, max = VALUE_WIDTH): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [+${text.length - max} chars]`;
}

/** A string as a one-line JSON literal, cut before quoting so a huge text is never copied whole. */
function quoted(text: string, max = VALUE_WIDTH): string {
  const shown = JSON.stringify(text.slice(0, max));
  return text.length > max ? `${shown}… [+${text.length - max} chars]` : shown;
}

function compact(value: unknown, max = VALUE_WIDTH): string {
  return clip(JSON.stringify(value) ?? String(value), max);
}

/** `type/subtype` of a protocol line, e.g. `system/init`, `control_request/mcp_message/tools/call`, `result/success`. */
export function messageKey(message: Json): string {
  const type = String(message.type ?? "(no type)");
  const request = message.request as Json | undefined;
  const response = message.response as Json | undefined;
  const subtype = message.subtype ?? request?.subtype ?? (type === "control_response" ? response?.subtype : undefined);
  if (type === "control_request" && request?.subtype === "mcp_message") {
    return `control_request/mcp_message/${String((request.message as Json | undefined)?.method ?? "?")}`;
  }
  return subtype === undefined ? type : `${type}/${String(subtype)}`;
}

/** `assistant` matches `assistant`; `control_request/mcp_message` matches `control_request/mcp_message/tools/call`. */
export function matchesType(key: string, types: readonly string[] | undefined): boolean {
  return !types || types.length === 0 || types.some((type) => key === type || key.startsWith(`${type}/`));
}

interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheCreation: number;
}

function usageOf(value: unknown): Usage | undefined {
  const usage = asJson(value);
  if (Object.keys(usage).length === 0) return undefined;
  const n = (field: string) => (typeof usage[field] === "number" ? (usage[field] as number) : 0);
  return { input: n("input_tokens"), output: n("output_tokens"), cacheRead: n("cache_read_input_tokens"), cacheCreation: n("cache_creation_input_tokens") };
}

function tokenText(usage: Usage): string {
  return `in ${usage.input}, out ${usage.output}, cache read ${usage.cacheRead}, cache write ${usage.cacheCreation}`;
}

/** Text of a tool result or MCP result: a string, or the text parts of a content array. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content === undefined ? "" : (JSON.stringify(content) ?? "");
  return content.map((part) => (typeof asJson(part).text === "string" ? String(asJson(part).text) : `[${String(asJson(part).type)}]`)).join("");
}

export interface TimelineOptions {
  /** Each record's raw text instead of the reading (uncut). */
  raw?: boolean;
  /** Only records whose type matches one of these (see `matchesType`). */
  types?: readonly string[];
}

const ARROWS: Record<string, string> = { in: "<<", out: ">>", stderr: "!!", dropped: "xx" };

/**
 * The timeline of a run, built one record at a time: turns (one per assistant message id), text,
 * tool calls with arguments and duration, permission decisions, control traffic, tokens and cost,
 * errors and the exit. State (open requests) is kept for every record, shown or not.
 */
export class Timeline {
  private headers = 0;
  private turns = 0;
  private turnId: string | undefined;
  /** A turn heading waits for the first shown line of its turn, so a filter shows no empty turns. */
  private pendingHeading: string | undefined;
  /** Requests still waiting for an answer, by request id: what they were and when. */
  private readonly open = new Map<string, { t: number; what: string; tool?: string }>();
  private readonly toolNames = new Map<string, string>();

  constructor(
    private readonly path: string,
    private readonly options: TimelineOptions = {},
  ) {}

  lines(record: Rec): string[] {
    if (record.kind === "header") return this.header(record);
    // Parsed once: a line can be megabytes.
    const message = record.kind === "in" || record.kind === "out" ? parse(record.text) : undefined;
    const body = this.options.raw ? this.rawBody(record, message) : this.body(record, message);
    const type = message ? messageKey(message) : record.kind === "in" || record.kind === "out" ? "non-json" : record.kind;
    if (!matchesType(type, this.options.types)) return [];
    const prefix = "t" in record ? `${Number(record.t).toFixed(1).padStart(9)} ms  ` : "            ";
    const arrow = ARROWS[record.kind] ? `${ARROWS[record.kind]} ` : "";
    const width = this.options.raw ? Infinity : LINE_WIDTH;
    const out = body.map((line, index) => clip(index === 0 ? `${prefix}${arrow}${line}` : `${" ".repeat(prefix.length + arrow.length)}${line}`, width));
    if (this.pendingHeading && out.length > 0 && message) {
      out.unshift(this.pendingHeading);
      this.pendingHeading = undefined;
    }
    return out;
  }

  private header(record: Rec & { kind: "header" }): string[] {
    const again = this.headers++ > 0 ? ["# --- another CLI process in the same file (a retried call) ---"] : [];
    return [
      ...again,
      clip(`# ${this.path}`, LINE_WIDTH),
      clip(`# CLI ${record.cliVersion} at ${record.cliPath}, cwd ${record.cwd}, started ${record.startedAt}`, LINE_WIDTH),
      clip(`# args ${JSON.stringify(record.args)}`, LINE_WIDTH),
    ];
  }

  private rawBody(record: Rec, message: Json | undefined): string[] {
    if (message?.type === "assistant") this.startTurn(message);
    if (record.kind === "exit") return [`exit code=${record.exitCode} signal=${record.signal}`];
    if (record.kind === "outcome") return [`outcome ${JSON.stringify(record.outcome)}`];
    return record.kind === "header" ? [] : [record.text.trimEnd()];
  }

  private body(record: Rec, message: Json | undefined): string[] {
    switch (record.kind) {
      case "exit":
        return [`exit code=${record.exitCode} signal=${record.signal}${record.exitCode ? "  ERROR" : ""}`];
      case "outcome":
        return [`outcome ${compact(record.outcome, LINE_WIDTH - 40)}`];
      case "stderr":
        return [`stderr ${quoted(record.text)}`];
      case "dropped":
        return [`dropped write ${quoted(record.text)}`];
      case "in":
        return message ? this.fromCli(message, record.t) : [`(non-JSON) ${quoted(record.text)}`];
      case "out":
        return message ? this.fromUs(message, record.t) : [`(non-JSON) ${quoted(record.text)}`];
      default:
        return [];
    }
  }

  private startTurn(message: Json): void {
    const inner = asJson(message.message);
    const id = String(inner.id ?? "?");
    if (id === this.turnId) return;
    this.turnId = id;
    this.turns += 1;
    const usage = usageOf(inner.usage);
    const parts = [`turn ${this.turns}`, id, String(inner.model ?? "?"), ...(usage ? [`tokens ${tokenText(usage)}`] : [])];
    this.pendingHeading = clip(`── ${parts.join(" · ")} ──`, LINE_WIDTH);
  }

  private fromCli(message: Json, t: number): string[] {
    switch (message.type) {
      case "assistant":
        this.startTurn(message);
        return this.assistant(message);
      case "user":
        return this.toolResults(message);
      case "result":
        return result(message);
      case "system":
        return [system(message)];
      case "control_request":
        return [this.cliRequest(message, t)];
      case "control_response":
        return [this.reply(asJson(message.response), t)];
      case "control_cancel_request":
        this.open.delete(String(message.request_id));
        return [`control_cancel_request ${String(message.request_id)}`];
      case "stream_event":
        return [`stream_event ${String(asJson(message.event).type ?? "?")}`];
      default:
        return [messageKey(message)];
    }
  }

  private fromUs(message: Json, t: number): string[] {
    if (message.type === "user") {
      const text = contentText(asJson(message.message).content);
      return [`prompt ${quoted(text)}`];
    }
    if (message.type === "control_request") {
      const request = asJson(message.request);
      const subtype = String(request.subtype ?? "?");
      this.open.set(String(message.request_id), { t, what: subtype });
      if (subtype === "initialize") {
        const system = Array.isArray(request.systemPrompt) ? request.systemPrompt.join("") : String(request.systemPrompt ?? "");
        return [`initialize: system prompt ${system.length} chars, mcp servers ${JSON.stringify(request.sdkMcpServers ?? [])}, json schema ${request.jsonSchema ? "yes" : "no"}`];
      }
      return [`control_request ${subtype}`];
    }
    if (message.type === "control_response") return [this.ourAnswer(asJson(message.response), t)];
    return [messageKey(message)];
  }

  private assistant(message: Json): string[] {
    const inner = asJson(message.message);
    const lines: string[] = [];
    if (message.error || message.is_api_error_message) {
      lines.push(`API ERROR ${String(message.api_error_status ?? "")} ${String(message.error ?? "")}`.replace(/\s+/g, " ").trim());
    }
    const content = Array.isArray(inner.content) ? inner.content.map(asJson) : [];
    for (const block of content) {
      if (block.type === "text") lines.push(`text ${quoted(String(block.text ?? ""))}`);
      else if (block.type === "tool_use") {
        this.toolNames.set(String(block.id), String(block.name));
        lines.push(`tool_use ${String(block.name)} ${compact(block.input)}`);
      } else if (block.type === "thinking") lines.push(`thinking (${String(block.thinking ?? "").length} chars)`);
      else lines.push(String(block.type));
    }
    if (message.parent_tool_use_id) lines[0] = `(subagent) ${lines[0] ?? ""}`;
    return lines.length ? lines : ["assistant (no content)"];
  }

  private toolResults(message: Json): string[] {
    const content = asJson(message.message).content;
    if (!Array.isArray(content)) return [`user ${quoted(contentText(content))}`];
    return content.map(asJson).map((block) => {
      if (block.type !== "tool_result") return `user ${String(block.type)}`;
      const name = this.toolNames.get(String(block.tool_use_id)) ?? String(block.tool_use_id);
      return `tool_result ${name} ${block.is_error ? "ERROR" : "ok"} ${quoted(contentText(block.content))}`;
    });
  }

  private cliRequest(message: Json, t: number): string {
    const request = asJson(message.request);
    const id = String(message.request_id);
    if (request.subtype === "mcp_message") {
      const mcp = asJson(request.message);
      const method = String(mcp.method ?? "?");
      if (method === "tools/call") {
        const params = asJson(mcp.params);
        this.open.set(id, { t, what: "tools/call", tool: String(params.name) });
        return `tools/call ${String(params.name)} ${compact(params.arguments)}`;
      }
      this.open.set(id, { t, what: `mcp ${method}` });
      return `mcp ${method}`;
    }
    if (request.subtype === "can_use_tool") {
      this.open.set(id, { t, what: "permission", tool: String(request.tool_name) });
      return `permission asked: ${String(request.tool_name)} ${compact(request.input)}`;
    }
    this.open.set(id, { t, what: String(request.subtype) });
    return `control_request ${String(request.subtype)}`;
  }

  /** Our control_response to one of the CLI's requests. */
  private ourAnswer(response: Json, t: number): string {
    const id = String(response.request_id);
    const asked = this.open.get(id);
    this.open.delete(id);
    const took = asked ? ` (${(t - asked.t).toFixed(1)} ms)` : "";
    if (response.subtype === "error") return `${asked?.what ?? "control"} answered ERROR${took}: ${quoted(String(response.error ?? ""))}`;
    const answer = asJson(response.response);
    if (asked?.what === "tools/call") {
      const mcp = asJson(answer.mcp_response);
      const resultValue = asJson(mcp.result);
      const failed = mcp.error !== undefined || resultValue.isError === true;
      const text = mcp.error !== undefined ? compact(mcp.error) : quoted(contentText(resultValue.content));
      return `tools/call ${asked.tool} done in ${(t - asked.t).toFixed(1)} ms: ${failed ? "ERROR" : "ok"} ${text}`;
    }
    if (asked?.what === "permission") {
      const behavior = String(answer.behavior ?? "?");
      const why = typeof answer.message === "string" ? `: ${quoted(answer.message)}` : "";
      return `permission ${behavior === "deny" ? "DENIED" : behavior === "allow" ? "allowed" : behavior}: ${asked.tool}${took}${why}`;
    }
    return `${asked?.what ?? "control_response"} answered${took}`;
  }

  /** The CLI's control_response to one of our requests. */
  private reply(response: Json, t: number): string {
    const id = String(response.request_id);
    const asked = this.open.get(id);
    this.open.delete(id);
    const took = asked ? ` (${(t - asked.t).toFixed(1)} ms)` : "";
    const what = asked?.what ?? id;
    if (response.subtype === "error") return `reply to our ${what}: ERROR${took} ${quoted(String(response.error ?? ""))}`;
    return `reply to our ${what}: ${String(response.subtype ?? "?")}${took}`;
  }
}

function system(message: Json): string {
  if (message.subtype === "init") {
    const servers = Array.isArray(message.mcp_servers) ? message.mcp_servers.map((s) => `${String(asJson(s).name)}:${String(asJson(s).status)}`) : [];
    return `init model=${String(message.model)} tools=${compact(message.tools, 100)} mcp=${JSON.stringify(servers)} permission=${String(message.permissionMode)} version=${String(message.claude_code_version)}`;
  }
  if (message.subtype === "api_retry") {
    return `API retry ${String(message.attempt)}/${String(message.max_retries)} in ${String(message.retry_delay_ms)} ms after ERROR status ${String(message.error_status)} ${compact(message.error, 80)}`;
  }
  if (message.subtype === "permission_denied") {
    return `permission DENIED by the CLI: ${String(message.tool_name)} (${String(message.decision_reason_type ?? "?")}) ${quoted(String(message.message ?? ""))}`;
  }
  const { type: _type, subtype, session_id: _session, uuid: _uuid, ...rest } = message;
  return `system/${String(subtype)} ${compact(rest)}`;
}

function result(message: Json): string[] {
  const lines = [
    `result ${String(message.subtype)}${message.is_error ? " ERROR" : ""} turns=${String(message.num_turns)} stop=${String(message.stop_reason)} terminal=${String(message.terminal_reason)}` +
      (message.api_error_status ? ` api_status=${String(message.api_error_status)}` : ""),
  ];
  const usage = usageOf(message.usage);
  lines.push(`tokens ${usage ? tokenText(usage) : "unknown"}; cost $${String(message.total_cost_usd ?? "?")}`);
  const denials = Array.isArray(message.permission_denials) ? message.permission_denials.map((d) => String(asJson(d).tool_name)) : [];
  if (denials.length) lines.push(`permission denials: ${compact(denials)}`);
  if (message.is_error) {
    const errors = Array.isArray(message.errors) ? message.errors.join("; ") : "";
    lines.push(`error: ${quoted(String(message.result ?? errors))}`);
  }
  return lines;
}

/** The whole timeline of a loaded transcript (tests, small files); the CLI streams instead. */
export function renderTranscript(transcript: LoadedTranscript, options: TimelineOptions = {}): string[] {
  const timeline = new Timeline(transcript.path, options);
  return transcript.records.flatMap((record) => timeline.lines(record));
}

/** The timeline of a stream of records, line by line. */
export async function* renderTimeline(path: string, records: AsyncIterable<Rec>, options: TimelineOptions = {}): AsyncGenerator<string> {
  const timeline = new Timeline(path, options);
  for await (const record of records) yield* timeline.lines(record);
}

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

/** Field paths present per message key (top level and one level into `message`/`request`). */
function fieldsByKey(transcript: LoadedTranscript, direction: "in" | "out"): Map<string, Set<string>> {
  const fields = new Map<string, Set<string>>();
  for (const record of transcript.records) {
    if (record.kind !== direction) continue;
    const message = parse(record.text);
    if (!message) continue;
    const key = messageKey(message);
    const set = fields.get(key) ?? new Set<string>();
    for (const [name, value] of Object.entries(message)) {
      set.add(name);
      if ((name === "message" || name === "request") && value && typeof value === "object" && !Array.isArray(value)) {
        for (const inner of Object.keys(value)) set.add(`${name}.${inner}`);
      }
    }
    fields.set(key, set);
  }
  return fields;
}

/** One value that differs between the n-th messages of the same key in two runs. */
export interface ValueChange {
  direction: "in" | "out";
  key: string;
  /** 1 for the first message of this key in its direction. */
  occurrence: number;
  path: string;
  /** The normalised value as JSON text (cut at 120 characters), or `(absent)`. */
  before: string;
  after: string;
  /** Line numbers in the two files. */
  lines: [number, number];
}

export interface TranscriptDiff {
  addedMessageTypes: string[];
  removedMessageTypes: string[];
  addedFields: Record<string, string[]>;
  removedFields: Record<string, string[]>;
  controlRequests: { before: string[]; after: string[] } | undefined;
  hostLines: { before: string[]; after: string[] } | undefined;
  valueChanges: ValueChange[];
  /** Value changes beyond the cap, not listed. */
  valueChangesOmitted: number;
  outcome: { before: unknown; after: unknown } | undefined;
  result: { before: unknown; after: unknown } | undefined;
}

function sequence(transcript: LoadedTranscript, direction: "in" | "out", filter: (key: string) => boolean): string[] {
  return transcript.records.flatMap((record) => {
    if (record.kind !== direction) return [];
    const message = parse(record.text);
    const key = message ? messageKey(message) : "(non-JSON)";
    return filter(key) ? [key] : [];
  });
}

/**
 * Values that differ between two live runs without meaning anything, beyond what the replayer's
 * normaliser masks (it never compares the CLI's lines, which it plays verbatim): the CLI's request
 * ids and message ids, and the temporary project and HOME dirs (also in their `-tmp-…` form).
 */
const RUN_IDS = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b(?:msg|toolu|req|srvtoolu)_[A-Za-z0-9_]+/g;
const TEMP_DIRS = /(ktx-[a-z0-9-]+?-)[A-Za-z0-9]{6}(?![A-Za-z0-9-])/g;
const SOCKETS = /(\/cc-socks\/)\d+/g;
/** Keys whose values change from run to run: the process id, and the jittered API retry back-off. */
const RUN_KEYS = new Set(["pid", "retry_delay_ms"]);

function maskRunKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskRunKeys);
  if (!value || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, RUN_KEYS.has(key) ? `<${key}>` : maskRunKeys(inner)]));
}

function comparable(text: string, cwd: string): unknown {
  const escapedCwd = JSON.stringify(cwd).slice(1, -1);
  const masked = normalizeLine(text)
    .split(escapedCwd)
    .join("<cwd>")
    .replace(RUN_IDS, "<id>")
    .replace(TEMP_DIRS, "$1<tmp>")
    .replace(SOCKETS, "$1<pid>");
  try {
    return maskRunKeys(JSON.parse(masked));
  } catch {
    return masked;
  }
}

interface Comparable {
  key: string;
  value: unknown;
  lineNumber: number;
}

/**
 * Messages of one direction grouped for pairing: by message key, and a control_response also by the
 * request it answers, so answers still pair up when one run has an extra request (2.1.142's second
 * MCP initialize).
 */
function comparableMessages(transcript: LoadedTranscript, direction: "in" | "out"): Map<string, Comparable[]> {
  const requests = new Map<string, string>();
  const byKey = new Map<string, Comparable[]>();
  for (const record of transcript.records) {
    if (record.kind !== "in" && record.kind !== "out") continue;
    const message = parse(record.text);
    let key = message ? messageKey(message) : "(non-JSON)";
    if (message?.type === "control_request") requests.set(String(message.request_id), key.replace(/^control_request\//, ""));
    if (message?.type === "control_response") key += ` to ${requests.get(String(asJson(message.response).request_id)) ?? "?"}`;
    if (record.kind !== direction) continue;
    const list = byKey.get(key) ?? [];
    list.push({ key, value: comparable(record.text, transcript.header.cwd), lineNumber: record.lineNumber });
    byKey.set(key, list);
  }
  return byKey;
}

/** Caps that keep a report between CLI versions readable (the initialize reply alone differs in dozens of places). */
const MAX_CHANGES_PER_MESSAGE = 6;
const MAX_VALUE_CHANGES = 60;
const ABSENT = "(absent)";

/** Fields a structural report already lists as added or removed (top level, and one level into message/request). */
function structuralPath(path: string[]): boolean {
  return path.length === 1 || (path.length === 2 && (path[0] === "message" || path[0] === "request"));
}

function pathText(path: string[]): string {
  return path.reduce((text, part) => (/^\d+$/.test(part) ? `${text}[${part}]` : text ? `${text}.${part}` : part), "");
}

const isPrimitiveArray = (value: unknown) => Array.isArray(value) && value.every((item) => item === null || typeof item !== "object");

function preview(value: unknown): string {
  return value === undefined ? ABSENT : clip(JSON.stringify(value) ?? String(value), 120);
}

/** Leaf values that differ; a list of plain values is compared whole (a tool list reads better that way). */
function compareValues(a: unknown, b: unknown, path: string[], found: Array<{ path: string; before: string; after: string }>): void {
  if (JSON.stringify(a) === JSON.stringify(b)) return;
  const aObject = a !== null && typeof a === "object" && !isPrimitiveArray(a);
  const bObject = b !== null && typeof b === "object" && !isPrimitiveArray(b);
  if (aObject && bObject && Array.isArray(a) === Array.isArray(b)) {
    const names = new Set([...Object.keys(a as object), ...Object.keys(b as object)]);
    for (const name of names) {
      const x = (a as Json)[name];
      const y = (b as Json)[name];
      if ((x === undefined || y === undefined) && structuralPath([...path, name])) continue;
      compareValues(x, y, [...path, name], found);
    }
    return;
  }
  found.push({ path: pathText(path), before: preview(a), after: preview(b) });
}

/** The n-th message of each key in one run against the n-th of the same key in the other, normalised. */
function valueChanges(before: LoadedTranscript, after: LoadedTranscript): { changes: ValueChange[]; omitted: number } {
  const changes: ValueChange[] = [];
  let omitted = 0;
  for (const direction of ["in", "out"] as const) {
    const a = comparableMessages(before, direction);
    const b = comparableMessages(after, direction);
    for (const [key, list] of a) {
      const other = b.get(key) ?? [];
      list.slice(0, other.length).forEach((message, index) => {
        const found: Array<{ path: string; before: string; after: string }> = [];
        compareValues(message.value, other[index]!.value, [], found);
        for (const [n, change] of found.entries()) {
          if (changes.length >= MAX_VALUE_CHANGES || n >= MAX_CHANGES_PER_MESSAGE) omitted += 1;
          else changes.push({ direction, key, occurrence: index + 1, ...change, lines: [message.lineNumber, other[index]!.lineNumber] });
        }
      });
    }
  }
  return { changes, omitted };
}

/**
 * What changed from `before` to `after`: structure (message types, fields, sequences of control
 * requests and of our lines) and values, each line normalised as the replayer does.
 */
export function diffTranscripts(before: LoadedTranscript, after: LoadedTranscript): TranscriptDiff {
  const a = fieldsByKey(before, "in");
  const b = fieldsByKey(after, "in");
  const addedFields: Record<string, string[]> = {};
  const removedFields: Record<string, string[]> = {};
  for (const [key, fields] of b) {
    const old = a.get(key);
    if (!old) continue;
    const added = [...fields].filter((field) => !old.has(field)).sort();
    const removed = [...old].filter((field) => !fields.has(field)).sort();
    if (added.length) addedFields[key] = added;
    if (removed.length) removedFields[key] = removed;
  }
  const controls = (t: LoadedTranscript) => sequence(t, "in", (key) => key.startsWith("control_request"));
  const host = (t: LoadedTranscript) => sequence(t, "out", () => true);
  const changed = <T>(x: T, y: T) => (JSON.stringify(x) === JSON.stringify(y) ? undefined : { before: x, after: y });
  const resultOf = (t: LoadedTranscript) => {
    const { result } = summarizeTranscript(t);
    return result && { subtype: result.subtype, isError: result.isError, numTurns: result.numTurns, terminalReason: result.terminalReason };
  };
  const values = valueChanges(before, after);
  return {
    addedMessageTypes: [...b.keys()].filter((key) => !a.has(key)).sort(),
    removedMessageTypes: [...a.keys()].filter((key) => !b.has(key)).sort(),
    addedFields,
    removedFields,
    controlRequests: changed(controls(before), controls(after)),
    hostLines: changed(host(before), host(after)),
    valueChanges: values.changes,
    valueChangesOmitted: values.omitted,
    outcome: changed(summarizeTranscript(before).outcome, summarizeTranscript(after).outcome),
    result: changed(resultOf(before), resultOf(after)),
  };
}

export function isEmptyDiff(diff: TranscriptDiff): boolean {
  return (
    diff.addedMessageTypes.length === 0 &&
    diff.removedMessageTypes.length === 0 &&
    Object.keys(diff.addedFields).length === 0 &&
    Object.keys(diff.removedFields).length === 0 &&
    !diff.controlRequests &&
    !diff.hostLines &&
    diff.valueChanges.length === 0 &&
    !diff.outcome &&
    !diff.result
  );
}

export function renderDiff(diff: TranscriptDiff): string[] {
  if (isEmptyDiff(diff)) return ["no differences"];
  const lines: string[] = [];
  if (diff.addedMessageTypes.length) lines.push(`new message types: ${diff.addedMessageTypes.join(", ")}`);
  if (diff.removedMessageTypes.length) lines.push(`removed message types: ${diff.removedMessageTypes.join(", ")}`);
  for (const [key, fields] of Object.entries(diff.addedFields)) lines.push(`${key}: new fields ${fields.join(", ")}`);
  for (const [key, fields] of Object.entries(diff.removedFields)) lines.push(`${key}: removed fields ${fields.join(", ")}`);
  if (diff.controlRequests) lines.push(`control requests changed:\n  before ${diff.controlRequests.before.join(" ")}\n  after  ${diff.controlRequests.after.join(" ")}`);
  if (diff.hostLines) lines.push(`our lines changed:\n  before ${diff.hostLines.before.join(" ")}\n  after  ${diff.hostLines.after.join(" ")}`);
  if (diff.valueChanges.length) {
    lines.push("changed values (normalised):");
    for (const change of diff.valueChanges) {
      const where = `${change.direction === "in" ? "<<" : ">>"} ${change.key} #${change.occurrence} (lines ${change.lines[0]}/${change.lines[1]})`;
      lines.push(`  ${where} ${change.path || "(whole line)"}: ${change.before} -> ${change.after}`);
    }
    if (diff.valueChangesOmitted) {
      lines.push(`  … and ${diff.valueChangesOmitted} more, not listed (at most ${MAX_CHANGES_PER_MESSAGE} per message and ${MAX_VALUE_CHANGES} in all)`);
    }
  }
  if (diff.result) lines.push(`result changed: ${JSON.stringify(diff.result.before)} -> ${JSON.stringify(diff.result.after)}`);
  if (diff.outcome) lines.push(`outcome changed: ${JSON.stringify(diff.outcome.before)} -> ${JSON.stringify(diff.outcome.after)}`);
  return lines;
}
