/**
 * KTX's own backend tests (claude-code-runtime.test.ts, claude-code-env.test.ts, claude-code-models.test.ts;
 * behaviours 1 and 7–15 of ../shared/ktx/README.md), restated on this runtime through KTX's hook and the
 * scripted stand-in CLI. Rate limits (2–6) are in backend-rate-limits.test.ts; docs/parity.md maps each
 * behaviour to its tests, also the real-CLI ones.
 */
import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AbortError, IsolationError, StructuredOutputError, UnsupportedKtxDepError, UnsupportedModelError, createClaudeCodeRuntime, isAbortError, runClaudeCodeAuthProbe } from "../../src/index.js";
import { cliMessage, createScriptedCli } from "../../src/testing/index.js";
import { lookup } from "../../src/testing/scenarios.js";
import { cleanup, remainingChildren, tempDir, testEnv } from "../support.js";
import { PROVIDER_ENV, answers, ktxRuntime } from "./backend-support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

const ISOLATION_FLAGS = ["--setting-sources=", "--tools=", "--strict-mcp-config", "--permission-mode=dontAsk", "--no-session-persistence"];
const loop = { modelRole: "curator", systemPrompt: "s", userPrompt: "u", toolSet: [lookup], stepBudget: 4, telemetryTags: { unitKey: "wu-1" } } as const;

function expectScrubbed(env: Record<string, string>, given: Record<string, string>): void {
  for (const name of Object.keys(PROVIDER_ENV)) expect(env[name], name).toBeUndefined();
  expect(env.PATH).toBe(given.PATH);
  expect(env.HOME).toBe(given.HOME);
}

describe("KTX behaviour 1: a text call runs isolated with the role's pinned model and a scrubbed env", () => {
  it("isolation flags, no built-in tools, no MCP server, the pinned id of the role's alias, no provider credentials", async () => {
    const cli = createScriptedCli([cliMessage.text("yes"), cliMessage.result({ result: "yes" })]);
    const env = testEnv(PROVIDER_ENV);
    expect(await ktxRuntime(cli, { env }).generateText({ role: "triage", prompt: "p", temperature: 0 })).toBe("yes");
    const [invocation] = cli.invocations();
    expect(invocation!.argv).toEqual(expect.arrayContaining([...ISOLATION_FLAGS, "--model=claude-haiku-4-5"]));
    expect(invocation!.argv.some((arg) => arg.startsWith("--allowedTools") || arg.startsWith("--mcp-config"))).toBe(false);
    expectScrubbed(invocation!.env, env);
    // Deny by default: the initialize request names no MCP server and no skills.
    expect(invocation!.received[0]).toMatchObject({ type: "control_request", request: { subtype: "initialize", skills: [] } });
    expect(invocation!.received[0]!.request.sdkMcpServers).toBeUndefined();
  });
});

describe("KTX behaviour 7: abort", () => {
  it("an abort during a call interrupts the CLI once and rejects as aborted; the stream that then ends without a result is an abort, not an error", async () => {
    const cli = createScriptedCli([cliMessage.text("working"), cliMessage.waitForInterrupt(), cliMessage.exit(0)]);
    const controller = new AbortController();
    const call = ktxRuntime(cli).generateText({ role: "default", prompt: "p", abortSignal: controller.signal }).catch((error: unknown) => error);
    await cli.started();
    const abortedAt = performance.now();
    controller.abort();
    const error = await call;
    const elapsedMs = performance.now() - abortedAt;
    expect(error).toBeInstanceOf(AbortError);
    expect(isAbortError(error)).toBe(true);
    expect(cli.invocations()[0]!.interrupts).toBe(1);
    // reuse: false here; the wait ends when the process exits, not after the 1 s interrupt grace.
    expect(elapsedMs).toBeLessThan(300);
  });

  it("reuse on: an interrupted CLI that exits without a result rejects the call within 300 ms of the abort (the wait ends with the process)", async () => {
    const cli = createScriptedCli([cliMessage.text("working"), cliMessage.waitForInterrupt(), cliMessage.exit(0)]);
    const runtime = ktxRuntime(cli, { reuse: {} });
    const controller = new AbortController();
    const call = runtime.generateText({ role: "default", prompt: "p", abortSignal: controller.signal }).catch((error: unknown) => error);
    await cli.started();
    const abortedAt = performance.now();
    controller.abort();
    const error = await call;
    const elapsedMs = performance.now() - abortedAt;
    expect(isAbortError(error)).toBe(true);
    expect(cli.invocations()[0]!.interrupts).toBe(1);
    // Before: the 10 s control timeout with reuse on (1 s with reuse: false) passed before the call rejected.
    expect(elapsedMs).toBeLessThan(300);
    await runtime.close();
  });

  it("a loop rejects as aborted too (never stopReason error)", async () => {
    const cli = createScriptedCli([cliMessage.text("working"), cliMessage.waitForInterrupt(), cliMessage.result({ subtype: "error_during_execution", is_error: true, terminal_reason: "aborted_streaming" })]);
    const controller = new AbortController();
    const call = ktxRuntime(cli).runAgentLoop({ ...loop, abortSignal: controller.signal }).catch((error: unknown) => error);
    await cli.started();
    controller.abort();
    expect(isAbortError(await call)).toBe(true);
    expect(cli.invocations()[0]!.interrupts).toBe(1);
  });

  it("a finished call leaves no listener on the caller's signal (calls of one work unit share it)", async () => {
    const cli = createScriptedCli([cliMessage.text("yes"), cliMessage.result({ result: "yes" })]);
    const controller = new AbortController();
    expect(await ktxRuntime(cli).generateText({ role: "default", prompt: "p", abortSignal: controller.signal })).toBe("yes");
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("an already aborted signal starts nothing", async () => {
    const cli = createScriptedCli([cliMessage.result()]);
    const runtime = ktxRuntime(cli);
    const signal = AbortSignal.abort();
    await expect(runtime.generateText({ role: "default", prompt: "p", abortSignal: signal })).rejects.toSatisfy(isAbortError);
    await expect(runtime.generateObject({ role: "default", prompt: "p", schema: z.object({ a: z.string() }), abortSignal: signal })).rejects.toSatisfy(isAbortError);
    await expect(runtime.runAgentLoop({ ...loop, abortSignal: signal })).rejects.toSatisfy(isAbortError);
    expect(cli.invocations()).toEqual([]);
  });
});

describe("KTX behaviour 8: structured output", () => {
  const schema = z.object({ title: z.string(), rows: z.number() });

  it("asks for a JSON schema of type object, allows no tool of its own, and validates with the caller's schema", async () => {
    const cli = createScriptedCli([[cliMessage.result({ structured_output: { title: "orders", rows: 3 } })], [cliMessage.result({ structured_output: { title: "orders", rows: "three" } })]]);
    const runtime = ktxRuntime(cli);
    const object = await runtime.generateObject({ role: "default", prompt: "p", schema });
    expect(object.title).toBe("orders");
    const [first] = cli.invocations();
    expect(first!.received[0]!.request.jsonSchema).toMatchObject({ type: "object", properties: { title: { type: "string" }, rows: { type: "number" } } });
    // No --allowedTools: the CLI's own StructuredOutput tool is the only tool the model has.
    expect(first!.argv).toEqual(expect.arrayContaining(["--tools="]));
    expect(first!.argv.some((arg) => arg.startsWith("--allowedTools"))).toBe(false);
    await expect(runtime.generateObject({ role: "default", prompt: "p", schema })).rejects.toBeInstanceOf(StructuredOutputError);
  });

  it("an init that shows any tool besides StructuredOutput fails the call", async () => {
    const cli = createScriptedCli([cliMessage.init({ tools: ["StructuredOutput", "Bash"] }), cliMessage.result({ structured_output: { title: "t", rows: 1 } })]);
    const error = await ktxRuntime(cli).generateObject({ role: "default", prompt: "p", schema }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(IsolationError);
    expect((error as Error).message).toContain("Bash");
  });
});

describe("KTX behaviour 9: only the exact mcp__ktx__ ids, only the ktx server; permission answers", () => {
  it("allows exactly the run's ktx tool ids, hosts only the ktx server, allows a permission question for a ktx id and denies anything else", async () => {
    const cli = createScriptedCli([
      cliMessage.permission("mcp__ktx__lookup", { term: "grain" }),
      cliMessage.permission("Bash", { command: "rm -rf /" }),
      cliMessage.permission("mcp__github__create_issue", {}),
      cliMessage.permission("mcp__ktx__lookup_all", {}),
      cliMessage.result({ result: "done" }),
    ]);
    const result = await ktxRuntime(cli).runAgentLoop(loop);
    expect(result.stopReason).toBe("natural");
    const [invocation] = cli.invocations();
    expect(invocation!.argv).toContain("--allowedTools=mcp__ktx__lookup");
    const mcpConfig = invocation!.argv.find((arg) => arg.startsWith("--mcp-config="))!;
    expect(Object.keys(JSON.parse(mcpConfig.slice("--mcp-config=".length)).mcpServers)).toEqual(["ktx"]);
    expect(invocation!.received[0]!.request.sdkMcpServers).toEqual(["ktx"]);
    expect(answers(invocation!).map((answer) => answer.behavior)).toEqual(["allow", "deny", "deny", "deny"]);
  });
});

describe("KTX behaviour 10: host discovery is metadata; an unexpected surface fails the run, naming each difference", () => {
  const discovered = { slash_commands: ["review", "my-team-command"], skills: ["pdf"], agents: ["explorer"] };

  it("slash commands, skills and agents in init do not fail text calls, loops or the auth probe", async () => {
    const cli = createScriptedCli([cliMessage.init(discovered), cliMessage.result({ result: "OK" })]);
    const runtime = ktxRuntime(cli);
    const text = await runtime.generateTextResult({ role: "default", prompt: "p" });
    expect(text.hostDiscovery).toEqual({ slashCommands: ["review", "my-team-command"], skills: ["pdf"], agents: ["explorer"] });
    expect((await runtime.runAgentLoop(loop)).stopReason).toBe("natural");
    expect(await runClaudeCodeAuthProbe({ projectDir: tempDir("probe"), model: "sonnet", cliPath: cli.path, env: testEnv() })).toEqual({ ok: true });
  });

  it("unexpected tools, a missing ktx tool, plugins and non-ktx MCP servers fail the run, each named", async () => {
    const cli = createScriptedCli([
      cliMessage.init({ tools: ["Bash", "WebFetch"], mcp_servers: [{ name: "ktx", status: "connected" }, { name: "github", status: "connected" }], plugins: [{ name: "company-plugin", path: "/x" }] }),
      cliMessage.result(),
    ]);
    const result = await ktxRuntime(cli).runAgentLoop(loop);
    expect(result.stopReason).toBe("error");
    expect(result.error).toBeInstanceOf(IsolationError);
    for (const name of ["Bash", "WebFetch", "mcp__ktx__lookup", "github", "company-plugin"]) expect(result.error!.message).toContain(name);
  });
});

describe("KTX behaviour 11: object calls and loops get the same scrubbed env", () => {
  it("API keys, auth tokens, base URLs, the AWS profile and the Vertex/Bedrock switches are removed; PATH and HOME kept", async () => {
    const cli = createScriptedCli([[cliMessage.result({ structured_output: { a: "x" } })], [cliMessage.result()]]);
    const env = testEnv(PROVIDER_ENV);
    const runtime = ktxRuntime(cli, { env });
    await runtime.generateObject({ role: "default", prompt: "p", schema: z.object({ a: z.string() }) });
    await runtime.runAgentLoop(loop);
    const invocations = cli.invocations();
    expect(invocations).toHaveLength(2);
    for (const invocation of invocations) expectScrubbed(invocation.env, env);
  });
});

describe("KTX behaviour 12: stop reasons", () => {
  it("max turns by subtype, terminal reason or stop reason -> budget; success (completed) -> natural; error_during_execution -> error", async () => {
    const cli = createScriptedCli([
      [cliMessage.result({ subtype: "error_max_turns", is_error: true, num_turns: 5 })],
      [cliMessage.result({ subtype: "success", terminal_reason: "max_turns" })],
      [cliMessage.result({ subtype: "success", stop_reason: "max_turns" })],
      [cliMessage.result({ subtype: "success", terminal_reason: "completed" })],
      [cliMessage.result({ subtype: "error_during_execution", is_error: true })],
    ]);
    // One reused stand-in plays the five runs: one Node start instead of five.
    const runtime = ktxRuntime(cli, { reuse: {} });
    const reasons = [];
    for (let index = 0; index < 5; index += 1) reasons.push((await runtime.runAgentLoop(loop)).stopReason);
    await runtime.close();
    expect(reasons).toEqual(["budget", "budget", "budget", "natural", "error"]);
    expect(cli.invocations().map((invocation) => invocation.runs)).toEqual([[0, 1, 2, 3, 4]]);
  });
});

describe("KTX behaviour 13: loop metrics", () => {
  it("usage maps to { inputTokens, outputTokens, totalTokens }; stepCount counts model responses (deliberate difference: not num_turns)", async () => {
    const cli = createScriptedCli([
      cliMessage.text("first"),
      cliMessage.text("second"),
      cliMessage.result({ subtype: "error_max_turns", is_error: true, num_turns: 3, usage: { input_tokens: 120, output_tokens: 30 } }),
    ]);
    const result = await ktxRuntime(cli).runAgentLoop({ ...loop, stepBudget: 2 });
    expect(result.stopReason).toBe("budget");
    expect(result.metrics!.usage).toEqual({ inputTokens: 120, outputTokens: 30, totalTokens: 150 });
    // KTX's backend: stepCount = num_turns (3, which the CLI reports as N+1 at a budget end) and no boundaries.
    expect(result.metrics!.stepCount).toBe(2);
    expect(result.numTurns).toBe(3);
    expect(result.metrics!.stepBoundariesMs).toHaveLength(2);
  });
});

describe("KTX fixtures: assistant lines without message.id", () => {
  const line = (content: unknown[]) => ({ type: "assistant", message: { role: "assistant", content }, parent_tool_use_id: null });

  it("are no protocol error: each line is a step of its own, the text is the last line's", async () => {
    const cli = createScriptedCli([
      line([{ type: "text", text: "looking" }, { type: "tool_use", id: "toolu_a", name: "mcp__ktx__lookup", input: { term: "grain" } }]),
      line([{ type: "text", text: "final answer" }]),
      cliMessage.result({ result: "final answer", num_turns: 2 }),
    ]);
    const runtime = ktxRuntime(cli);
    const result = await runtime.runAgentLoop(loop);
    expect(result.stopReason).toBe("natural");
    expect(result.error).toBeUndefined();
    expect(result.metrics!.stepCount).toBe(2);
    expect(result.metrics!.stepBoundariesMs).toHaveLength(2);
    expect(await runtime.generateText({ role: "default", prompt: "p" })).toBe("final answer");
  });
});

describe("KTX behaviour 14: the auth probe", () => {
  it("runs isolated with the scrubbed env and resolves exactly { ok: true }", async () => {
    const cli = createScriptedCli([cliMessage.result({ result: "OK" })]);
    const env = testEnv(PROVIDER_ENV);
    expect(await runClaudeCodeAuthProbe({ projectDir: tempDir("probe"), model: "sonnet", cliPath: cli.path, env })).toEqual({ ok: true });
    const [invocation] = cli.invocations();
    expect(invocation!.argv).toEqual(expect.arrayContaining([...ISOLATION_FLAGS, "--model=claude-sonnet-4-6"]));
    expectScrubbed(invocation!.env, env);
  });

  it("with an unsupported model resolves { ok: false, message } naming the model, not a login problem, and starts nothing", async () => {
    const cli = createScriptedCli([cliMessage.result()]);
    const result = await runClaudeCodeAuthProbe({ projectDir: tempDir("probe"), model: "gpt-5", cliPath: cli.path, env: testEnv() });
    expect(Object.keys(result).sort()).toEqual(["message", "ok"]);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      // KTX's own backend's message, word for word.
      expect(result.message).toBe('Unsupported Claude Code model "gpt-5". Use sonnet, opus, haiku, or a claude-* model id.');
      expect(result.message).not.toMatch(/log ?in|logged in/i);
    }
    expect(cli.invocations()).toEqual([]);
  });

  it("refuses KTX's query seam with the typed error the hook gives, and starts nothing", async () => {
    const cli = createScriptedCli([cliMessage.result({ result: "OK" })]);
    const probe = runClaudeCodeAuthProbe({ projectDir: tempDir("probe"), model: "sonnet", cliPath: cli.path, env: testEnv(), query: () => undefined });
    await expect(probe).rejects.toBeInstanceOf(UnsupportedKtxDepError);
    await expect(probe).rejects.toThrow(/runClaudeCodeAuthProbe does not take `query`.*createScriptedCli/);
    expect(() => createClaudeCodeRuntime({ projectDir: "/p", modelSlots: { default: "sonnet" }, query: () => undefined })).toThrow(UnsupportedKtxDepError);
    expect(cli.invocations()).toEqual([]);
  });

  it("a not-logged-in result (success subtype, is_error true) is ok: false with the login command", async () => {
    const cli = createScriptedCli([cliMessage.text("Not logged in · Please run /login"), cliMessage.result({ is_error: true, result: "Not logged in · Please run /login" })]);
    const result = await runClaudeCodeAuthProbe({ projectDir: tempDir("probe"), model: "sonnet", cliPath: cli.path, env: testEnv() });
    expect(result).toEqual({ ok: false, message: expect.stringContaining("npx --no-install ktx-claude-code login") });
  });
});

describe("KTX behaviour 15: unsupported model aliases are rejected", () => {
  it("an alias or id outside KTX's table is refused when the runtime is built, naming it; a claude-* id goes to the CLI as is", async () => {
    for (const model of ["gpt-5", "sonnet-latest", "Opus", "anthropic/claude-sonnet-4-6"]) {
      expect(() => createClaudeCodeRuntime({ projectDir: "/p", modelSlots: { default: model } })).toThrow(UnsupportedModelError);
      expect(() => createClaudeCodeRuntime({ projectDir: "/p", modelSlots: { default: model } })).toThrow(model);
    }
    // Deliberate difference (docs/guides/ktx-backend.md#models): dated and older claude-* ids pass, as the CLI accepts them.
    expect(createClaudeCodeRuntime({ projectDir: "/p", modelSlots: { default: "claude-3-5-haiku-20241022" } }).resolveModel()).toBe("claude-3-5-haiku-20241022");
    const cli = createScriptedCli([cliMessage.result()]);
    await ktxRuntime(cli, { modelSlots: { default: "claude-opus-4-7" } }).generateText({ role: "repair", prompt: "p" });
    expect(cli.invocations()[0]!.argv).toContain("--model=claude-opus-4-7");
  });
});
