/**
 * Subscription usage limits on the real pinned CLI: the scripted API in subscription mode (an OAuth
 * token, usage-limit headers), the typed limit error, the process governor's wait and the progress events.
 */
import { afterEach, describe, expect, it } from "vitest";
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
