/** KTX's `AgentRunnerPort` (`runLoop`) over any runtime port, for KTX's dependency injection. */
import type { KtxLlmRuntimePort, RunLoopParams, RunLoopResult } from "../runtime/types.js";

export interface AgentRunnerPort {
  runLoop(params: RunLoopParams): Promise<RunLoopResult>;
  /** Tool failures of loops tagged with this `telemetryTags.unitKey` (when the runtime counts them). */
  toolFailureCount?(unitKey: string): number;
}

export function createAgentRunnerPort(runtime: KtxLlmRuntimePort & { toolFailureCount?(unitKey: string): number }): AgentRunnerPort {
  return {
    runLoop: (params) => runtime.runAgentLoop(params),
    ...(runtime.toolFailureCount ? { toolFailureCount: (unitKey: string) => runtime.toolFailureCount!(unitKey) } : {}),
  };
}
