#!/usr/bin/env node
/**
 * `npm run demo`: a real generateText, generateObject and agent loop through the installed CLI,
 * against the scripted Messages API on 127.0.0.1 (no account needed). `--live` uses your own local
 * Claude Code session instead.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { parseArgs } from "node:util";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { ClaudeCodeRuntime } from "../claude-code/runtime.js";
import { ClaudeCodeError } from "../errors/index.js";
import { startScriptedMessagesApi, turn, type ScriptedMessagesApi } from "../testing/scripted-api.js";

const DEMO_USAGE = `Usage: npm run demo [-- --live]

A real generateText, generateObject and agent loop through the installed Claude Code CLI (one of the verified versions).

Options:
  --live      use your own local Claude Code session (log in once with \`claude\`) instead of the scripted Messages API on 127.0.0.1
  -h, --help  this help

Example:
  npm run demo -- --live
`;

/** `--live` or nothing: a misspelt flag (`--lvie`) must not silently run the scripted demo. */
function demoArgs(argv: string[]): { live: boolean } | number {
  try {
    const { values } = parseArgs({ args: argv, options: { live: { type: "boolean" }, help: { type: "boolean", short: "h" } }, allowPositionals: false, strict: true });
    if (values.help) {
      process.stdout.write(DEMO_USAGE);
      return 0;
    }
    return { live: values.live === true };
  } catch (error) {
    process.stderr.write(`demo: ${(error as Error).message.split(". To specify")[0]!.replace(/\.$/, "")}.\n\n${DEMO_USAGE}`);
    return 2;
  }
}

const parsedArgs = demoArgs(process.argv.slice(2));
const live = typeof parsedArgs === "object" && parsedArgs.live;
const say = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const projectDir = mkdtempSync(join(tmpdir(), "ktx-demo-project-"));
  const home = mkdtempSync(join(tmpdir(), "ktx-demo-home-"));
  let api: ScriptedMessagesApi | undefined;
  try {
    if (!live) {
      api = await startScriptedMessagesApi([
        turn.text("Hello from the scripted model, through the real Claude Code CLI."),
        turn.object({ title: "Orders", columns: ["id", "customer_id", "total"] }),
        turn.tools({ name: "mcp__ktx__row_count", input: { table: "orders" } }),
        turn.text("The orders table has 1204 rows."),
      ]);
      say(`scripted Messages API on ${api.baseUrl} (pass --live to use your local Claude Code session)`);
    }
    const runtime = new ClaudeCodeRuntime({
      projectDir,
      models: { default: "sonnet", triage: "haiku" },
      // The scripted run gets an empty HOME so nothing of yours is read; --live uses your session.
      env: live ? process.env : { PATH: process.env.PATH ?? "", HOME: home },
      ...(api ? { apiEndpoint: { baseUrl: api.baseUrl, apiKey: "sk-demo-scripted" } } : {}),
      timeoutMs: 120_000,
    });
    const cli = await runtime.cli();
    say(`Claude Code CLI ${cli.version} (${cli.verified ? "verified" : "unverified"}) at ${cli.path}\n`);

    let started = performance.now();
    const text = await runtime.generateTextResult({ prompt: "Say hello in one sentence.", system: "You are the KTX demo." });
    say(`generateText  -> ${JSON.stringify(text.text)}  [model ${text.model}, ${Math.round(performance.now() - started)} ms]`);

    started = performance.now();
    const schema = z.object({ title: z.string(), columns: z.array(z.string()) });
    const object = await runtime.generateObjectResult({ prompt: "Describe a table called orders with three columns.", schema });
    say(`generateObject -> ${JSON.stringify(object.object)}  [${Math.round(performance.now() - started)} ms]`);

    started = performance.now();
    const loop = await runtime.runAgentLoop({
      modelRole: "default",
      systemPrompt: "You are the KTX demo. Use the row_count tool, then answer.",
      userPrompt: "How many rows does the orders table have?",
      toolSet: [{ name: "row_count", description: "Rows in a table", inputSchema: z.object({ table: z.string() }), execute: ({ table }: { table: string }) => `${table}: 1204 rows` }],
      stepBudget: 4,
      onStepFinish: ({ stepIndex, stepBudget }) => {
        say(`  step ${stepIndex}/${stepBudget}`);
      },
    });
    say(`runAgentLoop  -> ${loop.stopReason}: ${JSON.stringify(loop.text)}; tool calls ${loop.toolCalls.map((c) => c.name).join(", ")}  [${Math.round(performance.now() - started)} ms]`);
    await runtime.close();
    if (api) say(`\nthe scripted API received ${api.messageRequests.length} Messages requests, all on loopback.`);
  } finally {
    await api?.close();
    rmSync(projectDir, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
}

if (typeof parsedArgs === "number") process.exitCode = parsedArgs;
else main().catch((error: unknown) => {
  process.stderr.write(`${ClaudeCodeError.isInstance(error) ? `${error.name}: ${error.message}` : String((error as Error)?.stack ?? error)}\n`);
  process.exitCode = 1;
});
