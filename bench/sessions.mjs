/**
 * Section: sessions. `host.createSession()` against the Agent SDK's streaming-input mode (`query({ prompt:
 * asyncIterable })`, one CLI process for all turns), on the same scripted API, interleaved in one run:
 *   start      a session's first turn (a one-turn text answer), from the session's creation (ours) or the
 *              query() call (SDK): ours from a spare (a host that pre-started one, `warm`); ours cold (a host
 *              past its first call, `warm: false, reuse: false`: a new CLI); ours on a new host (its first
 *              call: the CLI resolved and checked, then started); the SDK (its CLI starts with the query)
 *   turns      one long conversation each, turns alternating: a one-turn text turn and a 3-step tool turn
 *              (three tools, one after another, then the answer); per-turn p50 from send to the turn's result
 *   first delta  how long the first text delta of a turn takes from its stdout chunk arriving from the CLI
 *              (a 'data' listener on every CLI's stdout, added before anyone else's; the earliest point
 *              this process can see a line the CLI wrote) to the caller's iterator yielding it (ours: the
 *              turn's `text_delta` event; SDK: its `stream_event` with a text_delta)
 *   host CPU   this process's CPU per turn (user+sys), p50
 *
 * Ours runs on the first-party path behind its interceptor, its default (the SDK cannot: it goes to the
 * scripted API's front directly, so ours / SDK includes the interceptor); `--no-wire` runs ours with
 * `wire: false`. `--base-url` the old way.
 *
 *   node bench/sessions.mjs [--starts 5] [--turns 20] [--no-wire] [--base-url]
 */
import childProcess from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
import { loadavg } from "node:os";

// Before the library and the SDK load: every CLI's stdout gets our listener first, to time a chunk's arrival.
const watch = { armed: false, arrivedAt: undefined };
const originalSpawn = childProcess.spawn;
childProcess.spawn = function spawn(...args) {
  const child = originalSpawn.apply(this, args);
  child.stdout?.on("data", (chunk) => {
    if (watch.armed && watch.arrivedAt === undefined && chunk.includes('"text_delta"')) watch.arrivedAt = performance.now();
  });
  return child;
};
syncBuiltinESMExports();

const { argValue, benchPath, cleanup, dist, emit, hasFlag, importSdk, log, ratio, selfCpuMs, startApiProcess, summarize, waitChildrenGone, waitQuiet } = await import("./lib/common.mjs");
const { loadLibrary, runtimeOptions, sdkOptions } = await import("./lib/variants.mjs");
const { MODEL, SESSION_TEXT_PROMPT, SESSION_TOOL_PROMPT, SESSION_TOOL_REPLY, SESSION_TOOL_STEPS, SYSTEM, TEXT_REPLY, loopToolText, sessionTools } = await import("./lib/workloads.mjs");

const starts = argValue("starts", 5);
const turns = argValue("turns", 20);
const wire = !hasFlag("no-wire");

const api = await startApiProcess();
const lib = await loadLibrary();
const { ClaudeCodeHost } = await import(dist("index.js"));
const { query, createSdkMcpServer, tool } = await importSdk();
const started = performance.now();
const loads = [loadavg()[0]];

function check(condition, message) {
  if (!condition) throw new Error(`bench: wrong answer: ${message}`);
}

// ---------------------------------------------------------------- ours

function newHost(extra = {}) {
  // Without the runtime's role table and its `reuse: false` (a host reuses by default), unless asked for.
  const { models, reuse, ...options } = runtimeOptions(api, { ...(wire ? {} : { wire: false }), ...extra });
  return new ClaudeCodeHost({ ...options, ...(extra.reuse !== undefined ? { reuse: extra.reuse } : {}) });
}
const sessionOptions = { model: MODEL, system: SYSTEM, tools: sessionTools };

/** One turn of a session: time to the result, first-delta latency, host CPU. */
async function oursTurn(session, input) {
  const cpu = selfCpuMs();
  const at = performance.now();
  watch.arrivedAt = undefined;
  watch.armed = true;
  const turn = session.send(input);
  let deliveredAt;
  for await (const event of turn) if (event.type === "text_delta" && deliveredAt === undefined) deliveredAt = performance.now();
  const result = await turn.result;
  const ms = performance.now() - at;
  watch.armed = false;
  return { ms, hostCpuMs: selfCpuMs() - cpu, text: result.text, toolCalls: result.toolCalls.length, firstDeltaMs: deliveredAt !== undefined && watch.arrivedAt !== undefined ? deliveredAt - watch.arrivedAt : undefined };
}

// ---------------------------------------------------------------- the Agent SDK, streaming input

function sdkSession() {
  const pending = [];
  let wake;
  let ended = false;
  async function* input() {
    for (;;) {
      while (pending.length > 0) yield pending.shift();
      if (ended) return;
      await new Promise((resolve) => (wake = resolve));
    }
  }
  const server = createSdkMcpServer({
    name: "ktx",
    version: "1.0.0",
    tools: sessionTools.map((t) => tool(t.name, t.description, { item: t.inputSchema.shape.item }, async (args) => ({ content: [{ type: "text", text: loopToolText(t.name, args) }] }))),
  });
  const q = query({
    prompt: input(),
    options: { ...sdkOptions(lib, api), maxTurns: 10, includePartialMessages: true, mcpServers: { ktx: server }, allowedTools: sessionTools.map((t) => lib.ktxToolId(t.name)) },
  });
  const messages = q[Symbol.asyncIterator]();
  return {
    async send(text) {
      const cpu = selfCpuMs();
      const at = performance.now();
      watch.arrivedAt = undefined;
      watch.armed = true;
      pending.push({ type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" });
      wake?.();
      let deliveredAt;
      let toolCalls = 0;
      for (;;) {
        const { value, done } = await messages.next();
        if (done) throw new Error("sdk: the query ended before the turn's result");
        if (deliveredAt === undefined && value.type === "stream_event" && value.event?.type === "content_block_delta" && value.event.delta?.type === "text_delta") deliveredAt = performance.now();
        if (value.type === "assistant") toolCalls += (value.message?.content ?? []).filter((block) => block.type === "tool_use").length;
        if (value.type === "result") {
          const ms = performance.now() - at;
          watch.armed = false;
          return { ms, hostCpuMs: selfCpuMs() - cpu, text: value.result, toolCalls, firstDeltaMs: deliveredAt !== undefined && watch.arrivedAt !== undefined ? deliveredAt - watch.arrivedAt : undefined };
        }
      }
    },
    async close() {
      ended = true;
      wake?.();
      // The query ends once its input ends and the CLI exits.
      for (;;) if ((await messages.next()).done) break;
    },
  };
}

// ---------------------------------------------------------------- start: spare vs cold vs SDK

// A host past its first call (its CLI resolved and checked), with no process to reuse and no spare: each
// session on it starts a new CLI. A new host's first session pays the host's checks too (`newHost`).
const readyHost = newHost({ warm: false, reuse: false });
const primer = readyHost.createSession(sessionOptions);
await oursTurn(primer, SESSION_TEXT_PROMPT);
await primer.close();
const startVariants = {
  async cold() {
    const before = { ...readyHost.poolStats };
    const at = performance.now();
    const session = readyHost.createSession(sessionOptions);
    const out = await oursTurn(session, SESSION_TEXT_PROMPT);
    const ms = performance.now() - at;
    check(readyHost.poolStats.started === before.started + 1 && readyHost.poolStats.reusedCalls === before.reusedCalls && readyHost.poolStats.spareCalls === before.spareCalls, `cold: pool ${JSON.stringify(before)} -> ${JSON.stringify(readyHost.poolStats)}`);
    await session.close();
    return { ...out, ms };
  },
  async newHost() {
    const host = newHost({ warm: false });
    const at = performance.now();
    const out = await oursTurn(host.createSession(sessionOptions), SESSION_TEXT_PROMPT);
    const ms = performance.now() - at;
    await host.close();
    return { ...out, ms };
  },
  async spare() {
    // A host that has served a session of this launch has a spare booting; once it is idle, a new session starts on it.
    const host = newHost({ warm: { idleMs: 300_000 } });
    const first = host.createSession(sessionOptions);
    await oursTurn(first, SESSION_TEXT_PROMPT);
    // 400 ms without CPU: on a loaded machine a booting spare can go 120 ms unscheduled (no ticks) and look idle.
    for (const pid of host.warmIdlePids) await waitQuiet(pid, { quietMs: 400 });
    check(host.warmIdlePids.length === 1, `spare: ${host.warmIdlePids.length} idle spares`);
    const spareStarts = host.poolStats.spareCalls;
    const at = performance.now();
    const out = await oursTurn(host.createSession(sessionOptions), SESSION_TEXT_PROMPT);
    const ms = performance.now() - at;
    check(host.poolStats.spareCalls === spareStarts + 1, "spare: the session did not start on the spare");
    await host.close();
    return { ...out, ms };
  },
  async sdk() {
    const at = performance.now();
    const session = sdkSession();
    const out = await session.send(SESSION_TEXT_PROMPT);
    const ms = performance.now() - at;
    await session.close();
    return { ...out, ms };
  },
};
const startNames = Object.keys(startVariants);
const startMs = Object.fromEntries(startNames.map((name) => [name, []]));
const startCpu = Object.fromEntries(startNames.map((name) => [name, []]));
for (let round = 0; round < starts + 1; round += 1) {
  const shift = round % startNames.length;
  for (const name of [...startNames.slice(shift), ...startNames.slice(0, shift)]) {
    const out = await startVariants[name]();
    check(out.text === TEXT_REPLY, `start ${name}: ${JSON.stringify(out.text)}`);
    await waitChildrenGone();
    // The first round warms this process (module loading, the first compilations).
    if (round === 0) continue;
    startMs[name].push(out.ms);
    startCpu[name].push(out.hostCpuMs);
  }
}
loads.push(loadavg()[0]);
await readyHost.close();
log(`  sessions start: spare p50 ${summarize(startMs.spare).p50} ms, cold ${summarize(startMs.cold).p50} ms, new host ${summarize(startMs.newHost).p50} ms, SDK ${summarize(startMs.sdk).p50} ms`);

// ---------------------------------------------------------------- turns: one conversation each

const host = newHost({ warm: false });
const ours = host.createSession(sessionOptions);
const sdk = sdkSession();
const runners = { ours: (input) => oursTurn(ours, input), sdk: (input) => sdk.send(input) };
const kinds = { text: SESSION_TEXT_PROMPT, tools: SESSION_TOOL_PROMPT };
const samples = Object.fromEntries(["ours", "sdk"].map((name) => [name, { text: { ms: [], hostCpuMs: [] }, tools: { ms: [], hostCpuMs: [] }, firstDeltaMs: [] }]));
for (let i = 0; i < turns + 2; i += 1) {
  for (const kind of ["text", "tools"]) {
    for (const name of i % 2 === 0 ? ["ours", "sdk"] : ["sdk", "ours"]) {
      const out = await runners[name](kinds[kind]);
      if (kind === "text") check(out.text === TEXT_REPLY, `${name} text turn: ${JSON.stringify(out.text)}`);
      else check(out.text === SESSION_TOOL_REPLY && out.toolCalls === SESSION_TOOL_STEPS, `${name} tool turn: ${out.toolCalls} calls, ${JSON.stringify(out.text)}`);
      // The first two rounds are the conversations' start and the first compilations.
      if (i < 2) continue;
      samples[name][kind].ms.push(out.ms);
      samples[name][kind].hostCpuMs.push(out.hostCpuMs);
      if (out.firstDeltaMs !== undefined) samples[name].firstDeltaMs.push(out.firstDeltaMs);
    }
  }
}
loads.push(loadavg()[0]);
const oursPid = host.reusePids;
await ours.close();
await host.close();
await sdk.close();
await api.close();
await cleanup();

const stats = (s) => ({ ms: summarize(s.ms), hostCpuMsP50: summarize(s.hostCpuMs).p50 });
const result = {
  path: benchPath(),
  interceptor: wire ? "on" : "off (wire: false, --no-wire)",
  starts,
  turns,
  seconds: Math.round((performance.now() - started) / 100) / 10,
  loadavg1m: { min: Math.min(...loads), max: Math.max(...loads) },
  start: Object.fromEntries(startNames.map((name) => [name, { ms: summarize(startMs[name]), hostCpuMsP50: summarize(startCpu[name]).p50 }])),
  turnsBy: Object.fromEntries(["ours", "sdk"].map((name) => [name, { text: stats(samples[name].text), tools: stats(samples[name].tools), firstDeltaMs: summarize(samples[name].firstDeltaMs) }])),
  oursProcesses: oursPid.length,
};
result.ratios = {
  spareOverSdk: ratio(result.start.spare.ms.p50, result.start.sdk.ms.p50),
  coldOverSdk: ratio(result.start.cold.ms.p50, result.start.sdk.ms.p50),
  newHostOverSdk: ratio(result.start.newHost.ms.p50, result.start.sdk.ms.p50),
  textTurnOursOverSdk: ratio(result.turnsBy.ours.text.ms.p50, result.turnsBy.sdk.text.ms.p50),
  toolTurnOursOverSdk: ratio(result.turnsBy.ours.tools.ms.p50, result.turnsBy.sdk.tools.ms.p50),
};
log(`  sessions turns: text ours ${result.turnsBy.ours.text.ms.p50} / SDK ${result.turnsBy.sdk.text.ms.p50} ms; tools ours ${result.turnsBy.ours.tools.ms.p50} / SDK ${result.turnsBy.sdk.tools.ms.p50} ms; first delta ours ${result.turnsBy.ours.firstDeltaMs.p50} / SDK ${result.turnsBy.sdk.firstDeltaMs.p50} ms`);
emit(result);
