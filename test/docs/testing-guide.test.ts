/**
 * The first test of docs/guides/testing.md, as the page shows it: public imports only (the package's own
 * name, resolved to its build), the scripted API, apiEndpoint, an empty HOME, a scripted tool turn with its
 * mcp__ktx__ name. Only this suite's loopback guard (its proxy) is not in the guide; the last test checks that
 * the guide's example is this file's first test, line for line, without those lines.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, inject, it } from "vitest";
import { z } from "zod";
import { ClaudeCodeRuntime, type KtxRuntimeToolDescriptor } from "ktx-claude-code";
import { startScriptedMessagesApi, turn, type ScriptedMessagesApi } from "ktx-claude-code/testing";

const glossary: KtxRuntimeToolDescriptor<{ term: string }> = {
  name: "lookup",
  description: "Look a term up in the glossary",
  inputSchema: z.object({ term: z.string() }),
  execute: ({ term }) => ({ markdown: `${term}: the level of detail of one row` }),
};

let api: ScriptedMessagesApi | undefined;
let runtime: ClaudeCodeRuntime | undefined;
afterEach(async () => {
  // close() resolves once every CLI the runtime started has been reaped.
  await runtime?.close();
  await api?.close();
});

it("looks a term up, then answers", async () => {
  api = await startScriptedMessagesApi([
    turn.tools({ name: "mcp__ktx__lookup", input: { term: "grain" } }),
    turn.text("Grain is the level of detail of one row."),
  ]);
  runtime = new ClaudeCodeRuntime({
    projectDir: mkdtempSync(join(tmpdir(), "project-")),
    models: { default: "sonnet" },
    env: {
      PATH: process.env.PATH,
      HOME: mkdtempSync(join(tmpdir(), "home-")),
      // Not in the guide: the suite's loopback guard sees every connection the CLI makes.
      HTTPS_PROXY: inject("trapProxyUrl"),
      HTTP_PROXY: inject("trapProxyUrl"),
      NO_PROXY: "127.0.0.1,localhost,::1",
    },
    apiEndpoint: { baseUrl: api.baseUrl, apiKey: "sk-test" },
  });

  const loop = await runtime.runAgentLoop({
    modelRole: "default",
    systemPrompt: "You are the KTX curator.",
    userPrompt: "What does grain mean?",
    toolSet: [glossary],
    stepBudget: 4,
  });

  expect(loop.stopReason).toBe("natural");
  expect(loop.text).toBe("Grain is the level of detail of one row.");
  expect(loop.toolCalls.map((call) => [call.name, call.ok])).toEqual([["mcp__ktx__lookup", true]]);
  // The model's second request carried the tool's answer.
  expect(JSON.stringify(api.messageRequests[1]!.body.messages)).toContain("the level of detail of one row");
});

const guide = readFileSync(new URL("../../docs/guides/testing.md", import.meta.url), "utf8");

it("docs/guides/testing.md shows test/ktx/ported-example.test.ts as it is", () => {
  const example = readFileSync(new URL("../ktx/ported-example.test.ts", import.meta.url), "utf8");
  expect(guide).toContain("```ts\n" + example + "```");
});

it("docs/guides/testing.md opens with this file's first test, less the loopback guard", () => {
  const example = /```ts\n([\s\S]*?)```/.exec(guide)![1]!;
  const self = readFileSync(new URL(import.meta.url), "utf8");
  const firstTest = self.slice(self.indexOf("import { mkdtempSync"), self.indexOf("\nconst guide ="));
  const withoutGuard = firstTest
    .split("\n")
    .filter((line) => !/inject\("trapProxyUrl"\)|NO_PROXY|Not in the guide/.test(line))
    .join("\n")
    .replace("import { mkdtempSync, readFileSync }", "import { mkdtempSync }")
    .replace("{ afterEach, expect, inject, it }", "{ afterEach, expect, it }");
  expect(guide.indexOf("```ts\n" + example)).toBeLessThan(guide.indexOf("\n## ", guide.indexOf("## A first test")));
  expect(withoutGuard).toBe(example);
});
