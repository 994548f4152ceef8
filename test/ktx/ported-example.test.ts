// KTX's backend test "a rejected rate-limit event followed by an error result waits and runs again",
// ported one to one (docs/guides/testing.md, "Porting KTX's backend tests"): public imports only.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it, vi } from "vitest";
import { createClaudeCodeRuntime } from "ktx-claude-code";
import { cliMessage, createScriptedCli } from "ktx-claude-code/testing";

it("waits for the governor and runs again after a rejected rate limit", async () => {
  const resetsAt = Math.floor(Date.now() / 1000) + 3_600;
  // KTX: query.mockReturnValueOnce(messages([...])).mockReturnValueOnce(messages([...]))
  const cli = createScriptedCli([
    [
      cliMessage.rateLimit({ status: "rejected", resetsAt, rateLimitType: "five_hour" }),
      cliMessage.result({ is_error: true, result: "You've hit your limit", api_error_status: 429 }),
    ],
    [cliMessage.text("answer"), cliMessage.result({ result: "answer" })],
  ]);
  const governor = { waitForReady: vi.fn(async () => {}), report: vi.fn(), maxRetryAttempts: vi.fn(() => 3) };
  // KTX: new ClaudeCodeKtxLlmRuntime({ projectDir, modelSlots, query, rateLimitGovernor: governor })
  const runtime = createClaudeCodeRuntime({
    projectDir: mkdtempSync(join(tmpdir(), "project-")),
    modelSlots: { default: "sonnet" },
    env: { PATH: process.env.PATH, HOME: mkdtempSync(join(tmpdir(), "home-")) },
    rateLimitGovernor: governor,
    cliPath: cli.path,
    warm: false,
  });

  await expect(runtime.generateText({ role: "default", prompt: "hi" })).resolves.toBe("answer");
  expect(governor.waitForReady).toHaveBeenCalledTimes(2);
  expect(governor.report).toHaveBeenCalledWith(expect.objectContaining({ provider: "claude-subscription", status: "rejected", resetAtMs: resetsAt * 1000 }));
  // KTX: expect(query).toHaveBeenCalledTimes(2)
  expect(cli.invocations().flatMap((invocation) => invocation.runs)).toEqual([0, 1]);
  await runtime.close();
});
