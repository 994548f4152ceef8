/**
 * One CLI process's session on the runtime's interceptor, as the runtime sees it (the process itself:
 * interceptor-process.ts): the call running on it, what its tools handed the CLI when the check needs
 * it, and what passed at the call's end.
 */
import { InterceptorError, type IsolationError } from "../../errors/index.js";
import type { InterceptorProcess } from "./interceptor-process.js";
import type { SentExpectation } from "./process-protocol.js";
import type { RequestRecord } from "./records.js";

export interface CallEnd {
  forwarded: number;
  records: RequestRecord[];
  refusals: string[];
}

/** One CLI process's session on the interceptor, as the runtime sees it. */
export class HostWireSession {
  private call: { id: number; fail: (error: IsolationError | InterceptorError) => void; records: RequestRecord[] } | undefined;
  /** Refusals pushed by the process since the last call's end. */
  private readonly refusals: string[] = [];
  private broken: IsolationError | InterceptorError | undefined;
  /** Told when the session breaks while no call runs on it (its process must then not serve one). */
  onIdleBreak?: () => void;

  constructor(
    readonly name: string,
    readonly env: Record<string, string>,
    private readonly owner: InterceptorProcess,
  ) {}

  /** The next call on this process. Throws when the process is already compromised or the interceptor is gone. */
  beginCall(expectation: SentExpectation, fail: (error: IsolationError | InterceptorError) => void): void {
    if (this.broken) throw this.broken;
    if (!this.call) this.owner.running(1);
    const id = this.owner.nextCallId();
    this.call = { id, fail, records: [] };
    this.owner.post({ type: "begin", session: this.name, call: id, expectation });
  }

  /**
   * What one of the call's tools handed the CLI, whole and waited for (its arrival must come before the
   * CLI's next request is checked): the check compares each tool result with it (check-turns.ts).
   */
  toolOutput(id: string, texts: string[]): Promise<void> | undefined {
    const call = this.call;
    if (!call) return undefined;
    return this.owner.ask((reply) => ({ type: "tool", session: this.name, call: call.id, id, texts, ack: reply })).then(() => undefined);
  }

  /** `capabilities.mcpServers`: the servers' tools the call's init listed (its requests may carry exactly these of them). */
  mcpTools(names: string[]): void {
    const call = this.call;
    if (call) this.owner.post({ type: "mcpTools", session: this.name, call: call.id, names });
  }

  /**
   * Ends the call: how many of its Messages requests passed, what each carried, and what was refused.
   * The process pushes the call's records when an answer ends the model's turn, before the CLI can
   * have read that answer, so with `responses` (the model responses the call got) already matched by
   * records, the end needs no round trip. Otherwise (a failed call, records still on their way, a
   * response that went around the interceptor) the process is asked, and its answer is the whole list:
   * pushed messages come before it on the one channel.
   *
   * `waitMs`: how long the call may wait for that answer (its remaining timeoutMs); past it the call
   * fails with InterceptorError, and the process is replaced only if it then misses its own deadline.
   */
  async endCall(responses?: number | ReadonlyArray<string | undefined>, waitMs?: number): Promise<CallEnd> {
    const call = this.call;
    if (!call) return { forwarded: 0, records: [], refusals: this.refusals.splice(0) };
    // Matched by message id when the ids are given (wire-binding.ts), else by count.
    const matched = () => (typeof responses === "number" ? call.records.length >= responses : responses !== undefined && responses.every((id) => id !== undefined && call.records.some((record) => record.messageId === id)));
    // The last record left the process as the CLI got its answer, but may be read after the CLI's result: one turn to read it.
    if (responses !== undefined && !matched()) await new Promise((resolve) => setImmediate(resolve));
    if (this.call === call) {
      this.call = undefined;
      this.owner.running(-1);
    }
    if (responses !== undefined && matched()) {
      this.owner.post({ type: "end", session: this.name, call: call.id });
      return { forwarded: call.records.length, records: call.records, refusals: this.refusals.splice(0) };
    }
    const ended = await this.owner.ask((reply) => ({ type: "end", session: this.name, call: call.id, reply }), waitMs);
    if (ended.type !== "ended") throw new InterceptorError(`The runtime's interceptor answered a call's end with ${ended.type}.`);
    return { forwarded: ended.forwarded, records: ended.records, refusals: this.refusals.splice(0) };
  }

  /** @internal pushed by the process: finished requests of `call`. */
  recorded(call: number, records: RequestRecord[]): void {
    if (this.call?.id === call) this.call.records.push(...records);
  }

  /** @internal pushed by the process: a request that no call needs was refused. */
  refused(what: string): void {
    this.refusals.push(what);
  }

  /** @internal the process stopped this session (`call`: the call it ran, when it knew of one). */
  stopped(call: number | undefined, error: IsolationError | InterceptorError): void {
    this.broken ??= error;
    if (this.call && (call === undefined || call === this.call.id)) this.call.fail(error);
    else if (!this.call) this.onIdleBreak?.();
  }
}
