/**
 * One CLI process's session on the interceptor (interceptor.ts): the call running on it, what that
 * call's Messages requests carried, what was refused, and whether the process may serve a call at all.
 */
import type { IsolationError } from "../../errors/index.js";
import type { CallExpectation, EarlierTurn, ResponseContent } from "./check.js";
import type { RequestRecord } from "./records.js";

/** How long a Messages request that arrived before its call was announced waits for it (the host's message and the CLI's request race only across processes). */
const CALL_WAIT_MS = 2_000;

export interface SessionEvents {
  onStop?(error: IsolationError): void;
  onRefusal?(what: string): void;
  /** A call's records not told yet, told together when an answer ends the model's turn (one message per call, not per request). */
  onRecords?(records: RequestRecord[]): void;
}

/**
 * `responses`: the model responses forwarded so far, which later requests' assistant turns must be made of;
 * `earlier`: the conversation's calls before this one on the process, when it continues one.
 */
export type CallState = { expectation: CallExpectation; fail: (error: IsolationError) => void; forwarded: number; records: RequestRecord[]; told: number; responses: ResponseContent[]; earlier: readonly EarlierTurn[]; summaries: string[]; summarizing?: Promise<void> };

/** One CLI process's view of the interceptor: its proxy credentials, the call it runs, what it sent. */
export class WireSession {
  /** Refusals of anything but a call's Messages request (analytics, other hosts), for the transcript and status, when nobody is told of them (refuse()). */
  readonly refusals: string[] = [];
  private call: CallState | undefined;
  /** Whether this session's CLI has connected to the Messages host: it is a CLI that reaches the API (interceptor.ts opens the API connection ahead of its calls). */
  reachedApi = false;
  /** A Messages request checked outside any call, or a stopped one: the process must not serve a call. */
  private broken: IsolationError | undefined;
  /** Requests waiting for their call (see CALL_WAIT_MS). */
  private readonly waiting = new Set<() => void>();
  /** Requests waiting for the call's server tools (whenMcpTools). */
  private readonly waitingTools = new Set<() => void>();
  /**
   * The calls since the last that did not continue a conversation, as this session saw them: what a
   * conversation's next turn may carry. Kept here, where every request and answer passes, never taken from the CLI.
   */
  private turns: readonly EarlierTurn[] = [];
  /** What the conversation's summary requests were answered with (compaction.ts): kept with its turns. */
  private summaries: readonly string[] = [];

  constructor(
    readonly name: string,
    readonly env: Record<string, string>,
    /** What the interceptor's process tells its host as it happens: a stop (once), each refusal, a call's records at each end of the model's turn. */
    private readonly events: SessionEvents = {},
  ) {}

  /** A request refused because no call needs it: told at once, or kept for the call's end. */
  refuse(what: string): void {
    // Told to whoever listens (the interceptor's process tells its host, which keeps them); kept here otherwise.
    if (this.events.onRefusal) this.events.onRefusal(what);
    else this.refusals.push(what);
  }

  /**
   * @internal a forwarded request's record is complete (its answer passed on, or it failed). When its
   * answer ends the model's turn, the call's records so far are told (only while that call runs).
   */
  recorded(call: CallState, endsTurn: boolean): void {
    if (call !== this.call || !endsTurn || !this.events.onRecords) return;
    // Only complete records: one still streaming is told with a later turn's end, or asked for at the call's end.
    const complete = call.records.slice(call.told);
    if (complete.some((record) => record.lastByteMs === undefined)) return;
    call.told = call.records.length;
    this.events.onRecords(complete);
  }

  /** The next call on this process: its expectation and how to stop it. Throws when the process is already compromised. */
  beginCall(expectation: CallExpectation, fail: (error: IsolationError) => void): void {
    if (this.broken) throw this.broken;
    // A call that does not continue a conversation starts from nothing: the process was rewound (or is new).
    this.call = { expectation, fail, forwarded: 0, records: [], told: 0, responses: [], earlier: expectation.continues ? this.turns : [], summaries: expectation.continues ? [...this.summaries] : [] };
    for (const resume of this.waiting) resume();
  }

  /** Ends the call: how many of its Messages requests were checked and forwarded, and what each carried. */
  endCall(): { forwarded: number; records: RequestRecord[]; refusals: string[] } {
    const call = this.call;
    this.call = undefined;
    // A failed or interrupted turn's prompt too: the CLI may keep it (after an API error it does).
    if (call) this.summaries = call.summaries;
    if (call) this.turns = [...call.earlier, { prompt: call.expectation.prompt, model: call.expectation.model, responses: call.responses, toolOutputs: call.expectation.toolOutputs ?? new Map() }];
    return { forwarded: call?.forwarded ?? 0, records: call?.records ?? [], refusals: this.refusals.splice(0) };
  }

  /** @internal the interceptor's side. */
  messages(): CallState | undefined {
    return this.call;
  }

  /** @internal runs `then` once a call runs, or after CALL_WAIT_MS without one. */
  whenCall(then: () => void): void {
    if (this.call || this.broken) return then();
    const resume = () => {
      clearTimeout(timer);
      this.waiting.delete(resume);
      then();
    };
    const timer = setTimeout(resume, CALL_WAIT_MS);
    timer.unref();
    this.waiting.add(resume);
  }

  /**
   * `capabilities.mcpServers`: the tools of the CLI-run servers as the call's init listed them (the host tells them
   * when init arrives); requests waiting for them are checked now.
   */
  setMcpTools(names: readonly string[]): void {
    if (!this.call) return;
    this.call.expectation = { ...this.call.expectation, mcpTools: names };
    for (const resume of this.waitingTools) resume();
  }

  /**
   * Runs `then` once the call's server tools are known (a call without `mcpServers` needs none): init reaches the
   * host on the CLI's stdout while the request comes here, so the request waits for them (CALL_WAIT_MS at most;
   * without them the check refuses it).
   */
  whenMcpTools(then: () => void): void {
    const call = this.call;
    if (!call || this.broken || !call.expectation.mcpServers || call.expectation.mcpTools) return then();
    const resume = () => {
      clearTimeout(timer);
      this.waitingTools.delete(resume);
      then();
    };
    const timer = setTimeout(resume, CALL_WAIT_MS);
    timer.unref();
    this.waitingTools.add(resume);
  }

  /** @internal */
  stop(error: IsolationError): void {
    const first = this.broken === undefined;
    this.broken ??= error;
    this.call?.fail(error);
    if (first) this.events.onStop?.(error);
  }
}
