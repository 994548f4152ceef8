/**
 * The CLI's lines of one model response as AI SDK stream parts. The provider always asks for the CLI's
 * partial messages (`stream_event`), so text and reasoning arrive as deltas and a tool call's input as
 * JSON deltas; an `assistant` line for a response that streamed nothing (a synthetic one) still gives
 * its text, one delta per block. Only the top-level conversation maps (subagent lines carry a
 * `parent_tool_use_id`). The app's tools (`mcp__ktx__<name>`) surface as calls the app runs; the model's own
 * (settings.tools) as provider-executed, dynamic calls; others (the CLI's StructuredOutput tool) do not surface.
 */
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { KTX_MCP_SERVER_NAME } from "../mcp/tools.js";
import type { CliMessage } from "../protocol/messages.js";

const APP_TOOL_PREFIX = `mcp__${KTX_MCP_SERVER_NAME}__`;

/** Tokens of one model response, as its `message_start` and `message_delta` report them. */
export interface ResponseUsage {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
}

/** A tool call of the app's, complete (its input is the JSON the model wrote). */
export interface AppToolCall {
  toolCallId: string;
  toolName: string;
  input: string;
}

export interface ResponseEvents {
  part(part: LanguageModelV3StreamPart): void;
  /** A response ended (`message_stop`), with the app's tool calls it made. */
  responseEnd(calls: AppToolCall[], stopReason: string | undefined): void;
}

type OpenBlock = { kind: "text" | "reasoning"; id: string } | { kind: "tool"; id: string; toolName: string; input: string; providerExecuted: boolean } | { kind: "other" };

interface StreamEvent {
  type?: string;
  index?: number;
  message?: { id?: string; model?: string; usage?: Record<string, unknown> };
  content_block?: { type?: string; id?: string; name?: string };
  delta?: { type?: string; text?: string; thinking?: string; partial_json?: string; stop_reason?: string | null };
  usage?: Record<string, unknown>;
}

export class ResponseMapper {
  /** Usage of every response seen, by message id (a segment sums its own). */
  readonly usage = new Map<string, ResponseUsage>();
  private messageId = "";
  private blocks = new Map<number, OpenBlock>();
  private calls: AppToolCall[] = [];
  private stopReason: string | undefined;
  private readonly streamed = new Set<string>();
  /** Whether any reasoning block was seen (output tokens cannot then be split into text and reasoning). */
  reasoningSeen = false;

  constructor(
    /** JSON mode: the model's prose is not the answer (the structured output is, at the end). */
    private readonly jsonMode: boolean,
    private readonly appTools: ReadonlySet<string>,
    /** The model's own tools (settings.tools): their calls surface as provider-executed, dynamic parts. */
    private readonly providerTools: ReadonlySet<string> = new Set(),
  ) {}

  private isTool(name: string): boolean {
    return this.appTools.has(name) || this.providerTools.has(name);
  }

  /** Maps one CLI message; `events` is where the parts of the segment running now go. */
  map(message: CliMessage, events: ResponseEvents): void {
    if (message.kind === "stream_event") {
      if (message.message.parent_tool_use_id) return;
      this.event(message.message.event as StreamEvent, events);
    } else if (message.kind === "assistant") {
      const line = message.message;
      if (line.parent_tool_use_id || this.jsonMode || (line.message.id && this.streamed.has(line.message.id))) return;
      // A line for a response that streamed nothing: its text, one delta per block.
      for (const block of line.message.content) {
        if (block.type !== "text" || typeof block.text !== "string") continue;
        const id = `${line.message.id ?? "line"}:${this.fallbackIndex++}`;
        events.part({ type: "text-start", id });
        events.part({ type: "text-delta", id, delta: block.text });
        events.part({ type: "text-end", id });
      }
    }
  }

  private fallbackIndex = 0;

  private event(event: StreamEvent, events: ResponseEvents): void {
    switch (event.type) {
      case "message_start": {
        this.messageId = event.message?.id ?? `response-${this.usage.size}`;
        this.streamed.add(this.messageId);
        this.blocks = new Map();
        this.calls = [];
        this.stopReason = undefined;
        const usage = event.message?.usage ?? {};
        this.usage.set(this.messageId, { input: num(usage.input_tokens), cacheRead: num(usage.cache_read_input_tokens), cacheWrite: num(usage.cache_creation_input_tokens), output: num(usage.output_tokens) });
        events.part({ type: "response-metadata", ...(event.message?.id ? { id: event.message.id } : {}), ...(event.message?.model ? { modelId: event.message.model } : {}), timestamp: new Date() });
        return;
      }
      case "content_block_start": {
        const index = event.index ?? 0;
        const block = event.content_block ?? {};
        const id = `${this.messageId}:${index}`;
        if (block.type === "text" && !this.jsonMode) {
          this.blocks.set(index, { kind: "text", id });
          events.part({ type: "text-start", id });
        } else if ((block.type === "thinking" || block.type === "redacted_thinking") && !this.jsonMode) {
          this.reasoningSeen = true;
          this.blocks.set(index, { kind: "reasoning", id });
          events.part({ type: "reasoning-start", id });
        } else if (block.type === "tool_use" && block.id && block.name?.startsWith(APP_TOOL_PREFIX) && this.isTool(block.name.slice(APP_TOOL_PREFIX.length))) {
          const toolName = block.name.slice(APP_TOOL_PREFIX.length);
          const providerExecuted = !this.appTools.has(toolName);
          this.blocks.set(index, { kind: "tool", id: block.id, toolName, input: "", providerExecuted });
          events.part({ type: "tool-input-start", id: block.id, toolName, ...(providerExecuted ? { providerExecuted, dynamic: true } : {}) });
        } else this.blocks.set(index, { kind: "other" });
        return;
      }
      case "content_block_delta": {
        const block = this.blocks.get(event.index ?? 0);
        const delta = event.delta ?? {};
        if (block?.kind === "text" && delta.type === "text_delta" && delta.text) events.part({ type: "text-delta", id: block.id, delta: delta.text });
        else if (block?.kind === "reasoning" && delta.type === "thinking_delta" && delta.thinking) events.part({ type: "reasoning-delta", id: block.id, delta: delta.thinking });
        else if (block?.kind === "tool" && delta.type === "input_json_delta" && delta.partial_json) {
          block.input += delta.partial_json;
          events.part({ type: "tool-input-delta", id: block.id, delta: delta.partial_json });
        }
        return;
      }
      case "content_block_stop": {
        const index = event.index ?? 0;
        const block = this.blocks.get(index);
        this.blocks.delete(index);
        if (block?.kind === "text") events.part({ type: "text-end", id: block.id });
        else if (block?.kind === "reasoning") events.part({ type: "reasoning-end", id: block.id });
        else if (block?.kind === "tool") {
          events.part({ type: "tool-input-end", id: block.id });
          const call = { toolCallId: block.id, toolName: block.toolName, input: block.input === "" ? "{}" : block.input };
          // The app runs only its own tools; the provider's run in the CLI's turn, and their step goes on.
          if (block.providerExecuted) events.part({ type: "tool-call", ...call, providerExecuted: true, dynamic: true });
          else {
            this.calls.push(call);
            events.part({ type: "tool-call", ...call });
          }
        }
        return;
      }
      case "message_delta": {
        if (event.delta?.stop_reason) this.stopReason = event.delta.stop_reason;
        const usage = this.usage.get(this.messageId);
        if (usage && event.usage) {
          if (typeof event.usage.output_tokens === "number") usage.output = event.usage.output_tokens;
          if (typeof event.usage.input_tokens === "number") usage.input = event.usage.input_tokens;
        }
        return;
      }
      case "message_stop": {
        const calls = this.calls;
        this.calls = [];
        events.responseEnd(calls, this.stopReason);
        return;
      }
      default:
        return;
    }
  }
}

function num(value: unknown): number {
  return typeof value === "number" ? value : 0;
}
