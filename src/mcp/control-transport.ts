/**
 * The MCP SDK's message-stream `Transport` over the CLI's control protocol (bridge.ts): the CLI wraps each
 * JSON-RPC message for the "ktx" server in a `control_request` (`subtype: "mcp_message"`) and waits for one
 * `control_response` carrying the JSON-RPC reply; this turns that request/reply shape into a stream for the SDK's
 * `Server`.
 */
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { ProtocolError } from "../errors/index.js";
import { errorMessage } from "./tools.js";

/** Console-compatible; every method optional. */
export interface KtxMcpLogger {
  debug?(message: string, ...rest: unknown[]): void;
  warn?(message: string, ...rest: unknown[]): void;
}

/** The reason a cancelled request's handler sees (the SDK's `Server` aborts it with what the transport sends). */
export const CANCELLED_BY_CLI = "Cancelled by the Claude Code CLI";

/** The reply the CLI expects for a JSON-RPC notification (it waits for a reply to every control request). */
export function notificationAck(): JSONRPCMessage {
  return { jsonrpc: "2.0", result: {}, id: 0 };
}

interface Pending {
  originalId: RequestId;
  settle(reply: JSONRPCMessage | undefined): void;
  cancel(): void;
}

/**
 * MCP SDK `Transport` over the control protocol. Inbound messages enter through `handle`, which resolves with the
 * server's reply to that request. Each inbound request gets a fresh internal JSON-RPC id (restored on the reply),
 * because the CLI may reuse an id while an earlier request with it is in flight (CLI 2.1.142 sends `initialize`
 * twice) and the SDK's `Protocol` keys handlers and cancellation by id.
 */
export class ControlProtocolMcpTransport implements Transport {
  onmessage?: Transport["onmessage"];
  onclose?: Transport["onclose"];
  onerror?: Transport["onerror"];

  readonly #pending = new Map<number, Pending>();
  // Starts at 1: the SDK ignores `notifications/cancelled` whose requestId is falsy, so id 0 could not be cancelled.
  #nextId = 1;
  #started = false;
  #closed = false;

  constructor(private readonly logger?: KtxMcpLogger) {}

  async start(): Promise<void> {
    if (this.#started) throw new Error("ControlProtocolMcpTransport already started");
    this.#started = true;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Number of requests waiting for the server's reply (for tests and diagnostics). */
  get inFlight(): number {
    return this.#pending.size;
  }

  /**
   * Delivers one inbound message. Requests resolve with the server's reply (original id restored), or with
   * `undefined` when `signal` aborts first (the CLI cancelled it: no reply is sent) or the transport closes.
   * Notifications and stray responses resolve at once with `notificationAck()`.
   */
  handle(message: JSONRPCMessage, signal?: AbortSignal): Promise<JSONRPCMessage | undefined> {
    const deliver = this.onmessage;
    if (this.#closed || !this.#started || !deliver) {
      return Promise.reject(new ProtocolError("The ktx MCP transport is not connected (closed, or not started by an MCP server)."));
    }
    if (!isJSONRPCRequest(message)) {
      if (isJSONRPCNotification(message)) {
        if (message.method === "notifications/cancelled") {
          // Its requestId is the CLI's id; the server only knows internal ids, so cancel through our own mapping.
          const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
          for (const pending of [...this.#pending.values()]) if (pending.originalId === requestId) pending.cancel();
        } else {
          deliver(message);
        }
      } else {
        // Responses would be replies to server-initiated requests, which this server never makes.
        this.logger?.debug?.("ktx MCP: ignoring an inbound JSON-RPC response", message);
      }
      return Promise.resolve(notificationAck());
    }
    if (signal?.aborted) return Promise.resolve(undefined);

    const internalId = this.#nextId++;
    return new Promise<JSONRPCMessage | undefined>((resolve) => {
      const onAbort = (): void => {
        if (!this.#pending.delete(internalId)) return;
        signal?.removeEventListener("abort", onAbort);
        resolve(undefined);
        // Lets the SDK abort the handler's signal and suppress its reply.
        this.onmessage?.({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: internalId, reason: CANCELLED_BY_CLI },
        });
      };
      this.#pending.set(internalId, {
        originalId: message.id,
        settle: (reply) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(reply);
        },
        cancel: onAbort,
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      try {
        deliver({ ...message, id: internalId });
      } catch (error) {
        this.#pending.delete(internalId);
        signal?.removeEventListener("abort", onAbort);
        resolve({ jsonrpc: "2.0", id: message.id, error: { code: ErrorCode.InternalError, message: errorMessage(error) } });
      }
    });
  }

  async send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      const id = message.id;
      const pending = typeof id === "number" ? this.#pending.get(id) : undefined;
      if (pending === undefined) {
        this.logger?.debug?.("ktx MCP: dropping a reply to a cancelled or unknown request", id);
        return;
      }
      this.#pending.delete(id as number);
      pending.settle({ ...message, id: pending.originalId });
      return;
    }
    // The control protocol only carries replies to the CLI's requests; server-initiated messages have no channel.
    this.logger?.debug?.("ktx MCP: dropping a server-initiated message", message);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.settle(undefined);
    this.onclose?.();
  }
}
