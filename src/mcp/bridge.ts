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
  type CallToolResult,
  type JSONRPCMessage,
  type RequestId,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { InvalidInputError, ProtocolError } from "../errors/index.js";
import { CANCELLED_BY_CLI, ControlProtocolMcpTransport, type KtxMcpLogger } from "./control-transport.js";
import { errorMessage, KTX_MCP_SERVER_NAME, normalizeToolOutput, type KtxToolOutput, type PreparedTool } from "./tools.js";

export { ControlProtocolMcpTransport, type KtxMcpLogger, notificationAck } from "./control-transport.js";

/** Version reported in the MCP `serverInfo`; informational only. */
export const KTX_MCP_SERVER_VERSION = "1.0.0";

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
  /**
   * Aborts the signals of the tool handlers running now, with `reason` (the call they served has ended); their
   * requests stay open, so what a handler still returns is answered as usual.
   */
  abortRunning(reason: unknown): void;
}

/** The params of a `tools/call` this bridge answers itself (see the header); undefined: the SDK's `Server` answers. */
type DirectCall = { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> };

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

/** Ends a running handler as cancelled; its signal aborts with `reason` (undefined: the default AbortError). */
type Cancel = (reason: unknown) => void;

/** How a direct request's handler is cancelled: with `cancelReason` when the control request is, and by the `cancel` it is given. */
interface DirectRequest {
  cancelReason: unknown;
  onStart(cancel: Cancel): void;
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

  /** The signals of the handlers running now (abortRunning). */
  const running = new Set<AbortController>();
  /** The direct `tools/call` requests in flight, by the CLI's id: `notifications/cancelled` and close() end them. */
  const direct = new Map<Cancel, RequestId>();

  /**
   * Runs one handler under its own signal. It ends as `cancelled` when `requestSignal` aborts (the handler's signal
   * then aborts with `cancelReason`, else the request signal's reason) or when the `cancel` given to `onStart` is called.
   */
  const runTool = (tool: PreparedTool, input: unknown, toolUseId: string | undefined, requestSignal: AbortSignal | undefined, direct?: DirectRequest): Promise<Outcome> => {
    const controller = new AbortController();
    running.add(controller);
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    return new Promise<Outcome>((resolve) => {
      const cancel: Cancel = (reason) => {
        resolve({ kind: "cancelled" });
        controller.abort(reason);
      };
      direct?.onStart(cancel);
      if (requestSignal) {
        onAbort = () => cancel(direct ? direct.cancelReason : requestSignal.reason);
        if (requestSignal.aborted) return onAbort();
        requestSignal.addEventListener("abort", onAbort, { once: true });
      }
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
      running.delete(controller);
      clearTimeout(timer);
      if (onAbort) requestSignal!.removeEventListener("abort", onAbort);
    });
  };

  const callTool = async (params: DirectCall, signal: AbortSignal | undefined, direct?: DirectRequest): Promise<CallToolResult> => {
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

    const outcome = await runTool(tool, parsed.data, toolUseId, signal, direct);
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

  /** A well-formed `tools/call`, answered as the SDK's `Server` would: same handler, same reply, no reply once cancelled. */
  const answerDirect = async (id: RequestId, params: DirectCall, signal: AbortSignal | undefined): Promise<JSONRPCMessage | undefined> => {
    if (signal?.aborted) return undefined;
    // Cancelled like the SDK's requests: by the CLI (its control request's signal, or a notification), or by close().
    let cancelled = false;
    let entry: Cancel | undefined;
    const track: DirectRequest = {
      cancelReason: CANCELLED_BY_CLI,
      onStart(cancel) {
        entry = (reason) => {
          cancelled = true;
          cancel(reason);
        };
        direct.set(entry, id);
      },
    };
    try {
      const result = await callTool(params, signal, track);
      return cancelled || signal?.aborted ? undefined : { result, jsonrpc: "2.0", id };
    } catch (error) {
      return cancelled || signal?.aborted ? undefined : { jsonrpc: "2.0", id, error: { code: ErrorCode.InternalError, message: errorMessage(error) || "Internal error" } };
    } finally {
      if (entry) direct.delete(entry);
    }
  };

  /** `notifications/cancelled` for a direct request (the SDK's own requests are cancelled by the transport). */
  const cancelDirect = (message: unknown): void => {
    const notification = message as { method?: unknown; params?: { requestId?: unknown } } | null;
    if (direct.size === 0 || notification?.method !== "notifications/cancelled") return;
    for (const [cancel, id] of direct) if (id === notification.params?.requestId) cancel(CANCELLED_BY_CLI);
  };

  return {
    async handleMcpMessage(serverName, message, signal) {
      if (serverName !== KTX_MCP_SERVER_NAME) {
        throw new ProtocolError(`The CLI sent an MCP message for server "${serverName}", but this session only hosts "${KTX_MCP_SERVER_NAME}".`);
      }
      if (closed) throw new ProtocolError(`The ktx MCP bridge is closed; it cannot handle more messages.`);
      const call = directCall(message);
      if (call) return answerDirect(call.id, call.params, signal);
      cancelDirect(message);
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
      // As the SDK's Server does with its requests' signals on close: no reason.
      for (const cancel of direct.keys()) cancel(undefined);
      await connected.catch(() => undefined);
      await server.close();
    },
    abortRunning(reason) {
      for (const controller of running) controller.abort(reason);
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
