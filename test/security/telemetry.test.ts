/**
 * The `telemetry` option on the real CLI: an OTLP/HTTP (JSON) receiver on 127.0.0.1 decodes what
 * arrives. By default it gets token metrics and API-request / tool-result events but never the prompt
 * text; `logUserPrompts` adds it; an unreachable collector never fails a call.
 */
import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { turn } from "../../src/testing/scripted-api.js";
import { lookup } from "../../src/testing/scenarios.js";
import { cleanup, remainingChildren, runtimeFor, scriptedApi, tempDir } from "../support.js";
import { KTX_CLAUDE_CODE_MODEL_ALIASES } from "../../src/claude-code/models.js";

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
type Attributes = Record<string, string | number | boolean | undefined>;
const attributes = (list: Array<{ key: string; value: OtlpValue }> = []): Attributes =>
  Object.fromEntries(list.map(({ key, value }) => [key, value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.doubleValue ?? value.boolValue))]));

/** A receiver that decodes OTLP/HTTP JSON exports into events and metric names. */
async function startReceiver() {
  const raw: string[] = [];
  const events: Array<{ name: string; attributes: Attributes; body?: string }> = [];
  const metrics: Array<{ name: string; points: Attributes[] }> = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    request.on("end", () => {
      raw.push(body);
      const data = JSON.parse(body || "{}");
      for (const resource of data.resourceLogs ?? []) {
        for (const scope of resource.scopeLogs ?? []) {
          for (const record of scope.logRecords ?? []) {
            const attrs = attributes(record.attributes);
            events.push({ name: String(attrs["event.name"] ?? record.body?.stringValue ?? ""), attributes: attrs, body: record.body?.stringValue });
          }
        }
      }
      for (const resource of data.resourceMetrics ?? []) {
        for (const scope of resource.scopeMetrics ?? []) {
          for (const metric of scope.metrics ?? []) {
            const points = (metric.sum ?? metric.gauge ?? metric.histogram)?.dataPoints ?? [];
            metrics.push({ name: metric.name, points: points.map((point: { attributes?: Array<{ key: string; value: OtlpValue }> }) => attributes(point.attributes)) });
          }
        }
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { endpoint: `http://127.0.0.1:${port}`, raw, events, metrics, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const PROMPT = "PROMPT-CANARY-7f3a look up the grain";
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

async function callWithTelemetry(receiver: Receiver | undefined, extra: Record<string, unknown> = {}) {
  const api = await scriptedApi([turn.tools({ name: "mcp__ktx__lookup", input: { term: "grain" } }), turn.text("done")]);
  const runtime = runtimeFor(api, {
    telemetry: { endpoint: receiver?.endpoint ?? "http://127.0.0.1:9", protocol: "http/json", metricExportIntervalMs: 500, logsExportIntervalMs: 200, ...extra },
  });
  // With a transcript the call returns after the CLI exited, i.e. after its final export.
  return runtime.generateTextResult({ prompt: PROMPT, tools: [lookup], transcript: { dir: tempDir("transcripts") } });
}

describe("telemetry option (OTLP/HTTP JSON on 127.0.0.1)", () => {
  let quiet: Receiver;
  let loud: Receiver;
  beforeAll(async () => {
    [quiet, loud] = await Promise.all([startReceiver(), startReceiver()]);
    await Promise.all([callWithTelemetry(quiet), callWithTelemetry(loud, { logUserPrompts: true })]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([quiet?.close(), loud?.close()]);
    expect(await remainingChildren()).toEqual([]);
    await cleanup();
  });

  it("exports token metrics and API request and tool result events", () => {
    const names = new Set(quiet.metrics.map((metric) => metric.name));
    expect(names).toContain("claude_code.token.usage");
    const tokenTypes = quiet.metrics.filter((m) => m.name === "claude_code.token.usage").flatMap((m) => m.points.map((p) => p.type));
    expect(tokenTypes).toEqual(expect.arrayContaining(["input", "output"]));
    const events = new Set(quiet.events.map((event) => event.name));
    expect(events).toContain("api_request");
    expect(events).toContain("tool_result");
    const apiRequest = quiet.events.find((event) => event.name === "api_request")!;
    expect(apiRequest.attributes.model).toBe(KTX_CLAUDE_CODE_MODEL_ALIASES.sonnet);
  });

  it("never sends the prompt text by default: user_prompt carries its length only", () => {
    expect(quiet.raw.join("\n")).not.toContain("PROMPT-CANARY-7f3a");
    const prompt = quiet.events.find((event) => event.name === "user_prompt")!;
    expect(Number(prompt.attributes.prompt_length)).toBe(PROMPT.length);
  });

  it("sends the prompt text only with logUserPrompts: true", () => {
    expect(loud.raw.join("\n")).toContain("PROMPT-CANARY-7f3a");
  });

  it("an unreachable collector never fails a call", async () => {
    const result = await callWithTelemetry(undefined);
    expect(result.text).toBe("done");
  });
});
