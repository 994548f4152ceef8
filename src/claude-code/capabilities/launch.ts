/**
 * A call's `capabilities` resolved for the CLI version it runs on, before any process starts (host.ts): what
 * the launch, the init check and the wire check then carry (`CapabilityLaunch`), and every refusal that can be
 * made ahead — a named tool the version lacks, a sandbox that cannot run here, project files the project source
 * would load beside the instructions, and, behind the interceptor, anything the version's recorded shape cannot
 * check.
 */
import type { ResolvedCli } from "../../binary/locate.js";
import { IsolationError } from "../../errors/index.js";
import { type Capabilities, builtinToolsFor } from "../capabilities.js";
import { bashLaunchFor, requireSandbox } from "../capabilities-bash.js";
import { subagentsLaunchFor } from "../capabilities-subagents.js";
import type { CapabilityLaunch } from "../capability-tools.js";
import { wireShapeFor } from "../wire/shape.js";
import { checkProjectSources } from "./project.js";

export function resolveCapabilityLaunch(capabilities: Capabilities | undefined, cli: ResolvedCli, where: { projectDir: string; path: string; wire: boolean }): CapabilityLaunch & { builtinTools: string[] } {
  const builtinTools = builtinToolsFor(capabilities, cli.facts);
  const bash = bashLaunchFor(capabilities?.bash);
  // A sandboxed Bash that cannot run here is refused before anything starts (never run unconfined).
  requireSandbox(bash, where.path);
  const webSearch = capabilities?.webSearch === true;
  const subagents = subagentsLaunchFor(capabilities?.subagents, [...builtinTools, ...(bash ? ["Bash"] : []), ...(webSearch ? ["WebSearch"] : [])]);
  const projectInstructions = capabilities?.projectInstructions === true;
  // What the project source would load besides the instructions is refused before any process starts (project.ts).
  if (projectInstructions) checkProjectSources(where.projectDir, cli.facts);
  if (where.wire) {
    // The wire check expects what each capability adds as recorded for the version (fixtures record-wire). Bash's
    // definition is recorded unsandboxed only ("Bash"): what a running sandbox adds to the request is unmeasured
    // (no sandbox on the recording machine), so a sandboxed one is refused until recorded.
    const shape = wireShapeFor(cli.version);
    const tools = [...builtinTools, ...(bash ? [bash.sandbox ? "Bash (sandboxed)" : "Bash"] : []), ...(webSearch ? ["WebSearch"] : []), ...(subagents ? ["Agent"] : [])];
    const unrecorded = tools.filter((name) => !shape?.builtinTools.has(name));
    if (subagents && !shape?.subagents) unrecorded.push("a subagent's request");
    if (webSearch && !shape?.webSearch) unrecorded.push("the web search request");
    if (projectInstructions && !shape?.projectInstructions) unrecorded.push("the project instructions' format");
    if (unrecorded.length > 0) {
      throw new IsolationError(
        [`wire: the capabilities add the CLI's own tools, requests and text, and none is recorded for ${unrecorded.join(", ")} on Claude Code ${cli.version}, so the requests cannot be checked`],
        "Record the version's shape with `ktx-claude-code fixtures record-wire`, run it with an apiEndpoint, or on a host with `wire: false` (no wire check; docs/guides/capabilities.md).",
      );
    }
  }
  return { builtinTools, bash, webSearch, subagents, projectInstructions, mcpServers: capabilities?.mcpServers };
}
