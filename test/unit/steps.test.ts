/** The step boundary: one step per top-level model response, counted on the stream's assistant lines. */
import { describe, expect, it } from "vitest";
import type { AssistantMessage } from "../../src/protocol/messages.js";
import { StepTracker } from "../../src/claude-code/run/steps.js";

function line(id: string, extra: Partial<AssistantMessage> = {}, model = "claude-sonnet-5-5"): AssistantMessage {
  return { type: "assistant", message: { id, model, content: [{ type: "text", text: "x" }] }, parent_tool_use_id: null, ...extra } as AssistantMessage;
}

function track(lines: AssistantMessage[]): { finished: number[]; steps: number } {
  const finished: number[] = [];
  const tracker = new StepTracker((index) => finished.push(index));
  for (const message of lines) tracker.assistant(message);
  tracker.end();
  return { finished, steps: tracker.steps };
}

describe("StepTracker", () => {
  it("counts each line without message.id as a response of its own, between and after lines with ids", () => {
    const bare = (): AssistantMessage => ({ type: "assistant", message: { model: "claude-sonnet-5-5", content: [{ type: "text", text: "x" }] }, parent_tool_use_id: null }) as AssistantMessage;
    expect(track([bare(), bare()])).toEqual({ finished: [1, 2], steps: 2 });
    expect(track([line("m0"), line("m0"), bare(), line("m1"), bare()])).toEqual({ finished: [1, 2, 3, 4], steps: 4 });
  });

  it("counts the lines of one response (one per content block) as one step", () => {
    expect(track([line("m0"), line("m0"), line("m0"), line("m1")])).toEqual({ finished: [1, 2], steps: 2 });
  });

  it("finishes a step only when the next response starts, not at the previous line", () => {
    const finished: number[] = [];
    const tracker = new StepTracker((index) => finished.push(index));
    tracker.assistant(line("m0"));
    tracker.assistant(line("m0"));
    expect(finished).toEqual([]);
    tracker.assistant(line("m1"));
    expect(finished).toEqual([1]);
    tracker.end();
    tracker.end(); // a second end adds nothing
    expect(finished).toEqual([1, 2]);
  });

  it("ignores sub-agent lines (parent_tool_use_id set)", () => {
    expect(track([line("m0"), line("sub0", { parent_tool_use_id: "toolu_1" }), line("sub1", { parent_tool_use_id: "toolu_1" }), line("m1")])).toEqual({ finished: [1, 2], steps: 2 });
  });

  it("ignores the CLI's synthetic API-error lines", () => {
    const synthetic = [line("e0", { is_api_error_message: true }), line("e1", { error: "rate_limit" }), line("e2", {}, "<synthetic>")];
    expect(track([line("m0"), ...synthetic])).toEqual({ finished: [1], steps: 1 });
  });

  it("reports no step for a run without a model response", () => {
    expect(track([])).toEqual({ finished: [], steps: 0 });
  });
});
