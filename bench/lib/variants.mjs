/**
 * The ways one call is made, each against the same pinned CLI binary and the same scripted API:
 *   floor    the bare CLI with the runtime's exact flags, driven by bench/lib/floor.mjs
 *   ours     ClaudeCodeRuntime from dist/, cold (warm pool off): one fresh CLI per call
 *   warm     ClaudeCodeRuntime from dist/ with its default warm pool (a pre-started CLI per call shape)
 *   sdk      the official Agent SDK's query(), pointed at the same binary, same isolation options
 *   rfloor   the floor for reuse: one bare CLI per call shape serving many calls, rewound between them
 * Each runner returns `{ ms, resultMs?, doneMs? }`: `ms` is when the caller has the answer.
 *
 * `api` is what `startApiProcess` returns (or an in-process scripted API). With `api.firstParty` (the
 * default, lib/common.mjs `benchPath`) every variant takes the first-party path: a throwaway claude.ai
 * login in its temp HOME, `HTTPS_PROXY` and `NODE_EXTRA_CA_CERTS` naming the scripted API's front, no
 * base URL. Our runtime runs its interceptor there (its default: no `wire` option); the floors and the Agent SDK cannot
 * (the interceptor is the runtime's own), so they talk to the front directly: a ratio ours / floor on
 * this path includes what the interceptor costs per call. Without `api.firstParty` (`--base-url`):
 * `ANTHROPIC_BASE_URL` and a dummy key, no interceptor (an `apiEndpoint` is never intercepted).
 */
import { dist, DUMMY_API_KEY, importSdk, isolatedEnv, tempDir } from "./common.mjs";
import { runFloor } from "./floor.mjs";
import { startReuseFloor } from "./reuse-floor.mjs";
import {
  LOOP_BUDGET,
  LOOP_PROMPT,
  LOOP_REPLY,
  LOOP_STEPS,
  MODEL,
  OBJECT_PROMPT,
  OBJECT_VALUE,
  SYSTEM,
  TEXT_PROMPT,
  TEXT_REPLY,
  loopToolText,
  loopTools,
  objectSchema,
} from "./workloads.mjs";

function check(condition, message) {
  if (!condition) throw new Error(`bench: wrong answer: ${message}`);
}

let testing;

export async function loadLibrary() {
  testing = await import(dist("testing/index.js"));
  const [index, isolation, versions, outbound, env, objectPlan, tools] = await Promise.all([
    import(dist("index.js")),
    import(dist("claude-code/checks/isolation.js")),
    import(dist("binary/versions.js")),
    import(dist("protocol/outbound.js")),
    import(dist("transport/env.js")),
    import(dist("runtime/object-schema.js")),
    import(dist("mcp/tools.js")),
  ]);
  const cli = await index.resolveCli({});
  return { ...index, ...isolation, ...versions, ...outbound, ...env, ...objectPlan, ...tools, cli };
}

/** A fresh temp HOME; on the first-party path with the scripted claude.ai login in it. */
export function benchHome(api) {
  const home = tempDir("home");
  if (api.firstParty) {
    if (!testing) throw new Error("bench: loadLibrary() first");
    testing.writeScriptedLogin(home, { usedBefore: true });
  }
  return home;
}

/** The variables that send a CLI to the first-party front (none on the base-URL path). */
export const frontEnv = (api) => (api.firstParty ? { HTTPS_PROXY: api.firstParty.proxyUrl, NODE_EXTRA_CA_CERTS: api.firstParty.caFile } : {});

/** How a CLI without our runtime reaches the API: the front (first-party) or the base URL with a dummy key. */
const floorEndpoint = (api) => (api.firstParty ? {} : { apiEndpoint: { baseUrl: api.baseUrl, apiKey: DUMMY_API_KEY } });

/** Runtime options shared by every runtime the bench makes. */
export function runtimeOptions(api, extra = {}) {
  return {
    projectDir: tempDir("project"),
    models: { default: MODEL },
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: benchHome(api), ...frontEnv(api) },
    // First-party: the runtime's default (its interceptor on), as a user's runtime runs; base URL: an apiEndpoint, never intercepted.
    ...(api.firstParty ? {} : { apiEndpoint: { baseUrl: api.baseUrl, apiKey: DUMMY_API_KEY } }),
    timeoutMs: 120_000,
    // One process per call unless a variant asks for reuse (bench/reuse.mjs).
    reuse: false,
    ...extra,
  };
}

/** Calls through a ClaudeCodeRuntime. */
export function runtimeCalls(runtime) {
  return {
    async text() {
      const started = performance.now();
      const out = await runtime.generateTextResult({ prompt: TEXT_PROMPT, system: SYSTEM });
      const ms = performance.now() - started;
      check(out.text === TEXT_REPLY, `text ${JSON.stringify(out.text)}`);
      return { ms, warm: out.warmStart };
    },
    async object() {
      const started = performance.now();
      const out = await runtime.generateObjectResult({ prompt: OBJECT_PROMPT, system: SYSTEM, schema: objectSchema });
      const ms = performance.now() - started;
      check(out.object.rows === OBJECT_VALUE.rows, `object ${JSON.stringify(out.object)}`);
      return { ms, warm: out.warmStart };
    },
    async loop(extra = {}) {
      const started = performance.now();
      let lastStepMs = 0;
      const out = await runtime.runAgentLoop({
        modelRole: "default",
        systemPrompt: SYSTEM,
        userPrompt: LOOP_PROMPT,
        toolSet: loopTools,
        stepBudget: LOOP_BUDGET,
        // The last step finishes when the result line arrives.
        onStepFinish: () => void (lastStepMs = performance.now() - started),
        ...extra,
      });
      const ms = performance.now() - started;
      check(out.stopReason === "natural" && out.toolCalls.length === LOOP_STEPS && out.text === LOOP_REPLY, `loop ${out.stopReason} ${out.toolCalls.length} ${out.error?.message ?? ""}`);
      return { ms, resultMs: lastStepMs, toolCalls: out.toolCalls, transcriptPath: out.transcriptPath };
    },
  };
}

/** The bare CLI with the runtime's flags (the floor). */
export function floorCalls(lib, api) {
  const projectDir = tempDir("project");
  const env = lib.createKtxClaudeCodeEnv({ ...isolatedEnv(benchHome(api)), ...frontEnv(api) }, floorEndpoint(api));
  const prepared = lib.prepareToolSet(loopTools);
  const toolIds = prepared.map((tool) => lib.ktxToolId(tool.name));
  const jsonSchema = lib.planObjectSchema(objectSchema).jsonSchema;
  const base = { cliPath: lib.cli.path, env, cwd: projectDir };
  const args = (maxTurns, ids, structuredOutput) => lib.buildCliArgs({ facts: lib.cli.facts, model: MODEL, maxTurns, toolIds: ids, structuredOutput });
  const shaped = (r) => ({ ms: r.resultMs, resultMs: r.resultMs, doneMs: r.exitMs });
  return {
    async text() {
      const r = await runFloor({ ...base, args: args(1, [], false), initialize: lib.initializeRequest({ systemPrompt: SYSTEM, mcpServers: [] }), prompt: TEXT_PROMPT });
      check(r.result.result === TEXT_REPLY, "floor text");
      return shaped(r);
    },
    async object() {
      // Same turn limit as generateObject without tools (8).
      const r = await runFloor({ ...base, args: args(8, [], true), initialize: lib.initializeRequest({ systemPrompt: SYSTEM, jsonSchema, mcpServers: [] }), prompt: OBJECT_PROMPT });
      check(r.result.structured_output?.rows === OBJECT_VALUE.rows, "floor object");
      return shaped(r);
    },
    async loop() {
      const r = await runFloor({
        ...base,
        args: args(LOOP_BUDGET, toolIds, false),
        initialize: lib.initializeRequest({ systemPrompt: SYSTEM, mcpServers: ["ktx"] }),
        prompt: LOOP_PROMPT,
        tools: prepared,
        toolText: loopToolText,
      });
      check(r.result.result === LOOP_REPLY && r.result.num_turns === LOOP_STEPS + 1, `floor loop ${r.result.num_turns}`);
      return shaped(r);
    },
  };
}

/** The floor for reuse: a bare CLI per call shape, started once, rewound after every call. */
export function reuseFloorCalls(lib, api) {
  const projectDir = tempDir("project");
  const env = lib.createKtxClaudeCodeEnv({ ...isolatedEnv(benchHome(api)), ...frontEnv(api) }, floorEndpoint(api));
  const prepared = lib.prepareToolSet(loopTools);
  const toolIds = prepared.map((tool) => lib.ktxToolId(tool.name));
  const jsonSchema = lib.planObjectSchema(objectSchema).jsonSchema;
  const args = (maxTurns, ids, structuredOutput) => lib.buildCliArgs({ facts: lib.cli.facts, model: MODEL, maxTurns, toolIds: ids, structuredOutput });
  const base = { cliPath: lib.cli.path, env, cwd: projectDir };
  const floors = {
    text: startReuseFloor({ ...base, args: args(1, [], false), initialize: lib.initializeRequest({ systemPrompt: SYSTEM, mcpServers: [] }) }),
    object: startReuseFloor({ ...base, args: args(8, [], true), initialize: lib.initializeRequest({ systemPrompt: SYSTEM, jsonSchema, mcpServers: [] }) }),
    loop: startReuseFloor({ ...base, args: args(LOOP_BUDGET, toolIds, false), initialize: lib.initializeRequest({ systemPrompt: SYSTEM, mcpServers: ["ktx"] }), tools: prepared, toolText: loopToolText }),
  };
  return {
    pids: () => Object.values(floors).map((floor) => floor.pid),
    close: () => Promise.all(Object.values(floors).map((floor) => floor.close())),
    async text() {
      const r = await floors.text.call(TEXT_PROMPT);
      check(r.result.result === TEXT_REPLY, "reuse floor text");
      return { ms: r.ms };
    },
    async object() {
      const r = await floors.object.call(OBJECT_PROMPT);
      check(r.result.structured_output?.rows === OBJECT_VALUE.rows, "reuse floor object");
      return { ms: r.ms };
    },
    async loop() {
      const r = await floors.loop.call(LOOP_PROMPT);
      check(r.result.result === LOOP_REPLY && r.result.num_turns === LOOP_STEPS + 1, `reuse floor loop ${r.result.num_turns}`);
      return { ms: r.ms };
    },
  };
}

/** The Agent SDK's query() options with the same isolation as the runtime's flags (also bench/sessions.mjs). */
export function sdkOptions(lib, api) {
  const projectDir = tempDir("project");
  const env = {
    ...isolatedEnv(benchHome(api)),
    ...(api.firstParty ? frontEnv(api) : { ANTHROPIC_BASE_URL: api.baseUrl, ANTHROPIC_API_KEY: DUMMY_API_KEY }),
  };
  const facts = lib.cli.facts;
  const common = {
    pathToClaudeCodeExecutable: lib.cli.path,
    cwd: projectDir,
    env,
    model: MODEL,
    systemPrompt: SYSTEM,
    settingSources: [],
    tools: [],
    disallowedTools: [...facts.builtinTools],
    strictMcpConfig: true,
    persistSession: false,
    permissionMode: "dontAsk",
    // The same built-in plugin switch-off and slash-command switch-off as buildCliArgs.
    settings: { enabledPlugins: Object.fromEntries(facts.builtinPlugins.map((name) => [`${name}@builtin`, false])) },
    extraArgs: { "disable-slash-commands": null },
    // Deny-by-default permission answers, like the runtime (passes --permission-prompt-tool=stdio).
    canUseTool: async (name) => ({ behavior: "deny", message: `Tool ${name} is not available.` }),
    mcpServersDelivery: "argv",
    stderr: () => undefined,
  };
  return common;
}

/** The official Agent SDK's query(), with the same isolation as the runtime's flags. */
export async function sdkCalls(lib, api) {
  const { query, createSdkMcpServer, tool } = await importSdk();
  const common = sdkOptions(lib, api);
  const jsonSchema = lib.planObjectSchema(objectSchema).jsonSchema;
  const toolIds = loopTools.map((t) => lib.ktxToolId(t.name));
  // A fresh in-process MCP server per query, as a host would make for each call's tool set.
  const ktxServer = () =>
    createSdkMcpServer({
      name: "ktx",
      version: "1.0.0",
      tools: loopTools.map((t) =>
        tool(t.name, t.description, { item: t.inputSchema.shape.item }, async (args) => ({ content: [{ type: "text", text: loopToolText(t.name, args) }] })),
      ),
    });

  async function run(prompt, options) {
    const started = performance.now();
    let result;
    let resultMs;
    for await (const message of query({ prompt, options: { ...common, ...options } })) {
      if (message.type === "result" && resultMs === undefined) {
        resultMs = performance.now() - started;
        result = message;
      }
    }
    const doneMs = performance.now() - started;
    if (!result) throw new Error("sdk: no result");
    return { result, resultMs, doneMs };
  }
  const shaped = (r) => ({ ms: r.resultMs, resultMs: r.resultMs, doneMs: r.doneMs });
  return {
    async text() {
      const r = await run(TEXT_PROMPT, { maxTurns: 1 });
      check(r.result.result === TEXT_REPLY, `sdk text ${JSON.stringify(r.result)}`);
      return shaped(r);
    },
    async object() {
      const r = await run(OBJECT_PROMPT, { maxTurns: 8, outputFormat: { type: "json_schema", schema: jsonSchema } });
      check(r.result.structured_output?.rows === OBJECT_VALUE.rows, `sdk object ${JSON.stringify(r.result).slice(0, 300)}`);
      return shaped(r);
    },
    async loop() {
      const r = await run(LOOP_PROMPT, { maxTurns: LOOP_BUDGET, mcpServers: { ktx: ktxServer() }, allowedTools: toolIds });
      check(r.result.result === LOOP_REPLY && r.result.num_turns === LOOP_STEPS + 1, `sdk loop ${JSON.stringify(r.result).slice(0, 300)}`);
      return shaped(r);
    },
  };
}
