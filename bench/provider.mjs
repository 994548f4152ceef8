/**
 * Section: the AI SDK provider. Our `ktx-claude-code/provider` against the peer `ai-sdk-provider-claude-code`
 * (the version for `ai` 6, lib/common.mjs `PEER_VERSION`, installed into .cache/bench-peer and pointed at the
 * same pinned CLI binary with `pathToClaudeCodeExecutable`), both driven by `ai` 6's `generateText` on the
 * same scripted API, interleaved in one run:
 *   cold      one-turn generateText on a new CLI: ours on a provider past its first call with `reuse: false`,
 *             `warm: false`; also a new provider's first call (`newProvider`: its host's checks and its
 *             interceptor's start too; first-party: `newNowire`, the same with the interceptor off); the peer
 *             (every call of its starts a new CLI)
 *   repeated  one-turn generateText again and again on one provider (ours: its process reused, rewound)
 *   requests  Messages requests (and requests of any path) the API received per one-turn call
 *   loop      a 5-step loop of tools the app executes (`tools` with `execute`, `stopWhen: stepCountIs(8)`) on
 *             our provider, against our runtime's `runAgentLoop` with the same tools as host tools (both on
 *             reused processes). The peer cannot run tools the app executes: it ignores the call's `tools`
 *             with an `unsupported` warning (its README), so it has no loop figure here.
 *   host CPU  this process's CPU per call (user+sys), p50
 *
 * First-party path by default: ours behind its interceptor (its default), the peer straight to the front (it
 * has none); `--base-url` the old way. Not part of `npm test`.
 *
 *   node bench/provider.mjs [--cold 5] [--calls 20] [--loops 10] [--base-url]
 */
import { loadavg } from "node:os";
import { DUMMY_API_KEY, PEER_VERSION, argValue, benchPath, cleanup, dist, emit, ensurePeer, importPeer, isolatedEnv, log, ratio, selfCpuMs, startApiProcess, summarize, tempDir, waitChildrenGone } from "./lib/common.mjs";
import { benchHome, frontEnv, loadLibrary, runtimeCalls, runtimeOptions } from "./lib/variants.mjs";
import { LOOP_BUDGET, LOOP_PROMPT, LOOP_REPLY, LOOP_STEPS, MODEL, SYSTEM, TEXT_PROMPT, TEXT_REPLY, loopTools } from "./lib/workloads.mjs";

const coldRounds = argValue("cold", 5);
const calls = argValue("calls", 20);
const loops = argValue("loops", 10);

ensurePeer();
const api = await startApiProcess();
const lib = await loadLibrary();
const { generateText, stepCountIs, tool } = await import("ai");
const { createClaudeCode } = await import(dist("provider/index.js"));
const peer = await importPeer();
const started = performance.now();
const loads = [loadavg()[0]];

function check(condition, message) {
  if (!condition) throw new Error(`bench: wrong answer: ${message}`);
}

// ---------------------------------------------------------------- the two providers

/** Ours: its own host per provider, as an app makes it (`createClaudeCode({ projectDir, … })`). */
function ours(extra = {}) {
  // Without the runtime's role table (the provider takes a model id per call) and its `reuse: false`: the provider reuses, as by default.
  const { models, reuse, ...options } = runtimeOptions(api, { warm: false, ...extra });
  return createClaudeCode({ ...options, ...(extra.reuse !== undefined ? { reuse: extra.reuse } : {}) });
}

/** The peer: the same binary, temp HOME (the same login on the first-party path), isolation as the Agent SDK variant's. */
function theirs() {
  const facts = lib.cli.facts;
  // The peer passes variables named ANTHROPIC_* / CLAUDE_* from this process on; none of them may reach its CLI.
  const inherited = Object.fromEntries(Object.keys(process.env).filter((key) => /^(ANTHROPIC_|CLAUDE_)/.test(key)).map((key) => [key, undefined]));
  const env = { ...inherited, ...isolatedEnv(benchHome(api)), ...(api.firstParty ? frontEnv(api) : { ANTHROPIC_BASE_URL: api.baseUrl, ANTHROPIC_API_KEY: DUMMY_API_KEY }) };
  return peer.createClaudeCode({
    defaultSettings: {
      pathToClaudeCodeExecutable: lib.cli.path,
      cwd: tempDir("project"),
      env,
      settingSources: [],
      tools: [],
      disallowedTools: [...facts.builtinTools],
      strictMcpConfig: true,
      persistSession: false,
      permissionMode: "dontAsk",
      settings: { enabledPlugins: Object.fromEntries(facts.builtinPlugins.map((name) => [`${name}@builtin`, false])) },
      extraArgs: { "disable-slash-commands": null },
      maxTurns: 1,
    },
  });
}

/** One one-turn generateText: latency to the answer and this process's CPU over it. */
async function oneTurn(model) {
  const cpu = selfCpuMs();
  const at = performance.now();
  const out = await generateText({ model, system: SYSTEM, prompt: TEXT_PROMPT });
  const ms = performance.now() - at;
  check(out.text === TEXT_REPLY, `text ${JSON.stringify(out.text)}`);
  return { ms, hostCpuMs: selfCpuMs() - cpu, pool: out.providerMetadata?.["claude-code"]?.pool };
}

// ---------------------------------------------------------------- cold: a new provider's first call

// ours: a provider past its first call (its CLI checked, its interceptor up) that reuses nothing (`reuse: false`),
// so each call starts a new CLI, as each of the peer's does. newProvider: a new provider's first call (the
// host's checks and its interceptor's start too); first-party path: newNowire, the same with the interceptor off.
const coldNames = api.firstParty ? ["ours", "newProvider", "newNowire", "peer"] : ["ours", "newProvider", "peer"];
const readyProvider = ours({ reuse: false });
await oneTurn(readyProvider(MODEL));
const cold = Object.fromEntries(coldNames.map((name) => [name, { ms: [], hostCpuMs: [] }]));
for (let round = 0; round < coldRounds + 1; round += 1) {
  const shift = round % coldNames.length;
  const order = [...coldNames.slice(shift), ...coldNames.slice(0, shift)];
  for (const name of order) {
    const provider = name === "peer" ? theirs() : name === "ours" ? readyProvider : ours(name === "newNowire" ? { wire: false } : {});
    const out = await oneTurn(provider(MODEL));
    if (name !== "peer") check(out.pool === "cold", `${name}: pool ${out.pool}`);
    if (name === "newProvider" || name === "newNowire") await provider.close();
    await waitChildrenGone();
    // The first round warms this process (module loading, the first compilations).
    if (round === 0) continue;
    cold[name].ms.push(out.ms);
    cold[name].hostCpuMs.push(out.hostCpuMs);
  }
}
await readyProvider.close();
loads.push(loadavg()[0]);
log(`  provider cold: ours p50 ${summarize(cold.ours.ms).p50} ms, a new provider's first call ${summarize(cold.newProvider.ms).p50} ms${cold.newNowire ? ` (interceptor off ${summarize(cold.newNowire.ms).p50} ms)` : ""}, peer p50 ${summarize(cold.peer.ms).p50} ms`);

// ---------------------------------------------------------------- repeated: one provider, call after call

const oursProvider = ours();
const peerProvider = theirs();
// The peer's model resumes its previous call's session on its next call (and sessions are not persisted here),
// so each of its calls gets a new model: one-turn calls, not a growing conversation. Ours: one model for all.
const oursModel = oursProvider(MODEL);
const models = { ours: () => oursModel, peer: () => peerProvider(MODEL) };
const keep = () => oursProvider.host.reusePids;
const repeated = { ours: { ms: [], hostCpuMs: [], requests: [], all: [] }, peer: { ms: [], hostCpuMs: [], requests: [], all: [] } };
// The first calls start processes and compile code; not the repeated state.
for (let i = 0; i < 3; i += 1) {
  for (const name of ["ours", "peer"]) await oneTurn(models[name]());
  await waitChildrenGone(keep());
}
for (let i = 0; i < calls; i += 1) {
  const order = i % 2 === 0 ? ["ours", "peer"] : ["peer", "ours"];
  for (const name of order) {
    const before = await api.counts();
    const out = await oneTurn(models[name]());
    if (name === "ours") check(out.pool === "reused", `ours repeated: pool ${out.pool}`);
    // The peer's CLI exits after its call; a request it sends on its way out is still its call's.
    await waitChildrenGone(keep());
    const after = await api.counts();
    repeated[name].ms.push(out.ms);
    repeated[name].hostCpuMs.push(out.hostCpuMs);
    repeated[name].requests.push(after.messages - before.messages);
    repeated[name].all.push(after.all - before.all);
  }
}
loads.push(loadavg()[0]);
log(`  provider repeated: ours p50 ${summarize(repeated.ours.ms).p50} ms, peer p50 ${summarize(repeated.peer.ms).p50} ms`);

// ---------------------------------------------------------------- loop: tools the app executes vs host tools

// The same five tools: for the AI SDK with `execute` (the app runs them between steps), and for runAgentLoop as host tools.
const appTools = Object.fromEntries(loopTools.map((t) => [t.name, tool({ description: t.description, inputSchema: t.inputSchema, execute: async (args) => t.execute(args) })]));
const runtime = new lib.ClaudeCodeRuntime(runtimeOptions(api, { reuse: {}, warm: false }));
const hostLoop = runtimeCalls(runtime).loop;
async function appLoop() {
  const cpu = selfCpuMs();
  const at = performance.now();
  const out = await generateText({ model: oursModel, system: SYSTEM, prompt: LOOP_PROMPT, tools: appTools, stopWhen: stepCountIs(LOOP_BUDGET) });
  const ms = performance.now() - at;
  const toolSteps = out.steps.filter((step) => step.finishReason === "tool-calls").length;
  check(out.text === LOOP_REPLY && toolSteps === LOOP_STEPS && out.steps.length === LOOP_STEPS + 1, `app loop: ${toolSteps} tool steps of ${out.steps.length}, ${JSON.stringify(out.text)}`);
  return { ms, hostCpuMs: selfCpuMs() - cpu };
}
async function runtimeLoop() {
  const cpu = selfCpuMs();
  const out = await hostLoop();
  return { ms: out.ms, hostCpuMs: selfCpuMs() - cpu };
}
const loop = { app: { ms: [], hostCpuMs: [] }, host: { ms: [], hostCpuMs: [] } };
for (let i = 0; i < 3; i += 1) {
  await appLoop();
  await runtimeLoop();
}
for (let i = 0; i < loops; i += 1) {
  const order = i % 2 === 0 ? ["app", "host"] : ["host", "app"];
  for (const name of order) {
    const out = name === "app" ? await appLoop() : await runtimeLoop();
    loop[name].ms.push(out.ms);
    loop[name].hostCpuMs.push(out.hostCpuMs);
  }
}
loads.push(loadavg()[0]);
log(`  provider loop: app-executed p50 ${summarize(loop.app.ms).p50} ms, runAgentLoop p50 ${summarize(loop.host.ms).p50} ms`);

const interceptor = oursProvider.host.interceptor;
await oursProvider.close();
await runtime.close();
await api.close();
await cleanup();

const stats = (s) => ({ ms: summarize(s.ms), hostCpuMsP50: summarize(s.hostCpuMs).p50 });
const perCall = (values) => Math.round((values.reduce((a, b) => a + b, 0) / values.length) * 100) / 100;
const result = {
  path: benchPath(),
  interceptor,
  peer: `ai-sdk-provider-claude-code@${PEER_VERSION}`,
  calls,
  coldRounds,
  loops,
  seconds: Math.round((performance.now() - started) / 100) / 10,
  loadavg1m: { min: Math.min(...loads), max: Math.max(...loads) },
  cold: Object.fromEntries(coldNames.map((name) => [name, stats(cold[name])])),
  repeated: Object.fromEntries(["ours", "peer"].map((name) => [name, { ...stats(repeated[name]), requestsPerCall: perCall(repeated[name].requests), allRequestsPerCall: perCall(repeated[name].all) }])),
  loop: { app: stats(loop.app), host: stats(loop.host), peer: "not measured: the peer ignores the tools an app passes (unsupported warning) and cannot run tools the app executes" },
};
result.ratios = {
  repeatedPeerOverOurs: ratio(result.repeated.peer.ms.p50, result.repeated.ours.ms.p50),
  coldOursOverPeer: ratio(result.cold.ours.ms.p50, result.cold.peer.ms.p50),
  newProviderOverPeer: ratio(result.cold.newProvider.ms.p50, result.cold.peer.ms.p50),
  appLoopOverRuntimeLoop: ratio(result.loop.app.ms.p50, result.loop.host.ms.p50),
};
emit(result);
