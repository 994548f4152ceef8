/**
 * The Claude Code CLI versions this library has verified, and what each one does differently.
 * Adding a version is one entry here plus recorded fixtures (docs/compatibility.md).
 */

export interface CliVersionFacts {
  version: string;
  /** Built-in plugins listed in `init.plugins` unless switched off through `--settings` enabledPlugins. */
  builtinPlugins: readonly string[];
  /** Built-in tool names, listed in `--disallowedTools` as a second layer behind `--tools=`. */
  builtinTools: readonly string[];
  /** Whether `--disable-slash-commands` exists. */
  hasDisableSlashCommands: boolean;
  /**
   * How a started process is switched to another model, verified on the real CLI (init and the API
   * requests then use the new model, with no extra request): `apply_flag_settings` with `{model}`.
   * `set_model` also switches but first sends a 1-token API request, so it is never used. Without a
   * switch the model is part of the pool key: processes are then shared only by calls of one model.
   * 2.1.142 and 2.1.200 put a `/model` local-command exchange into the history on either request, so
   * their requests after a switch differ from a fresh process's: they get no switch.
   */
  modelSwitch?: "apply_flag_settings";
  /** 2.1.142 and 2.1.200 send MCP `initialize` and `notifications/initialized` twice. */
  duplicateMcpInitialize: boolean;
  /**
   * `false`: the CLI refuses `rewind_conversation` (`rewound` is never true), so a finished call's process cannot
   * serve the next call: every call starts a CLI of its own (about 1 s on a 2-core machine instead of tens of ms on a
   * reused process), and a runtime on it says so once (`noReuseWarning`). Absent: reuse holds (the e2e suite's
   * reuse tests pass on it).
   */
  reuse?: false;
  /**
   * `false`: the CLI sends no structured-output nudge, so an object call whose model first answers in prose is
   * asked once more (an extra request) or, on a one-turn limit, ends with `StructuredOutputError`. Absent: the
   * object arrives in the one request the README's figures count.
   */
  structuredOutputInOneRequest?: false;
  /** What the model aliases mean on this version (reported; the CLI resolves them itself). */
  aliases: Readonly<Record<string, string>>;
  /**
   * sha256 of the binary per platform package (`linux-x64`, `darwin-arm64`, …; `cli.js` for versions
   * that ship only that), recorded by `fixtures verify`. A version installed into the cache is
   * checked against it before it runs (src/binary/install.ts).
   */
  binarySha256?: Readonly<Record<string, string>>;
}

/** Named by every entry (older versions' tools included: naming a tool a CLI lacks is harmless). */
export const BUILTIN_TOOLS = [
  "Agent",
  "Task",
  "AskUserQuestion",
  "Bash",
  "BashOutput",
  "KillShell",
  "Read",
  "Edit",
  "MultiEdit",
  "Write",
  "NotebookEdit",
  "Glob",
  "Grep",
  "LS",
  "WebFetch",
  "WebSearch",
  "TodoWrite",
  "Skill",
  "SlashCommand",
  "ExitPlanMode",
  "EnterPlanMode",
  "ListMcpResourcesTool",
  "ReadMcpResourceTool",
  "PowerShell",
  // Offered only with a claude.ai login (first-party path; 2.1.330), so a probe on a base URL never sees it.
  "RemoteTrigger",
] as const;

/**
 * Built-ins each version adds, read from its `init.tools` when started without `--tools=`
 * (`scripts/probe-cli-facts.mjs`, which also reads plugins, aliases and the model switch).
 * TaskCreate/TaskGet/TaskList/TaskUpdate: 2.1.330 offers them to 4.x models (KTX's pinned ids), not to
 * claude-*-5-5; they are named for 2.1.286 too (naming a tool a CLI lacks is harmless; the init check
 * would catch one it offers).
 */
const BUILTIN_TOOLS_2_1_330 = [...BUILTIN_TOOLS, "CronCreate", "CronDelete", "CronList", "EnterWorktree", "ExitWorktree", "ListAgents", "Monitor", "ReportFindings", "ScheduleWakeup", "SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskStop", "TaskUpdate", "ToolSearch", "Workflow"];
const BUILTIN_TOOLS_2_1_286 = [...BUILTIN_TOOLS, "CronCreate", "CronDelete", "CronList", "EnterWorktree", "ExitWorktree", "ListAgents", "ReportFindings", "ScheduleWakeup", "SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskStop", "TaskUpdate", "Workflow"];
const BUILTIN_TOOLS_2_1_200 = [...BUILTIN_TOOLS, "CronCreate", "CronDelete", "CronList", "EnterWorktree", "ExitWorktree", "ReportFindings", "ScheduleWakeup", "SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskOutput", "TaskStop", "TaskUpdate", "Workflow"];
const BUILTIN_TOOLS_2_1_142 = [...BUILTIN_TOOLS, "CronCreate", "CronDelete", "CronList", "EnterWorktree", "ExitWorktree", "ScheduleWakeup", "TaskCreate", "TaskGet", "TaskList", "TaskOutput", "TaskStop", "TaskUpdate"];

export const VERIFIED_CLI_VERSIONS: Readonly<Record<string, CliVersionFacts>> = {
  "2.1.332": {
    version: "2.1.332",
    builtinPlugins: ["cc-plugin-agents-md", "cc-plugin-privacy", "cc-plugin-plugin-authoring", "cc-plugin-telemetry"],
    builtinTools: [...BUILTIN_TOOLS, "CronCreate", "CronDelete", "CronList", "EnterWorktree", "ExitWorktree", "ListAgents", "Monitor", "ReportFindings", "ScheduleWakeup", "SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskStop", "TaskUpdate", "ToolSearch", "Workflow"],
    hasDisableSlashCommands: true,
    modelSwitch: "apply_flag_settings",
    duplicateMcpInitialize: false,
    aliases: { sonnet: "claude-sonnet-5-5", opus: "claude-opus-5-5", haiku: "claude-haiku-5-5" },
    binarySha256: { "linux-x64": "a2df1f41bb00250992926420d0063f89b127cb81abdd284dbefb80c50ff1d026" },
  },
  "2.1.331": {
    version: "2.1.331",
    builtinPlugins: ["cc-plugin-agents-md", "cc-plugin-privacy", "cc-plugin-plugin-authoring", "cc-plugin-telemetry"],
    builtinTools: [...BUILTIN_TOOLS, "CronCreate", "CronDelete", "CronList", "EnterWorktree", "ExitWorktree", "ListAgents", "Monitor", "ReportFindings", "ScheduleWakeup", "SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskStop", "TaskUpdate", "ToolSearch", "Workflow"],
    hasDisableSlashCommands: true,
    modelSwitch: "apply_flag_settings",
    duplicateMcpInitialize: false,
    aliases: { sonnet: "claude-sonnet-5-5", opus: "claude-opus-5-5", haiku: "claude-haiku-5-5" },
    binarySha256: { "linux-x64": "4c00839cf46beb2b38ec310105f2d538f7f9321fe46c636299b74bcab94626b1" },
  },
  "2.1.330": {
    version: "2.1.330",
    builtinPlugins: ["cc-plugin-agents-md", "cc-plugin-privacy", "cc-plugin-plugin-authoring", "cc-plugin-telemetry"],
    builtinTools: BUILTIN_TOOLS_2_1_330,
    hasDisableSlashCommands: true,
    modelSwitch: "apply_flag_settings",
    duplicateMcpInitialize: false,
    aliases: { sonnet: "claude-sonnet-5-5", opus: "claude-opus-5-5", haiku: "claude-haiku-5-5" },
    binarySha256: { "linux-x64": "f390eaa0814e6a1bff74cbb47acb74cb9c89d30ced809fe0af5af00c7bfe8ebb" },
  },
  "2.1.286": {
    version: "2.1.286",
    builtinPlugins: ["cc-plugin-agents-md", "cc-plugin-plugin-authoring"],
    builtinTools: BUILTIN_TOOLS_2_1_286,
    hasDisableSlashCommands: true,
    modelSwitch: "apply_flag_settings",
    duplicateMcpInitialize: false,
    aliases: { sonnet: "claude-sonnet-5-5", opus: "claude-opus-5-5", haiku: "claude-haiku-4-5-20251001" },
  },
  "2.1.200": {
    version: "2.1.200",
    builtinPlugins: [],
    builtinTools: BUILTIN_TOOLS_2_1_200,
    hasDisableSlashCommands: true,
    reuse: false,
    duplicateMcpInitialize: true,
    aliases: { sonnet: "claude-sonnet-5", opus: "claude-opus-4-8", haiku: "claude-haiku-4-5-20251001" },
  },
  "2.1.142": {
    version: "2.1.142",
    builtinPlugins: [],
    builtinTools: BUILTIN_TOOLS_2_1_142,
    hasDisableSlashCommands: true,
    reuse: false,
    structuredOutputInOneRequest: false,
    duplicateMcpInitialize: true,
    aliases: { sonnet: "claude-sonnet-4-6", opus: "claude-opus-4-7", haiku: "claude-haiku-4-5" },
  },
};

/** Compares two `x.y.z` versions numerically. */
export function compareCliVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < 3; i += 1) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * The newest version in the table. The package accepts any verified version (package.json names each one), so
 * which one runs is the host's install; this is only the best guess where no installed version is at hand.
 */
export const NEWEST_VERIFIED_CLI_VERSION: string = Object.keys(VERIFIED_CLI_VERSIONS).sort(compareCliVersions).at(-1)!;

/**
 * @deprecated No version is pinned any more: the CLI dependency accepts every verified version. This is
 * `NEWEST_VERIFIED_CLI_VERSION`; the version a runtime actually uses is `resolveCli()`'s `version`.
 */
export const PINNED_CLI_VERSION: string = NEWEST_VERIFIED_CLI_VERSION;

/**
 * Facts for a version; an unverified version (allowed by the caller) borrows the newest verified version's
 * facts, which is the best guess and is why such runs are refused by default.
 */
export function factsFor(version: string): CliVersionFacts {
  return VERIFIED_CLI_VERSIONS[version] ?? { ...VERIFIED_CLI_VERSIONS[NEWEST_VERIFIED_CLI_VERSION]!, version };
}

/** The oldest verified version on which every call can run on a reused process. */
export const OLDEST_REUSE_CLI_VERSION = "2.1.286";

/**
 * What a runtime on this version says once when it would reuse processes and cannot (the version refuses the
 * rewind), naming the version and the fix; undefined when reuse works on it or is off anyway (`reuse: false`).
 */
export function noReuseWarning(facts: CliVersionFacts, reuseWanted = true): string | undefined {
  if (!reuseWanted || facts.reuse !== false) return undefined;
  return (
    `Claude Code CLI ${facts.version} refuses rewind_conversation, so ktx-claude-code cannot reuse its processes: every call starts a new CLI ` +
    `(about 1 s per call instead of tens of ms). Install a verified CLI from ${OLDEST_REUSE_CLI_VERSION} on: remove the pin that chose ${facts.version} ` +
    `or pin a newer verified version of the CLI's platform package (docs/compatibility.md, "Which CLI version a host gets").`
  );
}

export function isVerifiedVersion(version: string): boolean {
  return Object.hasOwn(VERIFIED_CLI_VERSIONS, version);
}
