import { describe, expect, it } from "vitest";
import { RESULT_SUBTYPES, STOP_REASONS, TERMINAL_REASONS } from "../../src/protocol/messages.js";
import { mapStopReason } from "../../src/claude-code/run/stop-reason.js";

describe("mapStopReason", () => {
  it("maps each result subtype (with no other signal)", () => {
    const expected: Record<string, string> = {
      success: "natural",
      error_during_execution: "error",
      error_max_turns: "budget",
      error_max_budget_usd: "error",
      error_max_structured_output_retries: "error",
    };
    for (const subtype of RESULT_SUBTYPES) {
      expect(mapStopReason({ subtype, is_error: subtype !== "success" }), subtype).toBe(expected[subtype]);
    }
  });

  it("never trusts subtype alone: success with is_error is an error (how the CLI reports Not logged in)", () => {
    expect(mapStopReason({ subtype: "success", is_error: true, terminal_reason: "api_error" })).toBe("error");
  });

  it("maps every terminal_reason the pinned CLI lists, for an unknown subtype", () => {
    for (const reason of TERMINAL_REASONS) {
      const want = reason === "max_turns" ? "budget" : reason === "completed" ? "natural" : "error";
      expect(mapStopReason({ subtype: "some_future_subtype", terminal_reason: reason }), reason).toBe(want);
    }
  });

  it("reports a max-turns end as budget whichever field carries it", () => {
    expect(mapStopReason({ subtype: "error_max_turns", is_error: true })).toBe("budget");
    expect(mapStopReason({ subtype: "error_during_execution", terminal_reason: "max_turns" })).toBe("budget");
    expect(mapStopReason({ subtype: "success", terminal_reason: "max_turns" })).toBe("budget");
    expect(mapStopReason({ subtype: "success", stop_reason: "max_turns" })).toBe("budget");
    expect(mapStopReason({ subtype: "unknown", stop_reason: "max_turns" })).toBe("budget");
  });

  it("uses stop_reason last, for every value the Messages API defines", () => {
    expect(mapStopReason({ subtype: "unknown" })).toBe("natural");
    for (const reason of STOP_REASONS) {
      const want = reason === "end_turn" || reason === "stop_sequence" ? "natural" : "error";
      expect(mapStopReason({ subtype: "some_future_subtype", stop_reason: reason }), reason).toBe(want);
      // A known subtype outranks it.
      expect(mapStopReason({ subtype: "success", stop_reason: reason }), `success + ${reason}`).toBe("natural");
      expect(mapStopReason({ subtype: "error_during_execution", stop_reason: reason }), `error + ${reason}`).toBe("error");
    }
    expect(mapStopReason({ subtype: "unknown", stop_reason: "end_turn", is_error: true })).toBe("error");
  });
});
