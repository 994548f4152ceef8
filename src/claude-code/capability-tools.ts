/**
 * The CLI's own tools a call's capabilities add (capabilities.ts, capabilities-bash.ts, capabilities-web-search.ts,
 * capabilities-subagents.ts): what the launch lists in `--tools` and the init and wire checks expect, besides the
 * call's own tools.
 */
import type { BashLaunch } from "./capabilities-bash.js";
import type { SubagentsLaunch } from "./capabilities-subagents.js";
import type { McpServers } from "./capabilities/mcp-servers.js";

export interface CapabilityToolsSpec {
  /** The file tools opted into (`capabilities.builtinTools`, resolved for the version). */
  builtinTools?: readonly string[];
  /** `capabilities.bash`, resolved. */
  bash?: BashLaunch;
  /** `capabilities.webSearch`. */
  webSearch?: boolean;
  /** `capabilities.subagents`, resolved. */
  subagents?: SubagentsLaunch;
}

/**
 * A call's capabilities as its launch takes them (resolved for the CLI version), carried from the host through
 * the run to the launch flags, the init check and the wire check: the tools above, and the project source and
 * the MCP servers the CLI runs.
 */
export interface CapabilityLaunch extends CapabilityToolsSpec {
  /** `capabilities.projectInstructions`: the project setting source, its extras switched off (capabilities/project.ts). */
  projectInstructions?: boolean;
  /** `capabilities.mcpServers`: servers the CLI runs beside the library's own (capabilities/mcp-servers.ts). */
  mcpServers?: McpServers;
}

/**
 * The built-in tools of a call, sorted: the file tools, Bash with `bash`, WebSearch with `webSearch`, Agent with
 * `subagents` (which `init` lists as "Task" on 2.1.330: `names: "init"`).
 */
export function capabilityTools(spec: CapabilityToolsSpec, names: "request" | "init" = "request"): readonly string[] | undefined {
  if (!spec.bash && !spec.webSearch && !spec.subagents) return spec.builtinTools;
  const agent = spec.subagents ? [names === "init" ? "Task" : "Agent"] : [];
  return [...(spec.builtinTools ?? []), ...(spec.bash ? ["Bash"] : []), ...(spec.webSearch ? ["WebSearch"] : []), ...agent].sort();
}
