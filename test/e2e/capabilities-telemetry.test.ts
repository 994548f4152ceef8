/**
 * `capabilities.telemetry` on the real CLI behind the interceptor (first-party path, scripted API): an OTLP/HTTP
 * (JSON) collector on 127.0.0.1 gets the CLI's metrics and events, without the prompt text unless
 * `logUserPrompts`; only the telemetry variables reach the child, and only the collector's host is reached beside the
 * interceptor (the CLI's exporter goes straight to it). A call without the capability exports nothing.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { type Capabilities, ClaudeCodeHost, InvalidInputError } from "../../src/index.js";
import { RateLimitGovernor } from "../../src/limits/governor.js";
import { turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, cleanup, cliOption, firstPartyApi, firstPartyEnv, tempDir } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const PROMPT = "PROMPT-CANARY-51c2 what is the grain";

/** A collector that keeps each export's path and body. */
async function startCollector() {
  const received: Array<{ path: string; body: string }> = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    request.on("end", () => {
      received.push({ path: request.url ?? "", body });
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { endpoint: `http://127.0.0.1:${port}`, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("capabilities: telemetry", () => {
  it("behind the interceptor metrics and events reach a loopback collector; no prompt text by default, with logUserPrompts it is there", { timeout: 180_000 }, async () => {
    const api = await firstPartyApi(() => turn.text("ok"));
    const [quiet, loud, none] = await Promise.all([startCollector(), startCollector(), startCollector()]);
    const host = new ClaudeCodeHost({ projectDir: tempDir("caps-otel"), env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, wire: true, ...cliOption(), warm: false, reuse: false, rateLimitGovernor: new RateLimitGovernor() });
    try {
      expect(host.interceptor).toBe("on");
      const call = (telemetry?: NonNullable<Capabilities["telemetry"]>) =>
        host.run(
          { model: "claude-sonnet-4-6", system: "", prompt: PROMPT, maxTurns: 1, tools: [], ...(telemetry ? { capabilities: { telemetry } } : {}), transcript: { dir: tempDir("caps-otel-transcripts") } },
          host.limitsFor(undefined, host.logger),
        );
      const settings = { protocol: "http/json" } as const;
      // Without reuse each call's CLI exits at its end, and with a transcript the call returns after that exit,
      // i.e. after the exporter's flush on shutdown (the CLI's default intervals are longer than a call).
      const first = await call({ endpoint: quiet.endpoint, ...settings });
      expect(first.result.result).toBe("ok");
      await call({ endpoint: loud.endpoint, ...settings, logUserPrompts: true });
      await call();
      const paths = new Set(quiet.received.map((entry) => entry.path));
      expect(paths).toContain("/v1/logs");
      expect(paths).toContain("/v1/metrics");
      const quietText = quiet.received.map((entry) => entry.body).join("\n");
      expect(quietText).toContain("user_prompt");
      expect(quietText).toContain("claude_code.token.usage");
      expect(quietText).not.toContain("PROMPT-CANARY-51c2");
      expect(loud.received.map((entry) => entry.body).join("\n")).toContain("PROMPT-CANARY-51c2");
      expect(none.received).toEqual([]);
      // Every Messages request went through the interceptor (3 calls, 3 requests): only telemetry bypassed it.
      expect(api.messageRequests).toHaveLength(3);
      // The child got exactly the telemetry variables the capability needs (no OTEL_LOG_USER_PROMPTS on the first call).
      const header = JSON.parse(readFileSync(first.transcriptPath!, "utf8").split("\n")[0]!) as { envNames: string[] };
      expect(header.envNames.filter((name) => name.startsWith("OTEL_") || name.includes("TELEMETRY")).sort()).toEqual([
        "CLAUDE_CODE_ENABLE_TELEMETRY",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_LOGS_EXPORTER",
        "OTEL_METRICS_EXPORTER",
        "OTEL_TRACES_EXPORTER",
      ]);
    } finally {
      await host.close();
      await Promise.all([quiet.close(), loud.close(), none.close()]);
    }
  });

  it("is strict: an unknown key or a bad endpoint is refused before any process starts", () => {
    const host = new ClaudeCodeHost({ projectDir: tempDir("caps-otel"), env: { PATH: process.env.PATH ?? "" }, apiEndpoint: { baseUrl: "http://127.0.0.1:9", apiKey: "sk-test" }, ...cliOption(), warm: false });
    try {
      expect(() => host.createSession({ model: "sonnet", capabilities: { telemetry: { endpoint: "not a url" } } as never })).toThrow(InvalidInputError);
      expect(() => host.createSession({ model: "sonnet", capabilities: { telemetry: { endpoint: "http://127.0.0.1:4318", logPrompts: true } } as never })).toThrow(/capabilities\.telemetry/);
    } finally {
      void host.close();
    }
  });
});
