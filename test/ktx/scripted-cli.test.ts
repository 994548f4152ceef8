/** The stand-in CLI itself (ktx-claude-code/testing `createScriptedCli`): tool calls, reuse, crashes, unverified versions. */
import { afterEach, describe, expect, it } from "vitest";
import { CliCrashError, UnsupportedCliVersionError } from "../../src/index.js";
import { cliMessage, createScriptedCli } from "../../src/testing/index.js";
import { lookup } from "../../src/testing/scenarios.js";
import { cleanup, remainingChildren } from "../support.js";
import { ktxRuntime } from "./backend-support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

const loop = { modelRole: "curator", systemPrompt: "s", userPrompt: "u", toolSet: [lookup], stepBudget: 4, telemetryTags: { unitKey: "wu-1" } } as const;

describe("createScriptedCli", () => {
  it("a $tool step runs the KTX tool through the runtime's MCP server and shows the model its answer", async () => {
    const cli = createScriptedCli([cliMessage.tool("mcp__ktx__lookup", { term: "grain" }, "toolu_1"), cliMessage.tool("mcp__ktx__lookup", {}, "toolu_2"), cliMessage.text("done"), cliMessage.result({ result: "done", num_turns: 3 })]);
    const runtime = ktxRuntime(cli);
    const result = await runtime.runAgentLoop(loop);
    expect(result.stopReason).toBe("natural");
    expect(result.toolCalls.map((call) => [call.toolUseId, call.name, call.ok])).toEqual([
      ["toolu_1", "mcp__ktx__lookup", true],
      ["toolu_2", "mcp__ktx__lookup", false],
    ]);
    expect(runtime.toolFailureCount("wu-1")).toBe(1);
    // The MCP answers (initialize, then the two tools/call results) are in what the stand-in received.
    const mcpAnswers = cli.invocations()[0]!.received.filter((line) => line.type === "control_response").map((line) => line.response.response.mcp_response);
    expect(JSON.stringify(mcpAnswers.at(-2))).toContain("grain");
    expect(mcpAnswers.at(-1).result.isError).toBe(true);
  });

  it("serves repeated calls of one shape from one reused process (reuse on), each call its next run", async () => {
    const cli = createScriptedCli([[cliMessage.result({ result: "first" })], [cliMessage.result({ result: "second" })]]);
    const runtime = ktxRuntime(cli, { reuse: {} });
    expect(await runtime.generateText({ role: "default", prompt: "a" })).toBe("first");
    expect(await runtime.generateText({ role: "default", prompt: "b" })).toBe("second");
    expect(await runtime.generateText({ role: "default", prompt: "c" })).toBe("second");
    await runtime.close();
    expect(cli.invocations().map((invocation) => invocation.runs)).toEqual([[0, 1, 2]]);
  });

  it("an $exit before any result is a CLI crash carrying the stand-in's stderr", async () => {
    const cli = createScriptedCli([{ $stderr: "fatal: scripted crash\n" }, cliMessage.exit(3)]);
    const error = await ktxRuntime(cli).generateText({ role: "default", prompt: "p" }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CliCrashError);
    expect((error as CliCrashError).stderrTail).toContain("fatal: scripted crash");
  });

  it("started() resolves once a run has begun (the prompt arrived), with that process's invocation; a later run by its number", async () => {
    const cli = createScriptedCli([[cliMessage.text("first"), cliMessage.waitForInterrupt(), cliMessage.result({ result: "first" })], [cliMessage.result({ result: "second" })]]);
    const runtime = ktxRuntime(cli, { reuse: {} });
    const controller = new AbortController();
    const call = runtime.generateText({ role: "default", prompt: "a", abortSignal: controller.signal }).catch((error: unknown) => error);
    const first = await cli.started();
    expect(first.runs).toEqual([0]);
    expect(first.received.some((line) => line.type === "user")).toBe(true);
    controller.abort();
    await call;
    const second = runtime.generateText({ role: "default", prompt: "b" });
    expect((await cli.started({ run: 1 })).runs).toContain(1);
    expect(await second).toBe("second");
    await runtime.close();
  });

  it("started() rejects after its timeout when no run begins, naming how many processes started", async () => {
    const cli = createScriptedCli([cliMessage.result()]);
    await expect(cli.started({ timeoutMs: 50 })).rejects.toThrow("the stand-in CLI started no run within 50 ms (0 process(es) started)");
  });

  it("reports the version it is given, so the version check applies", async () => {
    const cli = createScriptedCli([cliMessage.result()], { version: "9.9.9" });
    await expect(ktxRuntime(cli).generateText({ role: "default", prompt: "p" })).rejects.toBeInstanceOf(UnsupportedCliVersionError);
    expect(await ktxRuntime(cli, { allowUnverifiedCli: true }).generateText({ role: "default", prompt: "p" })).toBe("ok");
  });
});
