#!/usr/bin/env node
/**
 * A scripted stand-in for the Claude Code CLI (see scripted-cli.ts):
 *   node scripted-cli-main.js <dir> [claude args…]
 * `<dir>/script.json` holds the runs; each user message takes the next run (the last one repeats) and
 * writes its lines. It answers the control protocol like the CLI (initialize, interrupt, set_model, apply_flag_settings,
 * rewind_conversation, end_session), asks our MCP server when a step calls a tool, and records what it
 * was started with and every line it received in `<dir>/invocations/`.
 */
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { ScriptedCliAction, ScriptedCliInvocation, ScriptedCliLine, ScriptedCliScript, ScriptedCliStep } from "./scripted-cli.js";

const [dir, ...argv] = process.argv.slice(2) as [string, ...string[]];
const script = JSON.parse(readFileSync(join(dir, "script.json"), "utf8")) as ScriptedCliScript;
if (argv.includes("--version")) {
  process.stdout.write(`${script.version} (Claude Code)\n`);
  process.exit(0);
}

const flag = (name: string) => argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const allowedTools = flag("allowedTools")?.split(",").filter(Boolean) ?? [];
let model = flag("model") ?? "claude-sonnet-4-6";
const record: ScriptedCliInvocation = { pid: process.pid, argv, cwd: process.cwd(), env: { ...process.env } as Record<string, string>, received: [], runs: [], interrupts: 0 };
mkdirSync(join(dir, "invocations"), { recursive: true });
const recordPath = join(dir, "invocations", `${Date.now()}-${process.pid}.json`);
// Saved before every line written, so a test reading it after the call sees everything up to the result.
// Written whole and renamed into place, so a reader never sees half a record.
const save = () => {
  writeFileSync(`${recordPath}.tmp`, JSON.stringify(record));
  renameSync(`${recordPath}.tmp`, recordPath);
};
save();

const write = (value: unknown) => {
  save();
  process.stdout.write(`${JSON.stringify(value)}\n`);
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let structuredOutput = false;
let requestIds = 0;
const pending = new Map<string, (response: Record<string, unknown>) => void>();
/** A control request of ours (the CLI side); resolves with the host's answer. */
const ask = (request: Record<string, unknown>) => {
  const id = `stand-in-${++requestIds}`;
  write({ type: "control_request", request_id: id, request });
  return new Promise<Record<string, unknown>>((resolve) => pending.set(id, resolve));
};
let mcpId = 0;
let mcpReady: Promise<unknown> | undefined;
const mcp = (message: Record<string, unknown>) => ask({ subtype: "mcp_message", server_name: "ktx", message: { jsonrpc: "2.0", ...message } });
const mcpHandshake = () =>
  (mcpReady ??= mcp({ id: mcpId++, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "scripted-cli", version: script.version } } }).then(() =>
    mcp({ method: "notifications/initialized" }),
  ));

let interruptWaiter: (() => void) | undefined;
let interrupted = false;
const seenUuids = new Set<string>();
let sessionId = "scripted-session";

/** The init line: the given fields over what the real CLI would report for these arguments. */
function init(given: Record<string, unknown>): Record<string, unknown> {
  const tools = [...allowedTools, ...(structuredOutput ? ["StructuredOutput"] : [])];
  return {
    type: "system",
    subtype: "init",
    cwd: process.cwd(),
    session_id: sessionId,
    tools,
    mcp_servers: allowedTools.length > 0 ? [{ name: "ktx", status: "connected" }] : [],
    model,
    permissionMode: "dontAsk",
    slash_commands: [],
    apiKeySource: "none",
    claude_code_version: script.version,
    output_style: "default",
    agents: [],
    skills: [],
    plugins: [],
    uuid: `init-${process.pid}`,
    ...given,
  };
}

async function step(given: ScriptedCliStep): Promise<void> {
  const maybeLine = given as Partial<ScriptedCliLine>;
  if (typeof maybeLine.type === "string") {
    const line = maybeLine.type === "system" && maybeLine.subtype === "init" ? init(maybeLine) : (maybeLine as Record<string, unknown>);
    if (typeof line.session_id === "string") sessionId = line.session_id;
    return write(line);
  }
  const value = given as ScriptedCliAction;
  if ("$sleep" in value) await sleep(value.$sleep);
  else if ("$stderr" in value) process.stderr.write(value.$stderr);
  else if ("$exit" in value) {
    save();
    await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
    process.exit(value.$exit);
  } else if ("$waitForInterrupt" in value) {
    if (!interrupted) await new Promise<void>((resolve) => (interruptWaiter = resolve));
  } else if ("$tool" in value) {
    const { name, input = {}, id = `toolu_scripted_${++requestIds}` } = value.$tool;
    write({ type: "assistant", message: { id: `msg_${id}`, role: "assistant", model, content: [{ type: "tool_use", id, name, input }] }, parent_tool_use_id: null, session_id: sessionId });
    const bare = name.startsWith("mcp__ktx__") ? name.slice("mcp__ktx__".length) : name;
    await mcpHandshake();
    const answer = await mcp({ id: mcpId++, method: "tools/call", params: { name: bare, arguments: input, _meta: { "claudecode/toolUseId": id } } });
    const reply = (answer.response as { mcp_response?: { result?: { content?: unknown; isError?: boolean } } } | undefined)?.mcp_response?.result;
    write({ type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: reply?.content ?? [], is_error: reply?.isError === true }] }, parent_tool_use_id: null, session_id: sessionId });
  } else if ("$permission" in value) {
    await ask({ subtype: "can_use_tool", tool_name: value.$permission.tool_name, input: value.$permission.input ?? {}, tool_use_id: `toolu_perm_${++requestIds}` });
  }
}

let runIndex = 0;
let queue = Promise.resolve();
async function playRun(): Promise<void> {
  const index = claimRun();
  record.runs.push(index);
  interrupted = false;
  const steps = script.runs[Math.min(index, script.runs.length - 1)] ?? [];
  // The real CLI writes init first; a run that does not script one gets the default.
  if (!steps.some((value) => (value as { type?: unknown; subtype?: unknown }).type === "system" && (value as { subtype?: unknown }).subtype === "init")) write(init({}));
  for (const value of steps) await step(value);
}

/** Runs are numbered across every process of this stand-in (exclusive file creation), so retries and reused processes take the next one. */
function claimRun(): number {
  for (;; runIndex++) {
    try {
      closeSync(openSync(join(dir, "claims", String(runIndex)), "wx"));
      return runIndex++;
    } catch {
      // Taken by another process (or an earlier run of this one).
    }
  }
}
mkdirSync(join(dir, "claims"), { recursive: true });

const reply = (id: unknown, response: unknown = {}) => write({ type: "control_response", response: { subtype: "success", request_id: id, response } });
createInterface({ input: process.stdin }).on("line", (text) => {
  if (!text.trim()) return;
  const message = JSON.parse(text) as Record<string, any>;
  record.received.push(message);
  save();
  if (message.type === "control_response") {
    pending.get(message.response?.request_id)?.(message.response);
    return;
  }
  if (message.type === "control_request") {
    const { request_id: id, request } = message;
    switch (request?.subtype) {
      case "initialize":
        structuredOutput = request.jsonSchema !== undefined;
        return reply(id, { commands: [], agents: [], output_style: "default", models: [], account: { apiKeySource: "none", apiProvider: "firstParty" } });
      case "interrupt":
        record.interrupts += 1;
        interrupted = true;
        reply(id, { still_queued: [] });
        interruptWaiter?.();
        return;
      case "set_model":
        model = request.model ?? model;
        return reply(id, { model });
      case "apply_flag_settings":
        model = request.settings?.model ?? model;
        return reply(id);
      case "rewind_conversation":
        return reply(id, seenUuids.has(request.target_message_uuid) ? { rewound: true, targetMessageUuid: request.target_message_uuid, prefillText: "", precedingAssistantUuid: null } : { rewound: false, error: "target not found", reason: "target_not_found" });
      case "end_session":
        reply(id);
        return process.exit(0);
      default:
        return write({ type: "control_response", response: { subtype: "error", request_id: id, error: `Unsupported control request subtype: ${String(request?.subtype)}` } });
    }
  }
  if (message.type === "user") {
    if (typeof message.uuid === "string") seenUuids.add(message.uuid);
    queue = queue.then(playRun, playRun);
  }
}).on("close", () => {
  // Like the CLI: stdin closed ends the process once the run in progress is written.
  void queue.finally(() => process.stdout.write("", () => process.exit(0)));
});
