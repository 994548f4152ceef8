/**
 * `capabilities.bash` on the real CLI (scripted API): Bash runs a command in the project dir and the model sees its
 * output; an excluded command is refused as a tool error and the turn goes on; a sandbox that cannot run is refused
 * before any process starts; behind the interceptor the init and wire checks hold Bash to 2.1.330's record.
 */
import { existsSync, mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ClaudeCodeHost, InvalidInputError, SandboxUnavailableError } from "../../src/index.js";
import { RateLimitGovernor } from "../../src/limits/governor.js";
import type { RecordedRequest, ScriptedTurn } from "../../src/testing/scripted-api.js";
import { turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, baseUrlApi, cleanup, cliOption, firstPartyApi, firstPartyEnv, tempDir, testEnv, toolResultsIn } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const FILE_LINE = "orders are counted once per line";

/** The model runs the command after `run: ` in the prompt once, then answers with what came back. */
function bashScript(request: RecordedRequest): ScriptedTurn {
  const messages: Array<{ role: string; content?: unknown }> = request.body?.messages ?? [];
  const first = messages[0]!;
  const prompt = typeof first.content === "string" ? first.content : ((first.content ?? []) as Array<{ text?: string }>).map((part) => part.text ?? "").join("");
  const command = /run: (.*)$/m.exec(prompt)?.[1] ?? "true";
  if (messages.filter((message) => message.role === "assistant").length === 0) return { toolCalls: [{ name: "Bash", input: { command, description: "Run the asked command" }, id: "toolu_bash1" }] };
  const [result] = toolResultsIn(request.body);
  return turn.text(result?.is_error ? `refused: ${result.text}` : `output: ${result?.text ?? "(nothing)"}`);
}

function hostOn(api: { baseUrl: string }, projectDir: string, env = testEnv()): ClaudeCodeHost {
  return new ClaudeCodeHost({ projectDir, env, passEnv: TEST_PASS_ENV, apiEndpoint: { baseUrl: api.baseUrl, apiKey: "sk-test-scripted" }, ...cliOption(), idleTimeoutMs: 30_000, warm: false, rateLimitGovernor: new RateLimitGovernor() });
}

function project(): string {
  const dir = tempDir("bash-project");
  mkdirSync(join(dir, "data"));
  writeFileSync(join(dir, "data", "grain.txt"), `${FILE_LINE}\n`);
  return dir;
}

describe("capabilities: bash", () => {
  it("runs a command in the project dir and the model sees its output; init lists exactly Bash", { timeout: 180_000 }, async () => {
    const api = await baseUrlApi(bashScript);
    const projectDir = project();
    const host = hostOn(api, projectDir);
    try {
      const session = host.createSession({ model: "sonnet", capabilities: { bash: { sandbox: false } } });
      const result = await session.send("run: pwd && cat data/grain.txt").result;
      expect(result.toolCalls.map((call) => [call.name, call.ok])).toEqual([["Bash", true]]);
      const [output] = toolResultsIn(api.messageRequests.at(-1)!.body);
      expect(output!.is_error).toBeFalsy();
      // It ran in the project dir: pwd printed it, the relative path resolved under it.
      expect(output!.text).toContain(realpathSync(projectDir));
      expect(output!.text).toContain(FILE_LINE);
      expect(result.text).toContain(FILE_LINE);
      expect((api.messageRequests[0]!.body.tools ?? []).map((tool: { name: string }) => tool.name).filter((name: string) => name === "Bash")).toEqual(["Bash"]);
      await session.close();
    } finally {
      await host.close();
    }
  });

  it("an excluded command (also inside a compound command) is refused as a tool error the model sees; the turn goes on and nothing ran", { timeout: 180_000 }, async () => {
    const api = await baseUrlApi(bashScript);
    const projectDir = project();
    const host = hostOn(api, projectDir);
    const target = join(projectDir, "data", "grain.txt");
    try {
      // Measured on 2.1.330: each subcommand is matched (after ;, &&, a pipe's xargs), and a path to the program too.
      for (const command of ["rm -f data/grain.txt", "echo first && rm -f data/grain.txt", "ls data | xargs rm -f", "/bin/rm -f data/grain.txt", "git push origin main"]) {
        const session = host.createSession({ model: "sonnet", capabilities: { bash: { sandbox: false, excludedCommands: ["rm", "git push"] } } });
        const result = await session.send(`run: ${command}`).result;
        expect(result.toolCalls.map((call) => [call.name, call.ok])).toEqual([["Bash", false]]);
        const [refusal] = toolResultsIn(api.messageRequests.at(-1)!.body);
        expect(refusal!.is_error).toBe(true);
        expect(refusal!.text).toMatch(/Permission to use Bash with command .* has been denied/);
        // The model answered after the refusal: the turn went on.
        expect(result.text).toMatch(/^refused: /);
        expect(existsSync(target)).toBe(true);
        await session.close();
      }
      // A command not excluded still runs on the same kind of launch.
      const allowed = host.createSession({ model: "sonnet", capabilities: { bash: { sandbox: false, excludedCommands: ["rm", "git push"] } } });
      expect((await allowed.send("run: cat data/grain.txt").result).text).toContain(FILE_LINE);
      await allowed.close();
    } finally {
      await host.close();
    }
  });

  it("the sandbox (the default) that cannot run here is refused before any process starts, naming what to install", async () => {
    const api = await baseUrlApi(bashScript);
    // A PATH without bwrap and socat, whatever this machine has.
    const env = { ...testEnv(), PATH: tempDir("bash-empty-path") };
    const host = hostOn(api, project(), env);
    try {
      const error = await host.createSession({ model: "sonnet", capabilities: { bash: {} } }).send("run: pwd").result.catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(SandboxUnavailableError);
      expect((error as SandboxUnavailableError).code).toBe("sandbox_unavailable");
      expect((error as SandboxUnavailableError).missing).toEqual(["bwrap", "socat"]);
      expect((error as Error).message).toMatch(/apt-get install bubblewrap socat/);
      expect((error as Error).message).toMatch(/sandbox to false/);
      expect(host.reusePids).toEqual([]);
      expect(api.messageRequests).toHaveLength(0);
      expect(() => host.createSession({ model: "sonnet", capabilities: { bash: { sandbox: false, allowUnsandboxed: ["git"] } } })).toThrow(InvalidInputError);
      expect(() => host.createSession({ model: "sonnet", capabilities: { bash: { excludedCommands: ["rm(x)"] } } })).toThrow(InvalidInputError);
      expect(() => host.createSession({ model: "sonnet", capabilities: { bash: { sandbox: false, network: true } as never } })).toThrow(InvalidInputError);
    } finally {
      await host.close();
    }
  });

  it("a sandbox that passes the check but cannot start (a bwrap and socat that fail): the command is refused as a tool error, never run unconfined", { timeout: 120_000 }, async () => {
    const api = await baseUrlApi(bashScript);
    const bin = tempDir("bash-fake-bin");
    for (const program of ["bwrap", "socat"]) writeFileSync(join(bin, program), "#!/bin/sh\nexit 1\n", { mode: 0o755 });
    const projectDir = project();
    const host = hostOn(api, projectDir, { ...testEnv(), PATH: `${bin}:${process.env.PATH}` });
    try {
      const result = await host.createSession({ model: "sonnet", capabilities: { bash: {} } }).send("run: rm -f data/grain.txt").result;
      expect(result.toolCalls.map((call) => [call.name, call.ok])).toEqual([["Bash", false]]);
      const [refusal] = toolResultsIn(api.messageRequests.at(-1)!.body);
      expect(refusal!.is_error).toBe(true);
      // 2.1.330 with failIfUnavailable and allowUnsandboxedCommands: false refuses rather than running it unsandboxed.
      expect(refusal!.text).toMatch(/^Sandbox is required but failed to initialize: .*Running it outside the sandbox \(dangerouslyDisableSandbox\) is not allowed either\./);
      expect(result.text).toMatch(/^refused: /);
      expect(existsSync(join(projectDir, "data", "grain.txt"))).toBe(true);
    } finally {
      await host.close();
    }
  });

  it("a process with Bash never serves a session without it, nor one with other excluded commands", { timeout: 180_000 }, async () => {
    const api = await baseUrlApi(bashScript);
    const host = hostOn(api, project());
    try {
      const withBash = host.createSession({ model: "sonnet", capabilities: { bash: { sandbox: false } } });
      expect((await withBash.send("run: cat data/grain.txt").result).text).toContain(FILE_LINE);
      await withBash.close();
      const other = host.createSession({ model: "sonnet", capabilities: { bash: { sandbox: false, excludedCommands: ["cat"] } } });
      expect((await other.send("run: cat data/grain.txt").result).text).toMatch(/^refused: /);
      await other.close();
      const without = host.createSession({ model: "sonnet", maxTurns: 3 });
      const result = await without.send("run: cat data/grain.txt").result;
      expect(result.text).toMatch(/No such tool available: Bash/);
      expect(host.reusePids).toHaveLength(3);
      await without.close();
    } finally {
      await host.close();
    }
  });

  it("behind the interceptor (first-party path) a host call with Bash passes the init and wire checks", { timeout: 120_000 }, async () => {
    const api = await firstPartyApi(bashScript);
    const projectDir = project();
    const host = new ClaudeCodeHost({ projectDir, env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, wire: true, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
    try {
      expect(host.interceptor).toBe("on");
      const output = await host.run(
        { model: "claude-sonnet-4-6", system: "", prompt: "run: cat data/grain.txt", maxTurns: 3, tools: [], capabilities: { bash: { sandbox: false, excludedCommands: ["rm"] } }, transcript: { dir: tempDir("bash-transcripts") } },
        host.limitsFor(undefined, host.logger),
      );
      expect(output.init.tools).toEqual(["Bash"]);
      expect(output.toolCalls.map((call) => [call.name, call.ok])).toEqual([["Bash", true]]);
      expect(output.result.result).toContain(FILE_LINE);
      expect(api.messageRequests).toHaveLength(2);
      // A sandboxed Bash has no recorded definition: refused behind the interceptor before a process starts (the sandbox check passes with a PATH that has both programs).
      const bin = tempDir("bash-fake-bin");
      for (const program of ["bwrap", "socat"]) writeFileSync(join(bin, program), "#!/bin/sh\nexit 1\n", { mode: 0o755 });
      const sandboxed = new ClaudeCodeHost({ projectDir, env: { ...firstPartyEnv(api), PATH: `${bin}:${process.env.PATH}` }, passEnv: TEST_PASS_ENV, wire: true, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
      try {
        const refused = await sandboxed
          .run({ model: "claude-sonnet-4-6", system: "", prompt: "run: pwd", maxTurns: 3, tools: [], capabilities: { bash: {} } }, sandboxed.limitsFor(undefined, sandboxed.logger))
          .catch((error: unknown) => error);
        expect((refused as Error).message).toMatch(/none is recorded for Bash \(sandboxed\)/);
        expect(api.messageRequests).toHaveLength(2);
      } finally {
        await sandboxed.close();
      }
    } finally {
      await host.close();
    }
  });
});
