/**
 * The scripted Messages API against the real pinned CLI, spawned directly (no runtime code), and
 * what the CLI does on errors: these tests pin the retry behaviour the scripted API documents. Each
 * runs on both paths the scripted API serves: at its base URL (`ANTHROPIC_BASE_URL`, an API key: the
 * scripted API's base-URL mode itself, which fixture recording and the base-URL tests use) and first
 * party (a claude.ai login, api.anthropic.com through its front), the path real users take.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { type Script, type ScriptedApiOptions, type ScriptedMessagesApi, startScriptedMessagesApi, turn } from "../../src/testing/scripted-api.js";

// The suite's CLI (docs/guides/testing.md): KTX_CC_CLI's binary, else the bundled one.
const CLI = process.env.KTX_CC_CLI ? resolve(process.env.KTX_CC_CLI) : new URL("../../node_modules/@anthropic-ai/claude-code-linux-x64/claude", import.meta.url).pathname;
const ARGS = [
  "-p",
  "--output-format",
  "stream-json",
  "--verbose",
  "--input-format",
  "stream-json",
  "--setting-sources=",
  "--tools=",
  "--strict-mcp-config",
  "--no-session-persistence",
  "--permission-mode=dontAsk",
  "--max-turns=3",
  "--model=sonnet",
];

const children = new Set<ChildProcessWithoutNullStreams>();
const apis: ScriptedMessagesApi[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const child of children) child.kill("SIGKILL");
  children.clear();
  await Promise.all(apis.splice(0).map((api) => api.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `ktx-scripted-${prefix}-`));
  dirs.push(dir);
  return dir;
}

interface Run {
  api: ScriptedMessagesApi;
  lines: any[];
  result: any;
  exitCode: number | null;
  elapsedMs: number;
}

/** Runs one prompt through the real CLI against a scripted API; resolves when the CLI exits. */
type Path = "base URL" | "first party";

async function run(path: Path, script: Script, { jsonSchema, env = {}, apiOptions }: { jsonSchema?: object; env?: Record<string, string>; apiOptions?: ScriptedApiOptions } = {}): Promise<Run> {
  const api = await startScriptedMessagesApi(script, { ...apiOptions, firstParty: path === "first party" });
  apis.push(api);
  const home = tempDir("home");
  // First party: a throwaway claude.ai login, and the front as the proxy and CA (any other host refused).
  // Anything else goes to the suite's trap proxy (test/loopback-guard.ts), which fails the run.
  const trap = inject("trapProxyUrl");
  const route =
    path === "first party"
      ? { ...api.firstParty!.env(), HOME: api.firstParty!.login(home), HTTP_PROXY: trap, NO_PROXY: "127.0.0.1,localhost,::1" }
      : { ANTHROPIC_BASE_URL: api.baseUrl, ANTHROPIC_API_KEY: "sk-test", HOME: home, HTTPS_PROXY: trap, HTTP_PROXY: trap, NO_PROXY: "127.0.0.1,localhost,::1" };
  const started = Date.now();
  const child = spawn(CLI, ARGS, {
    cwd: tempDir("cwd"),
    env: {
      PATH: process.env.PATH,
      ...route,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      ...env,
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  children.add(child);
  const initialize = { subtype: "initialize", systemPrompt: ["You are a test."], ...(jsonSchema ? { jsonSchema } : {}) };
  child.stdin.write(`${JSON.stringify({ type: "control_request", request_id: "init-1", request: initialize })}\n`);
  child.stdin.write(`${JSON.stringify({ type: "user", session_id: "", message: { role: "user", content: [{ type: "text", text: "say hello" }] }, parent_tool_use_id: null })}\n`);

  const lines: any[] = [];
  let stderr = "";
  let buffer = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  child.stdout.on("data", (chunk) => {
    buffer += chunk;
    for (let newline = buffer.indexOf("\n"); newline >= 0; newline = buffer.indexOf("\n")) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (!line.trim()) continue;
      const message = JSON.parse(line);
      lines.push(message);
      if (message.type === "result") child.stdin.end();
    }
  });
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`CLI did not finish in 15 s; stderr: ${stderr}\nlines: ${lines.map((l) => JSON.stringify(l)).join("\n")}`));
    }, 15_000);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
  children.delete(child);
  const result = lines.find((line) => line.type === "result");
  if (!result) throw new Error(`no result line (exit ${exitCode}); stderr: ${stderr}`);
  return { api, lines, result, exitCode, elapsedMs: Date.now() - started };
}

const retries = (lines: any[]) => lines.filter((line) => line.type === "system" && line.subtype === "api_retry");

describe.each(["base URL", "first party"] as const)("the real CLI against the scripted Messages API (%s)", (path) => {
  it("returns a text turn as the result and sends our system prompt", async () => {
    const { api, result, exitCode } = await run(path, [turn.text("hello from the script")]);
    expect(result).toMatchObject({ subtype: "success", is_error: false, result: "hello from the script" });
    expect(exitCode).toBe(0);
    expect(api.messageRequests).toHaveLength(1);
    const request = api.messageRequests[0]!;
    expect(request.path).toBe("/v1/messages");
    expect(request.host).toBe(path === "first party" ? "api.anthropic.com" : `127.0.0.1:${api.port}`);
    expect(request.headers[path === "first party" ? "authorization" : "x-api-key"]).toBe(path === "first party" ? "Bearer sk-ant-oat01-scripted-first-party-access" : "sk-test");
    expect(request.body.stream).toBe(true);
    expect(JSON.stringify(request.body.system)).toContain("You are a test.");
    expect(request.body.messages[0].content).toEqual(expect.arrayContaining([expect.objectContaining({ type: "text", text: "say hello" })]));
  });

  it("ends with structured_output when the model calls StructuredOutput", async () => {
    const value = { answer: "forty-two", n: 42 };
    const jsonSchema = { type: "object", properties: { answer: { type: "string" }, n: { type: "number" } }, required: ["answer", "n"], additionalProperties: false };
    const { api, result } = await run(path, [turn.object(value)], { jsonSchema });
    expect(result.is_error).toBe(false);
    expect(result.structured_output).toEqual(value);
    expect(api.messageRequests[0]!.body.tools.map((tool: { name: string }) => tool.name)).toContain("StructuredOutput");
  });

  it("runs text and tool-call turns through a tool round trip", async () => {
    // --tools= offers no tools, so the CLI answers an unknown tool with an error tool_result and asks again.
    const { api, result } = await run(path, [turn.tools({ name: "NoSuchTool", input: { q: 1 } }), turn.text("done after the tool")]);
    expect(result.result).toBe("done after the tool");
    expect(api.messageRequests).toHaveLength(2);
    const last = api.messageRequests[1]!.body.messages.at(-1);
    expect(last.content[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_scripted_0_0", is_error: true });
  });

  it("400: fails with api_error_status, at a base URL after two immediate retries with fewer beta features, first party at once", async () => {
    const { api, result, lines } = await run(path, () => turn.error(400, "scripted bad request"));
    expect(result).toMatchObject({ is_error: true, api_error_status: 400, result: "API Error: 400 scripted bad request" });
    expect(retries(lines)).toEqual([]);
    // CLI 2.1.330 retries a 400 with fewer betas only at a base URL; first party it sends the request once.
    if (path === "first party") return expect(api.messageRequests).toHaveLength(1);
    // Three requests for the same conversation, each with a shorter anthropic-beta list.
    expect(api.messageRequests).toHaveLength(3);
    const betas = api.messageRequests.map((r) => String(r.headers["anthropic-beta"]).split(","));
    expect(betas[1]!.length).toBeLessThan(betas[0]!.length);
    expect(betas[2]!.length).toBeLessThan(betas[1]!.length);
    for (const r of api.messageRequests) expect(r.body.messages).toEqual(api.messageRequests[0]!.body.messages);
  });

  it.each([429, 500, 529])("%i once, then text: one api_retry line, a retry about 0.5 s later that takes the next turn", async (status) => {
    // retry-after: 0 does not shorten the CLI's first backoff (0.5 s + up to 25 % jitter).
    const { api, result, lines } = await run(path, [turn.error(status, `scripted ${status}`, { "retry-after": "0" }), turn.text(`recovered from ${status}`)]);
    expect(result).toMatchObject({ is_error: false, result: `recovered from ${status}` });
    const [retry, ...more] = retries(lines);
    expect(more).toEqual([]);
    expect(retry).toMatchObject({ attempt: 1, max_retries: 10, error_status: status });
    expect(retry.retry_delay_ms).toBeGreaterThanOrEqual(500);
    expect(retry.retry_delay_ms).toBeLessThanOrEqual(625);
    expect(api.messageRequests).toHaveLength(2);
    const gap = api.messageRequests[1]!.receivedAt - api.messageRequests[0]!.receivedAt;
    expect(gap).toBeGreaterThanOrEqual(480);
    expect(api.messageRequests[1]!.body.stream).toBe(true);
  });

  it("503 once, then text: the retry takes the next turn; at a base URL announced by api_retry, first party a silent re-send with anthropic-dispatch-id", async () => {
    const { api, result, lines } = await run(path, [turn.error(503, "scripted 503"), turn.text("recovered from 503")]);
    expect(result).toMatchObject({ is_error: false, result: "recovered from 503" });
    expect(api.messageRequests).toHaveLength(2);
    expect(api.messageRequests[0]!.headers["anthropic-dispatch-id"]).toBeUndefined();
    if (path === "base URL") {
      expect(retries(lines)).toEqual([expect.objectContaining({ attempt: 1, error_status: 503 })]);
      expect(api.messageRequests[1]!.headers["anthropic-dispatch-id"]).toBeUndefined();
    } else {
      // CLI 2.1.330 first party re-sends a 503'd request once without an api_retry line, with a header its
      // recorded wire shape has from the recorder's re-sent call (so the runtime's interceptor passes it:
      // wire.test.ts); only a further failure enters the announced retry loop.
      expect(retries(lines)).toEqual([]);
      expect(api.messageRequests[1]!.headers["anthropic-dispatch-id"]).toBe("v2p");
    }
  });

  it("x-should-retry: false makes the CLI fail at once", async () => {
    const { api, result, lines } = await run(path, [turn.error(429, "no retry please", { "x-should-retry": "false" }), turn.text("never")]);
    expect(result).toMatchObject({ is_error: true, api_error_status: 429 });
    expect(retries(lines)).toEqual([]);
    expect(api.messageRequests).toHaveLength(1);
  });

  it("CLAUDE_CODE_MAX_RETRIES=1 limits retries of a persistent 529", async () => {
    const { api, result, lines } = await run(path, () => turn.error(529), { env: { CLAUDE_CODE_MAX_RETRIES: "1" } });
    expect(result).toMatchObject({ is_error: true, api_error_status: 529 });
    expect(retries(lines)).toEqual([expect.objectContaining({ attempt: 1, max_retries: 1, error_status: 529 })]);
    expect(api.messageRequests).toHaveLength(2);
  });

  it("an exhausted script fails the run at once with 500 instead of a long retry loop", async () => {
    const { api, result, lines, elapsedMs } = await run(path, []);
    expect(result).toMatchObject({ is_error: true, api_error_status: 500 });
    expect(result.result).toContain("script exhausted after 0 turns");
    expect(retries(lines)).toEqual([]);
    expect(api.messageRequests).toHaveLength(0);
    // First party, the CLI also fetches the login's OAuth profile (answered by the scripted API, no turn taken).
    const login = api.requests.filter((request) => path === "first party" && request.method === "GET" && request.path === "/api/oauth/profile");
    expect(login.length).toBeLessThanOrEqual(1);
    expect(api.requests).toHaveLength(1 + login.length);
    expect(elapsedMs).toBeLessThan(10_000);
  });

  it("a broken stream is retried streaming after backoff, taking the next turn", async () => {
    const { api, result, lines } = await run(path, [{ brokenStream: true, text: "half an ans" }, turn.text("after the broken stream")]);
    expect(result).toMatchObject({ is_error: false, result: "after the broken stream" });
    expect(retries(lines)).toEqual([expect.objectContaining({ attempt: 1, error_status: null })]);
    expect(api.messageRequests.map((r) => r.body.stream)).toEqual([true, true]);
  });

  it("a 404 on the streaming request makes the CLI retry once without streaming", async () => {
    const { api, result, lines } = await run(path, [turn.error(404), turn.text("served without streaming")]);
    expect(result).toMatchObject({ is_error: false, result: "served without streaming" });
    expect(retries(lines)).toEqual([]);
    expect(api.messageRequests.map((r) => r.body.stream)).toEqual([true, false]);
    expect(api.messageRequests[1]!.body.messages).toEqual(api.messageRequests[0]!.body.messages);
  });
});
