/**
 * `transcript trace`: a run as Chrome trace-event JSON (the format Perfetto and chrome://tracing
 * open), so a run can be looked at on one time axis without a viewer of our own. Each CLI process of
 * the file is a process; its tracks: the process itself (start, initialize, result, exit), the main
 * thread's API turns and tool calls, our MCP tool handlers, permission answers, and one track per
 * subagent. A raw capture has no timing: its lines are placed 1 ms apart, in order.
 */
import { isRawCapture } from "../reader.js";
import { parse, asJson, messageKey, isSyntheticAssistant, runEnd, dollars, type Json, type Rec } from "./text.js";

/** One event of the Trace Event Format (`X` complete, `i` instant, `M` metadata); times in µs. */
export interface TraceEvent {
  name: string;
  cat?: string;
  ph: "X" | "i" | "M";
  ts?: number;
  dur?: number;
  pid: number;
  tid: number;
  s?: "t" | "p";
  args?: Json;
}

export interface TraceFile {
  traceEvents: TraceEvent[];
  displayTimeUnit: "ms";
  metadata: Json;
}

const TRACK = { process: 1, main: 2, handlers: 3, permissions: 4, session: 5 } as const;
const TRACK_NAMES: Record<number, string> = { 1: "CLI process", 2: "main thread: API turns and tool calls", 3: "our MCP tool handlers", 4: "permission answers" };

const us = (ms: number) => Math.round(ms * 1000);

/** An API turn being built: from the moment the model was asked to its last streamed line. */
interface OpenTurn {
  id: string;
  start: number;
  end: number;
  model?: string;
  track: number;
}

export class TraceBuilder {
  private readonly events: TraceEvent[] = [];
  private pid = 0;
  private clock = 0;
  private raw = false;
  /** Per track: when the model was last asked (prompt, tool result, init), and the turn in progress. */
  private readonly asked = new Map<number, number>();
  private readonly turns = new Map<number, OpenTurn>();
  private readonly subagentTracks = new Map<string, number>();
  /** tool_use id → its start, name and track. */
  private readonly toolUses = new Map<string, { start: number; name: string; track: number }>();
  /** Control requests in flight, by request id. */
  private readonly requests = new Map<string, { start: number; name: string; track: number; cat: string }>();
  /** A session's turns begun and not yet ended, by number: when, and their record. */
  private readonly sessionTurns = new Map<number, { start: number; args: Json }>();

  constructor(private readonly path: string) {}

  add(record: Rec): void {
    if (record.kind === "header") return this.header(record);
    const t = this.time(record);
    if (record.kind === "exit") {
      this.closeTurns();
      this.instant(`exit code=${record.exitCode ?? "none"}${record.signal ? ` signal=${record.signal}` : ""}`, "process", TRACK.process, t, { exitCode: record.exitCode, signal: record.signal });
      return;
    }
    if (record.kind === "call") {
      this.instant(`call ${record.process?.call ?? ""}: ${record.ending}`, "process", TRACK.process, t, { costUsd: record.costUsd, usage: record.usage, launch: record.process?.launch ?? null });
      return;
    }
    if (record.kind === "stderr") return this.instant("stderr", "process", TRACK.process, t, { text: record.text.slice(0, 500) });
    if (record.kind === "turn") {
      this.sessionTurns.set(record.turn, { start: t, args: { input: record.input.slice(0, 500), history: record.history, ...(record.process ? { pid: record.process.pid ?? null, launch: record.process.launch, callOnProcess: record.process.call } : {}) } });
      return;
    }
    if (record.kind === "turn_end") {
      const begun = this.sessionTurns.get(record.turn);
      this.sessionTurns.delete(record.turn);
      const args: Json = { ...begun?.args, outcome: record.outcome, durationMs: record.durationMs, ...(record.usage ? { usage: record.usage } : {}), ...(record.costUsd !== undefined ? { costUsd: record.costUsd } : {}), ...(record.error ? { error: record.error } : {}) };
      this.span(`session turn ${record.turn}${record.outcome === "ok" ? "" : ` (${record.outcome})`}`, "session", TRACK.session, begun?.start ?? t, t, args);
      return;
    }
    if (record.kind === "interrupt") return this.instant(`interrupt (session turn ${record.turn})`, "session", TRACK.session, t);
    if (record.kind === "session_end") return this.instant(`session closed after ${record.turns} turn(s)`, "session", TRACK.session, t);
    if (record.kind !== "in" && record.kind !== "out") return;
    const message = parse(record.text);
    if (!message) return;
    if (record.kind === "out") this.fromUs(message, t);
    else this.fromCli(message, t);
  }

  finish(): TraceFile {
    this.closeTurns();
    // A session turn the file does not end (a host that died mid-turn) shows up to the last record.
    for (const [turn, begun] of this.sessionTurns) this.span(`session turn ${turn} (no end recorded)`, "session", TRACK.session, begun.start, this.clock, begun.args);
    this.sessionTurns.clear();
    this.closeToolUses(this.clock);
    // A raw capture holds no answers of ours: what was asked still shows, where it was asked.
    for (const open of this.requests.values()) this.instant(`${open.name} (no answer recorded)`, open.cat, open.track, open.start);
    this.requests.clear();
    return {
      traceEvents: this.events,
      displayTimeUnit: "ms",
      metadata: { source: this.path, timing: this.raw ? "none recorded (raw capture): lines are placed 1 ms apart, in order" : "ms since the CLI process started" },
    };
  }

  private header(record: Rec & { kind: "header" }): void {
    this.closeTurns();
    this.closeToolUses(this.clock);
    this.pid += 1;
    this.raw = isRawCapture(record);
    this.asked.clear();
    this.meta("process_name", 0, { name: `CLI process ${this.pid}${record.cliVersion !== "unknown" ? ` (Claude Code ${record.cliVersion})` : ""}` });
    const session = record.session === true;
    const names = session ? { ...TRACK_NAMES, [TRACK.session]: "session turns" } : TRACK_NAMES;
    for (const [tid, name] of Object.entries(names)) {
      this.meta("thread_name", Number(tid), { name });
      this.meta("thread_sort_index", Number(tid), { sort_index: Number(tid) });
    }
    // A session's later process starts where the file's one clock is then (its header's `t`).
    const start = this.raw ? this.clock : typeof record.t === "number" ? (this.clock = record.t) : 0;
    this.instant("process start", "process", TRACK.process, start, { cliPath: record.cliPath, args: record.args, cwd: record.cwd, startedAt: record.startedAt, ...(record.process !== undefined ? { process: record.process } : {}) });
  }

  /** The record's time in ms: its `t`, or for a raw capture one ms per line. */
  private time(record: Rec): number {
    if ("t" in record && typeof record.t === "number") return (this.clock = record.t);
    return (this.clock += this.raw ? 1 : 0);
  }

  private meta(name: string, tid: number, args: Json): void {
    this.events.push({ name, ph: "M", pid: this.pid, tid, args });
  }

  private instant(name: string, cat: string, tid: number, t: number, args?: Json): void {
    this.events.push({ name, cat, ph: "i", s: "t", ts: us(t), pid: this.pid, tid, ...(args ? { args } : {}) });
  }

  private span(name: string, cat: string, tid: number, start: number, end: number, args?: Json): void {
    this.events.push({ name, cat, ph: "X", ts: us(start), dur: Math.max(1, us(end) - us(start)), pid: this.pid, tid, ...(args ? { args } : {}) });
  }

  private trackOf(message: Json): number {
    const parent = message.parent_tool_use_id;
    if (parent == null) return TRACK.main;
    const key = String(parent);
    let tid = this.subagentTracks.get(key);
    if (tid === undefined) {
      tid = 10 + this.subagentTracks.size;
      this.subagentTracks.set(key, tid);
      const name = this.toolUses.get(key)?.name ?? "tool";
      this.meta("thread_name", tid, { name: `subagent for ${name} ${key}` });
      this.meta("thread_sort_index", tid, { sort_index: tid });
      const started = this.toolUses.get(key)?.start;
      if (started !== undefined) this.asked.set(tid, started);
    }
    return tid;
  }

  private fromUs(message: Json, t: number): void {
    if (message.type === "user") {
      this.instant("prompt sent", "host", TRACK.main, t);
      this.asked.set(TRACK.main, t);
      return;
    }
    if (message.type === "control_request") {
      const subtype = String(asJson(message.request).subtype ?? "?");
      this.requests.set(String(message.request_id), { start: t, name: subtype, track: TRACK.process, cat: subtype === "initialize" ? "initialize" : "control" });
      return;
    }
    if (message.type === "control_response") {
      const response = asJson(message.response);
      const id = String(response.request_id);
      const open = this.requests.get(id);
      if (!open) return;
      this.requests.delete(id);
      const answer = asJson(response.response);
      const failed = response.subtype === "error" || asJson(answer.mcp_response).error !== undefined || asJson(asJson(answer.mcp_response).result).isError === true;
      const args: Json = { ok: !failed, ...(open.cat === "permission" ? { behavior: answer.behavior ?? response.subtype } : {}) };
      const name = open.cat === "permission" ? `${open.name}: ${String(answer.behavior ?? response.subtype)}` : open.name;
      this.span(name, open.cat, open.track, open.start, t, args);
    }
  }

  private fromCli(message: Json, t: number): void {
    switch (message.type) {
      case "system":
        if (message.subtype === "init") {
          this.instant("system/init", "process", TRACK.process, t, { model: message.model });
          this.asked.set(TRACK.main, Math.max(this.asked.get(TRACK.main) ?? 0, t));
        } else if (message.subtype === "api_retry") this.instant(`API retry ${String(message.attempt ?? "")}`.trim(), "api", TRACK.main, t, { status: message.error_status, delayMs: message.retry_delay_ms });
        return;
      case "assistant":
        return this.assistant(message, t);
      case "user":
        return this.toolResults(message, t);
      case "result": {
        this.closeTurns();
        const end = runEnd(message);
        this.instant(`result ${String(message.subtype ?? "")}${end.state === "ok" ? "" : ` (${end.state})`}`, "result", TRACK.process, t, {
          turns: message.num_turns,
          ...(typeof message.total_cost_usd === "number" ? { costUsd: dollars(message.total_cost_usd) } : {}),
          ...(end.cause ? { cause: end.cause } : {}),
        });
        return;
      }
      case "control_request":
        return this.cliRequest(message, t);
      case "control_response": {
        const response = asJson(message.response);
        const id = String(response.request_id);
        const open = this.requests.get(id);
        if (!open) return;
        this.requests.delete(id);
        this.span(open.name, open.cat, open.track, open.start, t, { reply: response.subtype });
        return;
      }
      default:
        return;
    }
  }

  private assistant(message: Json, t: number): void {
    const track = this.trackOf(message);
    const inner = asJson(message.message);
    if (isSyntheticAssistant(message)) {
      this.instant("API error", "api", track, t, { status: message.api_error_status, error: message.error });
      return;
    }
    const id = String(inner.id ?? "(no id)");
    const open = this.turns.get(track);
    if (open && open.id === id) open.end = t;
    else {
      if (open) this.closeTurn(track);
      this.turns.set(track, { id, start: this.asked.get(track) ?? t, end: t, track, ...(typeof inner.model === "string" ? { model: inner.model } : {}) });
    }
    for (const block of Array.isArray(inner.content) ? inner.content.map(asJson) : []) {
      if (block.type === "tool_use") this.toolUses.set(String(block.id), { start: t, name: String(block.name), track });
    }
  }

  private toolResults(message: Json, t: number): void {
    const track = this.trackOf(message);
    const content = asJson(message.message).content;
    let answered = false;
    for (const block of Array.isArray(content) ? content.map(asJson) : []) {
      if (block.type !== "tool_result") continue;
      const use = this.toolUses.get(String(block.tool_use_id));
      if (!use) continue;
      this.toolUses.delete(String(block.tool_use_id));
      this.span(`tool ${use.name}`, "tool", use.track, use.start, t, { toolUseId: block.tool_use_id, isError: block.is_error === true });
      answered = true;
    }
    if (answered) this.asked.set(track, t);
  }

  private cliRequest(message: Json, t: number): void {
    const request = asJson(message.request);
    const id = String(message.request_id);
    if (request.subtype === "mcp_message") {
      const mcp = asJson(request.message);
      const method = String(mcp.method ?? "?");
      const name = method === "tools/call" ? `tools/call ${String(asJson(mcp.params).name)}` : `mcp ${method}`;
      this.requests.set(id, { start: t, name, track: method === "tools/call" ? TRACK.handlers : TRACK.process, cat: method === "tools/call" ? "mcp" : "control" });
    } else if (request.subtype === "can_use_tool") {
      this.requests.set(id, { start: t, name: `permission ${String(request.tool_name)}`, track: TRACK.permissions, cat: "permission" });
    } else this.requests.set(id, { start: t, name: messageKey(message), track: TRACK.process, cat: "control" });
  }

  private closeTurn(track: number): void {
    const turn = this.turns.get(track);
    if (!turn) return;
    this.turns.delete(track);
    this.span(track === TRACK.main ? "API turn" : "subagent API turn", "turn", track, turn.start, turn.end, { messageId: turn.id, ...(turn.model ? { model: turn.model } : {}) });
  }

  /**
   * Tool calls the model made that got no result before the process ended (an interrupted loop, a
   * crash): shown up to the process's last record, never left out.
   */
  private closeToolUses(end: number): void {
    for (const [toolUseId, use] of this.toolUses) this.span(`tool ${use.name} (no result)`, "tool", use.track, use.start, end, { toolUseId, noResult: true });
    this.toolUses.clear();
  }

  private closeTurns(): void {
    for (const track of [...this.turns.keys()]) this.closeTurn(track);
  }
}

export async function traceRecords(path: string, records: AsyncIterable<Rec>): Promise<TraceFile> {
  const builder = new TraceBuilder(path);
  for await (const record of records) builder.add(record);
  return builder.finish();
}

export function traceTranscript(transcript: { path: string; records: readonly Rec[] }): TraceFile {
  const builder = new TraceBuilder(transcript.path);
  for (const record of transcript.records) builder.add(record);
  return builder.finish();
}
