/** Test helpers: `ktx-claude-code/testing`. */
export {
  startScriptedMessagesApi,
  turn,
  type Script,
  type ScriptedTurn,
  type ScriptedToolCall,
  type ScriptedMessagesApi,
  type ScriptedApiOptions,
  type RecordedRequest,
  SCRIPTED_OAUTH_TOKEN,
  SCRIPTED_API_KEY,
  type ScriptedRateLimit,
  type ScriptedRateLimitWindow,
  type RateLimitWindowName,
} from "./scripted-api.js";
export { rateLimitHeaders } from "./rate-limit-headers.js";
export { type FirstPartyFront, FIRST_PARTY_HOSTS, SCRIPTED_ACCESS_TOKEN, SCRIPTED_REFRESH_TOKEN, SCRIPTED_CONSOLE_KEY, writeScriptedLogin } from "./first-party.js";
export { createReplayCli, REPLAY_CLI_SCRIPT } from "./replay.js";
export {
  createScriptedCli,
  cliMessage,
  SCRIPTED_CLI_SCRIPT,
  type ScriptedCli,
  type ScriptedCliStep,
  type ScriptedCliLine,
  type ScriptedCliAction,
  type ScriptedCliInvocation,
  type ScriptedCliScript,
} from "./scripted-cli.js";
export {
  SCENARIOS,
  findScenario,
  runScenario,
  lookup,
  count,
  fetchPage,
  type Scenario,
  type ScenarioRunOptions,
  type Outcome,
} from "./scenarios.js";
export { createInMemoryTracer, enableAsyncContext, type InMemoryTracer, type RecordedSpan } from "./in-memory-tracer.js";
