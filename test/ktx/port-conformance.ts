/**
 * KTX's runtime port (ktx 0.12.0), restated from ../shared/ktx/README.md in this file's own words and
 * independently of src/port/ktx-port.ts. `npm test` type-checks this file (tsc -p tsconfig.test.json):
 * if either runtime, or what the factory returns, stops fitting KTX's port, the suite fails to compile.
 * Nothing here runs; test/ktx/call-sites.test.ts drives the same shapes on the real CLI.
 */
import type { z } from "zod";
import type { AiSdkKtxLlmRuntime, ClaudeCodeRuntime, ClaudeCodeRuntimeOptions, KtxLlmRuntime } from "../../src/index.js";

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

interface KtxPort {
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

/** Every runtime this library makes is a KTX port, under `strict`. */
export function portsFromThisLibrary(claudeCode: ClaudeCodeRuntime, aiSdk: AiSdkKtxLlmRuntime, fromFactory: KtxLlmRuntime): KtxPort[] {
  return [claudeCode, aiSdk, fromFactory];
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

/**
 * KTX's factory (local-config.ts) takes a `createClaudeCodeRuntime(deps)` hook with KTX's own deps; this
 * library's runtime is that hook's whole body, so KTX plugs it in with nothing else changed.
 */
type KtxClaudeCodeDeps = { projectDir: string; modelSlots: { default: string } & Partial<Record<Role, string>>; env?: NodeJS.ProcessEnv };
export function ktxFactoryHook(make: (options: ClaudeCodeRuntimeOptions) => ClaudeCodeRuntime): (deps: KtxClaudeCodeDeps) => KtxPort {
  return (deps) => make({ projectDir: deps.projectDir, models: deps.modelSlots, env: deps.env });
}
