import { describe, expect, it } from "vitest";
import { thinkingEnv, thinkingFor, thinkingOptionSchema } from "../../src/claude-code/thinking.js";

describe("thinking option", () => {
  it("one value applies to every role; a record falls back to default, then to adaptive", () => {
    expect(thinkingFor(undefined, "curator")).toBe("adaptive");
    expect(thinkingFor("off", "triage")).toBe("off");
    expect(thinkingFor({ budgetTokens: 4096 }, "repair")).toEqual({ budgetTokens: 4096 });
    const perRole = { default: "off" as const, curator: { budgetTokens: 2048 } };
    expect(thinkingFor(perRole, "curator")).toEqual({ budgetTokens: 2048 });
    expect(thinkingFor(perRole, "triage")).toBe("off");
    expect(thinkingFor({ curator: "off" }, "triage")).toBe("adaptive");
  });

  it("maps to the CLI's launch variables; adaptive sets none", () => {
    expect(thinkingEnv("adaptive")).toEqual({});
    expect(thinkingEnv("off")).toEqual({ MAX_THINKING_TOKENS: "0" });
    expect(thinkingEnv({ budgetTokens: 3000 })).toEqual({ CLAUDE_CODE_DISABLE_ADAPTIVE_THINKING: "1", MAX_THINKING_TOKENS: "3000" });
  });

  it("accepts the documented shapes only", () => {
    for (const ok of ["adaptive", "off", { budgetTokens: 1024 }, { default: "off", triage: { budgetTokens: 5000 } }, {}]) expect(thinkingOptionSchema.safeParse(ok).success, JSON.stringify(ok)).toBe(true);
    for (const bad of ["on", { budgetTokens: 1023 }, { budgetTokens: 1.5 }, { planner: "off" }, { default: "maybe" }]) expect(thinkingOptionSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
  });
});
