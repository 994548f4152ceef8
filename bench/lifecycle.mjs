/**
 * Section: one process lifecycle. Counted, not timed: Messages requests at the scripted API, pool
 * counters, and the resident memory of the idle CLI processes.
 *   models    `--alternating` one-turn calls of one shape alternating triage (haiku) and default (sonnet)
 *             on the defaults: Messages requests per call (a model switch must cost none)
 *   sequence  a KTX-shaped sequence — stages, each with its own system prompt, tools and role — run on the
 *             defaults and under other idle budgets: reused calls, spares taken, cold starts, idle RSS after
 *   shapes4   four one-turn calls of four shapes on the defaults: idle processes and their RSS after
 *
 *   node bench/lifecycle.mjs [--alternating 12] [--budgets 1,2,3,4]
 */
import { argValue, benchPath, cleanup, emit, log, sleep } from "./lib/common.mjs";
import { loadLibrary, runtimeOptions } from "./lib/variants.mjs";
import { OBJECT_PROMPT, TEXT_PROMPT, loopTools, objectSchema, scriptedTurn } from "./lib/workloads.mjs";

const alternating = argValue("alternating", 12);
const budgets = String(argValue("budgets", "1,2,3,4")).split(",").map(Number);
const lib = await loadLibrary();
const { startScriptedMessagesApi } = await import(new URL("../dist/testing/index.js", import.meta.url).href);
// First-party by default (lib/common.mjs `benchPath`): the front, a login per HOME, the interceptor on; `--base-url` the old way.
const api = await startScriptedMessagesApi((request) => scriptedTurn(request.body), { firstParty: benchPath() === "first-party" });
const models = { default: "sonnet", triage: "haiku", curator: "sonnet", candidateExtraction: "haiku", reconcile: "sonnet" };
// Defaults everywhere but these: the scripted API, an empty HOME and a temp project (runtimeOptions).
const defaults = (extra = {}) => {
  // runtimeOptions turns reuse off for the other sections; here the runtime's own default applies unless asked.
  const { reuse: _off, ...options } = runtimeOptions(api, { models });
  return { ...options, ...extra };
};
const idleRss = (runtime) => Math.round(runtime.idleMemory().reduce((sum, item) => sum + item.rssMiB, 0));

// ---------------------------------------------------------------- models: alternating roles on one shape

const switching = new lib.ClaudeCodeRuntime(defaults());
const before = api.messageRequests.length;
for (let i = 0; i < alternating; i += 1) await switching.generateText({ role: i % 2 === 0 ? "triage" : "default", system: "Triage or describe.", prompt: TEXT_PROMPT });
const requests = api.messageRequests.length - before;
const modelsSeen = [...new Set(api.messageRequests.slice(before).map((request) => request.body.model))];
await switching.close();
const modelSection = { calls: alternating, requests, requestsPerCall: Math.round((requests / alternating) * 100) / 100, models: modelsSeen };
log(`  alternating models: ${requests} requests for ${alternating} calls (${modelsSeen.join(", ")})`);

// ---------------------------------------------------------------- sequence: a KTX-shaped ingest under idle budgets

/** Stages in KTX's order; a work-unit stage alternates extraction and curation the way stage 3 does. */
function ktxSequence(runtime) {
  const text = (role, system) => () => runtime.generateTextResult({ role, system, prompt: TEXT_PROMPT });
  const object = (role, system) => () => runtime.generateObjectResult({ role, system, prompt: OBJECT_PROMPT, schema: objectSchema });
  const loop = (role, system) => () => runtime.runAgentLoop({ modelRole: role, systemPrompt: system, userPrompt: "Curate.", toolSet: loopTools, stepBudget: 8, telemetryTags: { unitKey: "u" } });
  const repeat = (n, ...calls) => Array.from({ length: n }, () => calls).flat();
  return [
    ...repeat(6, text("default", "Describe this table.")),
    ...repeat(6, text("triage", "Is this page relevant?")),
    ...repeat(4, object("candidateExtraction", "Extract candidates."), loop("curator", "Curate the candidates.")),
    ...repeat(3, object("reconcile", "Reconcile the memory.")),
  ];
}

async function runSequence(extra) {
  const runtime = new lib.ClaudeCodeRuntime(defaults(extra));
  const calls = ktxSequence(runtime);
  const at = performance.now();
  for (const call of calls) await call();
  const wallMs = Math.round(performance.now() - at);
  // Spares boot in the background; the budget is checked again once they have grown.
  await sleep(2_500);
  const { started, reusedCalls, spareCalls } = runtime.poolStats;
  const out = { calls: calls.length, reused: reusedCalls, spareStarts: spareCalls, cold: started - spareCalls, wallMs, idleProcesses: runtime.idleMemory().length, idleRssMiB: idleRss(runtime) };
  await runtime.close();
  return out;
}

const sequence = { defaults: await runSequence({}) };
log(`  KTX-shaped sequence, defaults: ${JSON.stringify(sequence.defaults)}`);
sequence.cold = await runSequence({ reuse: false, warm: false });
log(`  KTX-shaped sequence, reuse and spares off: ${JSON.stringify(sequence.cold)}`);
for (const maxIdle of budgets) {
  sequence[`maxIdle${maxIdle}`] = await runSequence({ reuse: { maxIdle, maxIdleMiB: 100_000 } });
  log(`  KTX-shaped sequence, maxIdle ${maxIdle} (no memory cap): ${JSON.stringify(sequence[`maxIdle${maxIdle}`])}`);
}

// ---------------------------------------------------------------- shapes4: four shapes, then idle

const four = new lib.ClaudeCodeRuntime(defaults());
for (const [index, role] of ["default", "triage", "curator", "reconcile"].entries()) await four.generateText({ role, system: `Stage ${index}.`, prompt: TEXT_PROMPT });
await sleep(2_500);
const shapes4 = { idleProcesses: four.idleMemory().length, idleRssMiB: idleRss(four), perProcessMiB: four.idleMemory().map((item) => Math.round(item.rssMiB)) };
await four.close();
log(`  four shapes on the defaults: ${shapes4.idleProcesses} idle processes, ${shapes4.idleRssMiB} MiB`);

await api.close();
await cleanup();
emit({ models: modelSection, sequence, shapes4 });
