/**
 * Reads a VERIFIED_CLI_VERSIONS entry from a real CLI binary, in the table's own shape, against the
 * scripted Messages API on 127.0.0.1 with an empty HOME. Shared by `scripts/probe-cli-facts.mjs` and
 * `fixtures verify`; on the pinned binary it reproduces the table's entry exactly
 * (test/e2e/probe-facts.test.ts).
 * - built-in tools: the union of `init.tools` of `claude -p` runs without `--tools=` for the CLI's
 *   aliases and KTX's pinned ids (2.1.330 offers TaskCreate/TaskGet/TaskList/TaskUpdate to 4.x models
 *   only), after the base list every entry names (BUILTIN_TOOLS), additions sorted;
 * - built-in plugins: `init.plugins` of that run, then those that appear only with analytics on
 *   (`cc-plugin-telemetry` on 2.1.330) when the binary names them: such a run would need the CLI started
 *   without CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, which no CLI of ours ever is;
 * - aliases: `init.model` for `--model=sonnet|opus|haiku`; `--disable-slash-commands` from `--help`;
 * - the model switch: a session started with `--model=sonnet` gets `apply_flag_settings {model: opus}`
 *   after `initialize`; usable when it answers success, sends no request of its own, and the prompt's
 *   request uses the opus model with no `/model` exchange in its history (2.1.142 and 2.1.200 add one);
 * - MCP `initialize` requests for one SDK MCP server (2.1.142 and 2.1.200 send two);
 * - the binary's sha256 under its platform key.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { binaryFile, binaryKey, sha256Of } from "../binary/install.js";
import { BUILTIN_TOOLS, type CliVersionFacts } from "../binary/versions.js";
import { KTX_CLAUDE_CODE_MODEL_ALIASES } from "../claude-code/models.js";
import { startScriptedMessagesApi } from "../testing/scripted-api.js";

export interface ProbedFacts {
  /** The table entry, in `VERIFIED_CLI_VERSIONS`' shape. */
  entry: CliVersionFacts;
  /** What the entry is read from, for the maintainer's review. */
  details: {
    toolsByModel: Record<string, string[]>;
    pluginsAnalyticsOff: string[];
    /** Plugins listed only with analytics on (not started that way: named by the binary). */
    analyticsOn: { plugins: string[] };
    modelSwitch: { reply: unknown; initModel: unknown; apiModels: unknown[]; modelExchangeInHistory: boolean };
    mcpInitializeRequests: number;
    initFields: string[];
    resultFields: string[];
  };
}

type Line = Record<string, any>;

/**
 * Built-in plugins a CLI lists only with analytics on (seen on 2.1.330 with non-essential traffic
 * allowed, docs/compatibility.md). The table names them so `--settings` switches them off too.
 */
const ANALYTICS_ONLY_PLUGINS = ["cc-plugin-telemetry"];

interface RunResult {
  code: number | null;
  lines: Line[];
  text: string[];
}

/**
 * The facts of the binary at `cliPath` (seconds: about 30 on a busy 2-core machine). At the scripted API's
 * base URL with an API key (what `fixtures verify` runs), or with `firstParty` as a logged-in user's CLI
 * runs: a throwaway claude.ai login in each HOME, api.anthropic.com through the scripted API's front on
 * 127.0.0.1 (its test CA; any other host refused). Either way nothing leaves loopback.
 */
export async function probeCliFacts(cliPath: string, options: { firstParty?: boolean } = {}): Promise<ProbedFacts> {
  const cli = resolve(cliPath);
  const api = await startScriptedMessagesApi(() => ({ text: "ok" }), { firstParty: options.firstParty === true });
  const dirs: string[] = [];
  const temp = (prefix: string) => {
    const dir = mkdtempSync(join(tmpdir(), `ktx-probe-${prefix}-`));
    dirs.push(dir);
    return dir;
  };
  const route = (): Record<string, string> =>
    api.firstParty ? { HOME: api.firstParty.login(temp("home")), ...api.firstParty.env() } : { HOME: temp("home"), ANTHROPIC_BASE_URL: api.baseUrl, ANTHROPIC_API_KEY: "sk-test-scripted" };
  const env = (): Record<string, string> => ({
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    ...route(),
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    CLAUDE_CODE_MAX_RETRIES: "0",
  });

  /** Runs the CLI, writes `input` lines (stream-json) or nothing, resolves with its stdout lines. */
  const run = (args: string[], options: { input?: Line[]; onLine?: (line: Line, write: (line: Line) => void, stop: () => void, end: () => void) => void } = {}) =>
    new Promise<RunResult>((done, fail) => {
      const child = spawn(cli, args, { cwd: temp("project"), env: env(), stdio: ["pipe", "pipe", "pipe"] });
      const result: RunResult = { code: null, lines: [], text: [] };
      const write = (line: Line) => child.stdin.write(`${JSON.stringify(line)}\n`);
      const stop = () => child.kill("SIGKILL");
      const end = () => child.stdin.end();
      let pending = "";
      child.stdout.on("data", (chunk: Buffer) => {
        pending += chunk;
        let newline: number;
        while ((newline = pending.indexOf("\n")) >= 0) {
          const text = pending.slice(0, newline);
          pending = pending.slice(newline + 1);
          try {
            const line = JSON.parse(text) as Line;
            result.lines.push(line);
            options.onLine?.(line, write, stop, end);
          } catch {
            result.text.push(text);
          }
        }
      });
      child.stderr.resume();
      for (const line of options.input ?? []) write(line);
      if (!options.input) child.stdin.end();
      const timer = setTimeout(stop, 60_000);
      child.on("error", fail);
      child.on("close", (code) => {
        clearTimeout(timer);
        result.code = code;
        done(result);
      });
    });
  const initOf = (result: RunResult) => result.lines.find((line) => line.type === "system" && line.subtype === "init");
  const names = (plugins: unknown): string[] => (Array.isArray(plugins) ? plugins.map((plugin) => (typeof plugin === "string" ? plugin : String(plugin?.name))) : []);

  try {
    const version = (await run(["--version"])).text.join("\n").trim().split(" ")[0]!;
    const help = await run(["--help"]);
    const hasDisableSlashCommands = help.text.some((line) => line.includes("--disable-slash-commands"));

    const aliases: Record<string, string> = {};
    const toolsByModel: Record<string, string[]> = {};
    let pluginsAnalyticsOff: string[] = [];
    let initFields: string[] = [];
    let resultFields: string[] = [];
    const models = [...["sonnet", "opus", "haiku"], ...Object.values(KTX_CLAUDE_CODE_MODEL_ALIASES)];
    for (const model of models) {
      const result = await run(["-p", "hi", "--output-format", "stream-json", "--verbose", `--model=${model}`]);
      const init = initOf(result);
      toolsByModel[model] = init?.tools ?? [];
      if (model === "sonnet" || model === "opus" || model === "haiku") aliases[model] = init?.model;
      if (model === "sonnet") {
        pluginsAnalyticsOff = names(init?.plugins);
        initFields = Object.keys(init ?? {}).sort();
        resultFields = Object.keys(result.lines.find((line) => line.type === "result") ?? {}).sort();
      }
    }

    // Analytics-only plugins, found in the binary rather than by a run with analytics on.
    const binaryText = readFileSync(binaryFile(cli));
    const analyticsOn = { plugins: ANALYTICS_ONLY_PLUGINS.filter((name) => binaryText.includes(name)) };

    // The model switch, with one SDK MCP server to count MCP initialize requests.
    const before = api.messageRequests.length;
    let mcpInitializeRequests = 0;
    const session = await run(["--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--model=sonnet", "--tools=", "--strict-mcp-config", "--permission-mode", "default"], {
      input: [
        { type: "control_request", request_id: "probe_1", request: { subtype: "initialize", sdkMcpServers: ["ktx"] } },
        { type: "control_request", request_id: "probe_2", request: { subtype: "apply_flag_settings", settings: { model: "opus" } } },
        { type: "user", message: { role: "user", content: "hi" }, parent_tool_use_id: null, session_id: "" },
      ],
      onLine: (line, write, _stop, end) => {
        if (line.type === "control_request" && line.request?.subtype === "mcp_message") {
          const mcp = line.request.message;
          if (mcp.method === "initialize") mcpInitializeRequests += 1;
          const response =
            mcp.id === undefined
              ? {}
              : mcp.method === "initialize"
                ? { jsonrpc: "2.0", id: mcp.id, result: { protocolVersion: mcp.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "ktx", version: "0" } } }
                : { jsonrpc: "2.0", id: mcp.id, result: { tools: [] } };
          write({ type: "control_response", response: { subtype: "success", request_id: line.request_id, response: { mcp_response: response } } });
        }
        if (line.type === "result") end();
      },
    });
    const requests = api.messageRequests.slice(before);
    const reply = session.lines.find((line) => line.type === "control_response" && line.response?.request_id === "probe_2")?.response;
    const modelExchangeInHistory = requests.some((request) => JSON.stringify(request.body?.messages ?? []).includes("/model"));
    const modelSwitch = {
      reply,
      initModel: initOf(session)?.model,
      apiModels: requests.map((request) => request.body?.model),
      modelExchangeInHistory,
    };
    const switches = reply?.subtype === "success" && requests.length === 1 && requests[0]!.body?.model === aliases.opus && !modelExchangeInHistory;

    const base = new Set<string>(BUILTIN_TOOLS);
    const added = [...new Set(Object.values(toolsByModel).flat())].filter((tool) => !base.has(tool)).sort();
    const plugins = [...pluginsAnalyticsOff, ...analyticsOn.plugins.filter((name) => !pluginsAnalyticsOff.includes(name))];
    const entry: CliVersionFacts = {
      version,
      builtinPlugins: plugins,
      builtinTools: [...BUILTIN_TOOLS, ...added],
      hasDisableSlashCommands,
      ...(switches ? { modelSwitch: "apply_flag_settings" as const } : {}),
      duplicateMcpInitialize: mcpInitializeRequests > 1,
      aliases,
      binarySha256: { [binaryKey(cli)]: await sha256Of(binaryFile(cli)) },
    };
    return { entry, details: { toolsByModel, pluginsAnalyticsOff, analyticsOn, modelSwitch, mcpInitializeRequests, initFields, resultFields } };
  } finally {
    await api.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}
