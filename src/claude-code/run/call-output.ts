/** What one CLI run gives a port call (runtime.ts): its `RunInfo`, its usage, and a budget end for text and object calls. */
import { MaxTurnsError } from "../../errors/index.js";
import type { ResultMessage } from "../../protocol/messages.js";
import type { NetworkRoute, RunInfo, RunUsage } from "../../runtime/types.js";
import { hostDiscovery } from "../checks/isolation.js";
import type { RunOutput } from "./run.js";
import { mapStopReason } from "./stop-reason.js";

export type CallOutput = RunOutput & { transcriptPath?: string; network?: NetworkRoute };

export function runInfo(output: CallOutput): RunInfo {
  return {
    model: output.init.model,
    sessionId: output.result.session_id ?? output.init.session_id,
    numTurns: output.result.num_turns ?? output.steps,
    usage: runUsage(output.result),
    costUsd: output.result.total_cost_usd ?? 0,
    cliVersion: output.init.claude_code_version ?? "",
    hostDiscovery: hostDiscovery(output.init),
    transcriptPath: output.transcriptPath,
    warmStart: output.warm,
    login: output.login,
    network: output.network,
  };
}

/** For text and object calls a max-turns end means the work did not finish. */
export function throwOnBudget(output: CallOutput, maxTurns: number): void {
  if (mapStopReason(output.result) === "budget") throw new MaxTurnsError(maxTurns, { transcriptPath: output.transcriptPath });
}

/** The call's tokens as the CLI's result reports them (per call). */
export function runUsage(result: ResultMessage): RunUsage {
  const usage = result.usage ?? {};
  return {
    inputTokens: usage.input_tokens ?? 0,
    outputTokens: usage.output_tokens ?? 0,
    cacheReadInputTokens: usage.cache_read_input_tokens ?? 0,
    cacheCreationInputTokens: usage.cache_creation_input_tokens ?? 0,
  };
}
