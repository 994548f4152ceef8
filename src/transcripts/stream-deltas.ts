/**
 * Streamed deltas (`stream_event` lines, from `includePartialMessages`) redacted against the text
 * assembled so far (issue 40): a key streamed in two deltas has neither half matching a shape alone, so
 * each delta is redacted together with the end of its content block's earlier text, and the part of the
 * delta a secret covers becomes `[REDACTED]`. What an earlier delta already recorded stays as it was
 * written: only a shape's public prefix (`sk-ant-api0`) can be left there, since a longer start matches
 * the shape alone.
 */
import { REDACTED, type Redactor } from "./redact.js";

/** How much of a content block's earlier text a delta is redacted with: longer than any token shape. */
const CONTEXT = 1024;

/** The delta types whose text is model output, and the field that holds it. */
const DELTA_FIELDS: Record<string, string> = { text_delta: "text", input_json_delta: "partial_json", thinking_delta: "thinking" };

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

export class DeltaRedactor {
  /** The end of each content block's text so far, by session, parent tool use and block index. */
  private readonly blocks = new Map<string, string>();

  constructor(private readonly redactor: Redactor) {}

  /** `line` with its delta's text redacted against the block's earlier text; any other line as it was. */
  line(line: string): string {
    if (!line.includes('"stream_event"')) return line;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return line;
    }
    if (!isObject(message) || message.type !== "stream_event" || !isObject(message.event)) return line;
    const event = message.event;
    const stream = `${String(message.session_id)}|${String(message.parent_tool_use_id)}`;
    if (event.type === "message_start") {
      for (const key of this.blocks.keys()) if (key.startsWith(`${stream}|`)) this.blocks.delete(key);
      return line;
    }
    const key = `${stream}|${String(event.index)}`;
    if (event.type === "content_block_start") {
      this.blocks.delete(key);
      return line;
    }
    if (event.type !== "content_block_delta" || !isObject(event.delta)) return line;
    const field = DELTA_FIELDS[String(event.delta.type)];
    const fragment = field ? event.delta[field] : undefined;
    if (typeof fragment !== "string") return line;
    const before = this.blocks.get(key) ?? "";
    const assembled = before + fragment;
    this.blocks.set(key, assembled.slice(-CONTEXT));
    const redacted = redactedPart(before, fragment, this.redactor.redact(assembled));
    if (redacted === fragment) return line;
    event.delta[field!] = redacted;
    return JSON.stringify(message);
  }
}

/**
 * The delta's part of `redacted` (the redaction of `before + fragment`): where the text first differs
 * from the original, and where it last does. A change that starts in the earlier text covers the
 * delta's start: that part becomes one `[REDACTED]`.
 */
function redactedPart(before: string, fragment: string, redacted: string): string {
  const assembled = before + fragment;
  if (redacted === assembled) return fragment;
  let start = 0;
  while (start < assembled.length && assembled[start] === redacted[start]) start += 1;
  let same = 0;
  while (same < assembled.length - start && same < redacted.length - start && assembled[assembled.length - 1 - same] === redacted[redacted.length - 1 - same]) same += 1;
  // The change lies wholly in the earlier text (already recorded, redacted then): the delta is clean.
  if (assembled.length - same <= before.length) return fragment;
  if (start >= before.length) return redacted.slice(before.length);
  return `${REDACTED}${fragment.slice(fragment.length - same)}`;
}
