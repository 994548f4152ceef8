/**
 * The in-process MCP server hosting KTX's tools, reached through the CLI's control protocol.
 *
 * The CLI wraps each JSON-RPC message for the "ktx" server in a `control_request` (`subtype: "mcp_message"`) and
 * waits for one `control_response` carrying the JSON-RPC reply. `ControlProtocolMcpTransport` turns that
 * request/reply shape into the MCP SDK's message-stream `Transport`, so the SDK's `Server` does the JSON-RPC work.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  ListToolsRequestSchema,
  type CallToolResult,
  type JSONRPCMessage,
  type RequestId,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { InvalidInputError, ProtocolError } from "../errors/index.js";
import { errorMessage, KTX_MCP_SERVER_NAME, normalizeToolOutput, type KtxToolOutput, type PreparedTool } from "./tools.js";

/** Version reported in the MCP `serverInfo`; informational only. */
export const KTX_MCP_SERVER_VERSION = "1.0.0";

/** Console-compatible; every method optional. */
export interface KtxMcpLogger {
  debug?(message: string, ...rest: unknown[]): void;
  warn?(message: string, ...rest: unknown[]): void;
}

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
          params: { requestId: internalId, reason: "Cancelled by the Claude Code CLI" },
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

export interface KtxToolCallEvent {
  name: string;
  toolUseId?: string;
  ok: boolean;
  /** What the model was told, when `ok` is false. */
  error?: string;
  durationMs: number;
  /** The CLI cancelled the call (or the bridge closed); the model saw nothing from it. */
  cancelled?: boolean;
  timedOut?: boolean;
  /** `structured` from the tool's output, on success. */
  structured?: unknown;
  /** Set when the text handed to the CLI was cut to `TOOL_OUTPUT_LIMIT` characters. */
  truncated?: ToolOutputTruncation;
}

export interface ToolOutputTruncation {
  /** Characters the tool produced. */
  originalChars: number;
  /** Characters of it the model got (the note comes on top). */
  keptChars: number;
}

/**
 * Most characters of tool text handed to the CLI. The CLI writes a longer result (over 50,000
 * characters, measured on 2.1.330) to `~/.claude/projects/<project>/<session>/tool-results/` and gives
 * the model a file path instead, so we cut below that with room for the note.
 */
export const TOOL_OUTPUT_LIMIT = 40_000;

/** Cuts `text` to `limit` characters (never inside a surrogate pair) with a note the model can act on. */
export function boundToolText(text: string, limit = TOOL_OUTPUT_LIMIT): { text: string; truncated?: ToolOutputTruncation } {
  if (text.length <= limit) return { text };
  let kept = limit;
  const code = text.charCodeAt(kept);
  if (code >= 0xdc00 && code <= 0xdfff) kept -= 1;
  const note = `\n\n[ktx: tool output truncated: showing the first ${kept.toLocaleString("en-US")} of ${text.length.toLocaleString("en-US")} characters. Ask for less at once (a narrower query, a smaller page) to see the rest.]`;
  return { text: text.slice(0, kept) + note, truncated: { originalChars: text.length, keptChars: kept } };
}

export interface KtxMcpBridgeOptions {
  /** Per-call limit; on expiry the handler's signal is aborted and the model gets a timeout error. Default: none. */
  toolTimeoutMs?: number;
  /** Called once per `tools/call`, success or failure. Exceptions it throws are logged and ignored. */
  onToolCall?(event: KtxToolCallEvent): void;
  logger?: KtxMcpLogger;
}

export interface KtxMcpBridge {
  /**
   * Handles the `message` of an `mcp_message` control request and resolves with the JSON-RPC object to send back
   * as `mcp_response`, or `undefined` when `signal` aborted first (send no reply). Throws `ProtocolError` for a
   * server other than "ktx", a message that is not JSON-RPC (without a usable id), or a closed bridge.
   */
  handleMcpMessage(serverName: string, message: unknown, signal?: AbortSignal): Promise<JSONRPCMessage | undefined>;
  /** Aborts in-flight tool handlers; their pending `handleMcpMessage` calls resolve with `undefined`. */
  close(): Promise<void>;
}

type Outcome = { kind: "ok"; value: unknown } | { kind: "error"; error: unknown } | { kind: "timeout" } | { kind: "cancelled" };

export function createKtxMcpBridge(tools: readonly PreparedTool[], options: KtxMcpBridgeOptions = {}): KtxMcpBridge {
  const { toolTimeoutMs, onToolCall, logger } = options;
  if (toolTimeoutMs !== undefined && !(Number.isFinite(toolTimeoutMs) && toolTimeoutMs > 0)) {
    throw new InvalidInputError(`toolTimeoutMs must be a positive number of milliseconds; got ${String(toolTimeoutMs)}.`);
  }
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const listed: Tool[] = tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputJsonSchema }));

  const report = (event: KtxToolCallEvent): void => {
    try {
      onToolCall?.(event);
    } catch (error) {
      logger?.warn?.(`ktx MCP: onToolCall threw for tool ${event.name}: ${errorMessage(error)}`);
    }
  };

  const runTool = (tool: PreparedTool, input: unknown, toolUseId: string | undefined, requestSignal: AbortSignal): Promise<Outcome> => {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let onCancel: (() => void) | undefined;
    return new Promise<Outcome>((resolve) => {
      onCancel = () => {
        resolve({ kind: "cancelled" });
        controller.abort(requestSignal.reason);
      };
      if (requestSignal.aborted) return onCancel();
      requestSignal.addEventListener("abort", onCancel, { once: true });
      if (toolTimeoutMs !== undefined) {
        timer = setTimeout(() => {
          // Resolve before aborting: a handler reacting to the abort must not win the race with its own rejection.
          resolve({ kind: "timeout" });
          controller.abort(new Error(`Tool ${tool.name} timed out after ${toolTimeoutMs} ms`));
        }, toolTimeoutMs);
      }
      Promise.resolve()
        .then(() => tool.execute(input, toolUseId === undefined ? { signal: controller.signal } : { signal: controller.signal, toolUseId }))
        .then(
          (value) => resolve({ kind: "ok", value }),
          (error: unknown) => resolve({ kind: "error", error }),
        );
    }).finally(() => {
      clearTimeout(timer);
      if (onCancel) requestSignal.removeEventListener("abort", onCancel);
    });
  };

  const callTool = async (params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> }, signal: AbortSignal): Promise<CallToolResult> => {
    const started = performance.now();
    const rawToolUseId = params._meta?.["claudecode/toolUseId"];
    const toolUseId = typeof rawToolUseId === "string" ? rawToolUseId : undefined;
    const base = (): Pick<KtxToolCallEvent, "name" | "toolUseId" | "durationMs"> => ({
      name: params.name,
      ...(toolUseId === undefined ? {} : { toolUseId }),
      durationMs: Math.round(performance.now() - started),
    });
    const fail = (message: string, extra: Partial<KtxToolCallEvent> = {}): CallToolResult => {
      const { text, truncated } = boundToolText(message);
      report({ ...base(), ok: false, error: text, ...extra, ...(truncated ? { truncated } : {}) });
      return { content: [{ type: "text", text }], isError: true };
    };

    const tool = byName.get(params.name);
    if (!tool) {
      const available = tools.length === 0 ? "none" : tools.map((t) => t.name).join(", ");
      return fail(`Unknown tool "${params.name}". Available tools: ${available}.`);
    }
    const parsed = z.safeParse(tool.inputSchema, params.arguments ?? {});
    if (!parsed.success) return fail(`Invalid arguments for tool ${tool.name}: ${z.prettifyError(parsed.error)}`);

    const outcome = await runTool(tool, parsed.data, toolUseId, signal);
    switch (outcome.kind) {
      case "cancelled":
        // The SDK sends nothing for an aborted request; this result only feeds onToolCall.
        return fail(`Tool ${tool.name} was cancelled.`, { cancelled: true });
      case "timeout":
        return fail(`Tool ${tool.name} timed out after ${toolTimeoutMs} ms`, { timedOut: true });
      case "error": {
        const message = errorMessage(outcome.error);
        return fail(message === "" ? `Tool ${tool.name} failed without an error message.` : message);
      }
      case "ok": {
        let output: KtxToolOutput;
        try {
          output = normalizeToolOutput(outcome.value);
        } catch (error) {
          return fail(`Tool ${tool.name} returned output that cannot be sent to the model: ${errorMessage(error)}`);
        }
        const { text, truncated } = boundToolText(output.markdown);
        report({ ...base(), ok: true, ...(output.structured === undefined ? {} : { structured: output.structured }), ...(truncated ? { truncated } : {}) });
        return { content: [{ type: "text", text }] };
      }
    }
  };

  const server = new Server({ name: KTX_MCP_SERVER_NAME, version: KTX_MCP_SERVER_VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => callTool(request.params, extra.signal));
  server.onerror = (error) => logger?.warn?.(`ktx MCP server: ${error.message}`);

  const transport = new ControlProtocolMcpTransport(logger);
  const connected = server.connect(transport);
  let closed = false;

  return {
    async handleMcpMessage(serverName, message, signal) {
      if (serverName !== KTX_MCP_SERVER_NAME) {
        throw new ProtocolError(`The CLI sent an MCP message for server "${serverName}", but this session only hosts "${KTX_MCP_SERVER_NAME}".`);
      }
      if (closed) throw new ProtocolError(`The ktx MCP bridge is closed; it cannot handle more messages.`);
      await connected;
      if (!isJSONRPCRequest(message) && !isJSONRPCNotification(message) && !isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) {
        const id = (message as { id?: unknown } | null)?.id;
        if (typeof id === "string" || (typeof id === "number" && Number.isInteger(id))) {
          return { jsonrpc: "2.0", id, error: { code: ErrorCode.InvalidRequest, message: "Invalid JSON-RPC request" } };
        }
        throw new ProtocolError(`The CLI sent an MCP message that is not JSON-RPC 2.0: ${truncate(safeJson(message), 200)}`);
      }
      return transport.handle(message, signal);
    },
    async close() {
      if (closed) return;
      closed = true;
      await connected.catch(() => undefined);
      await server.close();
    },
  };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
