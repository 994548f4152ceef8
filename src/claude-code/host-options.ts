/**
 * Which of the runtime's options (options.ts, parsed there) belong to the host every caller shares and
 * which to one caller (an adapter such as KTX's `ClaudeCodeRuntime`). The split is by what an option
 * decides: how processes are found, started, paced, limited and recorded is the host's; which model a
 * call asks for and who hears about it is the caller's (docs/options.md, "One host, several callers").
 */
import { resolve } from "node:path";
import { InvalidInputError } from "../errors/index.js";
import { invalidInputError } from "../runtime/validation.js";
import { type ClaudeCodeRuntimeOptions, checkAuthOptions, runtimeOptionsSchema } from "./options.js";
import { parsePermissions } from "./permissions.js";

/**
 * A caller's own options. `models`, `modelAliases`, `modelsSource` and `thinking` (per role) are KTX's
 * roles; `experimentalTelemetry` makes spans at KTX's port; `onEvent` hears the caller's own calls, and
 * `includePartialMessages` asks the CLI for the deltas that listener gets (part of the pool key, so
 * callers that differ in it never share a process), and so are `permissions` (who decides a tool use that reaches a
 * prompt; its mode is part of the launch). `logger` is both: a caller's defaults to its host's.
 */
export const CALLER_OPTIONS = ["models", "modelAliases", "modelsSource", "thinking", "experimentalTelemetry", "onEvent", "includePartialMessages", "permissions", "capabilities"] as const;
export type CallerOptionName = (typeof CALLER_OPTIONS)[number];

/** `new ClaudeCodeHost(options)`: every runtime option but the caller's own (`CALLER_OPTIONS`). */
export type ClaudeCodeHostOptions = Omit<ClaudeCodeRuntimeOptions, CallerOptionName>;

const callerKeys = Object.fromEntries(CALLER_OPTIONS.map((name) => [name, true as const])) as { [K in CallerOptionName]: true };

export const hostOptionsSchema = runtimeOptionsSchema.omit(callerKeys);

/** The schema of a caller's own options (its `host` is checked by the caller). */
export const callerOptionsSchema = runtimeOptionsSchema.pick({ ...callerKeys, logger: true });

/** The host's options, parsed as the runtime's are (`projectDir` resolved, `passEnv` checked). */
export function parseHostOptions(options: ClaudeCodeHostOptions): ClaudeCodeHostOptions {
  const misplaced = typeof options === "object" && options !== null ? CALLER_OPTIONS.filter((name) => name in options) : [];
  if (misplaced.length > 0) {
    const error = new InvalidInputError(
      `Invalid ClaudeCodeHost options: ${misplaced.map((name) => `\`${name}\``).join(", ")} ${misplaced.length === 1 ? "is a caller's option" : "are callers' options"}, not the host's; give ${misplaced.length === 1 ? "it" : "them"} to the caller on the host (new ClaudeCodeRuntime({ host, ${misplaced.join(", ")} })).`,
    );
    error.field = misplaced[0];
    throw error;
  }
  const parsed = hostOptionsSchema.safeParse(options);
  if (!parsed.success) throw invalidInputError("ClaudeCodeHost options", hostOptionsSchema, parsed.error, options);
  checkAuthOptions(options);
  // Only resolved here: whether it exists is checked by calls, as for the runtime (options.ts).
  return { ...options, projectDir: resolve(options.projectDir) };
}

/** The host's part of full runtime options (already parsed by the runtime). */
export function hostPart(options: ClaudeCodeRuntimeOptions): ClaudeCodeHostOptions {
  const host: Record<string, unknown> = { ...options };
  for (const name of CALLER_OPTIONS) delete host[name];
  return host as unknown as ClaudeCodeHostOptions;
}

/** A caller's options on a host: only its own, each checked as the runtime checks it. */
export function parseCallerOptions<T extends Partial<Pick<ClaudeCodeRuntimeOptions, CallerOptionName | "logger">>>(options: T, subject: string): T {
  const hostOwned = Object.keys(options).filter((name) => name !== "host" && name in hostOptionsSchema.shape && name !== "logger");
  if (hostOwned.length > 0) {
    const error = new InvalidInputError(
      `Invalid ${subject} options: ${hostOwned.map((name) => `\`${name}\``).join(", ")} ${hostOwned.length === 1 ? "is" : "are"} the host's, and this caller runs on a host it was given; set ${hostOwned.length === 1 ? "it" : "them"} in new ClaudeCodeHost({ … }), or leave out \`host\` to have the caller build its own.`,
    );
    error.field = hostOwned[0];
    throw error;
  }
  const { host: _host, ...own } = options as T & { host?: unknown };
  const parsed = callerOptionsSchema.safeParse(own);
  if (!parsed.success) throw invalidInputError(`${subject} options`, callerOptionsSchema, parsed.error, own);
  parsePermissions((own as { permissions?: unknown }).permissions, subject);
  return options;
}
