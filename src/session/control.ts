/**
 * The control protocol's two directions for one CLI process: answering the CLI's requests with a
 * call's handlers (`answerLine`), and our own requests to the CLI (`ControlRequests`: one reply
 * each, an optional deadline, every one rejected when the process ends).
 */
import { type ClaudeCodeError, ProtocolError } from "../errors/index.js";
import { type Cancellation, RequestCancel } from "../mcp/cancel.js";
import type { InFlight } from "../mcp/in-flight.js";
import { type InitializeRequest, controlError, controlRequest, controlSuccess, mcpSuccessLine } from "../protocol/outbound.js";

export interface ControlHandlers {
  /** JSON-RPC for an in-process MCP server; resolves with the JSON-RPC reply. */
  mcpMessage?(serverName: string, message: unknown, cancel: Cancellation): Promise<unknown>;
  /** Permission question; resolves with `{behavior: "allow" | "deny", …}`. */
  canUseTool(request: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>>;
}

export type WireDirection = "out" | "in" | "stderr" | "dropped";

/**
 * The success line answering one control request of the CLI with the call's handlers (throws for anything
 * else, which gets an error envelope). An MCP reply, one per tool call, is built as text (`mcpSuccessLine`).
 */
async function answerLine(control: ControlHandlers, requestId: string, request: Record<string, unknown> & { subtype: string }, cancel: RequestCancel): Promise<string | object> {
  switch (request.subtype) {
    case "mcp_message": {
      const server = String(request.server_name);
      if (!control.mcpMessage) throw new Error(`No MCP server named ${JSON.stringify(server)} in this run`);
      return mcpSuccessLine(requestId, await control.mcpMessage(server, request.message, cancel));
    }
    case "can_use_tool":
      return controlSuccess(requestId, await control.canUseTool(request, cancel.signal));
    default:
      throw new Error(`ktx-claude-code does not handle control request subtype ${JSON.stringify(request.subtype)}`);
  }
}

let requestCounter = 0;
/** Request ids are unique per host process (`transcript diff` normalises them). */
export const nextRequestId = (): string => `ktx_${process.pid}_r${++requestCounter}`;

type ControlRequest = { subtype: string; [field: string]: unknown } | InitializeRequest;
type Pending = { subtype: string; resolve(response: Record<string, unknown>): void; reject(error: ClaudeCodeError): void; timer?: NodeJS.Timeout };

export class ControlRequests {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly write: (line: unknown) => void,
    /** A request that got no reply in time: the process cannot be trusted any more. */
    private readonly onTimeout: (reason: string) => void,
  ) {}

  get size(): number {
    return this.pending.size;
  }

  /** Sends one request and resolves with the reply's `response` (timeout 0: none). */
  send(request: ControlRequest, timeoutMs: number): Promise<Record<string, unknown>> {
    const id = nextRequestId();
    return new Promise((resolve, reject) => {
      const entry: Pending = { subtype: request.subtype, resolve, reject };
      if (timeoutMs > 0) {
        entry.timer = setTimeout(() => {
          this.pending.delete(id);
          this.onTimeout(`${request.subtype} got no reply within ${timeoutMs} ms`);
          reject(new ProtocolError(`The CLI did not answer the ${request.subtype} request within ${timeoutMs} ms; its process was stopped.`));
        }, timeoutMs);
        entry.timer.unref();
      }
      this.pending.set(id, entry);
      this.write(controlRequest(id, request));
    });
  }

  /** Sends a request whose reply is not awaited (`interrupt`, `end_session`). */
  notify(request: ControlRequest): void {
    this.write(controlRequest(nextRequestId(), request));
  }

  /** A reply of the CLI; false when no request of ours was waiting for it. */
  settle(response: { subtype: string; request_id: string; response?: unknown; error?: unknown }): boolean {
    const pending = this.pending.get(response.request_id);
    if (!pending) return false;
    this.pending.delete(response.request_id);
    clearTimeout(pending.timer);
    if (response.subtype === "error") {
      const error = new ProtocolError(`The CLI rejected the ${pending.subtype} request: ${String(response.error)}`);
      error.refusedRequest = pending.subtype;
      pending.reject(error);
    } else {
      pending.resolve((response.response ?? {}) as Record<string, unknown>);
    }
    return true;
  }

  /** Rejects every waiting request (the process ended) or just forgets them (`error` undefined). */
  clear(error?: ClaudeCodeError): void {
    for (const pending of this.pending.values()) {
      clearTimeout(pending.timer);
      if (error) pending.reject(error);
    }
    this.pending.clear();
  }
}

/** What answering needs of the running call. */
interface AnsweringCall {
  call: { control: ControlHandlers };
  failure: unknown;
  inflight: InFlight<RequestCancel>;
  timers: { touch(): void };
}

/** Whether a request's answer may still be written: not cancelled, the call not failed, still this process's call. */
function stillOpen(active: AnsweringCall, cancel: RequestCancel, isCurrent: () => boolean): boolean {
  return !cancel.aborted && !active.failure && isCurrent();
}

/**
 * Answers one control request of the CLI for the running call. After the call failed nothing more is
 * fed to the CLI (a tool result would let it ask the API again); notifications are still acknowledged
 * so its MCP client settles, other requests stay unanswered until the interrupt ends them.
 */
export async function answerControl(
  active: AnsweringCall,
  requestId: string,
  request: Record<string, unknown> & { subtype: string },
  write: (line: unknown) => void,
  isCurrent: () => boolean,
): Promise<void> {
  if (active.failure) {
    const message = request.message as { id?: unknown; method?: unknown } | undefined;
    if (request.subtype === "mcp_message" && message?.id === undefined && typeof message?.method === "string") {
      write(controlSuccess(requestId, { mcp_response: { jsonrpc: "2.0", result: {}, id: 0 } }));
    }
    return;
  }
  const cancel = new RequestCancel(requestId);
  // The idle clock stands still while a request is in flight (a slow tool): the CLI owes us nothing.
  active.inflight.add(cancel);
  try {
    const line = await answerLine(active.call.control, requestId, request, cancel);
    if (stillOpen(active, cancel, isCurrent)) write(line);
  } catch (error) {
    if (stillOpen(active, cancel, isCurrent)) write(controlError(requestId, (error as Error).message ?? String(error)));
  } finally {
    active.inflight.delete(cancel);
    active.timers.touch();
  }
}
