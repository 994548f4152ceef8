/**
 * `capabilities.builtinTools` without a CLI: the strict option, its resolution per version, exactly the flags
 * it adds to the launch (and so to the pool key), the init check's expectation and the permission answers'
 * scoping to the project dir.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { VERIFIED_CLI_VERSIONS } from "../../src/binary/versions.js";
import { builtinPermission, builtinToolsFor, isInside, parseCapabilities } from "../../src/claude-code/capabilities.js";
import { buildCliArgs, checkInit } from "../../src/claude-code/checks/isolation.js";
import { launchKey } from "../../src/claude-code/pool/pool-keys.js";
import { InvalidInputError } from "../../src/errors/index.js";
import type { SystemInitMessage } from "../../src/protocol/messages.js";
import { cleanup, tempDir } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const facts = VERIFIED_CLI_VERSIONS["2.1.330"]!;
const spec = { facts, model: "sonnet", maxTurns: 3, toolIds: [] as string[], structuredOutput: false };

describe("parseCapabilities", () => {
  it("is off by default and strict", () => {
    expect(parseCapabilities(undefined)).toBeUndefined();
    expect(parseCapabilities({})).toEqual({});
    expect(() => parseCapabilities({ builtinTool: ["Read"] })).toThrow(InvalidInputError);
    expect(() => parseCapabilities("readonly")).toThrow(InvalidInputError);
  });
});

describe("capabilities", () => {
  it("parses names and sets, refuses unknown keys, wrong kinds and tools it cannot scope", () => {
    expect(parseCapabilities({ builtinTools: ["Read"] })).toEqual({ builtinTools: ["Read"] });
    expect(parseCapabilities({ builtinTools: "readonly" })).toEqual({ builtinTools: "readonly" });
    const field = (value: unknown) => {
      try {
        parseCapabilities(value);
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidInputError);
        return [(error as InvalidInputError).field, (error as Error).message];
      }
      return undefined;
    };
    expect(field({ builtinTool: ["Read"] })).toEqual(["capabilities", expect.stringMatching(/unknown key "builtinTool"; known: builtinTools/)]);
    expect(field({ builtinTools: "all" })?.[0]).toBe("capabilities.builtinTools");
    expect(field({ builtinTools: ["Bash"] })).toEqual(["capabilities.builtinTools", expect.stringMatching(/"Bash" cannot be opted into/)]);
    expect(field({ builtinTools: ["WebFetch", "Read"] })?.[1]).toMatch(/"WebFetch"/);
  });

  it("resolves the sets to what 2.1.330 has (no LS, no MultiEdit: its init lists neither) and refuses a named tool it lacks", () => {
    expect(builtinToolsFor(undefined, facts)).toEqual([]);
    expect(builtinToolsFor({ builtinTools: "readonly" }, facts)).toEqual(["Glob", "Grep", "Read"]);
    expect(builtinToolsFor({ builtinTools: "edit" }, facts)).toEqual(["Edit", "Glob", "Grep", "NotebookEdit", "Read", "Write"]);
    expect(builtinToolsFor({ builtinTools: ["Read", "Grep", "Read"] }, facts)).toEqual(["Grep", "Read"]);
    expect(() => builtinToolsFor({ builtinTools: ["MultiEdit"] }, facts)).toThrow(/Claude Code 2\.1\.330 has no "MultiEdit" tool/);
  });
});

describe("the launch with builtinTools", () => {
  it("adds exactly --tools, the allow rules and the tools' removal from --disallowedTools; nothing else changes", () => {
    const isolated = buildCliArgs(spec);
    const withRead = buildCliArgs({ ...spec, builtinTools: ["Read"] });
    const changed = withRead.filter((arg) => !isolated.includes(arg));
    const gone = isolated.filter((arg) => !withRead.includes(arg));
    expect(changed).toEqual(["--tools=Read", `--disallowedTools=${facts.builtinTools.filter((name) => name !== "Read").join(",")}`, "--allowedTools=Read(./**)"]);
    expect(gone).toEqual(["--tools=", `--disallowedTools=${facts.builtinTools.join(",")}`]);
    // The isolated launch is as before: no allow rules without tools.
    expect(isolated.some((arg) => arg.startsWith("--allowedTools"))).toBe(false);
    // With the call's own tools the rules follow them.
    expect(buildCliArgs({ ...spec, toolIds: ["mcp__ktx__a"], builtinTools: ["Glob", "Read"] })).toContain("--allowedTools=mcp__ktx__a,Glob(./**),Read(./**)");
  });

  it("is part of the pool key: a process with a capability never matches a call without it", () => {
    const key = (builtinTools?: string[]) => launchKey({ path: "/cli", args: buildCliArgs({ ...spec, builtinTools }), cwd: "/p", env: {} }, true);
    expect(key(["Read"])).not.toBe(key());
    expect(key(["Read"])).not.toBe(key(["Read", "Grep"]));
    expect(key([])).toBe(key());
  });
});

describe("the init check with builtinTools", () => {
  const init = (tools: string[]): SystemInitMessage => ({ type: "system", subtype: "init", session_id: "s", cwd: "/tmp", tools, mcp_servers: [], model: "m", plugins: [], apiKeySource: "none" }) as SystemInitMessage;
  const base = { toolIds: [] as string[], structuredOutput: false, apiKeyAllowed: false, cwd: "/tmp" };

  it("expects exactly the tools asked for", () => {
    expect(checkInit(init(["Read"]), { ...base, builtinTools: ["Read"] })).toEqual([]);
    expect(checkInit(init(["Glob", "Read"]), { ...base, builtinTools: ["Read"] })).toEqual([`tools were ["Glob","Read"], expected ["Read"]`]);
    expect(checkInit(init([]), { ...base, builtinTools: ["Read"] })).toEqual([`tools were [], expected ["Read"]`]);
    expect(checkInit(init(["Read"]), base)).toEqual([`tools were ["Read"], expected []`]);
  });
});

describe("the permission answers for an opted-in tool", () => {
  it("allow a path under the project dir, deny one outside (also through .. or a symlink), and leave other tools to deny-by-default", () => {
    const root = tempDir("caps-root");
    const project = join(root, "project");
    mkdirSync(join(project, "docs"), { recursive: true });
    writeFileSync(join(project, "docs", "a.md"), "a");
    writeFileSync(join(root, "secret.txt"), "s");
    symlinkSync(root, join(project, "escape"));
    const ask = (tool_name: string, input: Record<string, unknown>, tools = ["Read", "Glob", "Write"]) => builtinPermission({ tool_name, input }, tools, project)?.behavior;
    expect(ask("Read", { file_path: join(project, "docs", "a.md") })).toBe("allow");
    expect(ask("Read", { file_path: "docs/a.md" })).toBe("allow");
    expect(ask("Write", { file_path: join(project, "docs", "new", "b.md") })).toBe("allow");
    expect(ask("Read", { file_path: join(root, "secret.txt") })).toBe("deny");
    expect(ask("Read", { file_path: join(project, "..", "secret.txt") })).toBe("deny");
    expect(ask("Read", { file_path: join(project, "escape", "secret.txt") })).toBe("deny");
    expect(ask("Read", {})).toBe("deny");
    // Glob's path is optional (the project dir); given, it is scoped too.
    expect(ask("Glob", { pattern: "**/*.md" })).toBe("allow");
    expect(ask("Glob", { pattern: "*", path: "/" })).toBe("deny");
    // A tool not opted into is not answered here (the caller's deny-by-default answer applies).
    expect(ask("Read", { file_path: join(project, "docs", "a.md") }, ["Glob"])).toBeUndefined();
    expect(isInside(project, project)).toBe(true);
    expect(isInside(project, `${project}-sibling/x`)).toBe(false);
  });
});
