/**
 * docs/guides/debugging.md, run: its example's `record` function is this file's, line for line (less the
 * suite's loopback guard), it records two transcripts with the scripted API, and every command of the guide's
 * shell block runs on them through the built command line (`node dist/cli/main.js`, as `npx --no-install
 * ktx-claude-code` runs it). A committed raw capture of the pinned CLI stands in for the guide's `run.ndjson`.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { beforeAll, expect, inject, it } from "vitest";
import { z } from "zod";
import { ClaudeCodeRuntime } from "ktx-claude-code";
import { startScriptedMessagesApi, turn } from "ktx-claude-code/testing";

const ROOT = join(import.meta.dirname, "../..");
const guide = readFileSync(join(ROOT, "docs/guides/debugging.md"), "utf8");

const projectDir = mkdtempSync(join(tmpdir(), "project-"));

async function record(dir: string, name: string, answer: string): Promise<string> {
  const api = await startScriptedMessagesApi([
    turn.tools({ name: "mcp__ktx__lookup", input: { term: "grain" } }),
    turn.text(answer),
  ]);
  const runtime = new ClaudeCodeRuntime({
    projectDir,
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
  try {
    const loop = await runtime.runAgentLoop({
      modelRole: "default",
      systemPrompt: "You are the KTX curator.",
      userPrompt: "What does grain mean?",
      toolSet: [{ name: "lookup", description: "Look a term up", inputSchema: z.object({ term: z.string() }), execute: ({ term }: { term: string }) => `${term}: one row` }],
      stepBudget: 4,
      transcript: { dir, name },
    });
    return loop.transcriptPath!; // <dir>/<name>.jsonl
  } finally {
    await runtime.close();
    await api.close();
  }
}

/** The guide's shell commands, each as the words after `npx --no-install ktx-claude-code`. */
const commands = /```sh\n([\s\S]*?)```/
  .exec(guide)![1]!
  .trim()
  .split("\n")
  .map((line) => {
    expect(line.startsWith("npx --no-install ktx-claude-code ")).toBe(true);
    return line.slice("npx --no-install ktx-claude-code ".length).split(" ");
  });

const work = mkdtempSync(join(tmpdir(), "debugging-guide-"));
const run = (args: string[]) => execa(process.execPath, [join(ROOT, "dist/cli/main.js"), ...args], { cwd: work, reject: false, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });

beforeAll(async () => {
  const dir = join(work, "transcripts");
  mkdirSync(dir);
  expect(await record(dir, "before", "Grain is the level of detail of one row.")).toBe(join(dir, "before.jsonl"));
  expect(await record(dir, "after", "Grain: one row's level of detail.")).toBe(join(dir, "after.jsonl"));
  copyFileSync(join(ROOT, "fixtures/protocol-2.1.330/t01_text_basic.stdout.ndjson"), join(work, "run.ndjson"));
}, 120_000);

it("the guide's example is this file's record function, with the guide's calls", () => {
  const example = /```ts\n([\s\S]*?)```/.exec(guide)![1]!;
  const self = readFileSync(new URL(import.meta.url), "utf8");
  const ours = self.slice(self.indexOf("const projectDir ="), self.indexOf("\n/** The guide's shell commands"));
  const withoutGuard = ours.split("\n").filter((line) => !/inject\("trapProxyUrl"\)|NO_PROXY|Not in the guide/.test(line)).join("\n");
  expect(example).toContain(withoutGuard);
  expect(example).toContain('await record("transcripts", "before", "Grain is the level of detail of one row.");');
  expect(example).toContain('await record("transcripts", "after", "Grain: one row\'s level of detail.");');
});

it("the guide names summary, show, diff, trace and import, in that order", () => {
  expect(commands.map((args) => `${args[0]} ${args[1]}`)).toEqual(["transcript summary", "transcript show", "transcript diff", "transcript trace", "transcript import"]);
});

it("summary: a completed run with one lookup", async () => {
  const { exitCode, stdout } = await run(commands[0]!);
  expect(exitCode).toBe(0);
  expect(stdout).toContain("completed");
  expect(stdout).toContain("mcp__ktx__lookup ×1");
});

it("show --type assistant,result: the tool call and the result, nothing of the control traffic", async () => {
  const { exitCode, stdout } = await run(commands[1]!);
  expect(exitCode).toBe(0);
  expect(stdout).toContain('tool_use mcp__ktx__lookup {"term":"grain"}');
  expect(stdout).toContain("<< result success");
  expect(stdout).not.toContain("tools/call");
});

it("diff: exit 1, naming the changed answer", async () => {
  const { exitCode, stdout } = await run(commands[2]!);
  expect(exitCode).toBe(1);
  expect(stdout).toContain("Grain: one row's level of detail.");
});

it("trace: Chrome trace-event JSON with the lookup's tool call", async () => {
  const { exitCode } = await run(commands[3]!);
  expect(exitCode).toBe(0);
  const trace = JSON.parse(readFileSync(join(work, "trace.json"), "utf8"));
  expect(JSON.stringify(trace.traceEvents.map((event: { name: string }) => event.name))).toContain("lookup");
});

it("import: the capture as a transcript with a header", async () => {
  const { exitCode, stderr } = await run(commands[4]!);
  expect(exitCode).toBe(0);
  expect(stderr).toMatch(/redact/i);
  const header = JSON.parse(readFileSync(join(work, "transcripts/imported.jsonl"), "utf8").split("\n")[0]!);
  expect(header.kind).toBe("header");
  expect(header.source).toBe("stream-json");
});
