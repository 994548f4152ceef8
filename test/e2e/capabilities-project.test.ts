/**
 * `capabilities.projectInstructions` on the real CLI behind the interceptor (first-party path, scripted API): the
 * project's CLAUDE.md and rules reach the Messages request, bound to their text by the wire check; nothing else
 * from .claude/ does (hooks, output style, skills, commands, .mcp.json, local files); what cannot be switched off
 * is refused before any process starts; a section that is not one of the project's files is refused on the wire.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ClaudeCodeHost, IsolationError, ProjectSourceError } from "../../src/index.js";
import { RateLimitGovernor } from "../../src/limits/governor.js";
import { turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, cleanup, cliOption, firstPartyApi, firstPartyEnv, tempDir } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const LINE = "PROJECT-LINE: the grain of the orders table is one row per order line";
const RULE = "RULE-LINE: answer in metric units";

function write(dir: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
}

function hostFor(api: Awaited<ReturnType<typeof firstPartyApi>>, projectDir: string): ClaudeCodeHost {
  return new ClaudeCodeHost({ projectDir, env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, wire: true, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
}

const run = (host: ClaudeCodeHost, projectInstructions: boolean) =>
  host.run({ model: "claude-sonnet-4-6", system: "", prompt: "hello", maxTurns: 1, tools: [], ...(projectInstructions ? { capabilities: { projectInstructions: true } } : {}) }, host.limitsFor(undefined, host.logger));

describe("capabilities: projectInstructions", () => {
  it("CLAUDE.md and a rule reach the request (the wire check passes them); nothing else from .claude/ does", { timeout: 120_000 }, async () => {
    const api = await firstPartyApi(() => turn.text("ok"));
    const projectDir = tempDir("caps-instr");
    const marker = join(projectDir, "HOOK-RAN");
    write(projectDir, {
      "CLAUDE.md": `${LINE}\n`,
      ".claude/rules/units.md": `---\ndescription: units\n---\n${RULE}\n`,
      // Loaded by the project source, switched off by the launch (capabilities/project.ts says how, measured):
      ".claude/settings.json": JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command: `touch ${marker}` }] }] }, outputStyle: "canary-style", model: "claude-opus-4-1" }),
      ".claude/output-styles/canary-style.md": "---\nname: canary-style\ndescription: CANARY-STYLE-DESC\n---\nCANARY-STYLE-BODY\n",
      ".claude/skills/canary/SKILL.md": "---\nname: canary\ndescription: CANARY-SKILL-DESC\n---\nCANARY-SKILL-BODY\n",
      ".claude/commands/canary.md": "---\ndescription: CANARY-COMMAND-DESC\n---\nCANARY-COMMAND-BODY\n",
      ".mcp.json": JSON.stringify({ mcpServers: { canary: { command: "node", args: ["-e", "setTimeout(() => {}, 60000)"] } } }),
      // The "local" source, which is not loaded:
      "CLAUDE.local.md": "CANARY-LOCAL-MD\n",
      ".claude/settings.local.json": JSON.stringify({ env: { CLAUDE_CODE_MAX_OUTPUT_TOKENS: "1234" } }),
    });
    const host = hostFor(api, projectDir);
    try {
      const output = await run(host, true);
      expect(output.result.result).toBe("ok");
      // Exactly one request, forwarded by the interceptor: its check accepted the instructions reminder.
      expect(api.messageRequests).toHaveLength(1);
      const request = api.messageRequests[0]!;
      const texts: string[] = request.body.messages[0].content.map((block: { text?: string }) => block.text ?? "");
      const instructions = texts.filter((text) => text.includes("Contents of "));
      expect(instructions).toHaveLength(1);
      expect(instructions[0]).toContain(`${LINE}`);
      expect(instructions[0]).toContain(`${RULE}`);
      expect(instructions[0]).not.toContain("description: units");
      // Nothing else from the project's .claude/ (or the local files) is anywhere in the request.
      expect(request.rawBody).not.toMatch(/CANARY/);
      expect(request.body.max_tokens).not.toBe(1234);
      expect(request.body.model).toBe("claude-sonnet-4-6");
      expect(request.body.tools ?? []).toEqual([]);
      expect(existsSync(marker)).toBe(false);
      expect(output.init.tools).toEqual([]);
      expect(output.init.mcp_servers).toEqual([]);
      expect((output.init as { output_style?: string }).output_style).toBe("default");
      expect(output.init.skills ?? []).toEqual([]);
    } finally {
      await host.close();
    }
  });

  it("a two-turn session: the second turn's request carries the instructions again and passes the wire check", { timeout: 120_000 }, async () => {
    const api = await firstPartyApi(() => turn.text("ok"));
    const projectDir = tempDir("caps-instr");
    write(projectDir, { "CLAUDE.md": `${LINE}\n` });
    const host = hostFor(api, projectDir);
    try {
      const session = host.createSession({ model: "sonnet", capabilities: { projectInstructions: true } });
      expect((await session.send("first").result).text).toBe("ok");
      expect((await session.send("second").result).text).toBe("ok");
      expect(api.messageRequests).toHaveLength(2);
      expect(api.messageRequests[1]!.rawBody).toContain(LINE);
      expect(api.messageRequests[1]!.rawBody).toContain("first");
      await session.close();
    } finally {
      await host.close();
    }
  });

  it("without the capability the CLAUDE.md line does not reach the request", { timeout: 120_000 }, async () => {
    const api = await firstPartyApi(() => turn.text("ok"));
    const projectDir = tempDir("caps-instr");
    write(projectDir, { "CLAUDE.md": `${LINE}\n` });
    const host = hostFor(api, projectDir);
    try {
      await run(host, false);
      expect(api.messageRequests).toHaveLength(1);
      expect(api.messageRequests[0]!.rawBody).not.toContain("PROJECT-LINE");
    } finally {
      await host.close();
    }
  });

  it("what the project source would load and the launch cannot switch off is refused before any process starts, naming the file", { timeout: 60_000 }, async () => {
    const api = await firstPartyApi(() => turn.text("ok"));
    const cases: Array<[Record<string, string>, string, RegExp]> = [
      [{ ".claude/settings.json": JSON.stringify({ env: { ANTHROPIC_BASE_URL: "http://127.0.0.1:9" }, hooks: {} }) }, ".claude/settings.json", /sets "env"/],
      [{ ".claude/settings.json": JSON.stringify({ permissions: { allow: ["Bash(*)"] } }) }, ".claude/settings.json", /sets "permissions"/],
      [{ ".claude/agents/helper.md": "---\nname: helper\ndescription: d\n---\nbody\n" }, ".claude/agents/helper.md", /subagent/],
      [{ ".claude/rules/ts.md": "---\npaths: src/**/*.ts\n---\nrule\n" }, ".claude/rules/ts.md", /conditional rule/],
    ];
    for (const [files, file, reason] of cases) {
      const projectDir = tempDir("caps-instr");
      write(projectDir, { "CLAUDE.md": `${LINE}\n`, ...files });
      const host = hostFor(api, projectDir);
      try {
        const error = await run(host, true).then(() => undefined, (caught: unknown) => caught);
        expect(error).toBeInstanceOf(ProjectSourceError);
        expect((error as ProjectSourceError).file).toContain(file);
        expect((error as Error).message).toMatch(reason);
        expect((error as ProjectSourceError).code).toBe("invalid_input");
      } finally {
        await host.close();
      }
    }
    // A CLAUDE.md above the project dir would load too.
    const parent = tempDir("caps-instr-parent");
    write(parent, { "CLAUDE.md": "PARENT\n", "proj/CLAUDE.md": `${LINE}\n` });
    const host = hostFor(api, join(parent, "proj"));
    try {
      const error = await run(host, true).then(() => undefined, (caught: unknown) => caught);
      expect(error).toBeInstanceOf(ProjectSourceError);
      expect((error as ProjectSourceError).file).toBe(join(parent, "CLAUDE.md"));
    } finally {
      await host.close();
    }
    expect(api.messageRequests).toHaveLength(0);
  });

  it("a section that is not one of the project's files (an @import) is refused on the wire: the request never reaches the API", { timeout: 120_000 }, async () => {
    const api = await firstPartyApi(() => turn.text("ok"));
    const projectDir = tempDir("caps-instr");
    write(projectDir, { "CLAUDE.md": `${LINE}\n@notes/imported.md\n`, "notes/imported.md": "IMPORTED-TEXT\n" });
    const host = hostFor(api, projectDir);
    try {
      const error = await run(host, true).then(() => undefined, (caught: unknown) => caught);
      expect(error).toBeInstanceOf(IsolationError);
      expect((error as Error).message).toMatch(/instructions from .*imported\.md/);
      expect(api.messageRequests).toHaveLength(0);
    } finally {
      await host.close();
    }
  });
});
