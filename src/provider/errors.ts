/** Why a parked turn (stopped at the app's tool calls) ended without being resumed. */
import { ClaudeCodeError } from "../errors/index.js";

/** No call brought the results of a parked turn's tool calls within `parkMs`. */
export class ParkedTurnExpiredError extends ClaudeCodeError {
  override readonly code = "parked_turn_expired";
  constructor(
    readonly parkMs: number,
    readonly pendingToolCalls: readonly string[],
  ) {
    super(
      `A Claude Code turn waited ${parkMs} ms for the results of tool calls ${pendingToolCalls.join(", ")} and was ended (its process interrupted and freed). Send the next call (the same prompt plus the assistant's tool calls and a result for each) sooner, or raise parkMs in createClaudeCode({ parkMs }).`,
    );
  }
}

/** The signal of the call that stopped at tool calls aborted while the turn waited for their results. */
export class ParkedTurnAbortedError extends ClaudeCodeError {
  override readonly code = "parked_turn_aborted";
  constructor(reason?: unknown) {
    super(`A Claude Code turn waiting for tool results was ended by its call's AbortSignal${reason instanceof Error ? `: ${reason.message}` : ""}.`, { cause: reason });
  }
}
