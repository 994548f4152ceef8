/**
 * Section "usage": what one call costs in API requests and request bytes, for a one-turn text call,
 * a structured object and a 2-tool agent loop, on three paths against one recording scripted API:
 *   ours    ClaudeCodeRuntime (subscription endpoint: OAuth token, as a logged-in user runs it)
 *   sdk     the Agent SDK's query() as KTX's own claude-code backend runs it (system in front of the
 *           prompt for text and objects, maxTurns 1 / 5, no setting sources, skills, plugins or
 *           built-in tools, strict MCP, no persistence, dontAsk, deny by default), including the
 *           session-title request its CLI sends on every query() in KTX's environment (see below)
 *   sdkEssentialOnly  the same without that title request: what the SDK sends with
 *           CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1, which every CLI in this repository runs with
 *   direct  the Messages request KTX's anthropic backend makes (AiSdkKtxLlmRuntime over @ai-sdk/anthropic)
 * Bytes are the JSON request body, split into system, messages, tools and the rest. Not timed.
 *
 * The path (lib/common.mjs `benchPath`): by default the first-party one real users take. The scripted API
 * runs its first-party front; ours and the Agent SDK's CLI reach api.anthropic.com through it with a
 * throwaway claude.ai login (used before: the account cached in ~/.claude.json), ours behind the runtime's
 * interceptor (on by default). Every request is counted, the `GET /api/oauth/profile` a CLI sends at start
 * included, with its bytes as received (body, and header lines). `direct` goes to the base URL (the AI SDK
 * with an API key; its body is what it sends to api.anthropic.com). `--base-url`: ours with a subscription
 * endpoint (`CLAUDE_CODE_OAUTH_TOKEN` at the base URL), the old way.
 *
 * Reuse on this path (`reuse` in the result): `--reuse-calls` calls of each shape on fresh processes and the
 * same on one reused process, same HOME and project: what the reused calls share (session id), and what
 * else differs request by request (bodies and headers with per-call ids masked, betas, billing-line fields).
 *
 *   node bench/usage.mjs [--calls 3] [--reuse-calls 3] [--no-sdk] [--base-url]
 *
 * The Agent SDK's own bundled CLI instead of our pinned one (as KTX ships its backend: SDK 0.3.146 with
 * CLI 2.1.146): KTX_BENCH_SDK_CLI=bundled with KTX_BENCH_SDK_VERSION / KTX_BENCH_SDK_PREFIX (lib/common.mjs).
 */
import { argValue, benchPath, cleanup, DUMMY_API_KEY, dist, emit, hasFlag, importSdk, isolatedEnv, log, SDK_VERSION, sdkInstalled, tempDir } from "./lib/common.mjs";
import { benchHome, frontEnv, loadLibrary } from "./lib/variants.mjs";
import { compareReuse } from "./lib/reuse-wire.mjs";
import { OBJECT_PROMPT, OBJECT_VALUE, SYSTEM, TEXT_PROMPT, TEXT_REPLY, loopToolName, loopToolText, loopTools, objectSchema } from "./lib/workloads.mjs";

const calls = argValue("calls", 3);
const reuseCalls = argValue("reuse-calls", 3);
const firstParty = benchPath() === "first-party";
const withSdk = !hasFlag("no-sdk") && sdkInstalled();
const MODEL_ID = "claude-sonnet-4-6";
const LOOP_TOOLS = 2;
const LOOP_PROMPT = "Run both curation steps, one tool each, then summarise.";
const LOOP_REPLY = "Curated: both steps done.";
const tools = loopTools.slice(0, LOOP_TOOLS);
// The first words of the CLI's session-title system prompt (2.1.330; 2.1.146, the CLI of Agent SDK 0.3.146).
const TITLE_SYSTEM_MARKS = ["You are naming a coding session", "Generate a concise, sentence-case title"];
// The SDK's bundled CLI instead of ours (KTX_BENCH_SDK_CLI=bundled): KTX's backend as KTX ships it.
const SDK_BUNDLED_CLI = process.env.KTX_BENCH_SDK_CLI === "bundled";

// The scripted model: answers by what the request offers, like bench/lib/workloads.mjs, with 2 steps.
const isTitleRequest = (body) => {
  const system = JSON.stringify(body?.system ?? "");
  return TITLE_SYSTEM_MARKS.some((mark) => system.includes(mark));
};

function scripted(body) {
  // The session-title request: a title-shaped JSON answer, so the CLI takes the title and asks no more.
  if (isTitleRequest(body)) return { text: JSON.stringify({ title: "Billing page check" }) };
  const offered = (body?.tools ?? []).map((tool) => tool.name);
  if (offered.includes("StructuredOutput")) {
    // 2.1.330 ends the run at a valid StructuredOutput call; older CLIs (2.1.146) ask the model once more after it.
    const answered = (body.messages ?? []).some((m) => Array.isArray(m.content) && m.content.some((b) => b.type === "tool_result"));
    return answered ? { text: "Done." } : { toolCalls: [{ name: "StructuredOutput", input: OBJECT_VALUE }] };
  }
  // The AI SDK asks for a JSON answer through output_config.format (native structured outputs).
  if (body?.output_config?.format) return { text: JSON.stringify(OBJECT_VALUE) };
  const step = offered.find((name) => /step_\d+$/.test(name));
  if (step) {
    const prefix = step.slice(0, step.lastIndexOf("step_"));
    const done = (body.messages ?? []).flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === "tool_result").length;
    if (done < LOOP_TOOLS) return { toolCalls: [{ name: `${prefix}${loopToolName(done + 1)}`, input: { item: `candidate-${done + 1}` } }] };
    return { text: LOOP_REPLY };
  }
  return { text: TEXT_REPLY };
}

const { startScriptedMessagesApi, SCRIPTED_OAUTH_TOKEN } = await import(dist("testing/index.js"));
const api = await startScriptedMessagesApi((request) => scripted(request.body), { firstParty });
const lib = await loadLibrary();

const bytes = (value) => (value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value)));
function measure(requests) {
  const parts = { system: 0, messages: 0, tools: 0, other: 0, total: 0 };
  for (const { body } of requests) {
    const total = bytes(body);
    const system = bytes(body.system);
    const messages = bytes(body.messages);
    const toolBytes = bytes(body.tools);
    Object.assign(parts, { system: parts.system + system, messages: parts.messages + messages, tools: parts.tools + toolBytes, other: parts.other + total - system - messages - toolBytes, total: parts.total + total });
  }
  return parts;
}

/** The `<system-reminder>` blocks the CLI put into the first user turn: first line and bytes each. */
function reminders(request) {
  const first = request?.body?.messages?.[0];
  const blocks = Array.isArray(first?.content) ? first.content : [];
  return blocks
    .filter((block) => block.type === "text" && block.text.startsWith("<system-reminder>"))
    .map((block) => ({ firstLine: block.text.split("\n")[1] ?? "", bytes: bytes(block.text) }));
}

/** Bytes of a request as received: its header lines (request line and `name: value` lines) and its body. */
function wireBytes(request) {
  let headers = Buffer.byteLength(`${request.method} ${request.path} HTTP/1.1\r\n`) + 2;
  for (let i = 0; i < request.rawHeaders.length; i += 2) headers += Buffer.byteLength(`${request.rawHeaders[i]}: ${request.rawHeaders[i + 1]}\r\n`);
  return { headers, body: Buffer.byteLength(request.rawBody ?? "") };
}

const kindOf = (r) => (r.method === "POST" && r.path === "/v1/messages" ? "messages" : r.method === "GET" && r.path === "/api/oauth/profile" ? "profile" : `${r.method} ${r.path}`);

/** Per kind of request (messages, profile, anything else): requests per call and mean bytes per request. */
function byKind(requests, n) {
  const kinds = {};
  for (const r of requests) {
    const k = (kinds[kindOf(r)] ??= { requests: 0, headers: 0, body: 0 });
    const b = wireBytes(r);
    Object.assign(k, { requests: k.requests + 1, headers: k.headers + b.headers, body: k.body + b.body });
  }
  return Object.fromEntries(
    Object.entries(kinds).map(([kind, k]) => [kind, { requestsPerCall: Math.round((k.requests / n) * 100) / 100, headerBytesPerRequest: Math.round(k.headers / k.requests), bodyBytesPerRequest: Math.round(k.body / k.requests) }]),
  );
}

async function measureVariant(name, run) {
  const out = {};
  for (const workload of ["text", "object", "loop"]) {
    const from = api.requests.length;
    for (let i = 0; i < calls; i += 1) await run[workload]();
    const all = api.requests.slice(from);
    const requests = all.filter((r) => kindOf(r) === "messages" && r.turnIndex !== undefined);
    const parts = measure(requests);
    const callRequests = requests.filter((r) => !isTitleRequest(r.body));
    const per = (x) => Math.round(x / calls);
    const wire = all.reduce((sum, r) => {
      const b = wireBytes(r);
      return { headers: sum.headers + b.headers, body: sum.body + b.body };
    }, { headers: 0, body: 0 });
    out[workload] = {
      // Messages requests only (the figures the goals compare); every request of the call below.
      requestsPerCall: Math.round((requests.length / calls) * 100) / 100,
      requestBytesPerCall: per(parts.total),
      bytesPerCall: { system: per(parts.system), messages: per(parts.messages), tools: per(parts.tools), other: per(parts.other) },
      allRequestsPerCall: Math.round((all.length / calls) * 100) / 100,
      wireBytesPerCall: { headers: per(wire.headers), body: per(wire.body), total: per(wire.headers + wire.body) },
      byKind: byKind(all, calls),
      titleRequestsPerCall: Math.round(((requests.length - callRequests.length) / calls) * 100) / 100,
      thinking: callRequests[0]?.body?.thinking ?? null,
      ...(name === "direct" ? {} : { reminders: reminders(callRequests.find((r) => r.body?.messages?.length === 1) ?? callRequests[0]) }),
    };
    log(`  usage ${workload} ${name}: ${out[workload].allRequestsPerCall} requests (${out[workload].requestsPerCall} Messages), ${out[workload].requestBytesPerCall} Messages body bytes, ${out[workload].wireBytesPerCall.total} bytes on the wire per call`);
  }
  return out;
}

function check(condition, message) {
  if (!condition) throw new Error(`bench usage: wrong answer: ${message}`);
}

// ---------------------------------------------------------------- ours

// One HOME and project for ours, fresh and reused (the same user on the same machine: one device id).
const oursOptions = {
  projectDir: tempDir("project"),
  models: { default: "sonnet" },
  env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: benchHome(api), ...frontEnv(api) },
  // First-party: the runtime's default (its interceptor on); base URL: an apiEndpoint, never intercepted.
  ...(firstParty ? {} : { apiEndpoint: api.endpoint("subscription") }),
  warm: false,
};
const ours = new lib.ClaudeCodeRuntime({ ...oursOptions, reuse: false });
const loopParams = (systemPrompt) => ({ modelRole: "default", systemPrompt, userPrompt: LOOP_PROMPT, toolSet: tools, stepBudget: 4, telemetryTags: { operationName: "bench", unitKey: "wu-1", source: "RESEARCH" } });
const runsOn = (runtime, label) => ({
  text: async () => check((await runtime.generateText({ role: "triage", system: SYSTEM, prompt: TEXT_PROMPT })) === TEXT_REPLY, `${label} text`),
  object: async () => check((await runtime.generateObject({ system: SYSTEM, prompt: OBJECT_PROMPT, schema: objectSchema })).rows === OBJECT_VALUE.rows, `${label} object`),
  loop: async () => {
    const out = await runtime.runAgentLoop(loopParams(SYSTEM));
    check(out.stopReason === "natural" && out.toolCalls.length === LOOP_TOOLS, `${label} loop ${out.stopReason} ${out.error?.message ?? ""}`);
  },
});
const oursRun = runsOn(ours, "ours");

// ---------------------------------------------------------------- direct (KTX's anthropic backend)

const { createAnthropic } = await import("@ai-sdk/anthropic");
const anthropic = createAnthropic({ baseURL: `${api.baseUrl}/v1`, apiKey: DUMMY_API_KEY });
const { AiSdkKtxLlmRuntime } = await import(dist("ai-sdk/index.js"));
const direct = new AiSdkKtxLlmRuntime({ getModel: () => anthropic(MODEL_ID) });
const directRun = {
  text: async () => check((await direct.generateText({ role: "triage", system: SYSTEM, prompt: TEXT_PROMPT })) === TEXT_REPLY, "direct text"),
  object: async () => check((await direct.generateObject({ system: SYSTEM, prompt: OBJECT_PROMPT, schema: objectSchema })).rows === OBJECT_VALUE.rows, "direct object"),
  loop: async () => {
    const out = await direct.runAgentLoop(loopParams(SYSTEM));
    check(out.stopReason === "natural" && out.toolCalls.length === LOOP_TOOLS, `direct loop ${out.stopReason} ${out.error?.message ?? ""}`);
  },
};

// ---------------------------------------------------------------- the Agent SDK as KTX's backend uses it

/**
 * The Agent SDK as KTX's backend runs it. On every query() its CLI also asks the model for a session
 * title (../shared/protocol/request-overhead.md: 2 requests per one-turn call). The 2.1.330 binary
 * skips that request for Agent SDK sessions only when nonessential traffic is off
 * (CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC) or CLAUDE_CODE_DISABLE_TERMINAL_TITLE is set; KTX's
 * backend sets neither (it only strips credentials from the user's environment). The house rules
 * make every CLI here run with the first, so the automatic request cannot happen in this bench.
 * It is measured instead as the same CLI sends it when the SDK asks for it by name
 * (`generateSessionTitle`, the `generate_session_title` control request with `persist: false`): the
 * same function, the same system prompt, with the text the automatic one would name (the prompt).
 * `sdkEssentialOnly` counts the same calls without it.
 */
async function sdkRun(withTitle) {
  const { query, createSdkMcpServer, tool } = await importSdk();
  const projectDir = tempDir("project");
  const env = { ...isolatedEnv(benchHome(api)), ...(firstParty ? frontEnv(api) : { ANTHROPIC_BASE_URL: api.baseUrl, CLAUDE_CODE_OAUTH_TOKEN: SCRIPTED_OAUTH_TOKEN }) };
  const toolIds = tools.map((t) => lib.ktxToolId(t.name));
  // KTX 0.12's claude-code backend options (../shared/ktx/README.md), with the same pinned binary.
  const common = {
    ...(SDK_BUNDLED_CLI ? {} : { pathToClaudeCodeExecutable: lib.cli.path }),
    cwd: projectDir,
    env,
    model: MODEL_ID,
    settingSources: [],
    skills: [],
    plugins: [],
    tools: [],
    strictMcpConfig: true,
    disallowedTools: ["Bash", "Read", "Edit", "MultiEdit", "Write", "NotebookEdit", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "Task"],
    persistSession: false,
    permissionMode: "dontAsk",
    canUseTool: async (name) => ({ behavior: "deny", message: `Tool ${name} is not available.` }),
    stderr: () => undefined,
  };
  async function result(prompt, options) {
    const q = query({ prompt, options: { ...common, ...options } });
    const title = withTitle ? q.generateSessionTitle(prompt, { persist: false }) : undefined;
    let found;
    for await (const message of q) {
      if (message.type !== "result") continue;
      found = message;
      // The title request runs beside the call, as the automatic one does.
      if (title) check(typeof (await title) === "string", "sdk session title");
    }
    if (!found) throw new Error("sdk: no result");
    return found;
  }
  const server = () =>
    createSdkMcpServer({
      name: "ktx",
      version: "1.0.0",
      tools: tools.map((t) => tool(t.name, t.description, { item: t.inputSchema.shape.item }, async (args) => ({ content: [{ type: "text", text: loopToolText(t.name, args) }] }))),
    });
  return {
    // Text and object calls: system in front of the prompt, one user message.
    text: async () => check((await result(`${SYSTEM}\n\n${TEXT_PROMPT}`, { maxTurns: 1 })).result === TEXT_REPLY, "sdk text"),
    object: async () => {
      const r = await result(`${SYSTEM}\n\n${OBJECT_PROMPT}`, { maxTurns: 5, outputFormat: { type: "json_schema", schema: lib.planObjectSchema(objectSchema).jsonSchema } });
      check(r.structured_output?.rows === OBJECT_VALUE.rows, "sdk object");
    },
    loop: async () => {
      const r = await result(LOOP_PROMPT, { systemPrompt: SYSTEM, maxTurns: 4, mcpServers: { ktx: server() }, allowedTools: toolIds });
      check(r.result === LOOP_REPLY, `sdk loop ${JSON.stringify(r).slice(0, 200)}`);
    },
  };
}

const workloads = { text: { variants: {} }, object: { variants: {} }, loop: { variants: {} } };
const variants = { ours: oursRun, direct: directRun };
if (withSdk) {
  variants.sdk = await sdkRun(true);
  variants.sdkEssentialOnly = await sdkRun(false);
}
else log("  usage: Agent SDK not installed (.cache/bench-sdk); run with the latency or reuse section once, or without --no-sdk");
for (const [name, run] of Object.entries(variants)) {
  const measured = await measureVariant(name, run);
  for (const [workload, figures] of Object.entries(measured)) workloads[workload].variants[name] = figures;
}
for (const w of Object.values(workloads)) {
  const { ours: o, sdk: s, sdkEssentialOnly: e, direct: d } = w.variants;
  const ratio = (a, b) => Math.round((a / b) * 1000) / 1000;
  w.ratios = {
    ...(s ? { oursOverSdkRequests: ratio(o.requestsPerCall, s.requestsPerCall), oursOverSdkBytes: ratio(o.requestBytesPerCall, s.requestBytesPerCall) } : {}),
    ...(e ? { oursOverSdkEssentialOnlyRequests: ratio(o.requestsPerCall, e.requestsPerCall), oursOverSdkEssentialOnlyBytes: ratio(o.requestBytesPerCall, e.requestBytesPerCall) } : {}),
    oursOverDirectBytes: Math.round((o.requestBytesPerCall / d.requestBytesPerCall) * 1000) / 1000,
  };
}

// ---------------------------------------------------------------- reuse on this path: fresh processes against one reused process

const reused = new lib.ClaudeCodeRuntime({ ...oursOptions, reuse: {} });
const reusedRun = runsOn(reused, "reused");
const reuse = {};
for (const workload of ["text", "object", "loop"]) {
  const collect = async (run) => {
    const perCall = [];
    for (let i = 0; i < reuseCalls; i += 1) {
      const from = api.requests.length;
      await run[workload]();
      perCall.push(api.requests.slice(from));
    }
    return perCall;
  };
  const fresh = await collect(oursRun);
  const again = await collect(reusedRun);
  reuse[workload] = compareReuse(fresh, again);
  const r = reuse[workload];
  log(`  reuse ${workload}: session ids fresh ${r.sessionIds.fresh}/${reuseCalls}, reused ${r.sessionIds.reused}/${reuseCalls}; profile requests ${r.profileRequests.fresh} / ${r.profileRequests.reused}; body bytes equal ${r.bodyBytesEqual}; differing body paths ${r.bodyDifferences.length}, headers ${r.headerDifferences.length}; betas equal ${r.betasEqual}`);
}
if (reused.reuseStats) reuse.processes = reused.reuseStats;

await ours.close();
await reused.close();
const refused = api.firstParty?.refused.slice() ?? [];
await api.close();
await cleanup();
emit({ path: benchPath(), calls, reuseCalls, reuse, refused, model: MODEL_ID, loopTools: LOOP_TOOLS, sdk: withSdk ? { version: SDK_VERSION, cli: SDK_BUNDLED_CLI ? "bundled with the SDK" : lib.cli.path } : undefined, workloads });
