#!/usr/bin/env node
/**
 * Reads the facts a VERIFIED_CLI_VERSIONS entry needs from a real CLI binary, against the scripted
 * Messages API on 127.0.0.1 with an empty HOME (loopback only):
 * - built-in tools and plugins: `init.tools` / `init.plugins` of a `claude -p` run without `--tools=`
 *   or `--settings`, and what `sonnet`, `opus` and `haiku` resolve to (`init.model`);
 * - `--disable-slash-commands`: whether `--help` lists it;
 * - `set_model`: a stream-json session started with `--model=sonnet` is sent `set_model opus` after
 *   `initialize`; the reply, and the model of `init` and of the API request, say whether it worked;
 * - how many MCP `initialize` requests it sends for one SDK MCP server.
 * Usage: npm run build && node scripts/probe-cli-facts.mjs <path to claude>
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startScriptedMessagesApi } from "../dist/testing/index.js";

const cli = process.argv[2] && resolve(process.argv[2]);
if (!cli) {
  console.error("usage: node scripts/probe-cli-facts.mjs <path to claude>");
  process.exit(2);
}
const api = await startScriptedMessagesApi(() => ({ text: "ok" }));
const dirs = [];
const temp = (prefix) => {
  const dir = mkdtempSync(join(tmpdir(), `ktx-probe-${prefix}-`));
  dirs.push(dir);
  return dir;
};
const env = () => ({
  PATH: process.env.PATH,
  HOME: temp("home"),
  ANTHROPIC_BASE_URL: api.baseUrl,
  ANTHROPIC_API_KEY: "sk-test-scripted",
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_AUTOUPDATER: "1",
  CLAUDE_CODE_MAX_RETRIES: "0",
});

/** Runs the CLI, writes `input` lines (stream-json) or nothing, resolves with its stdout lines. */
function run(args, input = [], onLine = () => {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cli, args, { cwd: temp("project"), env: env(), stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    const lines = [];
    child.stdout.on("data", (chunk) => {
      out += chunk;
      let newline;
      while ((newline = out.indexOf("\n")) >= 0) {
        const line = out.slice(0, newline);
        out = out.slice(newline + 1);
        try {
          const message = JSON.parse(line);
          lines.push(message);
          onLine(message, child);
        } catch {
          lines.push({ nonJson: line });
        }
      }
    });
    child.stderr.on("data", (chunk) => (err += chunk));
    for (const line of input) child.stdin.write(`${JSON.stringify(line)}\n`);
    if (input.length === 0) child.stdin.end();
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, lines, stderr: err });
    });
  });
}

const facts = {};
const version = await new Promise((resolve) => {
  const child = spawn(cli, ["--version"], { env: env() });
  let text = "";
  child.stdout.on("data", (c) => (text += c));
  child.on("close", () => resolve(text.trim().split(" ")[0]));
});
facts.version = version;

const help = await run(["--help"]);
facts.hasDisableSlashCommands = help.lines.some((line) => line.nonJson?.includes("--disable-slash-commands"));

for (const alias of ["sonnet", "opus", "haiku"]) {
  const { lines } = await run(["-p", "hi", "--output-format", "stream-json", "--verbose", `--model=${alias}`]);
  const init = lines.find((line) => line.type === "system" && line.subtype === "init");
  (facts.aliases ??= {})[alias] = init?.model;
  if (alias === "sonnet") {
    facts.builtinTools = init?.tools ?? [];
    facts.builtinPlugins = (init?.plugins ?? []).map((plugin) => plugin.name ?? plugin);
    facts.initFields = Object.keys(init ?? {}).sort();
    facts.resultFields = Object.keys(lines.find((line) => line.type === "result") ?? {}).sort();
  }
}

// The model switch (apply_flag_settings) after initialize, then one prompt; with one SDK MCP server to count MCP
// initialize requests. `apiModel` lists every Messages request: one entry means the switch itself asked nothing.
const requestsBefore = api.messageRequests.length;
let mcpInitialize = 0;
const session = await run(
  ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--model=sonnet", "--tools=", "--strict-mcp-config", "--permission-mode", "default"],
  [
    { type: "control_request", request_id: "probe_1", request: { subtype: "initialize", sdkMcpServers: ["ktx"] } },
    { type: "control_request", request_id: "probe_2", request: { subtype: "apply_flag_settings", settings: { model: "opus" } } },
    { type: "user", message: { role: "user", content: "hi" }, parent_tool_use_id: null, session_id: "" },
  ],
  (message, child) => {
    if (message.type === "control_request" && message.request?.subtype === "mcp_message") {
      const mcp = message.request.message;
      if (mcp.method === "initialize") mcpInitialize += 1;
      const response =
        mcp.id === undefined
          ? {}
          : mcp.method === "initialize"
            ? { jsonrpc: "2.0", id: mcp.id, result: { protocolVersion: mcp.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "ktx", version: "0" } } }
            : { jsonrpc: "2.0", id: mcp.id, result: { tools: [] } };
      child.stdin.write(`${JSON.stringify({ type: "control_response", response: { subtype: "success", request_id: message.request_id, response: { mcp_response: response } } })}\n`);
    }
    if (message.type === "result") child.stdin.end();
  },
);
const reply = session.lines.find((line) => line.type === "control_response" && line.response?.request_id === "probe_2");
const init = session.lines.find((line) => line.type === "system" && line.subtype === "init");
facts.modelSwitch = {
  reply: reply?.response,
  initModel: init?.model,
  apiModel: api.messageRequests.slice(requestsBefore).map((request) => request.body?.model),
};
facts.mcpInitializeRequests = mcpInitialize;
facts.exitCode = session.code;
console.log(JSON.stringify(facts, null, 2));
await api.close();
for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
