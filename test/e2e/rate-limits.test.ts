/**
 * Subscription usage limits on the real pinned CLI: the scripted API in subscription mode (an OAuth
 * token, usage-limit headers), the typed limit error, the process governor's wait and the progress events.
 */
import { afterEach, describe, expect, it } from "vitest";
import { UsageLimitError } from "../../src/limits/errors.js";
import { turn } from "../../src/testing/scripted-api.js";
import { cleanup, runtimeFor, scriptedApi } from "../support.js";

afterEach(cleanup);

describe("subscription mode", () => {
  it("runs the real CLI as a subscriber: Bearer OAuth token, the claude-code beta, the isolation check passes", async () => {
    const api = await scriptedApi([turn.withRateLimit(turn.text("hello subscriber"), { status: "allowed", utilization: 0.2 })]);
    const runtime = runtimeFor(api, { apiEndpoint: api.endpoint("subscription") });
    const result = await runtime.generateText({ prompt: "hi" });
    expect(result.text).toBe("hello subscriber");
    const request = api.messageRequests[0]!;
    expect(request.headers.authorization).toMatch(/^Bearer sk-ant-oat01-/);
    expect(request.headers["x-api-key"]).toBeUndefined();
    expect(String(request.headers["anthropic-beta"])).toContain("claude-code-20250219");
  });
});

describe("a reached limit", () => {
  it("ends the call with UsageLimitError carrying the reset time and window", async () => {
    const resetsAt = new Date(Date.now() + 3 * 3_600_000);
    const api = await scriptedApi([turn.limitReached({ window: "seven_day", resetsAt })]);
    const runtime = runtimeFor(api, { apiEndpoint: api.endpoint("subscription") });
    const error = await runtime.generateText({ prompt: "hi" }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageLimitError);
    expect((error as UsageLimitError).window).toBe("seven_day");
    expect((error as UsageLimitError).resetsAt.getTime()).toBe(Math.ceil(resetsAt.getTime() / 1000) * 1000);
    expect(api.messageRequests).toHaveLength(1);
  });
});
