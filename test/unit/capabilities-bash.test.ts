/**
 * `capabilities.bash` without a CLI: the strict option, exactly the flags and settings it adds to the launch (and
 * so to the pool key), the init check's expectation, the permission answer for refused commands and the sandbox
 * check before spawn.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { VERIFIED_CLI_VERSIONS } from "../../src/binary/versions.js";
import { parseCapabilities } from "../../src/claude-code/capabilities.js";
import { bashLaunchFor, bashPermission, requireSandbox } from "../../src/claude-code/capabilities-bash.js";
import { capabilityTools } from "../../src/claude-code/capability-tools.js";
import { buildCliArgs, checkInit } from "../../src/claude-code/checks/isolation.js";
import { launchKey } from "../../src/claude-code/pool/pool-keys.js";
import { InvalidInputError, SandboxUnavailableError } from "../../src/errors/index.js";
import type { SystemInitMessage } from "../../src/protocol/messages.js";
import { cleanup, tempDir } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const facts = VERIFIED_CLI_VERSIONS["2.1.330"]!;
const spec = { facts, model: "sonnet", maxTurns: 3, toolIds: [] as string[], structuredOutput: false };
const flag = (args: readonly string[], name: string) => args.find((arg) => arg.startsWith(`${name}=`))?.slice(name.length + 1);

describe("capabilities.bash", () => {
  it("is strict: unknown keys, command prefixes with rule syntax, and allowUnsandboxed without the sandbox are refused", () => {
    expect(parseCapabilities({ bash: {} })).toEqual({ bash: {} });
    expect(parseCapabilities({ bash: { sandbox: false, excludedCommands: ["rm", "git push"] } })).toEqual({ bash: { sandbox: false, excludedCommands: ["rm", "git push"] } });
    const field = (value: unknown) => {
      try {
        parseCapabilities(value);
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidInputError);
        return (error as InvalidInputError).field;
      }
      return undefined;
    };
    expect(field({ bash: { network: true } })).toBe("capabilities.bash");
    expect(field({ bash: { excludedCommands: ["rm(x)"] } })).toBe("capabilities.bash.excludedCommands.0");
    expect(field({ bash: { excludedCommands: ["rm,ls"] } })).toBe("capabilities.bash.excludedCommands.0");
    expect(field({ bash: { excludedCommands: ["rm:*"] } })).toBe("capabilities.bash.excludedCommands.0");
    expect(field({ bash: { sandbox: false, allowUnsandboxed: ["git"] } })).toBe("capabilities.bash.allowUnsandboxed");
    expect(field({ bash: { sandbox: "yes" } })).toBe("capabilities.bash.sandbox");
    expect(() => parseCapabilities({ bash: true })).toThrow(/capabilities\.bash/);
    expect(() => parseCapabilities({ bashh: {} })).toThrow(/known: builtinTools, .*bash, webSearch, subagents/);
  });

  it("adds exactly Bash, its deny rules, its allow rule and the sandbox settings to the launch; without it nothing changes", () => {
    const plain = buildCliArgs(spec);
    const args = buildCliArgs({ ...spec, bash: bashLaunchFor({ sandbox: false, excludedCommands: ["rm", "git push", "rm"] }) });
    expect(flag(args, "--tools")).toBe("Bash");
    const denied = flag(args, "--disallowedTools")!.split(",");
    expect(denied).not.toContain("Bash");
    expect(denied.slice(-2)).toEqual(["Bash(git push:*)", "Bash(rm:*)"]);
    expect(flag(args, "--allowedTools")).toBe("Bash");
    expect(JSON.parse(flag(args, "--settings")!).sandbox).toEqual({ enabled: false });
    // Everything else is the isolated launch as before.
    const rest = (list: readonly string[]) => list.filter((arg) => !/^--(tools|disallowedTools|allowedTools|settings)=/.test(arg));
    expect(rest(args)).toEqual(rest(plain));
    expect(JSON.parse(flag(plain, "--settings")!).sandbox).toBeUndefined();
    expect(flag(plain, "--disallowedTools")!.split(",")).toContain("Bash");
    expect(flag(plain, "--tools")).toBe("");

    const sandboxed = buildCliArgs({ ...spec, bash: bashLaunchFor({ allowUnsandboxed: ["docker"] }) });
    expect(JSON.parse(flag(sandboxed, "--settings")!).sandbox).toEqual({ enabled: true, failIfUnavailable: true, allowUnsandboxedCommands: false, excludedCommands: ["docker"] });
    expect(JSON.parse(flag(buildCliArgs({ ...spec, bash: bashLaunchFor({}) }), "--settings")!).sandbox).toEqual({ enabled: true, failIfUnavailable: true, allowUnsandboxedCommands: false });
  });

  it("is part of the pool key: with and without, sandboxed or not, other refused commands each get their own process", () => {
    const key = (bash?: Parameters<typeof bashLaunchFor>[0]) => launchKey({ path: "/cli", args: buildCliArgs({ ...spec, bash: bashLaunchFor(bash) }), cwd: "/p", env: {} }, true);
    const keys = [key(), key({}), key({ sandbox: false }), key({ sandbox: false, excludedCommands: ["rm"] }), key({ allowUnsandboxed: ["git"] })];
    expect(new Set(keys).size).toBe(keys.length);
    // The same ask in another order is the same launch.
    expect(key({ sandbox: false, excludedCommands: ["rm", "git push"] })).toBe(key({ sandbox: false, excludedCommands: ["git push", "rm"] }));
  });

  it("the init check expects Bash besides the other built-in tools", () => {
    const init = { type: "system", subtype: "init", tools: ["Bash", "Read"], mcp_servers: [], cwd: "/p" } as unknown as SystemInitMessage;
    const expected = { toolIds: [], structuredOutput: false, apiKeyAllowed: false, cwd: "/p" };
    expect(checkInit(init, { ...expected, builtinTools: capabilityTools({ builtinTools: ["Read"], bash: bashLaunchFor({}) }) })).toEqual([]);
    expect(checkInit(init, { ...expected, builtinTools: capabilityTools({ builtinTools: ["Read"] }) })[0]).toMatch(/tools were \["Bash","Read"\], expected \["Read"\]/);
  });

  it("answers a permission request for a refused command (each subcommand) with a denial, and leaves others to the mode", () => {
    const bash = bashLaunchFor({ sandbox: false, excludedCommands: ["rm", "git push"] });
    const ask = (command: string) => bashPermission({ tool_name: "Bash", input: { command } }, bash);
    expect(ask("rm -rf /")).toMatchObject({ behavior: "deny" });
    expect(ask("ls && rm x")).toMatchObject({ behavior: "deny" });
    expect(ask("echo a | rm x")).toMatchObject({ behavior: "deny" });
    expect(ask("git push origin main")).toMatchObject({ behavior: "deny" });
    expect(ask("/bin/rm -f x")).toMatchObject({ behavior: "deny" });
    expect(ask("git status")).toBeUndefined();
    expect(ask("rmdir x")).toBeUndefined();
    expect(bashPermission({ tool_name: "Read", input: { file_path: "/x" } }, bash)).toBeUndefined();
    expect(bashPermission({ tool_name: "Bash", input: { command: "rm x" } }, undefined)).toBeUndefined();
  });

  it("a sandbox that cannot run is refused before spawn: missing programs named, an unsupported platform, and never with sandbox: false", () => {
    const empty = tempDir("bash-path");
    const error = (() => {
      try {
        requireSandbox(bashLaunchFor({}), empty, "linux");
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(SandboxUnavailableError);
    expect((error as SandboxUnavailableError).missing).toEqual(["bwrap", "socat"]);
    const half = tempDir("bash-path");
    writeFileSync(join(half, "bwrap"), "#!/bin/sh\n", { mode: 0o755 });
    expect(() => requireSandbox(bashLaunchFor({}), half, "linux")).toThrow(/needs socat,/);
    writeFileSync(join(half, "socat"), "#!/bin/sh\n", { mode: 0o755 });
    expect(() => requireSandbox(bashLaunchFor({}), half, "linux")).not.toThrow();
    // A file that is not executable does not count.
    const noExec = tempDir("bash-path");
    writeFileSync(join(noExec, "bwrap"), "", { mode: 0o644 });
    writeFileSync(join(noExec, "socat"), "", { mode: 0o644 });
    expect(() => requireSandbox(bashLaunchFor({}), noExec, "linux")).toThrow(SandboxUnavailableError);
    expect(() => requireSandbox(bashLaunchFor({}), empty, "darwin")).not.toThrow();
    expect(() => requireSandbox(bashLaunchFor({}), empty, "win32")).toThrow(/no command sandbox on win32/);
    expect(() => requireSandbox(bashLaunchFor({ sandbox: false }), empty, "linux")).not.toThrow();
    expect(() => requireSandbox(undefined, empty, "linux")).not.toThrow();
  });
});
