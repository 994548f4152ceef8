/** The AI SDK prompt as the CLI's system and user prompt, and how a continuation of a parked turn is recognised. */
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { answeredIds, continuationOf, outputText, planPrompt, promptKey } from "../../src/provider/prompt.js";

const user = (text: string) => ({ role: "user" as const, content: [{ type: "text" as const, text }] });

describe("planPrompt", () => {
  it("maps system messages and one user message exactly, with no warning", () => {
    const planned = planPrompt([{ role: "system", content: "Be brief." }, { role: "system", content: "Answer in French." }, user("Hello")]);
    expect(planned).toEqual({ system: "Be brief.\n\nAnswer in French.", prompt: "Hello", warnings: [] });
  });

  it("flattens a history into one prompt and says so with a compatibility warning", () => {
    const prompt: LanguageModelV3Prompt = [
      user("What is the weather?"),
      { role: "assistant", content: [{ type: "text", text: "Checking." }, { type: "tool-call", toolCallId: "t1", toolName: "weather", input: { city: "Paris" } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "t1", toolName: "weather", output: { type: "error-text", value: "offline" } }] },
      user("Try again"),
    ];
    const planned = planPrompt(prompt);
    expect(planned.prompt).toBe(
      'Human: What is the weather?\n\nAssistant: Checking.\n[Tool call weather (t1): {"city":"Paris"}]\n\n[Tool result weather (t1) failed: offline]\n\nHuman: Try again',
    );
    expect(planned.warnings).toEqual([expect.objectContaining({ type: "compatibility", feature: "conversation history" })]);
  });

  it("leaves file parts out with one unsupported warning", () => {
    const planned = planPrompt([{ role: "user", content: [{ type: "text", text: "Look" }, { type: "file", mediaType: "image/png", data: "AAAA" }, { type: "file", mediaType: "image/png", data: "BBBB" }] }]);
    expect(planned.prompt).toBe("Look");
    expect(planned.warnings).toEqual([expect.objectContaining({ type: "unsupported", feature: "file parts" })]);
  });
});

describe("outputText", () => {
  it("gives the model's text for every output kind, errors and denials as failures", () => {
    expect(outputText({ type: "text", value: "ok" })).toEqual({ text: "ok", error: false });
    expect(outputText({ type: "json", value: { a: 1 } })).toEqual({ text: '{"a":1}', error: false });
    expect(outputText({ type: "error-text", value: "boom" })).toEqual({ text: "boom", error: true });
    expect(outputText({ type: "error-json", value: { code: 7 } })).toEqual({ text: '{"code":7}', error: true });
    expect(outputText({ type: "execution-denied", reason: "not now" })).toEqual({ text: "Tool execution denied: not now", error: true });
    expect(outputText({ type: "content", value: [{ type: "text", text: "a" }, { type: "image-data", data: "x", mediaType: "image/png" }] })).toEqual({ text: "a\n\n[image-data content omitted]", error: false });
  });
});

describe("continuationOf", () => {
  const parked: LanguageModelV3Prompt = [{ role: "system", content: "S" }, user("case=loop")];
  const assistant = { role: "assistant" as const, content: [{ type: "tool-call" as const, toolCallId: "a", toolName: "weather", input: {} }, { type: "tool-call" as const, toolCallId: "b", toolName: "clock", input: {} }] };
  const results = {
    role: "tool" as const,
    content: [
      { type: "tool-result" as const, toolCallId: "a", toolName: "weather", output: { type: "text" as const, value: "sunny" } },
      { type: "tool-result" as const, toolCallId: "b", toolName: "clock", output: { type: "error-text" as const, value: "no" } },
    ],
  };

  it("takes the parked prompt plus the calls plus a result for each pending call, provider options aside", () => {
    const next: LanguageModelV3Prompt = [parked[0]!, { ...user("case=loop"), providerOptions: { other: { x: 1 } } }, assistant, results];
    expect(answeredIds(next).sort()).toEqual(["a", "b"]);
    const continuation = continuationOf(next, promptKey(parked), parked.length, ["a", "b"]);
    expect([...continuation!.results.keys()]).toEqual(["a", "b"]);
  });

  it("refuses a prompt that changed the earlier messages or misses a result", () => {
    expect(continuationOf([user("case=other"), user("x"), assistant, results], promptKey(parked), parked.length, ["a", "b"])).toBeUndefined();
    const partial = { role: "tool" as const, content: [results.content[0]!] };
    expect(continuationOf([...parked, assistant, partial], promptKey(parked), parked.length, ["a", "b"])).toBeUndefined();
    expect(continuationOf([...parked, assistant, results, user("more")], promptKey(parked), parked.length, ["a", "b"])).toBeUndefined();
  });
});
