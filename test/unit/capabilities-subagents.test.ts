/**
 * `capabilities.subagents` without a CLI: the strict definitions, exactly the flags, deny rules and environment
 * they add to the launch (and so to the pool key), and the init check of the agents listed.
 */
import { describe, expect, it } from "vitest";
import { VERIFIED_CLI_VERSIONS } from "../../src/binary/versions.js";
import { parseCapabilities } from "../../src/claude-code/capabilities.js";
import { CLI_AGENTS, agentsProblems, subagentsEnv, subagentsLaunchFor } from "../../src/claude-code/capabilities-subagents.js";
import { capabilityTools } from "../../src/claude-code/capability-tools.js";
import { resolveModelValue } from "../../src/claude-code/models.js";
import { buildCliArgs, checkInit } from "../../src/claude-code/checks/isolation.js";
import { launchKey } from "../../src/claude-code/pool/pool-keys.js";
import { InvalidInputError } from "../../src/errors/index.js";
import type { SystemInitMessage } from "../../src/protocol/messages.js";

const facts = VERIFIED_CLI_VERSIONS["2.1.330"]!;
const spec = { facts, model: "sonnet", maxTurns: 3, toolIds: [] as string[], structuredOutput: false };
const flag = (args: readonly string[], name: string) => args.find((arg) => arg.startsWith(`${name}=`))?.slice(name.length + 1);
const reviewer = { reviewer: { description: "Reviews.", prompt: "You review." } };

describe("capabilities.subagents", () => {
  it("is strict: names, keys, tools and models are checked", () => {
    expect(parseCapabilities({ subagents: reviewer })).toEqual({ subagents: reviewer });
    for (const bad of [{ Reviewer: reviewer.reviewer }, { reviewer: { description: "", prompt: "p" } }, { reviewer: { ...reviewer.reviewer, tools: ["Agent"] } }, { reviewer: { ...reviewer.reviewer, model: "gpt" } }, { reviewer: { ...reviewer.reviewer, color: "red" } }]) {
      expect(() => parseCapabilities({ subagents: bad })).toThrow(InvalidInputError);
    }
  });

  it("resolves against the call's tools: a tool the call does not opt into, or a CLI agent's name, is refused", () => {
    expect(subagentsLaunchFor(undefined, [])).toBeUndefined();
    expect(subagentsLaunchFor({}, [])).toBeUndefined();
    expect(subagentsLaunchFor({ b: { description: "d", prompt: "p", tools: ["Read", "Grep", "Read"] }, a: { description: "d", prompt: "p" } }, ["Grep", "Read"])).toEqual([
      { name: "a", description: "d", prompt: "p", tools: [], model: "inherit" },
      { name: "b", description: "d", prompt: "p", tools: ["Grep", "Read"], model: "inherit" },
    ]);
    expect(() => subagentsLaunchFor({ a: { description: "d", prompt: "p", tools: ["Bash"] } }, ["Read"])).toThrow(/Bash are not opted into/);
    // An alias becomes the full id the library resolves it to; "inherit" stays.
    expect(subagentsLaunchFor({ a: { description: "d", prompt: "p", model: "haiku" } }, [])![0]!.model).toBe(resolveModelValue("haiku")!.id);
    expect(subagentsLaunchFor({ a: { description: "d", prompt: "p", model: "inherit" } }, [])![0]!.model).toBe("inherit");
    expect(() => subagentsLaunchFor({ "general-purpose": { description: "d", prompt: "p" } }, [])).toThrow(/one of the CLI's own agents/);
  });

  it("adds Agent, --agents, the CLI agents' deny rules and the foreground environment; nothing else changes", () => {
    const subagents = subagentsLaunchFor(reviewer, [])!;
    const plain = buildCliArgs(spec);
    const args = buildCliArgs({ ...spec, subagents });
    expect(flag(args, "--tools")).toBe("Agent");
    expect(JSON.parse(flag(args, "--agents")!)).toEqual({ reviewer: { description: "Reviews.", prompt: "You review.", tools: [], model: "inherit" } });
    const denied = flag(args, "--disallowedTools")!.split(",");
    expect(denied).not.toContain("Agent");
    expect(denied).not.toContain("Task");
    expect(denied).toEqual(expect.arrayContaining(CLI_AGENTS.map((name) => `Agent(${name})`)));
    expect(flag(args, "--allowedTools")).toBe("Agent");
    const rest = (list: readonly string[]) => list.filter((arg) => !/^--(tools|disallowedTools|allowedTools|agents)=/.test(arg));
    expect(rest(args)).toEqual(rest(plain));
    expect(flag(plain, "--disallowedTools")!.split(",")).toEqual(expect.arrayContaining(["Agent", "Task"]));
    expect(subagentsEnv(subagents)).toEqual({ CLAUDE_CODE_DISABLE_BACKGROUND_TASKS: "1", CLAUDE_CODE_DISABLE_EXPLORE_PLAN_AGENTS: "1" });
    expect(subagentsEnv(undefined)).toEqual({});
    // Part of the pool key: another prompt is another launch.
    const key = (value?: typeof reviewer) => launchKey({ path: "/cli", args: buildCliArgs({ ...spec, subagents: subagentsLaunchFor(value, []) }), cwd: "/p", env: {} }, true);
    expect(new Set([key(), key(reviewer), key({ reviewer: { ...reviewer.reviewer, prompt: "Other." } })]).size).toBe(3);
  });

  it("the init check: Task among the tools, the asked agents listed, no agent but the CLI's own besides", () => {
    const subagents = subagentsLaunchFor(reviewer, [])!;
    const init = (agents: string[]) => ({ type: "system", subtype: "init", tools: ["Task"], mcp_servers: [], cwd: "/p", agents }) as unknown as SystemInitMessage;
    const expected = { toolIds: [], structuredOutput: false, apiKeyAllowed: false, cwd: "/p", builtinTools: capabilityTools({ subagents }, "init"), subagents };
    expect(checkInit(init(["claude", "general-purpose", "reviewer", "statusline-setup"]), expected)).toEqual([]);
    expect(checkInit(init(["claude", "general-purpose"]), expected)).toEqual([`agents were ["claude","general-purpose"], without ["reviewer"] asked for`]);
    expect(checkInit(init(["reviewer", "planted"]), expected)).toEqual([`agents were ["reviewer","planted"], with ["planted"] nobody asked for`]);
    expect(agentsProblems(["planted"], undefined)).toEqual([]);
  });
});
