/**
 * `capabilities.subagents` on the real CLI (scripted API): the model hands a task to a named agent with the Agent
 * tool; the subagent's request reaches the API in its own context (its prompt as system prompt, the task as its one
 * message, none of the parent's conversation, only its own tools) and its report comes back to the parent as the
 * tool's result; init lists the agent asked for. Behind the interceptor the parent's and the subagent's requests
 * pass the wire check in their recorded shapes.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ClaudeCodeHost, InvalidInputError } from "../../src/index.js";
import { RateLimitGovernor } from "../../src/limits/governor.js";
import { resolveModelValue } from "../../src/claude-code/models.js";
import type { RecordedRequest, ScriptedTurn } from "../../src/testing/scripted-api.js";
import { turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, baseUrlApi, cleanup, cliOption, firstPartyApi, firstPartyEnv, tempDir, testEnv, toolResultsIn } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const PARENT_SECRET = "the parent's own line: budget code 7731";
const REVIEWER_PROMPT = "You are the reviewer. You check one document's grain statement and report in one line.";
const SUMMARIZER_PROMPT = "You are the summarizer. You write one sentence.";
const TASK = "Check that the grain is one row per order line.";

const systemText = (request: RecordedRequest) => JSON.stringify(request.body?.system ?? "");
const isSubagent = (request: RecordedRequest) => systemText(request).includes("You are the reviewer") || systemText(request).includes("You are the summarizer");

/** The parent hands TASK to the agent named in its prompt (`agent=<name>`); the subagent answers; the parent repeats the report. */
function script(request: RecordedRequest): ScriptedTurn {
  if (systemText(request).includes("You are the reviewer")) return turn.text("REVIEW: the grain holds.");
  if (systemText(request).includes("You are the summarizer")) return turn.text("SUMMARY: one row per line.");
  const messages: Array<{ role: string; content?: unknown }> = request.body?.messages ?? [];
  const agent = /agent=([\w-]+)/.exec(JSON.stringify(messages[0]?.content ?? ""))?.[1] ?? "reviewer";
  if (messages.filter((message) => message.role === "assistant").length === 0) {
    return { toolCalls: [{ name: "Agent", input: { subagent_type: agent, description: "Check the grain", prompt: TASK }, id: "toolu_agent1" }] };
  }
  const [result] = toolResultsIn(request.body);
  return turn.text(result?.is_error ? `refused: ${result.text}` : `parent got: ${result?.text ?? "(nothing)"}`);
}

const subagents = {
  reviewer: { description: "Checks a document's grain statement.", prompt: REVIEWER_PROMPT },
  summarizer: { description: "Summarises in one sentence.", prompt: SUMMARIZER_PROMPT, model: "haiku" as const },
};

function hostOn(api: { baseUrl: string }): ClaudeCodeHost {
  return new ClaudeCodeHost({ projectDir: tempDir("agents-project"), env: testEnv(), passEnv: TEST_PASS_ENV, apiEndpoint: { baseUrl: api.baseUrl, apiKey: "sk-test-scripted" }, ...cliOption(), idleTimeoutMs: 30_000, warm: false, rateLimitGovernor: new RateLimitGovernor() });
}

describe("capabilities: subagents", () => {
  it("the subagent runs in its own context and its report comes back to the parent; init lists the agents asked for", { timeout: 180_000 }, async () => {
    const api = await baseUrlApi(script);
    const host = hostOn(api);
    try {
      const output = await host.run(
        { model: "claude-sonnet-4-6", system: "You delegate.", prompt: `agent=reviewer ${PARENT_SECRET}`, maxTurns: 4, tools: [], capabilities: { subagents } },
        host.limitsFor(undefined, host.logger),
      );
      expect(output.init.tools).toEqual(["Task"]);
      expect(output.init.agents).toEqual(expect.arrayContaining(["reviewer", "summarizer"]));
      expect(output.toolCalls.map((call) => [call.name, call.ok])).toEqual([["Agent", true]]);
      // The parent's result carries the subagent's report.
      expect(output.result.result).toMatch(/^parent got: [\s\S]*REVIEW: the grain holds\./);
      const sub = api.messageRequests.filter(isSubagent);
      expect(sub).toHaveLength(1);
      const body = sub[0]!.body;
      // Its own context: its prompt as the system prompt, the task as its first message, nothing of the parent's.
      expect(systemText(sub[0]!)).toContain(REVIEWER_PROMPT);
      expect(systemText(sub[0]!)).not.toContain("You delegate.");
      expect(JSON.stringify(body.messages[0].content)).toContain(TASK);
      expect(JSON.stringify(body)).not.toContain(PARENT_SECRET);
      expect(body.tools ?? []).toEqual([]);
      expect(body.system[0].text).toMatch(/cc_is_subagent=true/);
      // The parent's requests offered Agent only, and listed only the caller's agents to the model.
      const parent = api.messageRequests.filter((request) => !isSubagent(request));
      expect(parent[0]!.body.tools.map((tool: { name: string }) => tool.name)).toEqual(["Agent"]);
      const shown = JSON.stringify(parent[0]!.body.messages);
      expect(shown).toContain("- reviewer: Checks a document's grain statement.");
      expect(shown).not.toMatch(/- (general-purpose|claude|Explore|Plan|statusline-setup):/);
      // The tool runs in the foreground: no background launch note reached the parent.
      expect(JSON.stringify(parent.at(-1)!.body.messages)).not.toContain("Async agent launched");
    } finally {
      await host.close();
    }
  });

  it("two agents called in one response both run, each in its own context, and both reports reach the parent", { timeout: 180_000 }, async () => {
    const api = await baseUrlApi((request) => {
      if (isSubagent(request)) return script(request);
      const messages: Array<{ role: string }> = request.body?.messages ?? [];
      if (messages.filter((message) => message.role === "assistant").length === 0) {
        return {
          toolCalls: [
            { name: "Agent", input: { subagent_type: "reviewer", description: "Check the grain", prompt: TASK }, id: "toolu_r" },
            { name: "Agent", input: { subagent_type: "summarizer", description: "Summarise it", prompt: "Summarise the grain." }, id: "toolu_s" },
          ],
        };
      }
      return turn.text(`parent got: ${toolResultsIn(request.body).map((result) => result.text).join(" || ")}`);
    });
    const host = hostOn(api);
    try {
      const session = host.createSession({ model: "sonnet", capabilities: { subagents } });
      const result = await session.send(`both ${PARENT_SECRET}`).result;
      expect(result.toolCalls.map((call) => [call.toolUseId, call.ok])).toEqual([["toolu_r", true], ["toolu_s", true]]);
      expect(result.text).toContain("REVIEW: the grain holds.");
      expect(result.text).toContain("SUMMARY: one row per line.");
      const sub = api.messageRequests.filter(isSubagent);
      expect(sub).toHaveLength(2);
      // Each its own context: its own prompt, its own task, nothing of the parent's or the other agent's.
      const reviewer = sub.find((request) => systemText(request).includes("You are the reviewer"))!;
      const summarizer = sub.find((request) => systemText(request).includes("You are the summarizer"))!;
      expect(JSON.stringify(reviewer.body.messages)).toContain(TASK);
      expect(JSON.stringify(reviewer.body)).not.toContain("Summarise the grain.");
      expect(JSON.stringify(summarizer.body)).not.toContain(TASK);
      for (const request of sub) expect(JSON.stringify(request.body)).not.toContain(PARENT_SECRET);
      await session.close();
    } finally {
      await host.close();
    }
  });

  it("an agent with its own model runs on it; the CLI's own agents are refused to the model", { timeout: 180_000 }, async () => {
    const api = await baseUrlApi(script);
    const host = hostOn(api);
    try {
      const session = host.createSession({ model: "sonnet", capabilities: { subagents } });
      const summary = await session.send("agent=summarizer go").result;
      expect(summary.text).toMatch(/SUMMARY: one row per line\./);
      // The alias is resolved as the library resolves the call's, to a full id (the CLI's own "haiku" names a newer model).
      expect(api.messageRequests.filter(isSubagent).map((request) => request.body.model)).toEqual([resolveModelValue("haiku")!.id]);
      await session.close();
      const other = host.createSession({ model: "sonnet", capabilities: { subagents } });
      const refused = await other.send("agent=general-purpose go").result;
      // The CLI's own agent is denied by rule: an error the model sees, and no subagent request.
      expect(refused.toolCalls.map((call) => [call.name, call.ok])).toEqual([["Agent", false]]);
      expect(refused.text).toBe("refused: Agent type 'general-purpose' has been denied by permission rule 'Agent(general-purpose)' from cliArg.");
      expect(api.messageRequests.filter(isSubagent)).toHaveLength(1);
      await other.close();
    } finally {
      await host.close();
    }
  });

  it("behind the interceptor (first-party path): the parent's and the subagent's requests pass the wire check in their recorded shapes", { timeout: 120_000 }, async () => {
    const api = await firstPartyApi(script);
    const host = new ClaudeCodeHost({ projectDir: tempDir("agents-project"), env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, wire: true, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
    try {
      expect(host.interceptor).toBe("on");
      const output = await host.run(
        { model: "claude-sonnet-4-6", system: "You delegate.", prompt: `agent=reviewer ${PARENT_SECRET}`, maxTurns: 4, tools: [], capabilities: { subagents: { reviewer: subagents.reviewer } }, transcript: { dir: tempDir("agents-transcripts") } },
        host.limitsFor(undefined, host.logger),
      );
      expect(output.init.tools).toEqual(["Task"]);
      expect(output.result.result).toMatch(/REVIEW: the grain holds\./);
      // Three Messages requests went through the check: the parent's, the subagent's, the parent's again.
      expect(api.messageRequests).toHaveLength(3);
      expect(api.messageRequests.filter(isSubagent)).toHaveLength(1);
      expect(JSON.stringify(api.messageRequests.filter(isSubagent)[0]!.body)).not.toContain(PARENT_SECRET);
      // Two agents, one on its own model: the list shows both, the haiku agent's request names its model.
      const both = await host.run(
        { model: "claude-sonnet-4-6", system: "", prompt: "agent=summarizer go", maxTurns: 4, tools: [], capabilities: { subagents } },
        host.limitsFor(undefined, host.logger),
      );
      expect(both.result.result).toMatch(/SUMMARY: one row per line\./);
      expect(api.messageRequests.filter(isSubagent).at(-1)!.body.model).toBe(resolveModelValue("haiku")!.id);
    } finally {
      await host.close();
    }
  });

  it("behind the interceptor: an agent with Read reads a file under cwd with its own tool, the parent has Read too, both pass the wire check", { timeout: 120_000 }, async () => {
    const projectDir = tempDir("agents-project");
    writeFileSync(join(projectDir, "grain.md"), "GRAIN: one row per order line\n");
    const api = await firstPartyApi((request) => {
      const messages: Array<{ role: string }> = request.body?.messages ?? [];
      const steps = messages.filter((message) => message.role === "assistant").length;
      if (systemText(request).includes("You are the reader")) {
        return steps === 0 ? turn.tools({ name: "Read", input: { file_path: join(projectDir, "grain.md") } }) : turn.text(`READER: ${toolResultsIn(request.body)[0]?.text ?? ""}`);
      }
      if (steps === 0) return turn.tools({ name: "Agent", input: { subagent_type: "reader", description: "Read it", prompt: "Read grain.md" } });
      return turn.text("parent done");
    });
    const host = new ClaudeCodeHost({ projectDir, env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, wire: true, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
    try {
      const output = await host.run(
        { model: "claude-sonnet-4-6", system: "", prompt: "go", maxTurns: 4, tools: [], capabilities: { builtinTools: ["Read"], subagents: { reader: { description: "Reads files.", prompt: "You are the reader.", tools: ["Read"] } } } },
        host.limitsFor(undefined, host.logger),
      );
      expect(output.result.result).toBe("parent done");
      const reader = api.messageRequests.filter((request) => systemText(request).includes("You are the reader"));
      expect(reader).toHaveLength(2);
      expect(reader[0]!.body.tools.map((tool: { name: string }) => tool.name)).toEqual(["Read"]);
      expect(toolResultsIn(reader[1]!.body)[0]!.text).toContain("GRAIN: one row per order line");
      // The parent's tool result is the subagent's hand-back.
      expect(JSON.stringify(api.messageRequests.at(-1)!.body.messages)).toContain("[Subagent hand-back]");
    } finally {
      await host.close();
    }
  });

  it("refuses bad definitions before any process starts", async () => {
    const api = await firstPartyApi(script);
    const host = new ClaudeCodeHost({ projectDir: tempDir("agents-project"), env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, wire: true, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
    try {
      expect(() => host.createSession({ model: "sonnet", capabilities: { subagents: { Reviewer: { description: "d", prompt: "p" } } } })).toThrow(InvalidInputError);
      expect(() => host.createSession({ model: "sonnet", capabilities: { subagents: { reviewer: { description: "d", prompt: "p", color: "red" } as never } } })).toThrow(InvalidInputError);
      const clash = await host.createSession({ model: "sonnet", capabilities: { subagents: { "general-purpose": { description: "d", prompt: "p" } } } }).send("go").result.catch((error: unknown) => error);
      expect((clash as Error).message).toMatch(/one of the CLI's own agents/);
      const tools = await host.createSession({ model: "sonnet", capabilities: { subagents: { reviewer: { description: "d", prompt: "p", tools: ["Read"] } } } }).send("go").result.catch((error: unknown) => error);
      expect(tools).toBeInstanceOf(InvalidInputError);
      expect((tools as Error).message).toMatch(/Read are not opted into by the call/);
      expect(api.messageRequests).toHaveLength(0);
      expect(host.reusePids).toEqual([]);
    } finally {
      await host.close();
    }
  });
});
