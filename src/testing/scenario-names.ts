/**
 * The names of the scenario catalog (scenarios.ts), in its order, in a module that imports nothing:
 * `fixtures compare|record` check `--scenarios` with it before they load the runtime to run any.
 * scenarios.ts refuses to load when its catalog and this list differ.
 */
export const SCENARIO_NAMES: readonly string[] = [
  "text",
  "object",
  "object-schema-violation",
  "tool-loop",
  "budget-exhausted",
  "tool-throws",
  "invalid-tool-arguments",
  "hostile-tools",
  "api-429",
  "api-overloaded",
  "api-500-then-ok",
  "auth-failure",
  "huge-system-prompt",
];

/** The session scenarios (session-scenarios.ts): recorded by `fixtures record` when named in `--scenarios`. */
export const SESSION_SCENARIO_NAMES: readonly string[] = ["session-tool-interrupt-crash"];
