/**
 * docs/guides/verify-cli.md: every `fixtures` command it shows parses with the command line's own specs (one of
 * --cli and --version, as the command requires), and its quick look runs on the installed CLI version:
 * against its own fixtures, no outcome and no structure differs. The full `fixtures verify` writes into the checkout and
 * takes half an hour, so the suite does not run it (test/e2e/verify-command.test.ts checks its refusals).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { expect, it } from "vitest";
import { isStop, parseCommand } from "../../src/cli/args.js";
import { FIXTURE_COMMANDS } from "../../src/cli/fixture-commands.js";
import { bundledCliVersion } from "../../src/binary/locate.js";
import { tempDir } from "../support.js";

const ROOT = join(import.meta.dirname, "../..");
const guide = readFileSync(join(ROOT, "docs/guides/verify-cli.md"), "utf8");
const PREFIX = "node dist/cli/main.js fixtures ";

/** Every `node dist/cli/main.js fixtures …` line of the guide's shell blocks, as its words after `fixtures`. */
const commands = [...guide.matchAll(/```sh\n([\s\S]*?)```/g)]
  .flatMap((block) => block[1]!.split("\n"))
  .filter((line) => line.startsWith(PREFIX))
  .map((line) => line.slice(PREFIX.length).replace(/\s+#.*$/, "").trim().split(/\s+/));

it("shows fixtures verify and fixtures compare, each parsing with its spec", () => {
  expect(commands.map((words) => words[0])).toEqual(["verify", "compare"]);
  for (const [sub, ...args] of commands) {
    const parsed = parseCommand(FIXTURE_COMMANDS[sub!]!, args);
    expect(isStop(parsed), `${sub} ${args.join(" ")}`).toBe(false);
    if (isStop(parsed)) continue;
    expect([parsed.values.cli, parsed.values.version].filter((value) => value !== undefined)).toHaveLength(1);
  }
});

it("the quick look on the installed version finds no drift", { timeout: 180_000 }, async () => {
  const [, ...args] = commands.find((words) => words[0] === "compare")!;
  // The guide's version is a new one; the installed version is the one whose fixtures must match it exactly.
  const version = args.indexOf("--version");
  args[version + 1] = bundledCliVersion()!;
  const { exitCode, stdout, stderr } = await execa(process.execPath, [join(ROOT, "dist/cli/main.js"), "fixtures", "compare", ...args, "--json"], {
    reject: false,
    cwd: tempDir("verify-guide"),
    env: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" },
  });
  expect(exitCode, stderr).toBeLessThanOrEqual(1);
  const report = JSON.parse(stdout);
  // No outcome and no structure differs. Token counts may: on 2026-12-06 the live 2.1.330 sent one input token
  // more than its 2026-11-26 fixtures in tool-loop (cli-tool.test.ts's clean-gate test fails on it too), so
  // the values that may differ are the token counts and the costs computed from them, nothing else.
  expect(report.scenarios.map((drift: { outcome: string }) => drift.outcome)).toEqual(["same", "same"]);
  expect(report.structure).toEqual([]);
  const changed = report.scenarios.flatMap((drift: { diff?: { valueChanges: Array<{ path: string }> } }) => drift.diff?.valueChanges ?? []).map((change: { path: string }) => change.path);
  for (const path of changed) expect(path).toMatch(/input_tokens|inputTokens|costUSD|total_cost_usd/);
  expect(["same", "changed"]).toContain(report.verdict);
  expect(report.scenarios.map((drift: { scenario: string }) => drift.scenario)).toEqual(["text", "tool-loop"]);
});
