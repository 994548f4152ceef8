/**
 * Capabilities on the real CLI (scripted API): `builtinTools: ["Read"]` lets the model read a file under the
 * project dir, init lists exactly that tool, a file outside is refused; without the capability the same request
 * for Read is refused as in every isolated run. Sessions on the base-URL path (they do not run behind the
 * interceptor yet); a host call behind the interceptor, where the wire check holds the tool to 2.1.330's record.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ClaudeCodeHost, InvalidInputError } from "../../src/index.js";
import { RateLimitGovernor } from "../../src/limits/governor.js";
import type { RecordedRequest, ScriptedTurn } from "../../src/testing/scripted-api.js";
import { turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, baseUrlApi, cleanup, cliOption, firstPartyApi, firstPartyEnv, firstPartyRuntimeFor, tempDir, testEnv, toolResultsIn } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const SECRET_LINE = "the grain of the orders table is one row per order line";

/** The model asks once for Read of `path` (taken from the prompt `read <path>`), then answers with what it got back. */
function readScript(request: RecordedRequest): ScriptedTurn {
  const messages: Array<{ role: string; content?: unknown }> = request.body?.messages ?? [];
  const first = messages[0]!;
  const prompt = typeof first.content === "string" ? first.content : ((first.content ?? []) as Array<{ text?: string }>).map((part) => part.text ?? "").join("");
  const path = /read (\/\S+)/.exec(prompt)?.[1] ?? "";
  const assistants = messages.filter((message) => message.role === "assistant").length;
  if (assistants === 0) return { toolCalls: [{ name: "Read", input: { file_path: path }, id: "toolu_read1" }] };
  const [result] = toolResultsIn(request.body);
  return turn.text(result?.is_error ? `refused: ${result.text}` : `read: ${result?.text ?? "(nothing)"}`);
}

function hostOn(api: { baseUrl: string }, projectDir: string): ClaudeCodeHost {
  return new ClaudeCodeHost({
    projectDir,
    env: testEnv(),
    passEnv: TEST_PASS_ENV,
    apiEndpoint: { baseUrl: api.baseUrl, apiKey: "sk-test-scripted" },
    ...cliOption(),
    idleTimeoutMs: 30_000,
    warm: false,
    rateLimitGovernor: new RateLimitGovernor(),
  });
}

describe("capabilities: builtinTools", () => {
  it('with ["Read"] a session reads a file under cwd, init lists exactly Read, and a file outside cwd is refused', { timeout: 180_000 }, async () => {
    const api = await baseUrlApi(readScript);
    const projectDir = tempDir("caps-project");
    mkdirSync(join(projectDir, "docs"));
    writeFileSync(join(projectDir, "docs", "grain.md"), `${SECRET_LINE}\n`);
    const outside = join(tempDir("caps-outside"), "secret.txt");
    writeFileSync(outside, "OUTSIDE-SECRET-VALUE\n");
    const host = hostOn(api, projectDir);
    try {
      const session = host.createSession({ model: "sonnet", capabilities: { builtinTools: ["Read"] } });
      const inside = await session.send(`read ${join(projectDir, "docs", "grain.md")}`).result;
      expect(inside.toolCalls.map((call) => [call.name, call.ok])).toEqual([["Read", true]]);
      expect(inside.text).toContain(SECRET_LINE);
      // The request after the tool ran carries the file's content as its result.
      const insideResults = toolResultsIn(api.messageRequests.at(-1)!.body);
      expect(insideResults).toHaveLength(1);
      expect(insideResults[0]!.is_error).toBeFalsy();
      expect(insideResults[0]!.text).toContain(SECRET_LINE);
      // The CLI offered the model exactly Read (and the init check, which ran, expected exactly that).
      const offered = (api.messageRequests.at(-1)!.body.tools ?? []).map((tool: { name: string }) => tool.name);
      expect(offered).toEqual(["Read"]);
      await session.close();

      const second = host.createSession({ model: "sonnet", capabilities: { builtinTools: ["Read"] } });
      const refused = await second.send(`read ${outside}`).result;
      expect(refused.toolCalls.map((call) => [call.name, call.ok])).toEqual([["Read", false]]);
      const outsideResults = toolResultsIn(api.messageRequests.at(-1)!.body);
      // The CLI itself refuses it (a path outside its working dir is not covered by the allow rule; dontAsk denies); the permission answers would too.
      expect(outsideResults[0]!.text).toMatch(/Permission to use Read has been denied/);
      expect(outsideResults[0]!.is_error).toBe(true);
      expect(outsideResults[0]!.text).not.toContain("OUTSIDE-SECRET-VALUE");
      expect(refused.text).not.toContain("OUTSIDE-SECRET-VALUE");
      await second.close();
    } finally {
      await host.close();
    }
  });

  it("without the capability the same request for Read is refused: the CLI has no such tool", { timeout: 120_000 }, async () => {
    const api = await baseUrlApi(readScript);
    const projectDir = tempDir("caps-project");
    writeFileSync(join(projectDir, "grain.md"), `${SECRET_LINE}\n`);
    const host = hostOn(api, projectDir);
    try {
      const session = host.createSession({ model: "sonnet", maxTurns: 3 });
      const result = await session.send(`read ${join(projectDir, "grain.md")}`).result;
      expect(result.toolCalls.map((call) => [call.name, call.ok])).toEqual([["Read", false]]);
      const [refusal] = toolResultsIn(api.messageRequests.at(-1)!.body);
      expect(refusal!.is_error).toBe(true);
      expect(refusal!.text).toMatch(/No such tool available: Read/);
      expect(result.text).not.toContain(SECRET_LINE);
      // The first request offered no tools at all.
      expect(api.messageRequests[0]!.body.tools ?? []).toEqual([]);
      await session.close();
    } finally {
      await host.close();
    }
  });

  it("a process with the capability never serves a session without it (the launch is part of the pool key)", { timeout: 180_000 }, async () => {
    const api = await baseUrlApi(readScript);
    const projectDir = tempDir("caps-project");
    writeFileSync(join(projectDir, "grain.md"), `${SECRET_LINE}\n`);
    const host = hostOn(api, projectDir);
    try {
      const withRead = host.createSession({ model: "sonnet", capabilities: { builtinTools: ["Read"] } });
      expect((await withRead.send(`read ${join(projectDir, "grain.md")}`).result).text).toContain(SECRET_LINE);
      const [readPid] = host.reusePids;
      await withRead.close();
      expect(host.reusePids).toEqual([readPid]);
      const without = host.createSession({ model: "sonnet", maxTurns: 3 });
      const result = await without.send(`read ${join(projectDir, "grain.md")}`).result;
      expect(result.text).not.toContain(SECRET_LINE);
      expect(host.reusePids).toHaveLength(2);
      expect(host.reusePids).toContain(readPid);
      await without.close();
    } finally {
      await host.close();
    }
  });

  it("refuses a tool that cannot be opted into, an unknown key, and a tool the version lacks, before any process starts", async () => {
    const host = new ClaudeCodeHost({ projectDir: tempDir("caps-project"), env: testEnv(), passEnv: TEST_PASS_ENV, apiEndpoint: { baseUrl: "http://127.0.0.1:9", apiKey: "sk-test" }, ...cliOption(), warm: false });
    try {
      expect(() => host.createSession({ model: "sonnet", capabilities: { builtinTools: ["Bash"] } })).toThrow(/"Bash" cannot be opted into/);
      expect(() => host.createSession({ model: "sonnet", capabilities: { builtinTool: "readonly" } as never })).toThrow(InvalidInputError);
      const lacks = await host.createSession({ model: "sonnet", capabilities: { builtinTools: ["LS"] } }).send("hello").result.catch((error: unknown) => error);
      expect(lacks).toBeInstanceOf(InvalidInputError);
      expect((lacks as Error).message).toMatch(/has no "LS" tool/);
      expect(host.reusePids).toEqual([]);
    } finally {
      await host.close();
    }
  });

  it("behind the interceptor (first-party path) a host call with Read passes the init and wire checks and reads a file under cwd", { timeout: 120_000 }, async () => {
    const api = await firstPartyApi(readScript);
    const projectDir = tempDir("caps-project");
    writeFileSync(join(projectDir, "grain.md"), `${SECRET_LINE}\n`);
    const host = new ClaudeCodeHost({ projectDir, env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, wire: true, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
    try {
      expect(host.interceptor).toBe("on");
      const output = await host.run(
        { model: "claude-sonnet-4-6", system: "", prompt: `read ${join(projectDir, "grain.md")}`, maxTurns: 3, tools: [], capabilities: { builtinTools: ["Read"] }, transcript: { dir: tempDir("caps-transcripts") } },
        host.limitsFor(undefined, host.logger),
      );
      expect(output.init.tools).toEqual(["Read"]);
      expect(output.toolCalls.map((call) => [call.name, call.ok])).toEqual([["Read", true]]);
      expect(output.result.result).toContain(SECRET_LINE);
      // Both Messages requests went through the interceptor's check (a refused one never reaches the API).
      expect(api.messageRequests).toHaveLength(2);
      expect(api.messageRequests[0]!.body.tools.map((tool: { name: string }) => tool.name)).toEqual(["Read"]);
      expect(toolResultsIn(api.messageRequests[1]!.body)[0]!.text).toContain(SECRET_LINE);
    } finally {
      await host.close();
    }
  });

  it("the KTX runtime with capabilities, behind the interceptor (its default first-party path): generateText reads a file under projectDir; a runtime without them is refused Read", { timeout: 120_000 }, async () => {
    const api = await firstPartyApi(readScript);
    const projectDir = tempDir("caps-project");
    writeFileSync(join(projectDir, "grain.md"), `${SECRET_LINE}\n`);
    const runtime = firstPartyRuntimeFor(api, { projectDir, capabilities: { builtinTools: "readonly" } });
    const plain = firstPartyRuntimeFor(api, { projectDir });
    try {
      expect(runtime.interceptor).toBe("on");
      const result = await runtime.generateTextResult({ prompt: `read ${join(projectDir, "grain.md")}` });
      expect(result.text).toContain(SECRET_LINE);
      expect(api.messageRequests[0]!.body.tools.map((tool: { name: string }) => tool.name)).toEqual(["Glob", "Grep", "Read"]);
      const before = api.messageRequests.length;
      const refused = await plain.generateTextResult({ prompt: `read ${join(projectDir, "grain.md")}`, maxTurns: 3 });
      expect(refused.text).toMatch(/^refused: .*No such tool available: Read/);
      expect(api.messageRequests[before]!.body.tools ?? []).toEqual([]);
      expect(() => firstPartyRuntimeFor(api, { capabilities: { builtinTools: ["Bash"] } })).toThrow(InvalidInputError);
    } finally {
      await runtime.close();
      await plain.close();
    }
  });

  it('with "edit" a session writes and edits a file under cwd; a write outside cwd is refused and nothing is written there', { timeout: 180_000 }, async () => {
    const projectDir = tempDir("caps-project");
    const outsideDir = tempDir("caps-outside");
    const inside = join(projectDir, "notes.md");
    const outside = join(outsideDir, "planted.md");
    // Each prompt names one file; the model writes it, reads it back and edits it (Edit needs a Read first), then answers.
    const api = await baseUrlApi((request) => {
      const messages: Array<{ role: string; content?: unknown }> = request.body?.messages ?? [];
      const first = messages[0]!;
      const prompt = typeof first.content === "string" ? first.content : ((first.content ?? []) as Array<{ text?: string }>).map((part) => part.text ?? "").join("");
      const path = /write (\/\S+)/.exec(prompt)?.[1] ?? "";
      const step = messages.filter((message) => message.role === "assistant").length;
      const results = toolResultsIn(request.body);
      if (results.some((result) => result.is_error)) return turn.text(`refused: ${results.find((result) => result.is_error)!.text}`);
      if (step === 0) return { toolCalls: [{ name: "Write", input: { file_path: path, content: "draft line\n" }, id: "toolu_w" }] };
      if (step === 1) return { toolCalls: [{ name: "Read", input: { file_path: path }, id: "toolu_r" }] };
      if (step === 2) return { toolCalls: [{ name: "Edit", input: { file_path: path, old_string: "draft", new_string: "final" }, id: "toolu_e" }] };
      return turn.text("edited");
    });
    const host = hostOn(api, projectDir);
    try {
      const session = host.createSession({ model: "sonnet", capabilities: { builtinTools: "edit" } });
      const done = await session.send(`write ${inside}`).result;
      expect(done.toolCalls.map((call) => [call.name, call.ok])).toEqual([["Write", true], ["Read", true], ["Edit", true]]);
      expect(readFileSync(inside, "utf8")).toBe("final line\n");
      expect(api.messageRequests[0]!.body.tools.map((tool: { name: string }) => tool.name).sort()).toEqual(["Edit", "Glob", "Grep", "NotebookEdit", "Read", "Write"]);
      await session.close();

      const second = host.createSession({ model: "sonnet", capabilities: { builtinTools: "edit" } });
      const refused = await second.send(`write ${outside}`).result;
      expect(refused.toolCalls.map((call) => [call.name, call.ok])).toEqual([["Write", false]]);
      expect(refused.text).toMatch(/^refused: /);
      expect(existsSync(outside)).toBe(false);
      await second.close();
    } finally {
      await host.close();
    }
  });
});
