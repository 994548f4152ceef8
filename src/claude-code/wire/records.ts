/**
 * What one Messages request carried, for the transcript (docs/transcript-format.md, "Request records"):
 * sizes by part, betas, the answer's status, usage and rate-limit headers, time to first and last
 * byte. Bodies only when asked; the credential is never recorded (headers are not kept).
 */

import type { RequestRecord } from "../../transcripts/format.js";
import type { ResponseContent } from "./check-turns.js";

export type { RequestRecord };

const size = (value: unknown) => (value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value)));

export class RequestMeter {
  readonly record: RequestRecord;
  private readonly chunks: Buffer[] = [];
  private streamed = false;
  private done = false;
  /**
   * The answer ends the model's turn: a stop reason other than `tool_use`, or a `StructuredOutput` call
   * (the CLI's last request of an object call). Unknown (a failed request, an error answer): false.
   */
  private endsTurn = false;
  /** The model response the answer carried: later requests' assistant turns must be made of these (check-turns.ts). */
  private response: ResponseContent | undefined;

  /** `parsed` is the body the check already parsed (undefined when it was not JSON). */
  constructor(
    raw: Buffer,
    parsed: unknown,
    headers: Record<string, string | string[] | undefined>,
    private readonly started: number,
    bodies: boolean,
    /** Told once, when the record is complete: whether the answer ended the model's turn, and the model response it carried (a 200 answer). */
    private readonly onDone?: (endsTurn: boolean, response?: ResponseContent) => void,
  ) {
    const body = parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>) : undefined;
    const system = size(body?.system);
    const messages = size(body?.messages);
    const tools = size(body?.tools);
    const beta = headers["anthropic-beta"];
    this.record = {
      bytes: { total: raw.length, system, messages, tools, rest: Math.max(0, raw.length - system - messages - tools) },
      betas: (Array.isArray(beta) ? beta.join(",") : (beta ?? "")).split(",").map((value) => value.trim()).filter(Boolean),
      ...(typeof body?.model === "string" ? { model: body.model } : {}),
      ...(bodies && body ? { body } : {}),
    };
  }

  headers(status: number, headers: Record<string, string | string[] | undefined>): void {
    this.record.status = status;
    this.record.firstByteMs = Math.round((performance.now() - this.started) * 10) / 10;
    const limits = Object.entries(headers).filter(([name]) => name.startsWith("anthropic-ratelimit-") || name === "retry-after");
    if (limits.length > 0) this.record.rateLimit = Object.fromEntries(limits.map(([name, value]) => [name, String(value)]));
    this.streamed = String(headers["content-type"] ?? "").includes("text/event-stream");
  }

  chunk(chunk: Buffer): void {
    this.chunks.push(chunk);
  }

  end(): void {
    if (this.done) return;
    this.record.lastByteMs = Math.round((performance.now() - this.started) * 10) / 10;
    this.readUsage();
    this.finish();
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.onDone?.(this.endsTurn, this.response);
  }

  /** Parsed once, after the answer has passed on: nothing is added on the stream's path. */
  private readUsage(): void {
    const text = Buffer.concat(this.chunks).toString("utf8");
    this.chunks.length = 0;
    try {
      if (!this.streamed) {
        const message = JSON.parse(text) as { id?: unknown; usage?: Record<string, unknown>; stop_reason?: unknown; content?: Array<{ type?: unknown; name?: unknown }> };
        if (message.usage) this.record.usage = message.usage;
        this.endsTurn = endsTurn(message.stop_reason, (message.content ?? []).some(isStructuredOutput));
        if (this.record.status === 200 && Array.isArray(message.content)) this.respond(message.id, message.content);
        return;
      }
      let usage: Record<string, unknown> | undefined;
      let stopReason: unknown;
      let structured = false;
      let id: unknown;
      // The content blocks as the CLI assembles them from the stream: text, thinking and signature appended, tool input parsed at the block's end.
      const blocks: Array<Record<string, unknown>> = [];
      const json: string[] = [];
      for (const line of text.split("\n")) {
        if (!line.startsWith("data: ")) continue;
        const event = JSON.parse(line.slice(6)) as StreamEvent;
        if (event.type === "message_start") id = event.message?.id;
        if (event.type === "message_start" && event.message?.usage) usage = { ...event.message.usage };
        if (event.type === "message_delta" && event.usage) usage = { ...usage, ...event.usage };
        if (event.type === "message_delta") stopReason = event.delta?.stop_reason;
        if (event.type === "content_block_start" && isStructuredOutput(event.content_block)) structured = true;
        const index = typeof event.index === "number" ? event.index : -1;
        if (event.type === "content_block_start" && event.content_block) {
          blocks[index] = { ...event.content_block };
          json[index] = "";
        } else if (event.type === "content_block_delta" && blocks[index] && event.delta) applyDelta(blocks[index]!, event.delta, json, index);
        else if (event.type === "content_block_stop" && blocks[index] && json[index]) blocks[index]!.input = JSON.parse(json[index]!);
      }
      if (usage) this.record.usage = usage;
      this.endsTurn = endsTurn(stopReason, structured);
      if (this.record.status === 200) this.respond(id, blocks.filter(Boolean));
    } catch {
      // An answer that is not what the API sends has no usage to show, and no response to bind later turns to.
    }
  }

  private respond(id: unknown, content: unknown[]): void {
    if (typeof id === "string") this.record.messageId = id;
    this.response = { ...(typeof id === "string" ? { id } : {}), content };
  }

  fail(message: string): void {
    if (this.done) return;
    this.record.error = message;
    this.record.lastByteMs = Math.round((performance.now() - this.started) * 10) / 10;
    this.finish();
  }
}

type StreamEvent = {
  type?: string;
  index?: number;
  message?: { id?: unknown; usage?: Record<string, unknown> };
  usage?: Record<string, unknown>;
  delta?: { stop_reason?: unknown; type?: unknown; text?: unknown; partial_json?: unknown; thinking?: unknown; signature?: unknown };
  content_block?: { type?: unknown; name?: unknown };
};

/** One delta of a content block, applied as the API's SDK does. */
function applyDelta(block: Record<string, unknown>, delta: NonNullable<StreamEvent["delta"]>, json: string[], index: number): void {
  const append = (key: string, piece: unknown) => {
    if (typeof piece === "string") block[key] = `${typeof block[key] === "string" ? block[key] : ""}${piece}`;
  };
  if (delta.type === "text_delta") append("text", delta.text);
  else if (delta.type === "thinking_delta") append("thinking", delta.thinking);
  else if (delta.type === "signature_delta" && typeof delta.signature === "string") block.signature = delta.signature;
  else if (delta.type === "input_json_delta" && typeof delta.partial_json === "string") json[index] += delta.partial_json;
}

const isStructuredOutput = (block: { type?: unknown; name?: unknown } | undefined) => block?.type === "tool_use" && block.name === "StructuredOutput";

const endsTurn = (stopReason: unknown, structured: boolean) => (typeof stopReason === "string" && stopReason !== "tool_use") || structured;
