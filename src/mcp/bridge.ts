/**
 * The in-process MCP server hosting KTX's tools, reached through the CLI's control protocol.
 *
 * The CLI wraps each JSON-RPC message for the "ktx" server in a `control_request` (`subtype: "mcp_message"`) and
 * waits for one `control_response` carrying the JSON-RPC reply. `ControlProtocolMcpTransport`
 * (control-transport.ts) turns that request/reply shape into the MCP SDK's message-stream `Transport`, so the
 * SDK's `Server` does the JSON-RPC work: initialize, tools/list, ping, notifications, errors.
 *
 * One exception, `tools/call`, the one message a loop sends per tool call: a well-formed one is answered here, by
 * the same `callTool` the SDK's handler runs. Through the SDK each call paid about nine zod validations (the
 * JSON-RPC envelope on the way in and out, the request twice, the result once) and a promise chain, a measurable
 * share of a reused loop's host CPU (docs/performance.md, "Host CPU of a reused loop"). The reply is the one the
 * SDK would send, key for key; anything else (no string `name`, `arguments` not an object, a task, a field the
 * CLI does not send) still goes to the SDK, which validates it and answers with its errors.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  ListToolsRequestSchema,
  type JSONRPCMessage,
  type RequestId,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { InvalidInputError, ProtocolError } from "../errors/index.js";
import { type Cancellation, signalOf } from "./cancel.js";
import { ControlProtocolMcpTransport, type KtxMcpLogger } from "./control-transport.js";
import { type KtxToolCallEvent, type ToolCallParams, ToolCalls } from "./tool-calls.js";
import { errorMessage, KTX_MCP_SERVER_NAME, type PreparedTool } from "./tools.js";

export { ControlProtocolMcpTransport, type KtxMcpLogger, notificationAck } from "./control-transport.js";
export { TOOL_OUTPUT_LIMIT, type KtxToolCallEvent, type ToolOutputTruncation, boundToolText } from "./tool-calls.js";

/** Version reported in the MCP `serverInfo`; informational only. */
export const KTX_MCP_SERVER_VERSION = "1.0.0";

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
  handleMcpMessage(serverName: string, message: unknown, signal?: Cancellation): Promise<JSONRPCMessage | undefined>;
  /** Aborts in-flight tool handlers; their pending `handleMcpMessage` calls resolve with `undefined`. */
  close(): Promise<void>;
  /**
   * Aborts the signals of the tool handlers running now, with `reason()` (the call they served has ended; the
   * reason is made only when a handler is running); their requests stay open, so what a handler still returns is
   * answered as usual.
   */
  abortRunning(reason: () => unknown): void;
}

/** The params of a `tools/call` this bridge answers itself (see the header). */
type DirectCall = ToolCallParams;

function directCall(message: unknown): { id: RequestId; params: DirectCall } | undefined {
  const request = message;
  if (!isPlainObject(request) || request.method !== "tools/call" || request.jsonrpc !== "2.0" || !onlyKeys(request, ENVELOPE)) return undefined;
  const id = request.id;
  if (!isRequestId(id)) return undefined;
  const params = request.params;
  if (!isPlainObject(params) || typeof params.name !== "string" || !onlyKeys(params, DIRECT_PARAMS)) return undefined;
  if (params.arguments !== undefined && !isPlainObject(params.arguments)) return undefined;
  // What the CLI sends (its tool_use id and a progress token, which this server never reports on); a related task or any other key is the SDK's to handle.
  const meta = params._meta;
  if (meta !== undefined && !(isPlainObject(meta) && onlyKeys(meta, DIRECT_META) && isRequestId(meta.progressToken ?? 0))) return undefined;
  return { id, params: params as DirectCall };
}

/** The SDK's JSON-RPC request schema is strict: any other key makes the message no request at all. */
const ENVELOPE = new Set(["jsonrpc", "id", "method", "params"]);
const DIRECT_PARAMS = new Set(["name", "arguments", "_meta"]);
const DIRECT_META = new Set(["claudecode/toolUseId", "progressToken"]);

/** A JSON-RPC id, and an MCP progress token: a string or a (safe, as zod's `int()`) integer. */
function isRequestId(value: unknown): value is RequestId {
  return typeof value === "string" || (typeof value === "number" && Number.isSafeInteger(value));
}

function onlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

export function createKtxMcpBridge(tools: readonly PreparedTool[], options: KtxMcpBridgeOptions = {}): KtxMcpBridge {
  const { toolTimeoutMs, onToolCall, logger } = options;
  if (toolTimeoutMs !== undefined && !(Number.isFinite(toolTimeoutMs) && toolTimeoutMs > 0)) {
    throw new InvalidInputError(`toolTimeoutMs must be a positive number of milliseconds; got ${String(toolTimeoutMs)}.`);
  }
  const listed: Tool[] = tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputJsonSchema }));

  const calls = new ToolCalls(tools, { toolTimeoutMs, onToolCall, logger });

  const server = new Server({ name: KTX_MCP_SERVER_NAME, version: KTX_MCP_SERVER_VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => calls.call(request.params, extra.signal).then((end) => end.result));
  server.onerror = (error) => logger?.warn?.(`ktx MCP server: ${error.message}`);

  const transport = new ControlProtocolMcpTransport(logger);
  const connected = server.connect(transport);
  let closed = false;

  /** A well-formed `tools/call`, answered as the SDK's `Server` would: same handler, same reply, no reply once cancelled. */
  const answerDirect = async (id: RequestId, params: DirectCall, cancel: Cancellation | undefined): Promise<JSONRPCMessage | undefined> => {
    if (cancel?.aborted) return undefined;
    try {
      const { result, cancelled } = await calls.call(params, cancel, id);
      return cancelled || cancel?.aborted ? undefined : { result, jsonrpc: "2.0", id };
    } catch (error) {
      return cancel?.aborted ? undefined : { jsonrpc: "2.0", id, error: { code: ErrorCode.InternalError, message: errorMessage(error) || "Internal error" } };
    }
  };

  /** Everything but a direct `tools/call`: through the SDK's `Server`. */
  const viaServer = async (message: unknown, cancel: Cancellation | undefined): Promise<JSONRPCMessage | undefined> => {
    // `notifications/cancelled` may name a direct request (the SDK's own requests are cancelled by the transport).
    const notification = message as { method?: unknown; params?: { requestId?: unknown } } | null;
    if (notification?.method === "notifications/cancelled") calls.cancelDirect(notification.params?.requestId);
    await connected;
    if (!isJSONRPCRequest(message) && !isJSONRPCNotification(message) && !isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) {
      const id = (message as { id?: unknown } | null)?.id;
      if (typeof id === "string" || (typeof id === "number" && Number.isInteger(id))) {
        return { jsonrpc: "2.0", id, error: { code: ErrorCode.InvalidRequest, message: "Invalid JSON-RPC request" } };
      }
      throw new ProtocolError(`The CLI sent an MCP message that is not JSON-RPC 2.0: ${truncate(safeJson(message), 200)}`);
    }
    return transport.handle(message as JSONRPCMessage, signalOf(cancel));
  };

  return {
    handleMcpMessage(serverName, message, signal) {
      if (serverName !== KTX_MCP_SERVER_NAME) {
        return Promise.reject(new ProtocolError(`The CLI sent an MCP message for server "${serverName}", but this session only hosts "${KTX_MCP_SERVER_NAME}".`));
      }
      if (closed) return Promise.reject(new ProtocolError(`The ktx MCP bridge is closed; it cannot handle more messages.`));
      const call = directCall(message);
      return call ? answerDirect(call.id, call.params, signal) : viaServer(message, signal);
    },
    async close() {
      if (closed) return;
      closed = true;
      calls.cancelAllDirect();
      await connected.catch(() => undefined);
      await server.close();
    },
    abortRunning(reason) {
      calls.abortRunning(reason);
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
