/**
 * Section 2: tool-call overhead — from a `tools/call` arriving to our reply being written — and where
 * a call's time goes. Three measurements:
 *   e2e           real agent loops through the runtime with `transcript: { dir }`; per tools/call, the
 *                 `in` record's offset to the `out` record of its control_response (includes the
 *                 transcript recorder's own work on that line)
 *   e2eNoRecorder the same loops through the internal executeRun with an observer that only takes
 *                 performance.now() per line (no redaction, no file): the recorder's share
 *   lineToLine    in process, no CLI: the CLI's tools/call line -> JSON.parse -> parseCliMessage ->
 *                 createKtxMcpBridge -> control_response -> JSON.stringify (the session's path minus I/O),
 *                 back to back ("hot") and 10 ms apart ("spaced", as calls really arrive)
 *   bridge        createKtxMcpBridge().handleMcpMessage alone, hot and spaced
 * plus a phase breakdown (spawn -> initialize reply -> system/init -> result -> exit) from the transcripts.
 *
 *   node bench/tool-overhead.mjs [--loops 6] [--texts 5] [--calls 3000] [--spaced 300]
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { argValue, cleanup, dist, emit, log, startApiProcess, summarize, tempDir } from "./lib/common.mjs";
import { loadLibrary, runtimeCalls, runtimeOptions } from "./lib/variants.mjs";
import { loopTools } from "./lib/workloads.mjs";

const loops = argValue("loops", 6);
const texts = argValue("texts", 5);
const directCalls = argValue("calls", 3000);
const spacedCalls = argValue("spaced", 300);
const SPACING_MS = 10;

const lib = await loadLibrary();
const { loadTranscript } = await import(dist("transcripts/reader.js"));
const { createKtxMcpBridge } = await import(dist("mcp/bridge.js"));
const { parseCliMessage } = await import(dist("protocol/messages.js"));
const { controlSuccess } = await import(dist("protocol/outbound.js"));
const { executeRun } = await import(dist("claude-code/run/run.js"));
const { silentLogger } = await import(dist("session/logger.js"));
const { ProcessPool } = await import(dist("claude-code/pool/process-pool.js"));

// ---------------------------------------------------------------- end to end, from transcripts

const api = await startApiProcess();
const transcriptDir = tempDir("transcripts");
const runtime = new lib.ClaudeCodeRuntime(runtimeOptions(api, { warm: false, transcript: { dir: transcriptDir } }));
const calls = runtimeCalls(runtime);
const callMs = { text: [], loop: [] };
const loopFiles = new Set();
// The first loop of the process: its first tools/call runs cold (nothing compiled yet).
const firstLoop = await calls.loop();
await calls.text();
for (let i = 0; i < loops; i += 1) {
  const out = await calls.loop();
  callMs.loop.push(out.ms);
  loopFiles.add(out.transcriptPath);
}
const textFiles = new Set();
for (let i = 0; i < texts; i += 1) {
  const before = new Set(readdirSync(transcriptDir));
  callMs.text.push((await calls.text()).ms);
  for (const file of readdirSync(transcriptDir)) if (!before.has(file)) textFiles.add(join(transcriptDir, file));
}

// The same loops without the recorder: an observer that only timestamps lines (internal API).
const e2eNoRecorder = [];
// On the first-party path these runs go to the front directly (executeRun has no interceptor of its own).
const runEnv = lib.createKtxClaudeCodeEnv(runtime.options.env, runtime.options.apiEndpoint ? { apiEndpoint: runtime.options.apiEndpoint } : {});
const prepared5 = lib.prepareToolSet(loopTools);
// One process per loop, as the recorded loops above (reuse off, no spares).
const pool = new ProcessPool(false, false, silentLogger);
for (let i = 0; i < loops; i += 1) {
  const arrived = new Map();
  const observer = {
    wire(direction, text) {
      const now = performance.now();
      if (direction === "in" && text.includes('"tools/call"')) arrived.set(JSON.parse(text).request_id, now);
      else if (direction === "out" && text.startsWith('{"type":"control_response"')) {
        const at = arrived.get(JSON.parse(text).response.request_id);
        if (at !== undefined) e2eNoRecorder.push(now - at);
      }
    },
  };
  const output = await executeRun({ cli: lib.cli, projectDir: runtime.options.projectDir, env: runEnv, apiKeyAllowed: true, model: "sonnet", maxTurns: 8, system: "", prompt: "loop", tools: prepared5, logger: silentLogger, observer }, pool);
  await output.reaped;
}
await pool.close();
await runtime.close();
await api.close();
log(`  tool overhead: ${loops} + ${loops} loops and ${texts} text calls recorded`);

const e2e = [];
const phases = { text: {}, loop: {}, first: {} };
const addPhase = (kind, name, value) => value !== undefined && (phases[kind][name] ??= []).push(value);

function analyse(path, kind) {
  const { records } = loadTranscript(path);
  const inAt = new Map();
  let initializeId;
  const mark = {};
  for (const record of records) {
    if (record.kind === "exit") mark.exit = record.t;
    if (record.kind !== "in" && record.kind !== "out") continue;
    const message = JSON.parse(record.text);
    if (record.kind === "out") {
      mark.firstOut ??= record.t;
      if (message.type === "control_request" && message.request?.subtype === "initialize") initializeId = message.request_id;
      if (message.type === "control_response") {
        const id = message.response.request_id;
        const arrived = inAt.get(id);
        if (arrived?.method === "tools/call") e2e.push(record.t - arrived.t);
      }
      if (message.type === "user") mark.promptSent ??= record.t;
      continue;
    }
    if (message.type === "control_request" && message.request?.subtype === "mcp_message") {
      inAt.set(message.request_id, { t: record.t, method: message.request.message?.method });
      if (message.request.message?.method === "tools/call") mark.firstToolCall ??= record.t;
    }
    if (message.type === "control_response" && message.response?.request_id === initializeId) mark.initializeReply = record.t;
    if (message.type === "system" && message.subtype === "init") mark.systemInit ??= record.t;
    if (message.type === "assistant") mark.firstAssistant ??= record.t;
    if (message.type === "result") mark.result = record.t;
  }
  addPhase(kind, "initializeWritten", mark.firstOut);
  addPhase(kind, "initializeReply", mark.initializeReply);
  addPhase(kind, "promptWritten", mark.promptSent);
  addPhase(kind, "systemInit", mark.systemInit);
  addPhase(kind, "firstAssistant", mark.firstAssistant);
  addPhase(kind, "firstToolCall", mark.firstToolCall);
  addPhase(kind, "result", mark.result);
  addPhase(kind, "exit", mark.exit);
  if (mark.exit !== undefined && mark.result !== undefined) addPhase(kind, "resultToExit", mark.exit - mark.result);
}
for (const path of loopFiles) analyse(path, "loop");
for (const path of textFiles) analyse(path, "text");
const measuredE2e = e2e.splice(0);
analyse(firstLoop.transcriptPath, "first");
const firstProcessCalls = e2e.splice(0);

// ---------------------------------------------------------------- in process: bridge, and line to line

const prepared = lib.prepareToolSet([loopTools[0]]);
const bridge = createKtxMcpBridge(prepared);
await bridge.handleMcpMessage("ktx", { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "claude-code", version: "2.1.330" } } });
await bridge.handleMcpMessage("ktx", { jsonrpc: "2.0", method: "notifications/initialized" });
await bridge.handleMcpMessage("ktx", { jsonrpc: "2.0", id: 1, method: "tools/list" });

const toolsCallLine = (i) =>
  JSON.stringify({
    type: "control_request",
    request_id: `req_${i}`,
    request: {
      subtype: "mcp_message",
      server_name: "ktx",
      message: { method: "tools/call", params: { name: "step_1", arguments: { item: `candidate-${i}` }, _meta: { "claudecode/toolUseId": `toolu_${i}`, progressToken: i } }, jsonrpc: "2.0", id: i + 2 },
    },
  });

const pause = (ms) => (ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : undefined);

async function timeBridge(n, gapMs = 0) {
  const out = [];
  for (let i = 0; i < n; i += 1) {
    await pause(gapMs);
    const message = { method: "tools/call", params: { name: "step_1", arguments: { item: `c${i}` }, _meta: { "claudecode/toolUseId": `toolu_${i}` } }, jsonrpc: "2.0", id: i + 2 };
    const started = performance.now();
    const reply = await bridge.handleMcpMessage("ktx", message);
    out.push(performance.now() - started);
    if (!reply || reply.error) throw new Error("bridge call failed");
  }
  return out;
}

async function timeLineToLine(n, gapMs = 0) {
  const out = [];
  let bytes = 0;
  for (let i = 0; i < n; i += 1) {
    await pause(gapMs);
    const line = toolsCallLine(i);
    const started = performance.now();
    const parsed = parseCliMessage(JSON.parse(line));
    const request = parsed.message;
    const reply = await bridge.handleMcpMessage(request.request.server_name, request.request.message);
    const written = `${JSON.stringify(controlSuccess(request.request_id, { mcp_response: reply }))}\n`;
    out.push(performance.now() - started);
    bytes += written.length;
  }
  if (bytes === 0) throw new Error("nothing written");
  return out;
}

await timeBridge(300); // warm-up
await timeLineToLine(300);
const bridgeMs = await timeBridge(directCalls);
const lineMs = await timeLineToLine(directCalls);
const bridgeSpacedMs = await timeBridge(spacedCalls, SPACING_MS);
const lineSpacedMs = await timeLineToLine(spacedCalls, SPACING_MS);
await bridge.close();
await cleanup();

const summarizePhases = (kind) => Object.fromEntries(Object.entries(phases[kind]).map(([name, values]) => [name, summarize(values)]));
emit({
  e2e: { toolCalls: summarize(measuredE2e), loops, note: "transcript in->out offsets; includes the recorder's work on the in line" },
  e2eNoRecorder: summarize(e2eNoRecorder),
  firstLoopOfProcess: firstProcessCalls.map((ms) => Math.round(ms * 1000) / 1000),
  lineToLine: { hot: summarize(lineMs), spaced: summarize(lineSpacedMs), spacingMs: SPACING_MS },
  bridge: { hot: summarize(bridgeMs), spaced: summarize(bridgeSpacedMs), spacingMs: SPACING_MS },
  phases: { text: summarizePhases("text"), loop: summarizePhases("loop") },
  callMs: { text: summarize(callMs.text), loop: summarize(callMs.loop) },
});
