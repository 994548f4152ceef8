import { describe, expect, it } from "vitest";
import { VERIFIED_CLI_VERSIONS } from "../../src/binary/versions.js";
import { buildCliArgs, checkInit } from "../../src/claude-code/checks/isolation.js";
import type { SystemInitMessage } from "../../src/protocol/messages.js";

const facts = VERIFIED_CLI_VERSIONS["2.1.330"]!;

function argValue(args: string[], flag: string): string | undefined {
  return args.find((arg) => arg.startsWith(`${flag}=`))?.slice(flag.length + 1);
}

describe("buildCliArgs", () => {
  it("builds the isolated surface for a call without tools", () => {
    const args = buildCliArgs({ facts, model: "sonnet", maxTurns: 1, toolIds: [], structuredOutput: false });
    for (const flag of ["-p", "--verbose", "--strict-mcp-config", "--no-session-persistence", "--disable-slash-commands"]) expect(args).toContain(flag);
    expect(argValue(args, "--setting-sources")).toBe("");
    expect(argValue(args, "--tools")).toBe("");
    expect(argValue(args, "--permission-mode")).toBe("dontAsk");
    expect(argValue(args, "--permission-prompt-tool")).toBe("stdio");
    expect(argValue(args, "--max-turns")).toBe("1");
    expect(argValue(args, "--model")).toBe("sonnet");
    expect(argValue(args, "--disallowedTools")!.split(",")).toEqual(expect.arrayContaining(["Bash", "Read", "Write", "WebFetch", "Task", "Agent", "Skill"]));
    expect(args.some((arg) => arg.startsWith("--mcp-config"))).toBe(false);
    expect(args.some((arg) => arg.startsWith("--allowedTools"))).toBe(false);
  });

  it("switches off every built-in plugin of the version through --settings", () => {
    const args = buildCliArgs({ facts, model: "sonnet", maxTurns: 1, toolIds: [], structuredOutput: false });
    const settings = JSON.parse(argValue(args, "--settings")!);
    expect(settings.enabledPlugins).toEqual(Object.fromEntries(facts.builtinPlugins.map((name) => [`${name}@builtin`, false])));
  });

  it("declares only the ktx sdk MCP server and auto-approves exactly the call's tool ids", () => {
    const args = buildCliArgs({ facts, model: "opus", maxTurns: 4, toolIds: ["mcp__ktx__a", "mcp__ktx__b"], structuredOutput: false });
    expect(JSON.parse(argValue(args, "--mcp-config")!)).toEqual({ mcpServers: { ktx: { type: "sdk", name: "ktx" } } });
    expect(argValue(args, "--allowedTools")).toBe("mcp__ktx__a,mcp__ktx__b");
  });

  it("never puts prompts or schemas on argv (they travel over stdin)", () => {
    const args = buildCliArgs({ facts, model: "sonnet", maxTurns: 8, toolIds: [], structuredOutput: true });
    expect(args.some((arg) => arg.startsWith("--json-schema") || arg.startsWith("--system-prompt"))).toBe(false);
  });

  it("omits --disable-slash-commands and the plugin switches for a version without them, but always turns hooks off", () => {
    const args = buildCliArgs({ facts: { ...facts, hasDisableSlashCommands: false, builtinPlugins: [] }, model: "s", maxTurns: 1, toolIds: [], structuredOutput: false });
    expect(args).not.toContain("--disable-slash-commands");
    expect(args.filter((arg) => arg.startsWith("--settings="))).toEqual(['--settings={"disableAllHooks":true}']);
    expect(args).toContain("--include-hook-events");
  });
});

function init(overrides: Partial<SystemInitMessage> = {}): SystemInitMessage {
  return {
    type: "system",
    subtype: "init",
    session_id: "s",
    cwd: "/tmp",
    tools: [],
    mcp_servers: [],
    model: "claude-sonnet-5-5",
    plugins: [],
    apiKeySource: "none",
    slash_commands: ["debug"],
    skills: ["x"],
    agents: ["Explore"],
    ...overrides,
  };
}

describe("checkInit", () => {
  const base = { toolIds: [] as string[], structuredOutput: false, apiKeyAllowed: false, cwd: "/tmp" };

  it("accepts the isolated surface even with host-discovered slash commands, skills and agents", () => {
    expect(checkInit(init(), base)).toEqual([]);
  });

  it("expects StructuredOutput when a schema was given, and exactly the ktx ids and server with tools", () => {
    expect(checkInit(init({ tools: ["StructuredOutput"] }), { ...base, structuredOutput: true })).toEqual([]);
    const withTools = init({ tools: ["mcp__ktx__b", "mcp__ktx__a"], mcp_servers: [{ name: "ktx", status: "connected" }] });
    expect(checkInit(withTools, { ...base, toolIds: ["mcp__ktx__a", "mcp__ktx__b"] })).toEqual([]);
  });

  it("names every difference: extra tool, other server, plugins, API key source, cwd", () => {
    const differences = checkInit(
      init({
        tools: ["Bash", "mcp__ktx__a"],
        mcp_servers: [{ name: "ktx", status: "failed" }, { name: "github", status: "connected" }],
        plugins: [{ name: "cc-plugin-privacy" }],
        apiKeySource: "ANTHROPIC_API_KEY",
        cwd: "/somewhere/else",
      }),
      { ...base, toolIds: ["mcp__ktx__a"] },
    );
    expect(differences.join("\n")).toMatch(/tools were .*Bash/);
    expect(differences.join("\n")).toMatch(/mcp_servers were .*github/);
    expect(differences.join("\n")).toMatch(/status "failed"/);
    expect(differences.join("\n")).toMatch(/plugins were .*cc-plugin-privacy/);
    expect(differences.join("\n")).toMatch(/apiKeySource was "ANTHROPIC_API_KEY"/);
    expect(differences.join("\n")).toMatch(/cwd was/);
  });

  it("allows an API key source only with an explicit endpoint", () => {
    expect(checkInit(init({ apiKeySource: "ANTHROPIC_API_KEY" }), { ...base, apiKeyAllowed: true })).toEqual([]);
  });
});
