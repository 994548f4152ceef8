/**
 * What a call makes of the CLI's stream, whichever process serves it: `RunState` follows steps, tool
 * calls and text; `followMessage` checks `init` and refuses hooks (permission answers: ../permissions.ts).
 * Pure bookkeeping, no I/O.
 */
import { IsolationError } from "../../errors/index.js";
import type { AssistantMessage, CliMessage, ResultMessage, SystemInitMessage, UserMessage } from "../../protocol/messages.js";
import type { ToolCallRecord } from "../../runtime/types.js";
import { checkInit, hookDifference, initAdvice } from "../checks/isolation.js";
import { MANAGED_POLICY_ADVICE } from "../checks/managed-policy.js";
import { type StepTracker, isSyntheticError } from "./steps.js";

/** Follows the stream for one run (pure bookkeeping, no I/O). */
export class RunState {
  init: SystemInitMessage | undefined;
  readonly errorLines: AssistantMessage[] = [];
  readonly toolCalls = new Map<string, ToolCallRecord>();
  readonly durations = new Map<string, number>();
  readonly truncations = new Map<string, { originalChars: number; keptChars: number }>();
  lastText = "";
  /** The CLI's own retries of failed API requests (`system/api_retry`) in this run: what an API error's message may claim. */
  apiRetries = 0;
  private lastTextId: string | undefined;

  constructor(
    readonly steps: StepTracker,
    private readonly onToolSettled?: (call: ToolCallRecord) => void,
  ) {}

  assistant(message: AssistantMessage): void {
    if (isSyntheticError(message)) {
      this.errorLines.push(message);
      return;
    }
    if (message.parent_tool_use_id != null) return;
    this.steps.assistant(message);
    for (const block of message.message.content) {
      if (block.type === "text") this.appendText(message.message.id, String((block as { text?: unknown }).text ?? ""));
      if (block.type === "tool_use") {
        const use = block as unknown as { id: string; name: string; input: unknown };
        this.toolCalls.set(use.id, { toolUseId: use.id, name: use.name, input: use.input, ok: true });
      }
    }
  }

  user(message: UserMessage): void {
    if (message.parent_tool_use_id != null || typeof message.message.content === "string") return;
    for (const block of message.message.content) {
      if (block.type !== "tool_result") continue;
      const result = block as unknown as { tool_use_id: string; is_error?: boolean; content?: unknown };
      const call = this.toolCalls.get(result.tool_use_id);
      if (!call) continue;
      call.durationMs = this.durations.get(result.tool_use_id);
      const truncated = this.truncations.get(result.tool_use_id);
      if (truncated) call.truncated = truncated;
      if (result.is_error) {
        call.ok = false;
        call.error = toolResultText(result.content);
      }
      this.onToolSettled?.(call);
    }
  }

  private appendText(messageId: string | undefined, text: string): void {
    // Text blocks of one response (one id) join; a line without an id is a response of its own.
    this.lastText = messageId !== undefined && this.lastTextId === messageId ? this.lastText + text : text;
    this.lastTextId = messageId;
  }
}

/**
 * What a run does with each CLI message, on a fresh or a reused process alike: the stream is followed
 * in `state`, `init` is checked against the surface asked for, and any hook the CLI runs is refused.
 * Returns the isolation failure, if any, for the caller to stop the run with.
 */
export function followMessage(
  message: CliMessage,
  state: RunState,
  spec: { onCliMessage?(message: CliMessage): void; onResult?(result: ResultMessage): void },
  expected: Parameters<typeof checkInit>[1],
): IsolationError | undefined {
  spec.onCliMessage?.(message);
  switch (message.kind) {
    case "system_init": {
      // A reused process sends init at every call's start: the surface is re-checked each time.
      state.init = message.message;
      const differences = checkInit(message.message, expected);
      return differences.length > 0 ? new IsolationError(differences, initAdvice(message.message, expected)) : undefined;
    }
    case "system": {
      const hook = hookDifference(message.message);
      return hook ? new IsolationError([hook], MANAGED_POLICY_ADVICE) : undefined;
    }
    case "assistant":
      state.assistant(message.message);
      return undefined;
    case "user":
      state.user(message.message);
      return undefined;
    case "api_retry":
      state.apiRetries += 1;
      return undefined;
    case "result":
      state.steps.end();
      // Usage in the result line is per call (also on a reused process).
      spec.onResult?.(message.message);
      return undefined;
    default:
      return undefined;
  }
}

function toolResultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => String((part as { text?: unknown }).text ?? "")).join("");
  return JSON.stringify(content ?? "");
}
