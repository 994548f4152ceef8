/**
 * The requests of `capabilities.subagents` on the wire. A parent request lists the call's agents to the model
 * (the "agent types" reminder, its `{agents}` slot bound to exactly the call's agents). A subagent's own request is
 * checked as a call of its own: the version's billing line (with `cc_is_subagent=true`) and preamble, then the
 * agent's prompt followed by the CLI's recorded notes (`subagents.systemSuffix`); its first user text a task the
 * parent model gave that agent in an Agent call this call's interceptor forwarded; its tools only the agent's own;
 * its model the agent's (or the call's, for "inherit").
 */
import type { SubagentsLaunch } from "../capabilities-subagents.js";
import type { CallExpectation, ResponseContent } from "./check.js";
import type { WireShape } from "./shape.js";

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const quote = (text: string, max = 120) => JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);

/** The call's agents as 2.1.330 lists them to the parent model, one line each (`- name: description (Tools: …)`); none without subagents. */
export function agentLines(subagents: SubagentsLaunch | undefined): string[] {
  if (!subagents) return [];
  // An agent with no tools is shown as "All tools" (measured), though its requests carry none.
  return [subagents.map((agent) => `- ${agent.name}: ${agent.description} (Tools: ${agent.tools.length > 0 ? agent.tools.join(", ") : "All tools"})`).join("\n")];
}

/** The first user text of a request (its task, for a subagent's). */
function firstUserText(body: Record<string, unknown>): string | undefined {
  const first = Array.isArray(body.messages) ? body.messages[0] : undefined;
  if (!isObject(first) || first.role !== "user") return undefined;
  if (typeof first.content === "string") return first.content;
  const text = Array.isArray(first.content) ? first.content.find((block) => isObject(block) && block.type === "text" && typeof block.text === "string" && !block.text.startsWith("<system-reminder>")) : undefined;
  return isObject(text) ? String(text.text) : undefined;
}

/**
 * For a subagent's request, the expectation it is checked against (or why it cannot be admitted); undefined for
 * any other request. A request is a subagent's when its billing line says so or its system names an agent's prompt.
 */
export function subagentExpectation(body: Record<string, unknown>, expected: CallExpectation, shape: WireShape, responses: readonly ResponseContent[]): CallExpectation | string | undefined {
  const system = Array.isArray(body.system) ? body.system.map((block) => (isObject(block) && typeof block.text === "string" ? block.text : "")) : [];
  const marked = /(?:^|; )cc_is_subagent=true;/.test(system[0] ?? "");
  // The longest prompt that fits, should one agent's prompt begin another's.
  const agent = expected.subagents?.filter((candidate) => system[2]?.startsWith(candidate.prompt)).sort((a, b) => b.prompt.length - a.prompt.length)[0];
  if (!marked && !agent) return undefined;
  if (!expected.subagents) return "the request is a subagent's (cc_is_subagent=true), and the call did not opt into capabilities.subagents";
  if (!agent) return `the subagent request's system prompt is none of the call's agents': ${quote(system[2] ?? "(none)")}`;
  if (!shape.subagents) return `no subagent request is recorded for Claude Code ${shape.version}`;
  const task = firstUserText(body);
  const given = responses.some((response) =>
    response.content.some((block) => isObject(block) && block.type === "tool_use" && block.name === "Agent" && isObject(block.input) && block.input.subagent_type === agent.name && block.input.prompt === task),
  );
  if (!given) return `the subagent request's task ${quote(task ?? "(none)")} is no task the model gave ${agent.name} in an Agent call of this call`;
  const model = agent.model === "inherit" ? expected.model : agent.model;
  return {
    model,
    system: `${agent.prompt}${shape.subagents.systemSuffix}`,
    prompt: task!,
    tools: [],
    cwd: expected.cwd,
    ...(expected.toolOutputs ? { toolOutputs: expected.toolOutputs } : {}),
    ...(agent.tools.length > 0 ? { builtinTools: agent.tools } : {}),
    ...(expected.webSearch && agent.tools.includes("WebSearch") ? { webSearch: true } : {}),
  };
}
