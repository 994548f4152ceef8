/** The `ktx-claude-code` command: transcript inspection and the fixture drift report. */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { compareCliPath } from "../../src/cli/fixtures.js";
import { InvalidInputError } from "../../src/errors/index.js";
import { LINE_WIDTH } from "../../src/transcripts/inspect.js";
import { bundledCliVersion, locateBundledCli } from "../../src/binary/locate.js";
import { cleanup, cliVersionInUse, realCli, tempDir, testEnv } from "../support.js";

const MAIN = join(import.meta.dirname, "../../dist/cli/main.js");
const FIXTURES = join(import.meta.dirname, "../../fixtures/transcripts");
const run = (...args: string[]) => execa(process.execPath, [MAIN, ...args], { reject: false, env: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" } });
/** From another directory, as from an installed package: fixtures are found relative to the package. */
const runElsewhere = (...args: string[]) =>
  execa(process.execPath, [MAIN, ...args], { reject: false, cwd: tempDir("elsewhere"), env: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" } });

afterEach(cleanup);

/** A copy of `fixture` with every occurrence of `from` in its lines replaced by `to`. */
function variant(fixture: string, from: string, to: string): string {
  const path = join(tempDir("transcript"), "variant.jsonl");
  writeFileSync(path, readFileSync(fixture, "utf8").replaceAll(from, to));
  return path;
}

describe("ktx-claude-code transcript", () => {
  const loop = join(FIXTURES, "2.1.330", "tool-loop.jsonl");

  it("shows a timeline with turns, tool calls and their duration, control traffic and the exit", async () => {
    const { exitCode, stdout } = await run("transcript", "show", loop);
    expect(exitCode).toBe(0);
    expect(stdout).toMatch(/ms {2}>> initialize: system prompt \d+ chars/);
    expect(stdout).toMatch(/^── turn 1 · msg_scripted_0 /m);
    expect(stdout).toMatch(/ms {2}<< tools\/call lookup \{"term":"grain"\}/);
    expect(stdout).toMatch(/ms {2}>> tools\/call lookup done in \d+\.\d ms: ok "\*\*grain\*\*: a glossary entry"/);
    expect(stdout).toMatch(/exit code=0/);
  });

  it("filters by type with --type and prints raw lines with --raw", async () => {
    const filtered = (await run("transcript", "show", loop, "--type", "result,control_request/mcp_message/tools/call")).stdout;
    const events = filtered.split("\n").filter((line) => / ms {2}/.test(line));
    expect(events.map((line) => line.replace(/^.* ms {2}(<<|>>) (\S+).*$/, "$2"))).toEqual(["tools/call", "tools/call", "result"]);
    const raw = (await run("transcript", "show", loop, "--raw", "--type", "result")).stdout;
    const resultLine = readFileSync(loop, "utf8").split("\n").map((line) => JSON.parse(line || "{}")).find((record) => record.kind === "in" && record.text.includes('"type":"result"'));
    expect(raw).toContain(resultLine.text);
  });

  it("keeps a 10 MB transcript readable: bounded lines, small output, the key events still there", async () => {
    const big = "lorem ipsum ".repeat(300_000);
    const path = variant(loop, "**grain**: a glossary entry", big);
    const size = statSync(path).size;
    expect(size).toBeGreaterThan(10_000_000);
    const { exitCode, stdout } = await run("transcript", "show", path);
    expect(exitCode).toBe(0);
    const lines = stdout.trimEnd().split("\n");
    const marker = " … [+9999999 chars]".length;
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(LINE_WIDTH + marker);
    expect(stdout.length).toBeLessThan(size / 500);
    expect(stdout).toMatch(/tools\/call lookup done in \d+\.\d ms: ok "lorem ipsum .*… \[\+\d+ chars\]/);
    expect(stdout).toMatch(/tool_result mcp__ktx__lookup ok "lorem ipsum .*… \[\+\d+ chars\]/);
    expect(stdout).toMatch(/tokens in \d+, out \d+, cache read \d+, cache write \d+; cost \$/);
    expect(stdout).toMatch(/exit code=0/);
  });

  it("summarises a run with turns, tokens and cost, as text and as JSON", async () => {
    const text = await run("transcript", "summary", loop);
    expect(text.stdout).toMatch(/tool calls: 2: mcp__ktx__lookup ×1, mcp__ktx__count ×1/);
    const json = JSON.parse((await run("transcript", "summary", loop, "--json")).stdout);
    expect(json.result).toMatchObject({ subtype: "success", isError: false });
    expect(json.cliVersion).toBe("2.1.330");
    // The fixture ends with the runtime's call record: the tokens and cost are that call's own.
    expect(text.stdout).toContain(`tokens: in ${json.tokens.input}, out ${json.tokens.output}, cache read ${json.tokens.cacheRead}, cache write ${json.tokens.cacheCreation} (from the call record`);
    expect(json.tokens.source).toBe("call");
    expect(text.stdout).toContain(`cost: $${json.costUsd.toFixed(6)}`);
    expect(text.stdout).toContain(`turns: ${json.turns}`);
    expect(json.tokens.input).toBeGreaterThan(0);
  });

  it("diffs two runs structurally, exiting 1 when they differ, 0 when they do not, 2 on bad input", async () => {
    const { exitCode, stdout } = await run("transcript", "diff", loop, join(FIXTURES, "2.1.142", "tool-loop.jsonl"));
    expect(exitCode).toBe(1);
    const same = await run("transcript", "diff", loop, loop);
    expect(same.exitCode).toBe(0);
    expect(same.stdout).toBe("no differences");
    const absent = join(tempDir("transcript"), "absent.jsonl");
    const missing = await run("transcript", "diff", loop, absent);
    expect(missing.exitCode).toBe(2);
    // A typed message naming the path, not the system's raw ENOENT.
    expect(missing.stderr).toBe(`TranscriptFileError: No transcript at ${absent}: there is no such file. Check the path (a call's transcript is \`<transcript.dir>/<name>.jsonl\`; \`result.transcriptPath\` names it).`); // execa strips the final newline
    const notATranscript = join(tempDir("transcript"), "notes.txt");
    writeFileSync(notATranscript, "hello\n");
    const bad = await run("transcript", "diff", loop, notATranscript);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("neither a ktx-claude-code transcript");
    expect(stdout).toMatch(/control requests changed/);
    expect(stdout).toMatch(/system\/init: removed fields .*capabilities/);
  });

  it("diffs two runs by value: a changed tool argument is reported with its path and line numbers", async () => {
    const other = variant(loop, '{\\"term\\":\\"grain\\"}', '{\\"term\\":\\"barley\\"}');
    const { exitCode, stdout } = await run("transcript", "diff", loop, other);
    expect(exitCode).toBe(1);
    expect(stdout).toMatch(/<< assistant #1 \(lines \d+\/\d+\) message\.content\[0\]\.input\.term: "grain" -> "barley"/);
    expect(stdout).toMatch(/<< control_request\/mcp_message\/tools\/call #1 \(lines \d+\/\d+\) request\.message\.params\.arguments\.term: "grain" -> "barley"/);
    expect(stdout).not.toMatch(/new fields|removed fields|control requests changed/);
  });

  it("rejects an unknown --type, naming the known ones", async () => {
    const { exitCode, stdout, stderr } = await run("transcript", "show", loop, "--type", "result,tool_call");
    expect(exitCode).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/unknown --type "tool_call"; known types .*assistant, user, result, system/);
  });

  it("reads raw stream-json captures: show, summary, diff, and import to the transcript format", async () => {
    const capture = join(import.meta.dirname, "../../fixtures/protocol-2.1.330/live_subagent.stdout.ndjson");
    const shown = await run("transcript", "show", capture);
    expect(shown.exitCode).toBe(0);
    expect(shown.stdout).toMatch(/a raw stream-json capture/);
    expect(shown.stdout).toMatch(/line 13 {2}·· result success turns=2 stop=end_turn terminal=completed/);
    const summary = await run("transcript", "summary", capture);
    expect(summary.stdout).toMatch(/tool calls: 2: Read \(subagent\) ×1, Agent ×1/);
    expect(summary.stdout).toMatch(/turns: 2 \(and 1 subagent turns\)/);
    expect((await run("transcript", "diff", capture, join(import.meta.dirname, "../../fixtures/protocol-2.1.330/t01_text_basic.stdout.ndjson"))).exitCode).toBe(1);
    const out = join(tempDir("transcript"), "imported.jsonl");
    const imported = await run("transcript", "import", capture, "--out", out);
    expect(imported.exitCode).toBe(0);
    expect(imported.stderr).toMatch(/Imported 13 lines/);
    expect(JSON.parse(readFileSync(out, "utf8").split("\n")[0]!)).toMatchObject({ kind: "header", source: "stream-json", cliVersion: "2.1.330" });
    expect((await run("transcript", "diff", capture, out)).exitCode).toBe(0);
    expect((await run("transcript", "import", loop)).exitCode).toBe(2);
  });

  it("reads a capture recorded live from the pinned CLI (claude -p --output-format stream-json --verbose, scripted API first party, a claude.ai login in an empty HOME)", async () => {
    const capture = join(tempDir("capture"), "live.ndjson");
    const recorded = await execa(process.execPath, [join(import.meta.dirname, "../../scripts/record-raw-capture.mjs"), realCli(), capture, "--first-party"], { reject: false, env: testEnv() });
    expect(recorded.exitCode, recorded.stderr).toBe(0);
    expect(recorded.stderr).toMatch(/exit 0; 4 API requests \(main 2, subagent 2\), first party \(to api\.anthropic\.com; refused: none\)/);
    const summary = JSON.parse((await run("transcript", "summary", capture, "--json")).stdout);
    expect(summary).toMatchObject({ source: "stream-json", cliVersion: await cliVersionInUse(), subagentTurns: 1, end: { state: "ok" } });
    expect(summary.toolCalls).toEqual([{ name: "Read", isError: false, subagent: true }, { name: "Agent", isError: false }]);
    const messages = readFileSync(capture, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line));
    // The CLI ran as a logged-in user: no API key was its source.
    expect(messages.find((message) => message.type === "system" && message.subtype === "init")).toMatchObject({ apiKeySource: "none" });
    const result = messages.find((message) => message.type === "result");
    // Tokens over the cost's scope: the subagent's requests are billed with the run's, beyond the main thread's usage.
    const billed = Object.values(result.modelUsage as Record<string, { inputTokens: number; outputTokens: number; costUSD: number }>);
    expect(summary.tokens).toMatchObject({ input: billed.reduce((n, m) => n + m.inputTokens, 0), output: billed.reduce((n, m) => n + m.outputTokens, 0), source: "billed" });
    expect(summary.tokens.input).toBeGreaterThan(result.usage.input_tokens);
    expect(summary.mainThreadTokens).toMatchObject({ input: result.usage.input_tokens, output: result.usage.output_tokens });
    expect(summary.costUsd).toBeCloseTo(result.total_cost_usd, 9);
    const shown = await run("transcript", "show", capture);
    expect(shown.stdout).not.toContain("undefined");
    expect(shown.stdout).toMatch(/\(subagent\) tool_result Read ok/);
    // Against the committed live capture (recorded at the base URL with an API key): the same structure; only
    // values such as paths and token counts may differ, and a subscriber's CLI also reports its usage (rate_limit_event).
    expect(shown.stdout).toMatch(/rate_limit_event/);
    const diff = JSON.parse((await run("transcript", "diff", join(import.meta.dirname, "../../fixtures/protocol-2.1.330/live_subagent.stdout.ndjson"), capture, "--json")).stdout);
    expect(diff.addedMessageTypes).toEqual(["rate_limit_event"]);
    expect(diff.removedMessageTypes).toEqual([]);
  });

  it("explains its usage on a bad command", async () => {
    const { exitCode, stderr } = await run("transcript", "frobnicate");
    expect(exitCode).toBe(2);
    expect(stderr).toMatch(/Usage: ktx-claude-code/);
  });
});

describe("ktx-claude-code fixtures compare", () => {
  it("takes exactly one of --cli and --version", async () => {
    for (const args of [[], ["--cli", realCli(), "--version", "2.1.330"]]) {
      const { exitCode, stderr } = await run("fixtures", "compare", ...args);
      expect(exitCode).toBe(2);
      expect(stderr).toContain("fixtures compare: pass exactly one of --cli PATH and --version X.Y.Z");
    }
    const install = async (version: string) => `/cache/${version}/claude`;
    await expect(compareCliPath({ version: "2.1.999" }, install)).resolves.toBe("/cache/2.1.999/claude");
    await expect(compareCliPath({ cli: realCli() }, install)).resolves.toBe(resolve(realCli()));
    await expect(compareCliPath({}, install)).rejects.toBeInstanceOf(InvalidInputError);
    await expect(compareCliPath({ cli: "x", version: "2.1.999" }, install)).rejects.toBeInstanceOf(InvalidInputError);
  });

  it("refuses a --version that is not exact, and an --against without fixtures, before installing anything", async () => {
    const missing = await run("fixtures", "compare", "--cli", realCli(), "--against", "2.1.1");
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/No recorded fixtures for CLI 2\.1\.1 at .*fixtures\/transcripts\/2\.1\.1 \(recorded: .*2\.1\.330/);
    const { exitCode, stderr } = await run("fixtures", "compare", "--version", "latest");
    expect(exitCode).toBe(2);
    expect(stderr).toContain('"latest" is not an exact version');
  });

  it("runs the installed version by --version with the installed binary (or KTX_CC_CLI's binary), and finds no drift against its own fixtures", async () => {
    const version = process.env.KTX_CC_CLI ? await cliVersionInUse() : bundledCliVersion()!;
    const target = process.env.KTX_CC_CLI ? ["--cli", realCli(), "--against", version] : ["--version", bundledCliVersion()!];
    const { exitCode, stdout, stderr } = await runElsewhere("fixtures", "compare", ...target, "--scenarios", "text", "--json");
    expect(exitCode).toBe(0);
    expect(stderr).toMatch(/^\[1\/1\] text: \d+\.\d s, outcome same, same$/m);
    const report = JSON.parse(stdout);
    expect(report.cli).toBe(process.env.KTX_CC_CLI ? realCli() : locateBundledCli());
    expect(report.version).toBe(version);
    expect(report.verdict).toBe("same");
    expect(report.differing).toBe(0);
  });

  // Four of the 13 scenarios (each starts a CLI): one text call, the one whose output tokens depended on
  // how the stream was read, a tool loop, an API failure. The full catalog is measured in docs/guides/verify-cli.md.
  it("is a clean gate on the pinned version under a long TMPDIR and another HOME: verdict same, exit 0", { timeout: 240_000 }, async () => {
    const longTmp = join(tempDir("gate"), "a-much-longer-temporary-directory-name-for-the-gate");
    const home = join(tempDir("gate-home"), "another", "home");
    mkdirSync(longTmp, { recursive: true });
    mkdirSync(home, { recursive: true });
    const { exitCode, stdout, stderr } = await execa(process.execPath, [MAIN, "fixtures", "compare", "--version", bundledCliVersion()!, "--scenarios", "text,object-schema-violation,tool-loop,api-429", "--json"], {
      reject: false,
      cwd: tempDir("elsewhere"),
      env: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1", TMPDIR: longTmp, HOME: home },
    });
    const report = JSON.parse(stdout);
    expect(exitCode, `${stderr}\n${JSON.stringify(report.structure)}\n${JSON.stringify(report.scenarios.map((drift: { diff?: unknown }) => drift.diff))}`).toBe(0);
    expect(report.verdict).toBe("same");
    expect(report.scenarios.map((drift: { scenario: string }) => drift.scenario)).toEqual(["text", "object-schema-violation", "tool-loop", "api-429"]);
    expect(report.scenarios.every((drift: { projectDirLength?: unknown }) => drift.projectDirLength === undefined)).toBe(true);
    expect(report.transcripts).toBeNull();
  });

  it("runs scenarios live on a CLI and reports drift against the recorded fixtures", async () => {
    const { exitCode, stdout } = await run("fixtures", "compare", "--cli", realCli(), "--against", "2.1.142", "--scenarios", "tool-loop,text", "--json");
    // Drift is a failed gate.
    expect(exitCode).toBe(1);
    const report = JSON.parse(stdout);
    const version = await cliVersionInUse();
    expect(report.version).toBe(version);
    const loop = report.scenarios.find((drift: { scenario: string }) => drift.scenario === "tool-loop");
    // 2.1.142 sent the MCP handshake twice; the pinned CLI sends it once.
    expect(loop.diff.controlRequests.before.filter((key: string) => key.endsWith("/initialize"))).toHaveLength(2);
    expect(loop.diff.controlRequests.after.filter((key: string) => key.endsWith("/initialize"))).toHaveLength(1);
    // Outcomes first: the same on both versions.
    expect(loop.outcome).toBe("same");
    expect(report.outcomes).toEqual({ same: 2, changed: 0, missingFixtures: 0 });
    // The structure section names the changed handshake, and no version string is a change.
    expect(report.structure).toContainEqual(expect.objectContaining({ change: "changed", what: expect.stringMatching(/^control requests: /), runtimeReads: true, scenarios: ["tool-loop"] }));
    expect(report.verdict).toBe("changed");
    expect(JSON.stringify(report.scenarios.map((drift: { diff: { valueChanges: unknown } }) => drift.diff.valueChanges))).not.toContain("2.1.142");
    expect(JSON.stringify(report.scenarios.map((drift: { diff: { valueChanges: unknown } }) => drift.diff.valueChanges))).not.toContain(version);
    // Differences keep the live transcripts for a look.
    expect(report.transcripts).toMatch(/ktx-compare-/);
    expect(existsSync(join(report.transcripts, "tool-loop.jsonl"))).toBe(true);
    rmSync(report.transcripts, { recursive: true, force: true });
  });
});
