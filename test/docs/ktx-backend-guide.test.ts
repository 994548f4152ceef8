/**
 * The examples of docs/guides/ktx-backend.md, run as the page has them (public imports, their own process,
 * the real CLI on the scripted API's first-party front with a claude.ai login in the test's HOME):
 * - the quick start: its ktx.yaml lines written as the page's heredoc writes them, then its `doctor --live`
 *   (the installed bin, `dist/cli/main.js`, in place of `npx --no-install ktx-claude-code`; the install and
 *   the login are the pack tests' and the CLI's own);
 * - "Configure ktx.yaml": each line's value against the comment that promises it;
 * - "Without KTX's factory": the block with its free names (`projectDir`, `logger`, `prompt`, `abortSignal`)
 *   defined, and the options a test needs spread in front of the page's own.
 * "Wire it into KTX" calls KTX's own factory: test/ktx/call-sites.test.ts drives KTX's call sites instead.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, expect, it } from "vitest";
import { turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, cleanup, cliArgs, cliOption, firstPartyApi, firstPartyEnv, remainingChildren, tempDir } from "../support.js";

const MAIN = join(import.meta.dirname, "../../dist/cli/main.js");
const page = readFileSync(new URL("../../docs/guides/ktx-backend.md", import.meta.url), "utf8");

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

/** The first fenced block of `lang` after `heading` (or from the top). */
function block(lang: string, heading?: string): string {
  const from = heading === undefined ? 0 : page.indexOf(heading);
  expect(from, `${heading} on the page`).toBeGreaterThanOrEqual(0);
  const code = new RegExp("```" + lang + "\\n([\\s\\S]*?)```").exec(page.slice(from))?.[1];
  expect(code, `a ${lang} block after ${heading ?? "the top"}`).toBeDefined();
  return code!;
}

/** The quick start's ktx.yaml: the heredoc the page appends to it. */
function quickStartYaml(): string {
  const yaml = /cat >> ktx\.yaml <<'EOF'\n([\s\S]*?)\nEOF\n/.exec(block("sh"))?.[1];
  expect(yaml, "the quick start's heredoc").toBeDefined();
  return `${yaml}\n`;
}

/** Runs `code` as an ES module inside the package, so `ktx-claude-code` resolves to its own build as for a user. */
async function runModule(code: string, cwd: string, env: Record<string, string>) {
  const file = join(import.meta.dirname, `.ktx-backend-example-${process.pid}.mjs`);
  writeFileSync(file, code);
  try {
    return await execa(process.execPath, [file], { cwd, env, extendEnv: false, reject: false });
  } finally {
    rmSync(file, { force: true });
  }
}

it("quick start: the page's ktx.yaml and its `doctor --live`, one passing call per configured model", { timeout: 120_000 }, async () => {
  const sh = block("sh");
  const doctor = sh.split("\n").find((line) => line.includes(" doctor "));
  expect(doctor).toMatch(/^npx --no-install ktx-claude-code doctor --live\s+#/);
  const args = doctor!.replace(/\s+#.*$/, "").split(/\s+/).slice(3);
  const api = await firstPartyApi([turn.text("OK")], { onExhausted: "repeat-last" });
  const project = tempDir("ktx-project");
  writeFileSync(join(project, "ktx.yaml"), quickStartYaml());
  const run = await execa(process.execPath, [MAIN, ...args, ...cliArgs("--cli-path")], { cwd: project, env: firstPartyEnv(api), extendEnv: false, reject: false });
  expect([run.exitCode, run.stdout]).toEqual([0, expect.stringMatching(/doctor: all checks passed$/)]);
  // `default: sonnet` covers every role but triage, which has haiku: one call each, both checked.
  expect(run.stdout).toMatch(/ok {3}live: claude-sonnet-4-6 \(default, candidateExtraction, curator, reconcile, repair\) passed the interceptor/);
  expect(run.stdout).toMatch(/ok {3}live: claude-haiku-4-5 \(triage\) passed the interceptor/);
  expect(api.messageRequests.map((request) => request.body.model)).toEqual(["claude-sonnet-4-6", "claude-haiku-4-5"]);
});

it("Configure ktx.yaml: each value is the one its comment names, for the quick start's file with a misspelt role", { timeout: 60_000 }, async () => {
  const lines = block("ts", "## Configure ktx.yaml").trim().split("\n");
  const [load, ...reads] = lines;
  expect(load).toMatch(/^const \{ config \} = loadKtxLlmConfig\(projectDir\);/);
  // Each read printed as JSON, in the page's order.
  const prints = reads.map((line) => `console.log(JSON.stringify(${line.replace(/;\s*\/\/.*$/, "")}));`);
  const code = ['import { loadKtxLlmConfig } from "ktx-claude-code";', "const projectDir = process.cwd();", load!, ...prints].join("\n");
  const project = tempDir("ktx-project");
  // The quick start's file, plus the typo the warnings comment shows.
  writeFileSync(join(project, "ktx.yaml"), `${quickStartYaml()}    curatorr: opus\n`);
  const run = await runModule(code, project, { PATH: process.env.PATH ?? "/usr/bin:/bin" });
  expect(run.stderr).toBe("");
  const values = run.stdout.trim().split("\n").map((line) => JSON.parse(line));
  const comments = reads.map((line) => /\/\/\s*(.*)$/.exec(line)?.[1] ?? "");
  expect(comments[0]).toMatch(/"none" when the file has no llm block/);
  expect(values[0]).toBe("claude-code");
  expect(values[1]).toEqual({ default: "sonnet", triage: "haiku" });
  expect(comments[1]).toBe(`{ default: "sonnet", triage: "haiku" }`);
  expect(comments[2]).toMatch(new RegExp(`^${values[2]} unless`));
  expect(comments[3]).toBe(String(values[3]));
  expect(values[4]).toEqual([expect.objectContaining({ path: "llm.models.curatorr", message: expect.any(String), fix: expect.any(String) })]);
  expect(comments[4]).toMatch(/^\[\{ path: "llm\.models\.curatorr", message, fix \}\]$/);
});

it("Without KTX's factory: the config parsed, a triage call through the factory's runtime, closed", { timeout: 120_000 }, async () => {
  const code = block("ts", "### Without KTX's factory");
  expect(code).toContain("createKtxLlmRuntime(config, { projectDir, logger })");
  expect(code).toContain("const verdict = await runtime.generateText(");
  const api = await firstPartyApi([turn.text("relevant")]);
  const env = firstPartyEnv(api);
  const options = { env, warm: false, passEnv: TEST_PASS_ENV, ...cliOption() };
  const project = tempDir("ktx-project");
  writeFileSync(join(project, "ktx.yaml"), quickStartYaml());
  const module = [
    "const projectDir = process.cwd();",
    "const logger = undefined;",
    'const prompt = "Is this page about revenue? Answer relevant or not.";',
    "const abortSignal = AbortSignal.timeout(60_000);",
    code
      .replace("createKtxLlmRuntime(config, { projectDir, logger })", "createKtxLlmRuntime(config, { ...JSON.parse(process.env.EXAMPLE_OPTIONS), projectDir, logger })")
      .replace(/(const verdict = await runtime\.generateText\([^\n]*\);)/, "$1\n  console.log(verdict);"),
  ].join("\n");
  const run = await runModule(module, project, { ...env, EXAMPLE_OPTIONS: JSON.stringify(options) });
  expect(run.stderr).toBe("");
  expect([run.exitCode, run.stdout]).toEqual([0, "relevant"]);
  // `role: "triage"` ran on the quick start's triage model, first party behind the interceptor.
  expect(api.messageRequests.map((request) => request.body.model)).toEqual(["claude-haiku-4-5"]);
});
