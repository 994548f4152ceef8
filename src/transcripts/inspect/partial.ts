/**
 * Partial messages (`stream_event`, from `--include-partial-messages`) in the timeline: the text,
 * tool input and thinking deltas of one content block are gathered into one line, so a streamed
 * answer reads as its text instead of hundreds of one-word events.
 */
import { asJson, quoted, opt, type Json, type Rec } from "./text.js";

interface Held {
  record: Rec;
  kind: "text" | "tool input" | "thinking";
  index: unknown;
  subagent: boolean;
  text: string;
  deltas: number;
}

const DELTA_KINDS: Record<string, { kind: Held["kind"]; field: string }> = {
  text_delta: { kind: "text", field: "text" },
  input_json_delta: { kind: "tool input", field: "partial_json" },
  thinking_delta: { kind: "thinking", field: "thinking" },
};

export class PartialMessages {
  private held: Held | undefined;

  /**
   * Takes a record: a delta is gathered (`absorbed`); anything else, or a delta of another block,
   * releases what was held (`released`, to be shown before it).
   */
  take(message: Json | undefined, record: Rec): { released?: { record: Rec; text: string }; absorbed: boolean } {
    const event = message?.type === "stream_event" ? asJson(message.event) : undefined;
    const delta = event?.type === "content_block_delta" ? asJson(event.delta) : undefined;
    const known = delta ? DELTA_KINDS[String(delta.type)] : undefined;
    if (!known || !message) return { released: this.flush(), absorbed: false };
    const piece = String(delta![known.field] ?? "");
    if (this.held && this.held.kind === known.kind && this.held.index === event!.index) {
      this.held.text += piece;
      this.held.deltas += 1;
      return { absorbed: true };
    }
    const released = this.flush();
    this.held = { record, kind: known.kind, index: event!.index, subagent: Boolean(message.parent_tool_use_id), text: piece, deltas: 1 };
    return { released, absorbed: true };
  }

  /** What is held, as one line, and forgets it. */
  flush(): { record: Rec; text: string } | undefined {
    const held = this.held;
    this.held = undefined;
    if (!held) return undefined;
    const label = held.subagent ? "(subagent) " : "";
    const body = held.kind === "thinking" ? `(${held.text.length} chars)` : quoted(held.text);
    return { record: held.record, text: `${label}partial ${held.kind} ${body} (${held.deltas} delta${held.deltas === 1 ? "" : "s"})` };
  }

  /** One line for a stream event that is not a gathered delta. */
  describe(message: Json): string {
    const event = asJson(message.event);
    const label = message.parent_tool_use_id ? "(subagent) " : "";
    const type = String(event.type ?? "(no type)");
    if (type === "message_start") {
      const inner = asJson(event.message);
      return `${label}partial message_start${opt("id", inner.id)}${opt("model", inner.model)}`;
    }
    if (type === "message_delta") {
      const delta = asJson(event.delta);
      const usage = asJson(event.usage);
      return `${label}partial message_delta${opt("stop", delta.stop_reason)}${opt("out", usage.output_tokens)}`;
    }
    if (type === "content_block_start") {
      const block = asJson(event.content_block);
      return `${label}partial content_block_start ${String(block.type ?? "(no type)")}${block.type === "tool_use" ? ` ${String(block.name)}` : ""}`;
    }
    if (type === "content_block_delta") return `${label}partial ${String(asJson(event.delta).type ?? "delta")}`;
    return `${label}partial ${type}`;
  }
}
