/**
 * KTX's runtime port (ktx 0.12.0), restated from ../shared/ktx/README.md in this file's own words and
 * independently of src/port/ktx-port.ts. `npm test` type-checks this file (tsc -p tsconfig.test.json):
 * if `ClaudeCodeRuntime`, or what the core factory returns, stops fitting KTX's port (the AI SDK runtime:
 * port-conformance-ai-sdk.ts), if `createClaudeCodeRuntime`
 * stops fitting KTX's hook type, or if `generateObject` without type arguments stops being typed by its
 * schema, the suite fails to compile. test/pack/zod-peer.test.ts compiles this file again against the
 * packed package beside KTX's zod 4.4.3. Nothing here runs; test/ktx/call-sites.test.ts drives the same
 * shapes on the real CLI.
 */
import type { z } from "zod";
import { ClaudeCodeRuntime as ClaudeCodeRuntimeClass, createClaudeCodeRuntime } from "../../src/index.js";
import type { ClaudeCodeRuntime, ClaudeCodeRuntimeOptions } from "../../src/index.js";

type Role = "default" | "triage" | "candidateExtraction" | "curator" | "reconcile" | "repair";
type Tokens = { inputTokens?: number; outputTokens?: number; totalTokens?: number };

interface KtxTool {
  name: string;
  description: string;
  inputSchema: z.ZodObject<z.ZodRawShape>;
  execute(input: unknown): Promise<{ markdown: string; structured?: unknown }>;
}
type KtxTools = Record<string, KtxTool>;

interface KtxTextInput {
  role: Role;
  prompt: string;
  system?: string;
  tools?: KtxTools;
  temperature?: number;
  onMetrics?: (metrics: { totalMs: number; usage: Tokens }) => void;
  abortSignal?: AbortSignal;
}

interface KtxObjectInput<TOutput, TSchema extends z.ZodType<TOutput>> extends KtxTextInput {
  schema: TSchema;
}

interface KtxLoopParams {
  modelRole: Role;
  systemPrompt: string;
  userPrompt: string;
  toolSet: KtxTools;
  stepBudget: number;
  telemetryTags: Record<string, string>;
  abortSignal?: AbortSignal;
}

interface KtxLoopResult {
  stopReason: "budget" | "natural" | "error";
  error?: Error;
  metrics?: { totalMs: number; usage: Tokens; stepCount: number; stepBoundariesMs: number[] };
}

export interface KtxPort {
  generateText(input: KtxTextInput): Promise<string>;
  generateObject<TOutput, TSchema extends z.ZodType<TOutput>>(input: KtxObjectInput<TOutput, TSchema>): Promise<TOutput>;
  runAgentLoop(params: KtxLoopParams): Promise<KtxLoopResult>;
}

interface KtxAgentRunner {
  runLoop(params: KtxLoopParams): Promise<KtxLoopResult>;
}

/** KTX's one-line adapter over the port. */
class RuntimeAgentRunner implements KtxAgentRunner {
  constructor(private readonly runtime: KtxPort) {}
  runLoop(params: KtxLoopParams): Promise<KtxLoopResult> {
    return this.runtime.runAgentLoop(params);
  }
}

/** Every runtime the core makes is a KTX port, under `strict` (the AI SDK's: port-conformance-ai-sdk.ts). */
export function portsFromThisLibrary(claudeCode: ClaudeCodeRuntime, fromFactory: ClaudeCodeRuntime): KtxPort[] {
  return [claudeCode, fromFactory];
}

/** KTX's call sites, as typed code: what they pass and what they read. */
export async function ktxCallSites(port: KtxPort, schema: z.ZodObject<{ title: z.ZodString }>, tools: KtxTools, signal: AbortSignal): Promise<number> {
  const triage = await port.generateText({ role: "triage", system: "s", prompt: "p", temperature: 0 });
  const description = (await port.generateText({ role: "default", prompt: "p", temperature: 0.2 })).trim();
  const object = await port.generateObject<{ title: string }, typeof schema>({ role: "default", system: "s", prompt: "p", schema });
  const reparsed = schema.parse(object);
  const runner = new RuntimeAgentRunner(port);
  const result = await runner.runLoop({
    modelRole: "curator",
    systemPrompt: "s",
    userPrompt: "u",
    toolSet: tools,
    stepBudget: 40,
    telemetryTags: { operationName: "ingest", source: "s", unitKey: "u", jobId: "j" },
    abortSignal: signal,
  });
  const profiled = (result.metrics?.totalMs ?? 0) + (result.metrics?.stepCount ?? 0) + (result.metrics?.usage.totalTokens ?? 0);
  return triage.length + description.length + reparsed.title.length + profiled + (result.error?.message.length ?? 0);
}

/** KTX's rate-limit governor (built from ingest.rateLimit and workUnits.maxConcurrency), as its hook deps type it. */
interface KtxRateLimitGovernor {
  waitForReady(signal?: AbortSignal): Promise<void>;
  report(signal: {
    provider: "anthropic-api" | "vertex" | "claude-subscription" | "codex";
    status: "allowed" | "warning" | "rejected";
    resetAtMs?: number;
    retryAfterMs?: number;
    utilization?: number;
    rateLimitType?: string;
  }): void;
  maxRetryAttempts(): number;
  subscribe(listener: (state: unknown) => void): () => void;
  acquireWorkSlot(signal?: AbortSignal): Promise<() => void>;
}

/** The Agent SDK's `query`, as far as the hook deps mention it (KTX's own test seam). */
type AgentSdkQuery = (args: { prompt: string | AsyncIterable<unknown>; options?: Record<string, unknown> }) => AsyncGenerator<unknown, void>;

/** KTX's hook deps (local-config.ts / KTX's backend constructor): what KTX passes `createClaudeCodeRuntime`. */
type KtxClaudeCodeDeps = {
  projectDir: string;
  modelSlots: { default: string } & Partial<Record<string, string>>;
  query?: AgentSdkQuery;
  env?: NodeJS.ProcessEnv;
  rateLimitGovernor?: KtxRateLimitGovernor;
};
type KtxCreateClaudeCodeRuntime = (deps: KtxClaudeCodeDeps) => KtxPort;

/** KTX's factory hook is this library's function itself: no wrapper, so no dep can be dropped on the way. */
export const ktxFactoryHook: KtxCreateClaudeCodeRuntime = createClaudeCodeRuntime;

/** What KTX's factory does with the hook: every dep it has goes in. */
export function ktxFactoryCall(hook: KtxCreateClaudeCodeRuntime, governor: KtxRateLimitGovernor): KtxPort {
  return hook({ projectDir: "/p", modelSlots: { default: "sonnet", triage: undefined }, env: process.env, rateLimitGovernor: governor });
}

export type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
export const exact = <T extends true>(value: T): T => value;

/** generateObject without type arguments is typed by the schema (not `unknown`); one and two type arguments work too. */
export async function inferredObjects(runtime: ClaudeCodeRuntime, schema: z.ZodObject<{ title: z.ZodString; rows: z.ZodOptional<z.ZodNumber> }>): Promise<number> {
  const bare = await runtime.generateObject({ role: "default", prompt: "p", schema });
  exact<Equal<typeof bare, { title: string; rows?: number | undefined }>>(true);
  const rich = await runtime.generateObjectResult({ prompt: "p", schema });
  exact<Equal<typeof rich.object, { title: string; rows?: number | undefined }>>(true);
  const one = await runtime.generateObject<{ title: string }>({ role: "default", prompt: "p", schema });
  exact<Equal<typeof one, { title: string }>>(true);
  const two = await runtime.generateObject<{ title: string }, typeof schema>({ role: "default", prompt: "p", schema });
  exact<Equal<typeof two, { title: string }>>(true);
  return bare.title.length + rich.object.title.length + one.title.length + two.title.length;
}

/** The options of the library's own constructor still work, for callers outside KTX's factory. */
export function direct(options: ClaudeCodeRuntimeOptions): KtxPort {
  return new ClaudeCodeRuntimeClass(options);
}
