/**
 * `capabilities.subagents` (issue 43): named agent definitions the model may hand a task to with the CLI's Agent
 * tool; each runs in its own context (its own system prompt and messages, not the parent's history) and its final
 * report comes back to the parent as the tool's result (docs/guides/capabilities.md, "Subagents").
 *
 * What CLI 2.1.330 does, measured with the scripted API:
 * - `--agents=<json>` adds the definitions; `--tools=Agent` gives the model the Agent tool, which `init` lists as
 *   "Task"; `init.agents` lists the CLI's own agents too ("claude", "general-purpose", "statusline-setup", and
 *   "Explore" and "Plan" unless CLAUDE_CODE_DISABLE_EXPLORE_PLAN_AGENTS is set).
 * - by default an agent runs in the background: the parent gets "Async agent launched successfully" and the report
 *   arrives later as a task notification. With CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1 the tool's
 *   `run_in_background` parameter is gone and the parent's tool result is the report ("[Subagent hand-back] …").
 * - deny rules `Agent(<name>)` take the CLI's own agents off the list the model is shown ("Available agent types");
 *   they stay in `init.agents`.
 * - a subagent's request: billing line with `cc_is_subagent=true`, the preamble, then its prompt followed by the
 *   CLI's own notes; one user message, the task the parent model wrote; its tools only those its definition names.
 */
import { z } from "zod";
import { InvalidInputError } from "../errors/index.js";
import { resolveModelValue } from "./models.js";

/** The CLI's own agents (2.1.330), kept from the model by deny rules; a definition may not take their names. */
export const CLI_AGENTS = ["claude", "general-purpose", "statusline-setup", "Explore", "Plan", "fork"] as const;

/** The tools a subagent may name: the built-in tools a capability can opt into (the call must opt into them too). */
const SUBAGENT_TOOLS = ["Read", "Glob", "Grep", "Edit", "Write", "NotebookEdit", "Bash", "WebSearch"] as const;

const agentSchema = z
  .object({
    /** When the model should use it (the CLI lists it to the model). */
    description: z.string().min(1).max(2_000),
    /** The subagent's system prompt. */
    prompt: z.string().min(1).max(50_000),
    /** Its tools, each one the call opts into as well; none by default. */
    tools: z.array(z.enum(SUBAGENT_TOOLS)).readonly().optional(),
    /** Its model: an alias (resolved as the call's are, to a full id), or "inherit" (the default: the call's). */
    model: z.enum(["sonnet", "opus", "haiku", "inherit"]).optional(),
  })
  .strict();

export const subagentsCapabilitySchema = z.record(
  z.string().regex(/^[a-z][a-z0-9-]{0,63}$/, "an agent name is lower-case letters, digits and -, starting with a letter"),
  agentSchema,
);

export type SubagentsCapability = z.infer<typeof subagentsCapabilitySchema>;

/** The subagents of a launch: sorted by name, tools sorted, so equal asks share a pool key. */
export type SubagentsLaunch = ReadonlyArray<{ name: string; description: string; prompt: string; tools: readonly string[]; model: string }>;

/** Resolves `capabilities.subagents` against the tools the call opts into; an agent naming a tool the call lacks is refused. */
export function subagentsLaunchFor(subagents: SubagentsCapability | undefined, callTools: readonly string[]): SubagentsLaunch | undefined {
  if (subagents === undefined || Object.keys(subagents).length === 0) return undefined;
  return Object.keys(subagents)
    .sort()
    .map((name) => {
      const agent = subagents[name]!;
      if ((CLI_AGENTS as readonly string[]).includes(name)) refuse(name, `${JSON.stringify(name)} is one of the CLI's own agents (${CLI_AGENTS.join(", ")}); name yours otherwise`);
      const tools = [...new Set(agent.tools ?? [])].sort();
      const missing = tools.filter((tool) => !callTools.includes(tool));
      if (missing.length > 0) refuse(name, `its tools ${missing.join(", ")} are not opted into by the call (capabilities.builtinTools, bash or webSearch): a subagent gets no tool its caller does not have`);
      // An alias is resolved as the library resolves the call's (the CLI's own alias may name a newer model than the verified one).
      const model = agent.model === undefined || agent.model === "inherit" ? "inherit" : (resolveModelValue(agent.model)?.id ?? agent.model);
      return { name, description: agent.description, prompt: agent.prompt, tools, model };
    });
}

function refuse(name: string, why: string): never {
  const error = new InvalidInputError(`Invalid capabilities.subagents.${name}: ${why}. docs/guides/capabilities.md, "Subagents".`);
  error.field = `capabilities.subagents.${name}`;
  throw error;
}

/** The `--agents` value: each definition with exactly its tools (none when it names none) and its model. */
export function agentsFlag(subagents: SubagentsLaunch): string {
  return JSON.stringify(Object.fromEntries(subagents.map((agent) => [agent.name, { description: agent.description, prompt: agent.prompt, tools: [...agent.tools], model: agent.model }])));
}

/** Deny rules keeping the CLI's own agents from the model. */
export function cliAgentDenyRules(subagents: SubagentsLaunch | undefined): string[] {
  return subagents ? CLI_AGENTS.map((name) => `Agent(${name})`) : [];
}

/** The environment a launch with subagents gets: agents run in the foreground (the parent gets the report), no Explore/Plan. */
export function subagentsEnv(subagents: SubagentsLaunch | undefined): Record<string, string> {
  return subagents ? { CLAUDE_CODE_DISABLE_BACKGROUND_TASKS: "1", CLAUDE_CODE_DISABLE_EXPLORE_PLAN_AGENTS: "1" } : {};
}

/** What `init.agents` may list besides the asked ones: the CLI's own, which the deny rules keep from the model. */
export function agentsProblems(listed: readonly string[] | undefined, subagents: SubagentsLaunch | undefined): string[] {
  if (!subagents) return [];
  const names = listed ?? [];
  const problems: string[] = [];
  const missing = subagents.filter((agent) => !names.includes(agent.name)).map((agent) => agent.name);
  if (missing.length > 0) problems.push(`agents were ${JSON.stringify(names)}, without ${JSON.stringify(missing)} asked for`);
  const extra = names.filter((name) => !subagents.some((agent) => agent.name === name) && !(CLI_AGENTS as readonly string[]).includes(name));
  if (extra.length > 0) problems.push(`agents were ${JSON.stringify(names)}, with ${JSON.stringify(extra)} nobody asked for`);
  return problems;
}
