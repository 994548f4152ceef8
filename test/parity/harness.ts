/**
 * One scenario, two runtimes: `ClaudeCodeRuntime` (the real pinned CLI) and `AiSdkKtxLlmRuntime`
 * (`ai` + `@ai-sdk/anthropic`), both built by `createKtxLlmRuntime` and pointed at their own
 * scripted Messages API started from the same script. The script is a function of the request:
 * tool names follow what the request offers (`mcp__ktx__lookup` to the CLI, `lookup` to the AI SDK)
 * and an object answer is a `StructuredOutput` call when the CLI offers that tool, JSON text
 * otherwise (the AI SDK asks for JSON through `output_config.format`).
 */
import { createAnthropic } from "@ai-sdk/anthropic";
import { ClaudeCodeError, type RunLoopResult, type StepFinishEvent, type ToolCallRecord } from "../../src/index.js";
import { type CreateKtxLlmRuntimeOptions, type KtxLlmRuntime, createKtxLlmRuntime } from "../../src/ai-sdk/index.js";
import { type RecordedRequest, type ScriptedApiOptions, type ScriptedMessagesApi, type ScriptedTurn, turn } from "../../src/testing/scripted-api.js";
import { scriptedApi, tempDir, testEnv, toolResultsIn } from "../support.js";

export const RUNTIMES = ["claude-code", "ai-sdk"] as const;
export type RuntimeKind = (typeof RUNTIMES)[number];

/** A full id, so the AI SDK knows the model's capabilities and the CLI reports the same id. */
export const MODEL = "claude-sonnet-5-5";
export const API_KEY = "sk-test-scripted";

export interface TurnContext {
  request: RecordedRequest;
  turnIndex: number;
  /** The name under which the request offers KTX tool `name`. */
  tool(name: string): string;
  /** A call of KTX tool `name`. */
  call(name: string, input: unknown): { name: string; input: unknown };
  /** The model's structured answer, in the form this request asks for. */
  object(value: unknown): ScriptedTurn;
  /** Tool names the request offers. */
  offered: string[];
}

export type ParityScript = (context: TurnContext) => ScriptedTurn;

export function contextFor(request: RecordedRequest, turnIndex: number): TurnContext {
  const offered: string[] = (request.body?.tools ?? []).map((t: { name: string }) => t.name);
  const tool = (name: string) => (offered.includes(`mcp__ktx__${name}`) ? `mcp__ktx__${name}` : name);
  return {
    request,
    turnIndex,
    offered,
    tool,
    call: (name, input) => ({ name: tool(name), input }),
    object: (value) => (offered.includes("StructuredOutput") ? turn.object(value) : turn.text(JSON.stringify(value))),
  };
}

export interface Side {
  kind: RuntimeKind;
  api: ScriptedMessagesApi;
  runtime: KtxLlmRuntime;
}

export interface SideOptions {
  promptCaching?: Record<string, unknown>;
  models?: Record<string, string>;
  extra?: Partial<CreateKtxLlmRuntimeOptions>;
  apiOptions?: ScriptedApiOptions;
}

export async function side(kind: RuntimeKind, script: ParityScript, options: SideOptions = {}): Promise<Side> {
  const api = await scriptedApi((request, turnIndex) => script(contextFor(request, turnIndex)), options.apiOptions);
  const models = { default: MODEL, ...options.models };
  const config = {
    provider: { backend: kind === "claude-code" ? "claude-code" : "anthropic" },
    models,
    ...(options.promptCaching ? { promptCaching: options.promptCaching } : {}),
  };
  const projectDir = tempDir("parity");
  const runtime =
    kind === "claude-code"
      ? createKtxLlmRuntime(config, {
          projectDir,
          env: testEnv(),
          apiEndpoint: { baseUrl: api.baseUrl, apiKey: API_KEY },
          idleTimeoutMs: 30_000,
          warm: false, reuse: false,
          ...options.extra,
        })
      : createKtxLlmRuntime(config, {
          projectDir,
          getModel: (role) => createAnthropic({ baseURL: `${api.baseUrl}/v1`, apiKey: API_KEY })(models[role as keyof typeof models] ?? models.default),
          ...options.extra,
        });
  return { kind, api, runtime };
}

/** Runs the same scenario on both runtimes, one after the other. */
export async function bothSides<T>(script: ParityScript, run: (side: Side) => Promise<T>, options: SideOptions = {}): Promise<Record<RuntimeKind, T & { side: Side }>> {
  const out = {} as Record<RuntimeKind, T & { side: Side }>;
  for (const kind of RUNTIMES) {
    const s = await side(kind, script, options);
    out[kind] = { ...(await run(s)), side: s };
  }
  return out;
}

// ---- tools shared by the scenarios: the catalog's own ----

export { count, fetchPage, lookup } from "../../src/testing/scenarios.js";

// ---- what the caller and the model saw, without ids, timings or backend naming ----

export const bareName = (name: string) => name.replace(/^mcp__ktx__/, "");

export function calls(records: readonly ToolCallRecord[]) {
  return records.map((call) => ({ tool: bareName(call.name), input: call.input, ok: call.ok, ...(call.error === undefined ? {} : { error: call.error }) }));
}

/** Tool results the model received, in order, from the last request (which carries the whole history). */
export function seenToolResults(api: ScriptedMessagesApi) {
  const last = api.messageRequests.at(-1);
  return toolResultsIn(last?.body).map((result) => ({ text: result.text, isError: result.is_error === true }));
}

export function loopOutcome(result: RunLoopResult, steps: StepFinishEvent[], failuresForUnit: number) {
  return {
    stopReason: result.stopReason,
    error: result.error ? errorOutcome(result.error) : undefined,
    text: result.text,
    model: result.model,
    steps: result.steps,
    callbacks: steps,
    toolCalls: calls(result.toolCalls),
    toolFailures: result.toolFailures,
    failuresForUnit,
  };
}

export function errorOutcome(error: unknown) {
  if (!ClaudeCodeError.isInstance(error)) throw error;
  return { name: error.name, code: error.code };
}

export async function outcomeOf<T>(run: () => Promise<T>): Promise<{ value?: T; error?: unknown }> {
  try {
    return { value: await run() };
  } catch (error) {
    return { error };
  }
}

/** Where a request carries cache_control, as readable paths. */
export function cacheMarkers(body: any): string[] {
  const marks: string[] = [];
  const ttl = (cc: { ttl?: string }) => cc.ttl ?? "default";
  (Array.isArray(body?.system) ? body.system : []).forEach((block: any, i: number) => block.cache_control && marks.push(`system[${i}]:${ttl(block.cache_control)}`));
  (body?.tools ?? []).forEach((tool: any) => tool.cache_control && marks.push(`tool ${bareName(tool.name)}:${ttl(tool.cache_control)}`));
  (body?.messages ?? []).forEach((message: any, i: number) => {
    if (!Array.isArray(message.content)) return;
    message.content.forEach((block: any, j: number) => block.cache_control && marks.push(`messages[${i}].content[${j}] (${message.role} ${block.type}):${ttl(block.cache_control)}`));
  });
  return marks;
}
