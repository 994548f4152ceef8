/**
 * `ClaudeCodeRuntime`'s options: what each one means, their schema, and the one parse every runtime
 * makes at construction (which never checks `projectDir` on disk: that happens when a call starts).
 */
import { resolve } from "node:path";
import { z } from "zod";
import { type LimitsRuntimeOptions, rateLimitOptionsSchema, timeoutSchema } from "../limits/index.js";
import type { ExperimentalTelemetry } from "../runtime/spans.js";
import { MODEL_ROLES, type ModelMap } from "../runtime/types.js";
import { invalidInputError } from "../runtime/validation.js";
import type { Logger } from "../session/logger.js";
import { InvalidInputError } from "../errors/index.js";
import { type AuthOption, authEnv, authOptionSchema } from "../transport/auth.js";
import { type ApiEndpoint, type Env, checkPassEnv } from "../transport/env.js";
import type { TelemetryOptions } from "../transport/telemetry.js";
import { telemetryOptionsSchema } from "../transport/telemetry-schema.js";
import type { ReuseOptions, WarmOptions } from "./pool/process-pool.js";
import { type ThinkingOption, thinkingOptionSchema } from "./thinking.js";
import { type PermissionsOption, parsePermissions, permissionsSchema } from "./permissions.js";
import { type Capabilities, capabilitiesSchema } from "./capabilities.js";

export interface ClaudeCodeRuntimeOptions extends LimitsRuntimeOptions {
  projectDir: string;
  models: ModelMap;
  /** Aliases added to KTX's table (`sonnet`, `opus`, `haiku` -> KTX's pinned ids); targets must be `claude-*` ids. */
  modelAliases?: Record<string, string>;
  /** Where `models` came from (the ktx.yaml path), named when a model is refused. */
  modelsSource?: string;
  cliPath?: string;
  allowUnverifiedCli?: boolean;
  /** Base environment for the CLI (default `process.env`, which can be passed as is); always scrubbed. */
  env?: Env;
  /** Explicit Messages API endpoint (tests, recording). Never read from the environment. */
  apiEndpoint?: ApiEndpoint;
  /** Default true; false lets the CLI make its non-essential calls (telemetry, error reports). */
  disableNonessentialTraffic?: boolean;
  /**
   * Refuse a call the CLI would bill to an API key (a Console `/login` key or a `primaryApiKey` in its config)
   * with `SubscriptionRequiredError`, before any prompt leaves. Default false: a Console login is the user's
   * own Claude Code session; every result reports `login` either way (docs/isolation.md).
   */
  requireSubscription?: boolean;
  /**
   * Which provider and credential the CLI uses (docs/options.md, "Authentication"): `{ kind: "login" }` (the
   * default: your Claude Code session), `apiKey`, `oauthToken`, `bedrock`, `vertex` or `foundry`. Each kind
   * adds back exactly its own variables, from its fields or from `env` when named in `passEnv`, and a missing
   * credential throws `AuthConfigError` before any process starts. Never combined with `apiEndpoint`.
   */
  auth?: AuthOption;
  /** Further names passed from `env` to the CLI (docs/environment.md, allowlist); any other throws `EnvNotAllowedError`. */
  passEnv?: string[];
  /** The CLI's OpenTelemetry export (off by default; never read from the environment). */
  telemetry?: TelemetryOptions | false;
  /** Whole call, every turn and tool of it; default 60 min (DEFAULT_CALL_TIMEOUT_MS), `Infinity` for none. */
  timeoutMs?: number;
  idleTimeoutMs?: number;
  /** Each tool handler; default 5 min (DEFAULT_TOOL_TIMEOUT_MS), `Infinity` for none. */
  toolTimeoutMs?: number;
  /** Stream the model's text to `onEvent` as `text_delta` events (the CLI's --include-partial-messages). */
  includePartialMessages?: boolean;
  /** Opt-in capabilities for every call of this runtime, all off by default (docs/options.md, "Capabilities"); part of the pool key. */
  capabilities?: Capabilities;
  /**
   * The requests' `thinking`, for every role or per role like `models`: `"adaptive"` (default, the CLI's
   * choice), `"off"` (`thinking: {type: "disabled"}`) or `{ budgetTokens }` (docs/parity.md#thinking).
   */
  thinking?: ThinkingOption;
  /**
   * OpenTelemetry spans shaped like the AI SDK's (`ai.generateText`, `ai.generateObject`, `ai.toolCall`):
   * the AI SDK's `TelemetrySettings`, or KTX's `(telemetryTags) => TelemetrySettings`. Off by default.
   */
  experimentalTelemetry?: ExperimentalTelemetry;
  /**
   * Who decides a tool use that reaches the CLI's permission prompt (docs/options.md, "Permissions"):
   * `mode` `"deny"` (default: the call's tools run, nothing else, nobody asked), `"ask"` (every tool use
   * goes to `canUseTool(request, { signal })`), `"acceptEdits"`, `"acceptAll"` or `"plan"`. Part of the pool key.
   */
  permissions?: PermissionsOption;
  maxLineBytes?: number;
  /** CLI processes allowed at once; more calls wait. Default: the machine's available parallelism. */
  maxConcurrentRuns?: number;
  /** Record every run's transcript into this directory. */
  transcript?: { dir: string };
  /**
   * Spares: CLI processes started ahead of need, which serve the first call of a new shape (default on:
   * `{ size: 1, idleMs: 30000 }`; `false` turns them off). They count in the pool's one idle budget.
   */
  warm?: WarmOptions | false;
  /**
   * One CLI process serves many calls of the same shape, rewound between them (default on; see
   * docs/performance.md for what such calls share and the idle budget). `false`: one process per call.
   * Idle processes end after `idleMs`, on `close()`, and with the host; they never keep the host alive.
   */
  reuse?: ReuseOptions | false;
  logger?: Logger;
  /**
   * The runtime's interceptor on the first-party path (docs/isolation.md, "The wire check"): every
   * request the CLI sends is checked against what the library built for the call before it is forwarded,
   * and everything else it would send is refused. The interceptor runs in a process of its own, started
   * with the first call (`InterceptorError` if it cannot start or dies). **On by default** (`true`, an
   * object, or unset); `false` turns it off. Never
   * used with an `apiEndpoint` (a base URL the CLI talks to directly) or a stand-in CLI made by
   * `createScriptedCli` / `createReplayCli` in this process (it makes no request): those run without it,
   * whatever this says (`network.interceptor` says which). Only CLI versions whose
   * first-party shape is recorded can run with it (every verified version's is); another is refused
   * with an `IsolationError`. `{ bodies: true }` keeps each request's body in the
   * transcript's request records; `upstream` (tests) sends checked requests through that proxy and CA
   * instead of the `env`'s.
   *
   * With `wire: false` nothing of this happens: requests go from the CLI to the user's
   * proxy or to Anthropic unchecked (a managed `CLAUDE.md`, a planted body field, header, beta or model,
   * extra system text reach the API; the `system/init` check still stops the run, after the first
   * request), egress is no longer refused (analytics or other hosts a policy or wrapper re-enables
   * leave), a call's model responses are no longer counted against checked requests, and the
   * transcript has no request records. The policy read-ahead and the account and init checks stay.
   * Other stand-ins that answer without any request (a test script at `cliPath`) need `wire: false`:
   * their calls fail the "every model response came through a checked request" rule.
   */
  wire?: boolean | { bodies?: boolean; upstream?: { proxy: string; ca: string } };
}

// Only the shape here: models.ts resolves each value and refuses unknown ones with UnsupportedModelError.
const modelSchema = z.string().trim().min(1);

export const runtimeOptionsSchema = z.strictObject({
  projectDir: z.string().min(1),
  models: z.strictObject(Object.fromEntries(MODEL_ROLES.map((role) => [role, role === "default" ? modelSchema : modelSchema.optional()]))),
  modelAliases: z.record(z.string(), z.string()).optional(),
  modelsSource: z.string().min(1).optional(),
  cliPath: z.string().min(1).optional(),
  allowUnverifiedCli: z.boolean().optional(),
  // process.env is not a plain record to zod (its prototype): any object of string-or-undefined values is accepted.
  env: z
    .custom<Env>((value) => typeof value === "object" && value !== null && Object.values(value).every((item) => item === undefined || typeof item === "string"), {
      message: "an object of string (or undefined) values, such as process.env",
    })
    .optional(),
  apiEndpoint: z
    .union([z.strictObject({ baseUrl: z.url(), apiKey: z.string().min(1) }), z.strictObject({ baseUrl: z.url(), oauthToken: z.string().min(1) })])
    .optional(),
  disableNonessentialTraffic: z.boolean().optional(),
  passEnv: z.array(z.string().min(1)).optional(),
  auth: authOptionSchema.optional(),
  requireSubscription: z.boolean().optional(),
  telemetry: z.union([z.literal(false), telemetryOptionsSchema]).optional(),
  timeoutMs: timeoutSchema.optional(),
  idleTimeoutMs: z.number().int().nonnegative().optional(),
  toolTimeoutMs: timeoutSchema.optional(),
  includePartialMessages: z.boolean().optional(),
  capabilities: capabilitiesSchema.optional(),
  thinking: thinkingOptionSchema.optional(),
  experimentalTelemetry: z
    .custom<ExperimentalTelemetry>((value) => typeof value === "function" || (typeof value === "object" && value !== null), "the AI SDK's TelemetrySettings or (telemetryTags) => TelemetrySettings")
    .optional(),
  permissions: permissionsSchema.optional(),
  rateLimit: rateLimitOptionsSchema.optional(),
  rateLimitGovernor: z
    .custom<LimitsRuntimeOptions["rateLimitGovernor"]>((value) => ["waitForReady", "report", "maxRetryAttempts"].every((name) => typeof (value as Record<string, unknown>)?.[name] === "function"), "an object with waitForReady, report and maxRetryAttempts functions (KTX's governor shape)")
    .optional(),
  onEvent: z.custom<LimitsRuntimeOptions["onEvent"]>((value) => typeof value === "function", "a function").optional(),
  apiRetryBudgetMs: timeoutSchema.optional(),
  maxLineBytes: z.number().int().positive().optional(),
  maxConcurrentRuns: z.number().int().positive().optional(),
  transcript: z.strictObject({ dir: z.string().min(1) }).optional(),
  warm: z
    .union([z.literal(false), z.strictObject({ size: z.number().int().nonnegative().optional(), idleMs: z.number().int().positive().optional() })])
    .describe("false, or { size?, idleMs? }")
    .optional(),
  reuse: z
    .union([
      z.literal(false),
      z.strictObject({
        maxIdle: z.number().int().nonnegative().optional(),
        maxIdleMiB: z.number().nonnegative().optional(),
        idleMs: z.number().int().positive().optional(),
        maxCalls: z.number().int().positive().optional(),
        maxRssMiB: z.number().positive().optional(),
        controlTimeoutMs: z.number().int().positive().optional(),
      }),
    ])
    .describe("false, or { maxIdle?, maxIdleMiB?, idleMs?, maxCalls?, maxRssMiB?, controlTimeoutMs? }")
    .optional(),
  logger: z.custom<Logger>((value) => typeof value === "object" && value !== null, "an object with debug, info, warn and error").optional(),
  wire: z.union([z.boolean(), z.strictObject({ bodies: z.boolean().optional(), upstream: z.strictObject({ proxy: z.url(), ca: z.string().min(1) }).optional() })]).optional(),
});

export function parseRuntimeOptions(options: ClaudeCodeRuntimeOptions): ClaudeCodeRuntimeOptions {
  const parsed = runtimeOptionsSchema.safeParse(options);
  if (!parsed.success) throw invalidInputError("ClaudeCodeRuntime options", runtimeOptionsSchema, parsed.error, options);
  checkAuthOptions(options);
  parsePermissions(options.permissions, "ClaudeCodeRuntime options");
  // Only resolved here: whether it exists is checked by calls (requireProjectDir: runtime.ts, run.ts).
  return { ...options, projectDir: resolve(options.projectDir) };
}

/**
 * The `auth` option against the others, before anything starts: `passEnv` may name the kind's own variables
 * only, the kind's credential must be there (`AuthConfigError`), and contradictions are refused: an explicit
 * `apiEndpoint` carries its own credential, and `requireSubscription` cannot hold for an API key or a cloud.
 */
export function checkAuthOptions(options: Pick<ClaudeCodeRuntimeOptions, "auth" | "apiEndpoint" | "requireSubscription" | "passEnv" | "env">): void {
  checkPassEnv(options.passEnv, options.auth);
  const kind = options.auth?.kind ?? "login";
  if (kind === "login") return;
  const refuse = (message: string, field: string) => {
    const error = new InvalidInputError(message);
    error.field = field;
    throw error;
  };
  if (options.apiEndpoint) refuse(`auth ${JSON.stringify(kind)} and apiEndpoint both name a credential; give one (apiEndpoint is for tests and recording, auth for real use).`, "auth");
  if (options.requireSubscription && kind !== "oauthToken") {
    refuse(`requireSubscription refuses every call not billed to your Claude subscription, and auth ${JSON.stringify(kind)} is never one; drop requireSubscription, or use auth { kind: "login" } or { kind: "oauthToken" }.`, "requireSubscription");
  }
  authEnv(options.auth, options.env ?? process.env, options.passEnv);
}
