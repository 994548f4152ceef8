/**
 * `transcript show`: the timeline of a run, built one record at a time so a large transcript can be
 * streamed through it.
 */
import { isRawCapture, type LoadedTranscript } from "../reader.js";
import { parse, asJson, clip, quoted, compact, messageKey, matchesType, usageOf, apiStatusOf, isSyntheticAssistant, contentText, opt, LINE_WIDTH, type Json, type Rec } from "./text.js";
import { callText, exitText, interruptText, result, sessionEndText, system, turnEndText, turnText } from "./show-lines.js";
import { PartialMessages } from "./partial.js";

export interface TimelineOptions {
  /** Each record's raw text instead of the reading (uncut). */
  raw?: boolean;
  /** Only records whose type matches one of these (see `matchesType`). */
  types?: readonly string[];
}

/** `··`: a line of a raw capture, whose direction was not recorded (it is the CLI's stdout). */
const ARROWS: Record<string, string> = { in: "<<", out: ">>", stderr: "!!", dropped: "xx", note: "!!", call: "==", turn: "##", turn_end: "##", interrupt: "##", session_end: "##" };

/**
 * The timeline of a run, built one record at a time: turns (one per assistant message id), text,
 * tool calls with arguments and duration, permission decisions, control traffic, tokens and cost,
 * errors and the exit. State (open requests) is kept for every record, shown or not.
 */
export class Timeline {
  private headers = 0;
  /** A session's transcript: its API turns are headed "response N" (the session's own turns are "session turn N"). */
  private session = false;
  private turns = 0;
  private subagentTurns = 0;
  private turnId: string | undefined;
  /** A raw capture: no direction and no timing; lines are located by line number. */
  private rawCapture = false;
  /** A turn heading waits for the first shown line of its turn, so a filter shows no empty turns. */
  private pendingHeading: string | undefined;
  /** Requests still waiting for an answer, by request id: what they were and when. */
  private readonly open = new Map<string, { t: number | undefined; what: string; tool?: string }>();
  private readonly toolNames = new Map<string, string>();
  private readonly partial = new PartialMessages();

  constructor(
    private readonly path: string,
    private readonly options: TimelineOptions = {},
  ) {}

  lines(record: Rec): string[] {
    if (record.kind === "header") return [...this.finish(), ...this.header(record)];
    // Parsed once: a line can be megabytes.
    const message = record.kind === "in" || record.kind === "out" ? parse(record.text) : undefined;
    if (this.options.raw) return this.show(record, message);
    // Partial-message deltas are gathered until something else arrives, then shown as one line.
    const { released, absorbed } = this.partial.take(message, record);
    const before = released ? this.held(released) : [];
    return absorbed ? before : [...before, ...this.show(record, message)];
  }

  /** Lines still held back (gathered partial text); call once after the last record. */
  finish(): string[] {
    const released = this.partial.flush();
    return released ? this.held(released) : [];
  }

  private held(released: { record: Rec; text: string }): string[] {
    return matchesType("stream_event", this.options.types) ? this.format(released.record, [released.text], true) : [];
  }

  private show(record: Rec, message: Json | undefined): string[] {
    const body = this.options.raw ? this.rawBody(record, message) : this.body(record, message);
    const type = message ? messageKey(message) : record.kind === "in" || record.kind === "out" ? "non-json" : record.kind;
    if (!matchesType(type, this.options.types)) return [];
    return this.format(record, body, message !== undefined);
  }

  private format(record: Rec, body: string[], protocol: boolean): string[] {
    const t = "t" in record && typeof record.t === "number" ? record.t : undefined;
    const where = t !== undefined ? `${t.toFixed(1).padStart(9)} ms  ` : this.rawCapture && record.lineNumber ? `${`line ${record.lineNumber}`.padStart(12)}  ` : "            ";
    const arrow = this.rawCapture && record.kind === "in" ? "·· " : ARROWS[record.kind] ? `${ARROWS[record.kind]} ` : "";
    const width = this.options.raw ? Infinity : LINE_WIDTH;
    const out = body.map((line, index) => clip(index === 0 ? `${where}${arrow}${line}` : `${" ".repeat(where.length + arrow.length)}${line}`, width));
    // A turn's heading goes with its own lines (assistant, tool traffic), never before a result.
    if (this.pendingHeading && out.length > 0 && protocol && matchesType("assistant", this.options.types)) {
      out.unshift(this.pendingHeading);
      this.pendingHeading = undefined;
    }
    return out;
  }

  private header(record: Rec & { kind: "header" }): string[] {
    const session = record.session === true;
    this.session ||= session;
    const again =
      this.headers++ > 0
        ? [session ? "# --- another CLI process of the session (the earlier one ended, or its first turn was retried on a fresh one) ---" : "# --- another CLI process in the same file (a retried call) ---"]
        : session
          ? ["# a session's transcript: every turn in one file (session turn records mark where each begins and ends)"]
          : [];
    if (isRawCapture(record)) {
      this.rawCapture = true;
      const from = typeof record.importedFrom === "string" ? ` imported from ${record.importedFrom}` : "";
      return [
        ...again,
        clip(`# ${this.path}: a raw stream-json capture${from} (the CLI's stdout only)`, LINE_WIDTH),
        "# lines are the CLI's (··), located by line number: a capture records no direction and no timing; the CLI version is in init",
      ];
    }
    return [
      ...again,
      clip(`# ${this.path}`, LINE_WIDTH),
      clip(`# CLI ${record.cliVersion} at ${record.cliPath}, cwd ${record.cwd}, started ${record.startedAt}`, LINE_WIDTH),
      clip(`# args ${JSON.stringify(record.args)}`, LINE_WIDTH),
      // The process launch (pid, launch id, this call's number on it); a later call's launch and initialize are in an earlier call's transcript.
      ...(record.process !== undefined ? [clip(`# process: ${JSON.stringify(record.process)}`, LINE_WIDTH)] : []),
      ...loginLines(record),
    ];
  }

  private rawBody(record: Rec, message: Json | undefined): string[] {
    if (message?.type === "assistant") this.startTurn(message);
    if (record.kind === "exit") return [exitText(record)];
    if (record.kind === "call") return [JSON.stringify(record)];
    if (record.kind === "outcome") return [`outcome ${JSON.stringify(record.outcome)}`];
    if (record.kind === "note") return [`note: ${record.text}`];
    if (record.kind === "turn" || record.kind === "turn_end" || record.kind === "interrupt" || record.kind === "session_end") return [JSON.stringify(record)];
    return record.kind === "header" ? [] : [record.text.trimEnd()];
  }

  private body(record: Rec, message: Json | undefined): string[] {
    const t = "t" in record && typeof record.t === "number" ? record.t : undefined;
    switch (record.kind) {
      case "exit":
        return [exitText(record)];
      case "call":
        return callText(record);
      case "outcome":
        return [`outcome ${compact(record.outcome, LINE_WIDTH - 40)}`];
      case "note":
        return [`note: ${record.text}`];
      case "turn":
        // A session turn's API responses are numbered from 1 again.
        this.turns = 0;
        return turnText(record);
      case "turn_end":
        return turnEndText(record);
      case "interrupt":
        return [interruptText(record)];
      case "session_end":
        return [sessionEndText(record)];
      case "stderr":
        return [`stderr ${quoted(record.text)}`];
      case "dropped":
        return [`dropped write ${quoted(record.text)}`];
      case "in":
        return message ? this.fromCli(message, t) : [`(non-JSON) ${quoted(record.text)}`];
      case "out":
        return message ? this.fromUs(message, t) : [`(non-JSON) ${quoted(record.text)}`];
      default:
        return [];
    }
  }

  private startTurn(message: Json): void {
    // A synthetic API-error line is the CLI's report of a failed request, not a model turn.
    if (isSyntheticAssistant(message)) return;
    const inner = asJson(message.message);
    const id = String(inner.id ?? "(no id)");
    if (id === this.turnId) return;
    this.turnId = id;
    const parent = message.parent_tool_use_id;
    const title = parent ? `subagent turn ${++this.subagentTurns} (for ${this.toolNames.get(String(parent)) ?? "tool"} ${String(parent)})` : `${this.session ? "response" : "turn"} ${++this.turns}`;
    const usage = usageOf(inner.usage);
    // Output tokens are left out: the assistant line carries message_start's usage, before the
    // output; the final figures are the result's (or a partial message_delta's).
    const input = usage ? [`tokens in ${usage.input}, cache read ${usage.cacheRead}, cache write ${usage.cacheCreation}`] : [];
    const parts = [title, id, ...(typeof inner.model === "string" ? [inner.model] : []), ...input];
    this.pendingHeading = clip(`── ${parts.join(" · ")} ──`, LINE_WIDTH);
  }

  private fromCli(message: Json, t: number | undefined): string[] {
    switch (message.type) {
      case "assistant":
        this.startTurn(message);
        return this.assistant(message);
      case "user":
        return this.toolResults(message);
      case "result":
        this.pendingHeading = undefined;
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
        return [this.partial.describe(message)];
      default:
        return [messageKey(message)];
    }
  }

  private fromUs(message: Json, t: number | undefined): string[] {
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
      return [`control_request ${subtype}${subtype === "set_model" ? opt("model", request.model) : subtype === "apply_flag_settings" ? opt("settings", request.settings) : ""}`];
    }
    if (message.type === "control_response") return [this.ourAnswer(asJson(message.response), t)];
    return [messageKey(message)];
  }

  private assistant(message: Json): string[] {
    const inner = asJson(message.message);
    const lines: string[] = [];
    const content = Array.isArray(inner.content) ? inner.content.map(asJson) : [];
    if (message.error || message.is_api_error_message) {
      const status = apiStatusOf(message.api_error_status, ...content.map((block) => block.text));
      lines.push(`API ERROR${opt("status", status)}${message.error ? ` ${String(message.error)}` : ""}`);
    }
    for (const block of content) {
      if (block.type === "text") lines.push(`text ${quoted(String(block.text ?? ""))}`);
      else if (block.type === "tool_use") {
        this.toolNames.set(String(block.id), String(block.name));
        lines.push(`tool_use ${String(block.name)} ${compact(block.input ?? {})}`);
      } else if (block.type === "thinking") lines.push(`thinking (${String(block.thinking ?? "").length} chars)`);
      else lines.push(String(block.type ?? "(block without type)"));
    }
    if (lines.length === 0) lines.push("assistant (no content)");
    return message.parent_tool_use_id ? lines.map((line) => `(subagent) ${line}`) : lines;
  }

  private toolResults(message: Json): string[] {
    const content = asJson(message.message).content;
    const label = message.parent_tool_use_id ? "(subagent) " : "";
    if (!Array.isArray(content)) return [`${label}user ${quoted(contentText(content))}`];
    return content.map(asJson).map((block) => {
      if (block.type !== "tool_result") return block.type === "text" ? `${label}user text ${quoted(String(block.text ?? ""))}` : `${label}user ${String(block.type)}`;
      const name = this.toolNames.get(String(block.tool_use_id)) ?? String(block.tool_use_id);
      return `${label}tool_result ${name} ${block.is_error ? "ERROR" : "ok"} ${quoted(contentText(block.content))}`;
    });
  }

  private cliRequest(message: Json, t: number | undefined): string {
    const request = asJson(message.request);
    const id = String(message.request_id);
    if (request.subtype === "mcp_message") {
      const mcp = asJson(request.message);
      const method = String(mcp.method ?? "(no method)");
      if (method === "tools/call") {
        const params = asJson(mcp.params);
        this.open.set(id, { t, what: "tools/call", tool: String(params.name) });
        return `tools/call ${String(params.name)} ${compact(params.arguments ?? {})}`;
      }
      this.open.set(id, { t, what: `mcp ${method}` });
      return `mcp ${method}`;
    }
    if (request.subtype === "can_use_tool") {
      this.open.set(id, { t, what: "permission", tool: String(request.tool_name) });
      return `permission asked: ${String(request.tool_name)} ${compact(request.input ?? {})}`;
    }
    this.open.set(id, { t, what: String(request.subtype) });
    return `control_request ${String(request.subtype)}`;
  }

  /** Our control_response to one of the CLI's requests. */
  private ourAnswer(response: Json, t: number | undefined): string {
    const id = String(response.request_id);
    const asked = this.open.get(id);
    this.open.delete(id);
    const ms = asked?.t !== undefined && t !== undefined ? t - asked.t : undefined;
    const took = ms !== undefined ? ` (${ms.toFixed(1)} ms)` : "";
    if (response.subtype === "error") return `${asked?.what ?? "control"} answered ERROR${took}: ${quoted(String(response.error ?? ""))}`;
    const answer = asJson(response.response);
    if (asked?.what === "tools/call") {
      const mcp = asJson(answer.mcp_response);
      const resultValue = asJson(mcp.result);
      const failed = mcp.error !== undefined || resultValue.isError === true;
      const text = mcp.error !== undefined ? compact(mcp.error) : quoted(contentText(resultValue.content));
      return `tools/call ${asked.tool}${ms !== undefined ? ` done in ${ms.toFixed(1)} ms` : " done"}: ${failed ? "ERROR" : "ok"} ${text}`;
    }
    if (asked?.what === "permission") {
      const behavior = String(answer.behavior ?? "(no behavior)");
      const why = typeof answer.message === "string" ? `: ${quoted(answer.message)}` : "";
      return `permission ${behavior === "deny" ? "DENIED" : behavior === "allow" ? "allowed" : behavior}: ${asked.tool}${took}${why}`;
    }
    return `${asked?.what ?? "control_response"} answered${took}`;
  }

  /** The CLI's control_response to one of our requests. */
  private reply(response: Json, t: number | undefined): string {
    const id = String(response.request_id);
    const asked = this.open.get(id);
    this.open.delete(id);
    const took = asked?.t !== undefined && t !== undefined ? ` (${(t - asked.t).toFixed(1)} ms)` : "";
    const what = asked?.what ?? id;
    if (response.subtype === "error") return `reply to our ${what}: ERROR${took} ${quoted(String(response.error ?? ""))}`;
    return `reply to our ${what}: ${String(response.subtype ?? "(no subtype)")}${took}`;
  }
}

/** The whole timeline of a loaded transcript (tests, small files); the CLI streams instead. */
export function renderTranscript(transcript: LoadedTranscript, options: TimelineOptions = {}): string[] {
  const timeline = new Timeline(transcript.path, options);
  return [...transcript.records.flatMap((record) => timeline.lines(record)), ...timeline.finish()];
}

/** The timeline of a stream of records, line by line. */
export async function* renderTimeline(path: string, records: AsyncIterable<Rec>, options: TimelineOptions = {}): AsyncGenerator<string> {
  const timeline = new Timeline(path, options);
  for await (const record of records) yield* timeline.lines(record);
  yield* timeline.finish();
}

/** The header's login (read ahead) and network route, when the recorder wrote them (docs/transcript-format.md). */
function loginLines(record: Record<string, unknown>): string[] {
  const login = record.login as { billing?: string; source?: string } | undefined;
  const network = record.network as { proxies?: Record<string, string>; trustedCa?: Record<string, string>; clientCertificate?: string[]; interceptor?: string } | undefined;
  const lines: string[] = [];
  if (login) lines.push(clip(`# login ${login.billing} via ${login.source} (read ahead; the initialize reply's account below has the last word)`, LINE_WIDTH));
  if (network) {
    const parts = [...Object.entries({ ...network.proxies, ...network.trustedCa }).map(([name, value]) => `${name}=${value}`), ...(network.clientCertificate?.length ? [`client certificate`] : [])];
    // Older transcripts have no interceptor field: nothing is said then.
    const interceptor = network.interceptor === "on" ? "; interceptor on" : network.interceptor === "off" ? "; interceptor OFF (wire: false)" : network.interceptor === "apiEndpoint" ? "; interceptor off (apiEndpoint)" : network.interceptor === "standIn" ? "; interceptor off (stand-in CLI)" : "";
    lines.push(clip(`# network ${parts.length > 0 ? parts.join("; ") : "direct"}${interceptor}`, LINE_WIDTH));
  }
  return lines;
}
