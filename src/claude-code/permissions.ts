/**
 * `permissions: { mode, canUseTool }`: who decides a tool use that reaches the CLI's permission prompt
 * (docs/options.md, "Permissions"). Each mode maps onto one of the CLI's `--permission-mode` values and
 * decides whether the call's own tools are pre-approved at launch (`--allowedTools`): pre-approved tools
 * never reach a prompt, so "ask" must not pre-approve them. What CLI 2.1.330 does (measured with an SDK
 * MCP tool, `mcp__ktx__*`, the only kind isolation leaves):
 * - `dontAsk` + `--allowedTools`: the tool runs, no `can_use_tool` (today's default, "deny");
 *   `dontAsk` without it: the CLI denies the use itself ("… running in don't ask mode"), nothing is asked.
 * - `default`, `acceptEdits`, `plan` without `--allowedTools`: every use of the tool comes as `can_use_tool`
 *   (plan with `decision_reason_type: "mode"`); with `--allowedTools` none does. `--permission-mode=manual`
 *   (listed by `--help`) and `default` both report `permissionMode: "default"` in `init`.
 * - `bypassPermissions` refuses to start as root ("--dangerously-skip-permissions cannot be used with
 *   root/sudo"), so "acceptAll" is not mapped onto it: under isolation every tool there is is the
 *   caller's own, and pre-approving them is all "accept all" can mean.
 * - A deny answer reaches the model as the tool's `tool_result` with `is_error: true` and the answer's
 *   message as its text; the turn goes on. An allow answer's `updatedInput` replaces the tool's arguments.
 * - The CLI itself waits for an answer without a deadline (an answer after 150 s was taken as any other);
 *   our idle clock stands still while one is pending (session/control.ts: a request in flight).
 * - `interrupt` while a `can_use_tool` waits: the CLI sends `control_cancel_request` for it and ends the
 *   turn (`error_during_execution`); the process stays usable.
 * - `set_permission_mode {mode}` is answered `{mode}` and followed by a `system/status` line carrying the
 *   new `permissionMode`; the next `init` reports it. An unknown mode is refused (`invalid_mode`).
 */
import { z } from "zod";
import { InvalidInputError } from "../errors/index.js";
import { invalidInputError } from "../runtime/validation.js";
import type { Logger } from "../session/logger.js";

export const PERMISSION_MODES = ["deny", "ask", "acceptEdits", "acceptAll", "plan"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

/** One tool use the CLI asks about, as `canUseTool` receives it. */
export interface PermissionRequest {
  /** The tool's id as the model called it (`mcp__ktx__lookup`). */
  toolName: string;
  /** The arguments the model gave. */
  input: Record<string, unknown>;
  toolUseId: string;
  /** The name the CLI would show a person (`Lookup`). */
  displayName?: string;
  /** Why the CLI asks, when it says (`"mode"` under plan). */
  decisionReason?: string;
  /** The permission mode the call runs in. */
  mode: PermissionMode;
}

/** The answer, in the Agent SDK's shape: allow (optionally with changed arguments) or deny with a message the model sees. */
export type PermissionDecision = { behavior: "allow"; updatedInput?: Record<string, unknown> } | { behavior: "deny"; message: string };

export type CanUseTool = (request: PermissionRequest, options: { signal: AbortSignal }) => PermissionDecision | Promise<PermissionDecision>;

export interface PermissionsOption {
  /** Default `"deny"`: the call's own tools run, anything else is denied, nobody is asked. */
  mode?: PermissionMode;
  /** Asked for every tool use that reaches a prompt (required for `"ask"`); its signal aborts with the call. */
  canUseTool?: CanUseTool;
}

export const permissionsSchema = z.strictObject({
  mode: z.enum(PERMISSION_MODES).optional(),
  canUseTool: z.custom<CanUseTool>((value) => typeof value === "function", "a function (request, { signal }) => { behavior, … }").optional(),
});

const decisionSchema = z.discriminatedUnion("behavior", [
  z.strictObject({ behavior: z.literal("allow"), updatedInput: z.record(z.string(), z.unknown()).optional() }),
  z.strictObject({ behavior: z.literal("deny"), message: z.string().min(1) }),
]);

/** Modes whose launch pre-approves the call's tools: nothing of theirs reaches a prompt. */
export function preApproves(mode: PermissionMode): boolean {
  return mode === "deny" || mode === "acceptAll";
}

/**
 * The CLI's `--permission-mode` for `mode` on a process launched for `launch`. A process whose tools are
 * pre-approved runs `dontAsk`; one that prompts runs deny and acceptAll as `default`, its prompts answered here.
 */
export function cliPermissionMode(mode: PermissionMode, launch: PermissionMode = mode): string {
  if (preApproves(launch)) return "dontAsk";
  return mode === "acceptEdits" || mode === "plan" ? mode : "default";
}

/** The permissions of one call: the mode it runs in, the mode its process was launched for, the callback. */
export interface CallPermissions {
  mode: PermissionMode;
  launch: PermissionMode;
  canUseTool?: CanUseTool;
}

/** Parses a caller's `permissions` (strict) and refuses combinations that could not do what they say. */
export function parsePermissions(value: unknown, subject: string): PermissionsOption | undefined {
  if (value === undefined) return undefined;
  const parsed = permissionsSchema.safeParse(value);
  if (!parsed.success) throw invalidInputError(`${subject} permissions`, permissionsSchema, parsed.error, value);
  const options = value as PermissionsOption;
  checkModeAgainst(options.mode ?? "deny", options.mode ?? "deny", options.canUseTool !== undefined, subject);
  return options;
}

/**
 * Whether a call (or a session switched to `mode`) can run as asked on a process launched for `launch`:
 * "ask" needs a callback; a process that pre-approves its tools cannot be made to ask about them.
 */
export function checkModeAgainst(mode: PermissionMode, launch: PermissionMode, hasCallback: boolean, subject: string): void {
  const refuse = (message: string, field: string) => {
    const error = new InvalidInputError(`Invalid ${subject} permissions: ${message}`);
    error.field = field;
    throw error;
  };
  if (mode === "ask" && !hasCallback) refuse(`mode "ask" sends every tool use to canUseTool, and none was given; give permissions.canUseTool.`, "permissions.canUseTool");
  if (preApproves(launch) && !preApproves(mode)) {
    refuse(`mode ${JSON.stringify(launch)} pre-approves the tools when the CLI starts (--allowedTools), so ${JSON.stringify(mode)} could never prompt; create the session with mode "ask", "acceptEdits" or "plan" to switch between all modes.`, "permissions.mode");
  }
  if (preApproves(launch) && mode === launch && hasCallback) {
    refuse(`mode ${JSON.stringify(launch)} never asks (the call's tools are pre-approved), so canUseTool would never be called; use mode "ask" (or "acceptEdits" / "plan") with it.`, "permissions.canUseTool");
  }
}

/**
 * The answer to one `can_use_tool` of the CLI. A tool the call did not give is denied without asking
 * (under isolation none exists); the call's own run in "deny" and "acceptAll"; otherwise `canUseTool`
 * decides, and without one the use is denied. A callback that throws or answers out of shape denies
 * the use (the model sees why, the session lives); an aborted one throws, so no answer is written.
 */
export async function answerPermission(
  request: Record<string, unknown>,
  signal: AbortSignal,
  call: { permissions?: CallPermissions; allowed: ReadonlySet<string>; toolIds: readonly string[]; deniedTools: string[]; logger: Logger },
): Promise<Record<string, unknown>> {
  const name = String(request.tool_name);
  const input = (request.input ?? {}) as Record<string, unknown>;
  if (!call.allowed.has(name)) {
    call.deniedTools.push(name);
    return { behavior: "deny", message: `Tool ${name} is not available in this KTX run. Only these tools exist: ${call.toolIds.join(", ") || "(none)"}.` };
  }
  const mode = call.permissions?.mode ?? "deny";
  if (preApproves(mode)) return { behavior: "allow", updatedInput: input };
  const canUseTool = call.permissions?.canUseTool;
  if (!canUseTool) return { behavior: "deny", message: `Tool ${name} needs permission in permission mode ${JSON.stringify(mode)}, and no one was asked (this run has no canUseTool).` };
  let answer: unknown;
  try {
    answer = await canUseTool(
      {
        toolName: name,
        input,
        toolUseId: String(request.tool_use_id ?? ""),
        ...(typeof request.display_name === "string" ? { displayName: request.display_name } : {}),
        ...(typeof request.decision_reason_type === "string" ? { decisionReason: request.decision_reason_type } : {}),
        mode,
      },
      { signal },
    );
  } catch (error) {
    if (signal.aborted) throw error;
    call.logger.warn(`canUseTool threw for ${name}; the tool use was denied: ${(error as Error).message ?? String(error)}`);
    return { behavior: "deny", message: `The permission check for ${name} failed, so the tool was not run.` };
  }
  if (signal.aborted) throw signal.reason;
  const parsed = decisionSchema.safeParse(answer);
  if (!parsed.success) {
    call.logger.warn(`canUseTool answered ${JSON.stringify(answer)?.slice(0, 200)} for ${name}, neither { behavior: "allow", updatedInput? } nor { behavior: "deny", message }; the tool use was denied`);
    return { behavior: "deny", message: `The permission check for ${name} gave no valid answer, so the tool was not run.` };
  }
  return parsed.data.behavior === "allow" ? { behavior: "allow", updatedInput: parsed.data.updatedInput ?? input } : { behavior: "deny", message: parsed.data.message };
}
