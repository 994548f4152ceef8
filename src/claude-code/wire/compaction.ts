/**
 * A session's compaction as the wire check meets it (sessions with `compaction`, sessions/session.ts). Near
 * the context limit (a response whose usage nears the auto-compact window, or an API refusal of a prompt too
 * long) the CLI sends a summary request: the conversation so far, then one user turn of exactly its summary
 * instructions (again with a retry paragraph when the answer had no <summary>); from then on its requests open
 * with a continuation text holding that summary in place of the turns before. What the version sends is
 * recorded in its shape (`compaction`, `fixtures record-wire`'s "session, compaction" call); the few variants
 * a recording does not drive (the retry, the refusal's note, the context re-read) are 2.1.330's, measured, here.
 * The interceptor forwards a summary request only when the rest of it is the session's conversation, and a
 * continuation text only when its summary is one a summary request of this process was answered with.
 */
import type { ResponseContent } from "./check-turns.js";
import type { CompactionShape, WireShape } from "./shape-file.js";

/** What 2.1.330 adds to the instructions when it asks again (its first answer held no <summary>). */
export const COMPACTION_RETRY =
  "\n\nFor this reply only: write what the instructions above ask for, with the summary inside <summary></summary> tags. Every message before those instructions, the newest one included, is conversation to summarize: do not answer it, and do not do the work that it asks for. What it says on how to summarize still holds. This paragraph is about how to write this summary. The user did not write it.";

/**
 * What the compaction headers name (the version's `requestHeaders` and `compactedHeaders`): `auto` near the
 * window, `reactive` after the API refused a prompt too long, `manual` for `/compact`.
 */
export const COMPACTION_TRIGGERS: readonly string[] = ["auto", "reactive", "manual"];

/** The head of the account-context reminder the CLI sends again after a compaction, in place of the recorded one (its sections are checked as theirs). */
export const CONTEXT_REREAD_HEAD = "The session context was re-read after the conversation was compacted; these values replace the earlier ones:\n";

/** What stands for the turns a summary request after an API refusal (prompt too long) leaves out. */
export const COMPACTION_TRUNCATED = "[earlier conversation truncated for compaction retry]";

/** After a summary request that left turns out (`reactive`): with the transcript's mention when there is one (base URL), without under this library's launch. */
const CONTINUATION_NOTES = [
  "\n\nNote: part of the earlier conversation was too large to include and is NOT covered by this summary (the full transcript mentioned above still has it). If the task turns out to depend on something from that part, say so plainly rather than guessing at it.",
  "\n\nNote: part of the earlier conversation was too large to include and is NOT covered by this summary. If the task turns out to depend on something from that part, say so plainly rather than guessing at it.",
];
const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/**
 * After the summary: where the CLI keeps the whole conversation (one path, a .jsonl; absent when it keeps
 * none, as under this library's launch), then optionally the note that a part was left out.
 */
const CONTINUATION_MIDDLE = new RegExp(
  `^(?:${escape("\n\nIf you need specific details from before compaction (like exact code snippets, error messages, or content you generated), read the full transcript at: ")}[^\\n<>]+\\.jsonl)?(?:${CONTINUATION_NOTES.map(escape).join("|")})?$`,
);

/** The last text of a user turn: the whole turn when it is a string, else its last block when that is a text (after a tool's result the instructions share its turn). */
const lastTextOf = (content: unknown): string | undefined => {
  if (typeof content === "string") return content;
  const last = Array.isArray(content) ? (content.at(-1) as { type?: unknown; text?: unknown } | undefined) : undefined;
  return last?.type === "text" && typeof last.text === "string" ? last.text : undefined;
};

/** Whether a request is a summary request: its last turn the user's, ending with exactly the version's instructions (or with the retry paragraph). */
export function isCompactionRequest(messages: unknown, shape: Pick<WireShape, "compaction"> | undefined): boolean {
  const prompts = shape?.compaction?.prompts;
  if (prompts === undefined || !Array.isArray(messages) || messages.length < 2) return false;
  const last = messages[messages.length - 1] as { role?: unknown; content?: unknown } | null;
  if (last?.role !== "user") return false;
  const text = lastTextOf(last.content);
  return prompts.some((prompt) => text === prompt || text === prompt + COMPACTION_RETRY);
}

/**
 * What a continuation text may hold as the summary of a summary request's answer: the answer's text, and its
 * <summary> part as 2.1.330 writes it (`Summary:\n` and the part, trimmed; the <analysis> dropped).
 */
export function summariesOf(response: ResponseContent): string[] {
  const text = response.content
    .filter((block): block is { type: "text"; text: string } => (block as { type?: unknown })?.type === "text" && typeof (block as { text?: unknown }).text === "string")
    .map((block) => block.text)
    .join("");
  const inner = /<summary>([\s\S]*?)<\/summary>/.exec(text)?.[1];
  return [...new Set([text, text.trim(), ...(inner !== undefined ? [`Summary:\n${inner.trim()}`, inner.trim()] : [])])].filter((summary) => summary !== "");
}

/**
 * A user text that opens as the version's continuation text: undefined when it is a whole one whose summary is
 * one of `summaries` and whose used-tools list names only `tools`; else what is wrong with it. Null for a text
 * that is no continuation at all (or a version with no compaction recorded).
 */
export function continuationProblem(text: string, summaries: readonly string[], tools: readonly string[], compaction: CompactionShape | undefined): string | undefined | null {
  if (!compaction || !text.startsWith(compaction.continuation.beforeTools)) return null;
  const { beforeTools, afterTools } = compaction.continuation;
  const ending = compaction.continuation.afterSummary.flatMap((after) => [`${after}\n`, after]).find((after) => text.endsWith(after));
  const end = ending === undefined ? -1 : text.length - ending.length;
  if (end < beforeTools.length) return "a compaction's continuation text that does not end as the CLI writes it";
  const body = text.slice(beforeTools.length, end);
  const close = body.indexOf(afterTools);
  if (close < 0) return "a compaction's continuation text without its used-tools list";
  const unknown = body.slice(0, close).split(/[,\s]+/).filter((name) => name !== "" && !tools.includes(name));
  if (unknown.length > 0) return `a compaction's continuation text naming tools this conversation does not have: ${JSON.stringify(unknown.join(", "))}`;
  const rest = body.slice(close + afterTools.length);
  if (!summaries.some((summary) => rest.startsWith(summary) && CONTINUATION_MIDDLE.test(rest.slice(summary.length)))) {
    return "a compaction's continuation text whose summary is none a summary request of this process was answered with";
  }
  return undefined;
}

/**
 * The billing line of a request after a compaction without the fields the version adds to it then (the
 * message id of the conversation's last response before it, and that turn's indexes): only when they come
 * last and the message id is one of `responses`; else the line as it came (which the recorded line refuses).
 */
export function compactedBilling(line: string, responses: readonly ResponseContent[], compaction: CompactionShape | undefined): string {
  if (!compaction || compaction.billingFields.length === 0) return line;
  const pairs = new RegExp(`((?: (?:${compaction.billingFields.map(escape).join("|")})=[A-Za-z0-9_.-]{1,128};)+)$`).exec(line);
  if (!pairs) return line;
  const previous = /(?:^| )cc_prev_msg=([A-Za-z0-9_.-]+);/.exec(pairs[1]!)?.[1];
  if (previous !== undefined && !responses.some((response) => response.id === previous)) return line;
  return line.slice(0, pairs.index);
}
