/**
 * Every result of ClaudeCodeRuntime carries `network` (issue 39): typed as always there, and there on a
 * loop that failed before its CLI said anything. A stand-in CLI of the testing helpers (no interceptor: `standIn`).
 */
import { afterEach, expect, it } from "vitest";
import { ClaudeCodeRuntime, type NetworkRoute } from "../../src/index.js";
import { cliMessage, createScriptedCli } from "../../src/testing/index.js";
import { cleanup, tempDir, testEnv } from "../support.js";

afterEach(cleanup);

it("text, object and loop results, a failed loop's too, say the route the CLI's requests take", async () => {
  const cli = createScriptedCli([
    [cliMessage.text("yes"), cliMessage.result({ result: "yes" })],
    [cliMessage.result({ structured_output: { title: "orders" } })],
    [cliMessage.exit(3)],
  ]);
  const runtime = new ClaudeCodeRuntime({ projectDir: tempDir("network"), models: { default: "sonnet" }, cliPath: cli.path, wire: false, warm: false, reuse: false, env: { ...testEnv(), HTTPS_PROXY: "http://user:secret@127.0.0.1:9" } });
  try {
    const text = await runtime.generateTextResult({ prompt: "Say yes" });
    // Typed as always there: no `?.` and no assertion needed.
    const route: NetworkRoute = text.network;
    expect(route).toMatchObject({ interceptor: "standIn", proxies: { HTTPS_PROXY: "http://[REDACTED]@127.0.0.1:9" } });
    const { z } = await import("zod");
    const object = await runtime.generateObjectResult({ prompt: "Describe", schema: z.object({ title: z.string() }) });
    // Typed optional (its overloads are the AI SDK runtime's too), there all the same.
    expect(object.network?.interceptor).toBe("standIn");
    const loop = await runtime.runAgentLoop({ modelRole: "default", systemPrompt: "s", userPrompt: "u", toolSet: {}, stepBudget: 2, telemetryTags: {} });
    expect(loop.stopReason).toBe("error");
    expect(loop.network).toEqual(runtime.network);
  } finally {
    await runtime.close();
  }
});
