/**
 * What one Messages request carried, for the transcript (docs/transcripts.md, "Request records"):
 * sizes by part, betas, the answer's status, usage and rate-limit headers, time to first and last
 * byte. Bodies only when asked; the credential is never recorded (headers are not kept).
 */

import type { RequestRecord } from "../../transcripts/format.js";

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

  /** `parsed` is the body the check already parsed (undefined when it was not JSON). */
  constructor(
    raw: Buffer,
    parsed: unknown,
    headers: Record<string, string | string[] | undefined>,
    private readonly started: number,
    bodies: boolean,
    /** Told once, when the record is complete: whether the answer ended the model's turn. */
    private readonly onDone?: (endsTurn: boolean) => void,
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
    this.onDone?.(this.endsTurn);
  }

  /** Parsed once, after the answer has passed on: nothing is added on the stream's path. */
  private readUsage(): void {
    const text = Buffer.concat(this.chunks).toString("utf8");
    this.chunks.length = 0;
    try {
      if (!this.streamed) {
        const message = JSON.parse(text) as { usage?: Record<string, unknown>; stop_reason?: unknown; content?: Array<{ type?: unknown; name?: unknown }> };
        if (message.usage) this.record.usage = message.usage;
        this.endsTurn = endsTurn(message.stop_reason, (message.content ?? []).some(isStructuredOutput));
        return;
      }
      let usage: Record<string, unknown> | undefined;
      let stopReason: unknown;
      let structured = false;
      for (const line of text.split("\n")) {
        if (!line.startsWith("data: ")) continue;
        const event = JSON.parse(line.slice(6)) as StreamEvent;
        if (event.type === "message_start" && event.message?.usage) usage = { ...event.message.usage };
        if (event.type === "message_delta" && event.usage) usage = { ...usage, ...event.usage };
        if (event.type === "message_delta") stopReason = event.delta?.stop_reason;
        if (event.type === "content_block_start" && isStructuredOutput(event.content_block)) structured = true;
      }
      if (usage) this.record.usage = usage;
      this.endsTurn = endsTurn(stopReason, structured);
    } catch {
      // An answer that is not what the API sends has no usage to show.
    }
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
  message?: { usage?: Record<string, unknown> };
  usage?: Record<string, unknown>;
  delta?: { stop_reason?: unknown };
  content_block?: { type?: unknown; name?: unknown };
};

const isStructuredOutput = (block: { type?: unknown; name?: unknown } | undefined) => block?.type === "tool_use" && block.name === "StructuredOutput";

const endsTurn = (stopReason: unknown, structured: boolean) => (typeof stopReason === "string" && stopReason !== "tool_use") || structured;
