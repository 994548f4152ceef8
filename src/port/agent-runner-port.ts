/** KTX's `AgentRunnerPort` (`runLoop`) over a runtime of this library, for KTX's dependency injection. */
import type { RunLoopParams, RunLoopResult } from "../runtime/types.js";
import type { KtxAgentRunnerPort } from "./ktx-port.js";

export interface AgentRunnerPort extends KtxAgentRunnerPort {
  runLoop(params: RunLoopParams): Promise<RunLoopResult>;
  /** Tool failures of loops tagged with this `telemetryTags.unitKey`. */
  toolFailureCount(unitKey: string): number;
}

/** What the adapter needs: both runtimes of this library have it. */
export interface CountingLoopRuntime {
  runAgentLoop(params: RunLoopParams): Promise<RunLoopResult>;
  toolFailureCount(unitKey: string): number;
}

export function createAgentRunnerPort(runtime: CountingLoopRuntime): AgentRunnerPort {
  return {
    runLoop: (params) => runtime.runAgentLoop(params),
    toolFailureCount: (unitKey) => runtime.toolFailureCount(unitKey),
  };
}
