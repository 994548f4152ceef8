/**
 * Maps the CLI's result message to KTX's loop stop reason. Precedence (seed 000): `subtype`, then
 * `terminal_reason`, then `stop_reason`; a max-turns end reported by any of them is `budget`.
 */
import type { RunLoopStopReason } from "../../port/ktx-port.js";
import type { ResultMessage } from "../../protocol/messages.js";

export type { RunLoopStopReason };

type StopFields = Pick<ResultMessage, "subtype" | "is_error" | "terminal_reason" | "stop_reason">;

export function mapStopReason(result: StopFields): RunLoopStopReason {
  if (isBudgetEnd(result)) return "budget";
  if (result.subtype === "success") return result.is_error ? "error" : "natural";
  if (result.subtype.startsWith("error")) return "error";
  if (result.terminal_reason === "completed") return result.is_error ? "error" : "natural";
  if (result.terminal_reason) return "error";
  if (result.is_error) return "error";
  // Last resort: only a model that ended its turn by itself counts as a natural end.
  return !result.stop_reason || NATURAL_STOP_REASONS.has(result.stop_reason) ? "natural" : "error";
}

const NATURAL_STOP_REASONS = new Set(["end_turn", "stop_sequence"]);

function isBudgetEnd(result: StopFields): boolean {
  return result.subtype === "error_max_turns" || result.terminal_reason === "max_turns" || result.stop_reason === "max_turns";
}
