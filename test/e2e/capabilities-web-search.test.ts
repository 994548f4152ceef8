/**
 * `capabilities.webSearch` on the real CLI (scripted API): the model calls WebSearch, the CLI sends its own search
 * request with the API's server tool, the scripted API answers with `server_tool_use` and `web_search_tool_result`
 * blocks, and the results come back to the model as WebSearch's result. Behind the interceptor both kinds of request
 * pass the wire check in their recorded shapes, and the CLI contacts no host but the API for it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ClaudeCodeHost } from "../../src/index.js";
import { RateLimitGovernor } from "../../src/limits/governor.js";
import type { RecordedRequest, ScriptedTurn } from "../../src/testing/scripted-api.js";
import { turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, baseUrlApi, cleanup, cliOption, firstPartyApi, firstPartyEnv, tempDir, testEnv, toolResultsIn } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const QUERY = "grain of the orders table";
const RESULT_URL = "https://example.com/orders-grain";
const SUMMARY = "An orders table has one row per order line.";

const isSearchRequest = (request: RecordedRequest) => (request.body?.tools ?? []).some((tool: { type?: string }) => String(tool.type ?? "").startsWith("web_search_"));

/** The model searches once; the API runs the search server side; the model answers with what came back. */
function searchScript(request: RecordedRequest): ScriptedTurn {
  if (isSearchRequest(request)) return turn.webSearch(QUERY, [{ url: RESULT_URL, title: "Orders grain" }], SUMMARY);
  const messages: Array<{ role: string }> = request.body?.messages ?? [];
  if (messages.filter((message) => message.role === "assistant").length === 0) return { toolCalls: [{ name: "WebSearch", input: { query: QUERY }, id: "toolu_search1" }] };
  const [result] = toolResultsIn(request.body);
  return turn.text(result?.is_error ? `refused: ${result.text}` : `found: ${result?.text ?? "(nothing)"}`);
}

describe("capabilities: webSearch", () => {
  it("behind the interceptor: WebSearch's request and the CLI's own search request pass the wire check; the results reach the model; no host but the API", { timeout: 120_000 }, async () => {
    const api = await firstPartyApi(searchScript);
    const projectDir = tempDir("search-project");
    const host = new ClaudeCodeHost({ projectDir, env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, wire: true, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
    try {
      expect(host.interceptor).toBe("on");
      const output = await host.run(
        { model: "claude-sonnet-4-6", system: "", prompt: "search the grain", maxTurns: 3, tools: [], capabilities: { webSearch: true }, transcript: { dir: tempDir("search-transcripts") } },
        host.limitsFor(undefined, host.logger),
      );
      expect(output.init.tools).toEqual(["WebSearch"]);
      expect(output.toolCalls.map((call) => [call.name, call.ok])).toEqual([["WebSearch", true]]);
      expect(output.result.result).toContain(SUMMARY);
      expect(output.result.result).toContain(RESULT_URL);
      // Three Messages requests, all through the interceptor's check: the model's, the CLI's search, the model's again.
      expect(api.messageRequests).toHaveLength(3);
      const [first, search, last] = api.messageRequests;
      expect(first!.body.tools.map((tool: { name: string }) => tool.name)).toEqual(["WebSearch"]);
      expect(search!.body.tools).toEqual([{ type: "web_search_20250305", name: "web_search", max_uses: 8 }]);
      expect(search!.body.messages).toHaveLength(1);
      expect(JSON.stringify(search!.body.messages[0])).toContain(`Perform a web search for the query: ${QUERY}`);
      // The search request carries none of the call's conversation.
      expect(JSON.stringify(search!.body)).not.toContain("search the grain");
      expect(search!.body.model).toBe("claude-sonnet-4-6");
      expect(toolResultsIn(last!.body)[0]!.text).toContain(RESULT_URL);
      // Egress: the only hosts the CLI asked for were the API's (the search ran on its side).
      expect([...new Set(api.requests.map((request) => request.host))]).toEqual(["api.anthropic.com"]);
    } finally {
      await host.close();
    }
  });

  it("a session on the base-URL path searches too; without the capability WebSearch is no tool and nothing is searched", { timeout: 180_000 }, async () => {
    const api = await baseUrlApi(searchScript);
    const host = new ClaudeCodeHost({ projectDir: tempDir("search-project"), env: testEnv(), passEnv: TEST_PASS_ENV, apiEndpoint: { baseUrl: api.baseUrl, apiKey: "sk-test-scripted" }, ...cliOption(), idleTimeoutMs: 30_000, warm: false, rateLimitGovernor: new RateLimitGovernor() });
    try {
      const session = host.createSession({ model: "sonnet", capabilities: { webSearch: true } });
      const found = await session.send("search the grain").result;
      expect(found.toolCalls.map((call) => [call.name, call.ok])).toEqual([["WebSearch", true]]);
      expect(found.text).toContain(SUMMARY);
      expect(api.messageRequests.filter(isSearchRequest)).toHaveLength(1);
      await session.close();

      const before = api.messageRequests.length;
      const plain = host.createSession({ model: "sonnet", maxTurns: 3 });
      const refused = await plain.send("search the grain").result;
      expect(refused.text).toMatch(/^refused: .*No such tool available: WebSearch/);
      expect(api.messageRequests.slice(before).filter(isSearchRequest)).toHaveLength(0);
      // Two launches: a process with WebSearch never served the plain session.
      expect(host.reusePids).toHaveLength(2);
      await plain.close();
    } finally {
      await host.close();
    }
  });
});
