/**
 * The AI SDK's prompt as what the CLI takes: a system prompt and one user prompt. A prompt that is a
 * system message and one user message maps exactly; any other history is flattened into one user
 * prompt (the CLI takes no assistant or tool history over stream-json), with a `compatibility` warning
 * saying so. A prompt that continues a parked turn (its prompt, the assistant's tool calls, a result
 * for every pending call) is recognised here and never flattened (turn.ts answers the pending calls).
 */
import type { LanguageModelV3Message, LanguageModelV3Prompt, LanguageModelV3ToolResultOutput, SharedV3Warning } from "@ai-sdk/provider";

export interface PlannedPrompt {
  system: string;
  prompt: string;
  warnings: SharedV3Warning[];
}

/** The system text and the one user prompt the CLI gets for `prompt`. */
export function planPrompt(prompt: LanguageModelV3Prompt): PlannedPrompt {
  const warnings: SharedV3Warning[] = [];
  const system = prompt
    .filter((message) => message.role === "system")
    .map((message) => message.content)
    .join("\n\n");
  const rest = prompt.filter((message) => message.role !== "system");
  const only = rest.length === 1 ? rest[0]! : undefined;
  if (only?.role === "user") return { system, prompt: userText(only, warnings), warnings };
  warnings.push({
    type: "compatibility",
    feature: "conversation history",
    details: `The prompt holds ${rest.length} messages; Claude Code takes one user prompt, so the history was flattened into it as text (roles, tool calls and tool results written out). A prompt that continues a turn this provider left at tool calls runs on that turn's process instead.`,
  });
  return { system, prompt: rest.map((message) => flattened(message, warnings)).join("\n\n"), warnings };
}

function userText(message: LanguageModelV3Message & { role: "user" }, warnings: SharedV3Warning[]): string {
  const texts: string[] = [];
  for (const part of message.content) {
    if (part.type === "text") texts.push(part.text);
    else fileOmitted(part.mediaType, warnings);
  }
  return texts.join("\n\n");
}

function fileOmitted(mediaType: string, warnings: SharedV3Warning[]): void {
  if (warnings.some((warning) => warning.type === "unsupported" && warning.feature === "file parts")) return;
  warnings.push({ type: "unsupported", feature: "file parts", details: `File parts (${mediaType}) are not sent to Claude Code by this provider; only text reaches the model.` });
}

function flattened(message: LanguageModelV3Message, warnings: SharedV3Warning[]): string {
  switch (message.role) {
    case "system":
      return "";
    case "user":
      return `Human: ${userText(message, warnings)}`;
    case "assistant": {
      const lines: string[] = [];
      for (const part of message.content) {
        if (part.type === "text") lines.push(part.text);
        else if (part.type === "reasoning") lines.push(`[Reasoning: ${part.text}]`);
        else if (part.type === "tool-call") lines.push(`[Tool call ${part.toolName} (${part.toolCallId}): ${safeJson(part.input)}]`);
        else if (part.type === "tool-result") lines.push(`[Tool result ${part.toolName} (${part.toolCallId}): ${outputText(part.output).text}]`);
        else fileOmitted(part.mediaType, warnings);
      }
      return `Assistant: ${lines.join("\n")}`;
    }
    case "tool":
      return message.content
        .map((part) =>
          part.type === "tool-result"
            ? `[Tool result ${part.toolName} (${part.toolCallId})${outputText(part.output).error ? " failed" : ""}: ${outputText(part.output).text}]`
            : `[Tool approval ${part.approvalId}: ${part.approved ? "approved" : "denied"}${part.reason ? ` (${part.reason})` : ""}]`,
        )
        .join("\n");
  }
}

/** A tool result as the text the model gets, and whether it reports a failure (error outputs, a denied execution). */
export function outputText(output: LanguageModelV3ToolResultOutput): { text: string; error: boolean } {
  switch (output.type) {
    case "text":
      return { text: output.value, error: false };
    case "json":
      return { text: safeJson(output.value), error: false };
    case "error-text":
      return { text: output.value, error: true };
    case "error-json":
      return { text: safeJson(output.value), error: true };
    case "execution-denied":
      return { text: `Tool execution denied${output.reason ? `: ${output.reason}` : "."}`, error: true };
    case "content":
      // Only text reaches the model through the MCP bridge; other parts are named so the omission is visible.
      return { text: output.value.map((part) => (part.type === "text" ? part.text : `[${part.type} content omitted]`)).join("\n\n"), error: false };
  }
}

/** The prompt's messages as comparable text: provider options are per-request hints, not conversation. */
export function promptKey(messages: readonly LanguageModelV3Message[]): string {
  return JSON.stringify(messages, (key, value: unknown) => (key === "providerOptions" ? undefined : value));
}

/** A continuation of a parked turn: the results it brings, by tool call id. */
export interface Continuation {
  results: Map<string, LanguageModelV3ToolResultOutput>;
}

/**
 * Whether `prompt` is `parked` (the prompt of the call that stopped at tool calls) plus the assistant's
 * message and a result for every one of `pending` (and nothing else): then the results, else undefined.
 */
export function continuationOf(prompt: LanguageModelV3Prompt, parkedKey: string, parkedLength: number, pending: readonly string[]): Continuation | undefined {
  if (prompt.length < parkedLength + 2) return undefined;
  if (promptKey(prompt.slice(0, parkedLength)) !== parkedKey) return undefined;
  const assistant = prompt[parkedLength]!;
  if (assistant.role !== "assistant") return undefined;
  const called = new Set(assistant.content.flatMap((part) => (part.type === "tool-call" ? [part.toolCallId] : [])));
  if (!pending.every((id) => called.has(id))) return undefined;
  const results = new Map<string, LanguageModelV3ToolResultOutput>();
  for (const message of prompt.slice(parkedLength + 1)) {
    if (message.role !== "tool") return undefined;
    for (const part of message.content) if (part.type === "tool-result") results.set(part.toolCallId, part.output);
  }
  return pending.every((id) => results.has(id)) ? { results } : undefined;
}

/** The tool call ids a prompt's trailing tool messages answer (to find a parked turn). */
export function answeredIds(prompt: LanguageModelV3Prompt): string[] {
  const ids: string[] = [];
  for (let index = prompt.length - 1; index >= 0 && prompt[index]!.role === "tool"; index--) {
    const message = prompt[index]!;
    if (message.role === "tool") for (const part of message.content) if (part.type === "tool-result") ids.push(part.toolCallId);
  }
  return ids;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
