/**
 * Permissions without a CLI: the strict option schema and its refusals, each mode's launch (CLI mode and
 * pre-approval), the init check of the mode, and how a `can_use_tool` is answered in each mode.
 */
import { describe, expect, it } from "vitest";
import { VERIFIED_CLI_VERSIONS } from "../../src/binary/versions.js";
import { buildCliArgs, checkInit } from "../../src/claude-code/checks/isolation.js";
import { parseRuntimeOptions } from "../../src/claude-code/options.js";
import { type CallPermissions, answerPermission, cliPermissionMode, parsePermissions, preApproves } from "../../src/claude-code/permissions.js";
import { InvalidInputError } from "../../src/errors/index.js";
import type { SystemInitMessage } from "../../src/protocol/messages.js";

const facts = VERIFIED_CLI_VERSIONS["2.1.330"]!;
const argValue = (args: string[], flag: string) => args.find((arg) => arg.startsWith(`${flag}=`))?.slice(flag.length + 1);
const silent = { debug() {}, info() {}, warn() {}, error() {} };

describe("permissions options", () => {
  it("are strict: an unknown key, an unknown mode, a callback that is no function are refused naming the field", () => {
    const base = { projectDir: "/tmp", models: { default: "sonnet" } };
    expect(() => parseRuntimeOptions({ ...base, permissions: { mode: "ask", canUseTool: () => ({ behavior: "allow" }), prompt: true } as never })).toThrow(/prompt/);
    expect(() => parseRuntimeOptions({ ...base, permissions: { mode: "bypassPermissions" } as never })).toThrow(/permissions\.mode/);
    expect(() => parseRuntimeOptions({ ...base, permissions: { mode: "ask", canUseTool: "yes" } as never })).toThrow(/permissions\.canUseTool/);
    expect(parseRuntimeOptions({ ...base, permissions: { mode: "plan" } }).permissions).toEqual({ mode: "plan" });
  });

  it('refuse "ask" without a callback and a callback that a pre-approving mode would never call', () => {
    const refused = (value: unknown) => {
      try {
        parsePermissions(value, "session");
      } catch (error) {
        return error as InvalidInputError;
      }
      return undefined;
    };
    expect(refused({ mode: "ask" })).toMatchObject({ field: "permissions.canUseTool", message: expect.stringMatching(/mode "ask" sends every tool use to canUseTool/) });
    expect(refused({ canUseTool: () => ({ behavior: "allow" }) })).toMatchObject({ field: "permissions.canUseTool", message: expect.stringMatching(/never be called/) });
    expect(refused({ mode: "acceptAll", canUseTool: () => ({ behavior: "allow" }) })).toBeInstanceOf(InvalidInputError);
    expect(refused({ mode: "acceptEdits" })).toBeUndefined();
  });
});

describe("each mode's launch", () => {
  it('"deny" (the default) launches exactly as before: dontAsk with the call\'s tools pre-approved', () => {
    const before = buildCliArgs({ facts, model: "sonnet", maxTurns: 4, toolIds: ["mcp__ktx__a"], structuredOutput: false });
    const deny = buildCliArgs({ facts, model: "sonnet", maxTurns: 4, toolIds: ["mcp__ktx__a"], structuredOutput: false, permissionMode: cliPermissionMode("deny"), preApprove: preApproves("deny") });
    expect(deny).toEqual(before);
    expect(argValue(deny, "--permission-mode")).toBe("dontAsk");
    expect(argValue(deny, "--allowedTools")).toBe("mcp__ktx__a");
  });

  it("modes that ask leave the tools un-pre-approved, so every use reaches can_use_tool", () => {
    for (const [mode, cli] of [["ask", "default"], ["acceptEdits", "acceptEdits"], ["plan", "plan"]] as const) {
      const args = buildCliArgs({ facts, model: "sonnet", maxTurns: 4, toolIds: ["mcp__ktx__a"], structuredOutput: false, permissionMode: cliPermissionMode(mode), preApprove: preApproves(mode) });
      expect(argValue(args, "--permission-mode")).toBe(cli);
      expect(argValue(args, "--permission-prompt-tool")).toBe("stdio");
      expect(args.some((arg) => arg.startsWith("--allowedTools"))).toBe(false);
    }
    expect([cliPermissionMode("acceptAll"), preApproves("acceptAll")]).toEqual(["dontAsk", true]);
  });

  it("on a process launched to ask, deny and acceptAll run as default (the library answers); on a pre-approving one, everything is dontAsk", () => {
    expect(cliPermissionMode("deny", "ask")).toBe("default");
    expect(cliPermissionMode("acceptAll", "plan")).toBe("default");
    expect(cliPermissionMode("plan", "ask")).toBe("plan");
    expect(cliPermissionMode("acceptAll", "deny")).toBe("dontAsk");
  });

  it("the init check stops a run whose CLI reports another permission mode", () => {
    const init = { type: "system", subtype: "init", session_id: "s", cwd: "/tmp", tools: [], mcp_servers: [], model: "m", permissionMode: "default", apiKeySource: "none" } as unknown as SystemInitMessage;
    const expected = { toolIds: [], structuredOutput: false, apiKeyAllowed: false, cwd: "/tmp" };
    expect(checkInit(init, { ...expected, permissionMode: "default" })).toEqual([]);
    expect(checkInit(init, { ...expected, permissionMode: "dontAsk" })).toEqual(['permissionMode was "default", expected "dontAsk"']);
  });
});

describe("answering can_use_tool", () => {
  const request = { subtype: "can_use_tool", tool_name: "mcp__ktx__a", input: { q: 1 }, tool_use_id: "toolu_1", display_name: "A" };
  const answer = (permissions: CallPermissions | undefined, req: Record<string, unknown> = request, signal = new AbortController().signal, denied: string[] = []) =>
    answerPermission(req, signal, { permissions, allowed: new Set(["mcp__ktx__a"]), toolIds: ["mcp__ktx__a"], deniedTools: denied, logger: silent });

  it("denies a tool the call did not give, whatever the mode, without asking", async () => {
    let asked = false;
    const denied: string[] = [];
    const reply = await answer({ mode: "ask", launch: "ask", canUseTool: () => ((asked = true), { behavior: "allow" }) }, { ...request, tool_name: "Bash" }, undefined, denied);
    expect(reply).toMatchObject({ behavior: "deny", message: expect.stringMatching(/Tool Bash is not available/) });
    expect([asked, denied]).toEqual([false, ["Bash"]]);
  });

  it('runs the call\'s tools in "deny" and "acceptAll"; asks the callback in the other modes', async () => {
    expect(await answer(undefined)).toEqual({ behavior: "allow", updatedInput: { q: 1 } });
    expect(await answer({ mode: "acceptAll", launch: "ask" })).toEqual({ behavior: "allow", updatedInput: { q: 1 } });
    const seen: unknown[] = [];
    const reply = await answer({ mode: "ask", launch: "ask", canUseTool: (req) => (seen.push(req), { behavior: "allow", updatedInput: { q: 2 } }) });
    expect(reply).toEqual({ behavior: "allow", updatedInput: { q: 2 } });
    expect(seen).toEqual([{ toolName: "mcp__ktx__a", input: { q: 1 }, toolUseId: "toolu_1", displayName: "A", mode: "ask" }]);
    expect(await answer({ mode: "plan", launch: "ask", canUseTool: async () => ({ behavior: "deny", message: "no" }) })).toEqual({ behavior: "deny", message: "no" });
    expect(await answer({ mode: "acceptEdits", launch: "acceptEdits" })).toMatchObject({ behavior: "deny", message: expect.stringMatching(/no canUseTool/) });
  });

  it("denies (never fails the call) when the callback throws or answers out of shape; throws when the call was aborted", async () => {
    expect(await answer({ mode: "ask", launch: "ask", canUseTool: () => { throw new Error("boom"); } })).toMatchObject({ behavior: "deny", message: expect.stringMatching(/permission check .* failed/) });
    expect(await answer({ mode: "ask", launch: "ask", canUseTool: () => ({ behavior: "maybe" }) as never })).toMatchObject({ behavior: "deny", message: expect.stringMatching(/no valid answer/) });
    expect(await answer({ mode: "ask", launch: "ask", canUseTool: () => ({ behavior: "deny" }) as never })).toMatchObject({ behavior: "deny", message: expect.stringMatching(/no valid answer/) });
    const controller = new AbortController();
    const pending = answer({ mode: "ask", launch: "ask", canUseTool: (_req, { signal }) => new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason))) }, request, controller.signal);
    controller.abort(new Error("gone"));
    await expect(pending).rejects.toThrow("gone");
  });
});
