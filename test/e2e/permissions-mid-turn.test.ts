/**
 * `session.setPermissionMode()` during a turn, on the real CLI with the scripted API: the CLI gets
 * `set_permission_mode` while the turn runs, and the next tool use in the same turn follows the new mode. Switching
 * to "plan" shows the CLI itself switched (it asks with `decision_reason_type: "mode"`, which only plan mode gives);
 * switching to "acceptAll" stops the questions; behind the interceptor a switch to "acceptEdits" mid-turn passes the
 * wire check.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ClaudeCodeHost, type ClaudeCodeSession, IsolationError, type PermissionDecision, type PermissionRequest } from "../../src/index.js";
import { RateLimitGovernor } from "../../src/limits/governor.js";
import { type RecordedRequest, type ScriptedTurn, turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, baseUrlApi, cleanup, cliOption, firstPartyApi, firstPartyEnv, remainingChildren, tempDir, testEnv, toolResultsIn } from "../support.js";

afterEach(async () => {
  await cleanup();
});

/** Two lookups in each turn (terms "first" and "second"), then a text naming which results were errors. */
function script(request: RecordedRequest): ScriptedTurn {
  const messages: Array<{ role: string; content?: unknown }> = request.body?.messages ?? [];
  // The steps since this turn's prompt (a later turn's request carries the earlier turns too).
  const prompt = messages.findLastIndex((message) => message.role === "user" && JSON.stringify(message.content ?? "").includes("look both up"));
  const step = messages.slice(prompt + 1).filter((message) => message.role === "assistant").length;
  if (step === 0) return { toolCalls: [{ name: "mcp__ktx__lookup", input: { term: "first" }, id: "toolu_first" }] };
  if (step === 1) return { toolCalls: [{ name: "mcp__ktx__lookup", input: { term: "second" }, id: "toolu_second" }] };
  const results = toolResultsIn(request.body);
  return turn.text(`done; errors: ${results.filter((result) => result.is_error).map((result) => result.text).join(" | ") || "none"}`);
}

function toolsInto(received: string[]) {
  return { lookup: { description: "Look a term up.", inputSchema: z.object({ term: z.string() }), execute: async ({ term }: { term: string }) => (received.push(term), `${term}: found`) } };
}

describe("setPermissionMode during a turn", () => {
  it('"ask" -> "plan" inside the first tool\'s question: the CLI switches mid-turn and asks about the second use because of plan mode', { timeout: 180_000 }, async () => {
    const api = await baseUrlApi(script);
    const host = new ClaudeCodeHost({ projectDir: tempDir("project"), env: testEnv(), passEnv: TEST_PASS_ENV, apiEndpoint: { baseUrl: api.baseUrl, apiKey: "sk-test-scripted" }, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
    const received: string[] = [];
    const asked: PermissionRequest[] = [];
    let switched: Promise<void> | undefined;
    const session: ClaudeCodeSession = host.createSession({
      model: "sonnet",
      tools: toolsInto(received),
      permissions: {
        mode: "ask",
        canUseTool: async (request): Promise<PermissionDecision> => {
          asked.push(request);
          if (request.toolUseId === "toolu_first") {
            // The switch is acknowledged by the CLI while this turn still runs.
            switched = session.setPermissionMode("plan");
            await switched;
            return { behavior: "allow" };
          }
          return { behavior: "deny", message: "Not while planning." };
        },
      },
    });
    const result = await session.send("look both up").result;
    expect(switched).toBeDefined();
    expect(asked.map((request) => [request.toolUseId, request.mode])).toEqual([["toolu_first", "ask"], ["toolu_second", "plan"]]);
    // Only plan mode makes the CLI ask with reason "mode": the CLI itself was in plan mode for the second use.
    expect(asked[0]!.decisionReason).not.toBe("mode");
    expect(asked[1]!.decisionReason).toBe("mode");
    expect(received).toEqual(["first"]);
    expect(result.text).toBe("done; errors: Not while planning.");
    expect(result.toolCalls.map((call) => [call.toolUseId, call.ok])).toEqual([["toolu_first", true], ["toolu_second", false]]);
    expect(session.mode).toBe("plan");
    // The next turn runs in plan on the same process, with no switch needed.
    const [pid] = host.reusePids;
    await session.send("look both up").result;
    expect(asked.slice(2).map((request) => [request.mode, request.decisionReason])).toEqual([["plan", "mode"], ["plan", "mode"]]);
    expect(host.reusePids).toEqual([pid]);
    await session.close();
    await host.close();
    expect(await remainingChildren()).toEqual([]);
  });

  it('"ask" -> "acceptAll" mid-turn: the second use in the same turn runs unasked', { timeout: 120_000 }, async () => {
    const api = await baseUrlApi(script);
    const host = new ClaudeCodeHost({ projectDir: tempDir("project"), env: testEnv(), passEnv: TEST_PASS_ENV, apiEndpoint: { baseUrl: api.baseUrl, apiKey: "sk-test-scripted" }, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
    const received: string[] = [];
    const asked: string[] = [];
    const session: ClaudeCodeSession = host.createSession({
      model: "sonnet",
      tools: toolsInto(received),
      permissions: { mode: "ask", canUseTool: async (request) => (asked.push(request.toolUseId), await session.setPermissionMode("acceptAll"), { behavior: "allow" }) },
    });
    const result = await session.send("look both up").result;
    expect(asked).toEqual(["toolu_first"]);
    expect(received).toEqual(["first", "second"]);
    expect(result.text).toBe("done; errors: none");
    await session.close();
    await host.close();
  });

  it('behind the interceptor: "ask" -> "acceptEdits" mid-turn, the turn passes the wire check and the second use is asked in the new mode', { timeout: 120_000 }, async () => {
    const api = await firstPartyApi(script);
    const host = new ClaudeCodeHost({ projectDir: tempDir("project"), env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
    expect(host.interceptor).toBe("on");
    const received: string[] = [];
    const asked: PermissionRequest[] = [];
    const session: ClaudeCodeSession = host.createSession({
      model: "sonnet",
      tools: toolsInto(received),
      permissions: {
        mode: "ask",
        canUseTool: async (request) => {
          asked.push(request);
          if (request.toolUseId === "toolu_first") await session.setPermissionMode("acceptEdits");
          return { behavior: "allow" };
        },
      },
    });
    const result = await session.send("look both up").result;
    expect(asked.map((request) => [request.toolUseId, request.mode])).toEqual([["toolu_first", "ask"], ["toolu_second", "acceptEdits"]]);
    expect(received).toEqual(["first", "second"]);
    expect(result.text).toBe("done; errors: none");
    expect(api.messageRequests).toHaveLength(3);
    await session.close();
    await host.close();
  });

  it('behind the interceptor: a switch to "plan" mid-turn fails that turn with IsolationError (plan adds unrecorded request parts); the session goes on in the mode set next', { timeout: 120_000 }, async () => {
    const api = await firstPartyApi(script);
    const host = new ClaudeCodeHost({ projectDir: tempDir("project"), env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
    const received: string[] = [];
    let planOnce = true;
    const session: ClaudeCodeSession = host.createSession({
      model: "sonnet",
      tools: toolsInto(received),
      permissions: {
        mode: "ask",
        canUseTool: async () => {
          if (planOnce) {
            planOnce = false;
            await session.setPermissionMode("plan");
          }
          return { behavior: "allow" };
        },
      },
    });
    await expect(session.send("look both up").result).rejects.toBeInstanceOf(IsolationError);
    // The plan-mode request never left: only the turn's first request reached the API.
    expect(api.messageRequests).toHaveLength(1);
    await session.setPermissionMode("ask");
    expect((await session.send("look both up").result).text).toBe("done; errors: none");
    await session.close();
    await host.close();
  });
});
