/**
 * `capabilities.bash` (issue 43): the CLI's own Bash tool, sandboxed by default. Kept apart from capabilities.ts
 * so each capability's flags, settings and checks read in one place (docs/guides/capabilities.md, "Bash").
 *
 * What CLI 2.1.330 does, measured with the scripted API on a Linux host without bubblewrap or socat:
 * - `--settings={"sandbox":{"enabled":true}}` alone: Bash runs the command UNSANDBOXED, silently (its output
 *   came back, nothing said). So the library never relies on that setting alone.
 * - with `"failIfUnavailable":true` too: the CLI does not start a turn; its result is `error_during_execution`
 *   with "Sandbox required but unavailable: sandbox is enabled but dependencies are missing: bubblewrap …";
 *   with a `bwrap` and `socat` that exist but fail, each Bash call is refused as a tool error ("Sandbox is required
 *   but failed to initialize: … Running it outside the sandbox (dangerouslyDisableSandbox) is not allowed either.").
 * - deny rules `--disallowedTools=Bash(rm:*)` refuse `rm -f x`, `echo a && rm -f x` (each subcommand is
 *   matched) and, for `Bash(git push:*)`, `git push origin x`: the model gets the tool result
 *   "Permission to use Bash with command … has been denied." with `is_error: true`; the turn goes on.
 * - the CLI's own `sandbox.excludedCommands` are commands that run OUTSIDE the sandbox (a relaxation), so this
 *   capability's `excludedCommands` (refused) are deny rules and its `allowUnsandboxed` are the CLI's list.
 */
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { z } from "zod";
import { SandboxUnavailableError } from "../errors/index.js";

/** A command prefix: words of a command line (`rm`, `git push`), nothing a permission rule or flag list would read as syntax. */
const commandPrefix = z
  .string()
  .max(200)
  .regex(/^[A-Za-z0-9_./@+=-]+(?: [A-Za-z0-9_./@+=-]+)*$/, "a command prefix is words of a command (`rm`, `git push`): letters, digits, _ . / @ + = -, single spaces");

export const bashCapabilitySchema = z
  .object({
    /** Run every command in the CLI's sandbox (bubblewrap and socat on Linux; macOS's own). Default true; `false` must be said. */
    sandbox: z.boolean().optional(),
    /** Commands refused, by prefix (`rm`, `git push`): the model gets a tool error; the turn goes on. */
    excludedCommands: z.array(commandPrefix).readonly().optional(),
    /** Commands that run outside the sandbox, by prefix (the CLI's `sandbox.excludedCommands`); only with the sandbox on. */
    allowUnsandboxed: z.array(commandPrefix).readonly().optional(),
  })
  .strict()
  .refine((bash) => !(bash.sandbox === false && (bash.allowUnsandboxed?.length ?? 0) > 0), {
    message: "allowUnsandboxed names commands that leave the sandbox; with sandbox: false every command already runs unsandboxed",
    path: ["allowUnsandboxed"],
  });

export type BashCapability = z.infer<typeof bashCapabilitySchema>;

/** The Bash launch of a call: sorted, without repeats, so equal asks share a pool key. */
export interface BashLaunch {
  sandbox: boolean;
  excludedCommands: readonly string[];
  allowUnsandboxed: readonly string[];
}

const unique = (values: readonly string[] | undefined) => [...new Set(values ?? [])].sort();

export function bashLaunchFor(bash: BashCapability | undefined): BashLaunch | undefined {
  if (bash === undefined) return undefined;
  return { sandbox: bash.sandbox !== false, excludedCommands: unique(bash.excludedCommands), allowUnsandboxed: unique(bash.allowUnsandboxed) };
}

/** The key of a Bash launch, for the launch memo and the pool ("" without Bash). */
export function bashKey(bash: BashLaunch | undefined): string {
  return bash ? JSON.stringify(bash) : "";
}

/** The `sandbox` block of `--settings`: on, failing rather than running unconfined, with no model-requested escape. */
export function bashSandboxSettings(bash: BashLaunch): Record<string, unknown> {
  if (!bash.sandbox) return { enabled: false };
  return {
    enabled: true,
    // Without it, 2.1.330 runs Bash unsandboxed when the sandbox cannot start (see above).
    failIfUnavailable: true,
    // The model's `dangerouslyDisableSandbox` is ignored: only the caller's allowUnsandboxed leave the sandbox.
    allowUnsandboxedCommands: false,
    ...(bash.allowUnsandboxed.length > 0 ? { excludedCommands: [...bash.allowUnsandboxed] } : {}),
  };
}

/** Deny rules for the refused commands (`Bash(rm:*)`): the CLI matches each subcommand of a compound command. */
export function bashDenyRules(bash: BashLaunch | undefined): string[] {
  return (bash?.excludedCommands ?? []).map((prefix) => `Bash(${prefix}:*)`);
}

/** The programs the CLI's sandbox needs on this platform, or undefined when it has none. */
export function sandboxPrograms(platform: NodeJS.Platform = process.platform): readonly string[] | undefined {
  if (platform === "linux") return ["bwrap", "socat"];
  if (platform === "darwin") return [];
  return undefined;
}

function onPath(program: string, path: string): boolean {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, program), constants.X_OK);
      return true;
    } catch {
      // Not in this dir.
    }
  }
  return false;
}

/**
 * Refuses a sandboxed Bash before any process starts when the sandbox cannot run: the programs it needs are
 * not on the child's PATH, or the platform has no sandbox. The CLI's `failIfUnavailable` would stop it too,
 * but only after a process started, and with a result the caller would have to read.
 */
export function requireSandbox(bash: BashLaunch | undefined, path: string, platform: NodeJS.Platform = process.platform): void {
  if (!bash?.sandbox) return;
  const programs = sandboxPrograms(platform);
  if (programs === undefined) {
    throw new SandboxUnavailableError([platform], `capabilities.bash: Claude Code has no command sandbox on ${platform}. Set capabilities.bash.sandbox to false to run Bash unsandboxed (docs/guides/capabilities.md, "Bash").`);
  }
  const missing = programs.filter((program) => !onPath(program, path));
  if (missing.length > 0) {
    throw new SandboxUnavailableError(
      missing,
      `capabilities.bash: the sandbox needs ${missing.join(" and ")}, not found on the PATH the CLI gets. Install them (Debian/Ubuntu: \`apt-get install bubblewrap socat\`; Fedora: \`dnf install bubblewrap socat\`), or set capabilities.bash.sandbox to false to run Bash unsandboxed (docs/guides/capabilities.md, "Bash").`,
    );
  }
}

/** Splits a command line at the shell's list and pipe operators, for the permission answer's own prefix check. */
function subcommands(command: string): string[] {
  return command.split(/&&|\|\||[;|&\n]/).map((part) => part.trim().replace(/^\(+\s*/, "")).filter(Boolean);
}

/**
 * The answer to a permission request for Bash: denied when a subcommand starts with a refused prefix (the CLI's
 * deny rules refuse them first; this answers a request that reaches the prompt anyway), else undefined.
 */
export function bashPermission(request: Record<string, unknown>, bash: BashLaunch | undefined): Record<string, unknown> | undefined {
  if (!bash || request.tool_name !== "Bash") return undefined;
  const command = String(((request.input ?? {}) as Record<string, unknown>).command ?? "");
  // A path to the program counts as its name (`/bin/rm` is `rm`), as the CLI's rules take it.
  const parts = subcommands(command).flatMap((part) => [part, part.replace(/^\S*\//, "")]);
  const refused = bash.excludedCommands.find((prefix) => parts.some((part) => part === prefix || part.startsWith(`${prefix} `)));
  if (refused !== undefined) return { behavior: "deny", message: `Bash may not run ${JSON.stringify(refused)} commands here (capabilities.bash.excludedCommands).` };
  return undefined;
}

