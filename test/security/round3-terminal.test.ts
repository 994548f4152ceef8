/**
 * Issue 32, finding 3: text bound for a terminal. Model text, header fields and an organisation name
 * written by others reach `transcript show/summary/diff` and `status`; their escape sequences (OSC 52
 * clipboard write, CSI 2J screen clear, OSC 8 link, a one-byte C1 CSI) must come out visible, never raw.
 * `--json` output stays exact JSON.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runStatus } from "../../src/cli/status.js";
import { terminalText } from "../../src/cli/terminal-text.js";
import { turn } from "../../src/testing/scripted-api.js";
import { realCli, script, scriptedApi, tempDir, testEnv } from "../support.js";
import { endSuiteAfterAll } from "./harness.js";

endSuiteAfterAll(() => undefined);

const MAIN = join(import.meta.dirname, "../../dist/cli/main.js");
const FIXTURE = join(import.meta.dirname, "../../fixtures/transcripts/2.1.330/text.jsonl");
const OSC52 = "\x1b]52;c;ZXZpbA==\x07";
const CSI_2J = "\x1b[2J";
const OSC8 = "\x1b]8;;https://evil.example/\x1b\\click here\x1b]8;;\x1b\\";
const C1_CSI = "\u009b31m";
const EVIL = `before ${OSC52} ${CSI_2J} ${OSC8} ${C1_CSI} after`;
/** Any control character but tab and newline, and the bidi overrides. */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** The recorded text fixture with the model's answer (and the header's cwd) replaced by escape sequences. */
function hostileTranscript(): string {
  const lines = readFileSync(FIXTURE, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
  for (const record of lines) {
    if (record.kind === "header") record.cwd = `/tmp/${CSI_2J}project`;
    // The answer sits inside a protocol line, i.e. JSON inside the record's text.
    if (typeof record.text === "string") record.text = record.text.replaceAll("hello from the scripted model", JSON.stringify(EVIL).slice(1, -1));
    if (record.kind === "call" && record.outcome) record.outcome = { text: EVIL };
  }
  // The file name too: every renderer prints the path it read.
  const path = join(tempDir("hostile"), `run${CSI_2J}.jsonl`);
  writeFileSync(path, `${lines.map((record) => JSON.stringify(record)).join("\n")}\n`);
  return path;
}

const cli = (...args: string[]) => spawnSync(process.execPath, [MAIN, ...args], { encoding: "utf8", timeout: 20_000 });

describe("escapes in transcripts are printed visibly (finding 3)", () => {
  const path = hostileTranscript();

  it("transcript show (and --raw) prints OSC 52, CSI 2J, OSC 8 and a C1 CSI visibly escaped", () => {
    for (const args of [[], ["--raw"]]) {
      const run = cli("transcript", "show", path, ...args);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).not.toMatch(RAW_CONTROL);
      expect(run.stdout).toContain("\\u001b]52;c;ZXZpbA==\\u0007");
      expect(run.stdout).toContain("\\u001b[2J");
      expect(run.stdout).toContain("\\u001b]8;;https://evil.example/\\u001b\\");
      expect(run.stdout).toContain("\\u009b31m");
    }
  });

  it("transcript summary and diff print them visibly; summary --json stays exact JSON", () => {
    const summary = cli("transcript", "summary", path);
    expect(summary.status, summary.stderr).toBe(0);
    expect(summary.stdout).not.toMatch(RAW_CONTROL);
    expect(summary.stdout).toContain("run\\u001b[2J.jsonl");
    const diff = cli("transcript", "diff", FIXTURE, path);
    expect(diff.status).toBe(1);
    expect(diff.stdout).not.toMatch(RAW_CONTROL);
    expect(diff.stdout).toContain("\\u001b[2J");
    const json = cli("transcript", "summary", path, "--json");
    expect(json.status).toBe(0);
    // JSON.stringify's own output, parsed back to the very text the transcript holds.
    expect(JSON.stringify(JSON.parse(json.stdout), null, 2)).toBe(json.stdout.trimEnd());
    expect(JSON.parse(json.stdout).path).toBe(path);
  });

  it("the sanitiser keeps newline and tab, and makes every other control character visible", () => {
    expect(terminalText("a\tb\nc")).toBe("a\tb\nc");
    expect(terminalText("\r\x00\x7f\u202e")).toBe("\\u000d\\u0000\\u007f\\u202e");
    expect(terminalText(EVIL)).not.toMatch(RAW_CONTROL);
  });
});

describe("status prints an organisation name with escapes visibly (finding 3)", () => {
  it("organizationName from ~/.claude.json, as the CLI reports it in its initialize reply", async () => {
    const home = tempDir("home");
    const organization = `Evil ${OSC52}Org${CSI_2J}`;
    writeFileSync(join(home, ".claude.json"), JSON.stringify({ oauthAccount: { organizationName: organization, organizationUuid: "0b2c1f7e-0000-4000-8000-000000000000", accountUuid: "1b2c1f7e-0000-4000-8000-000000000000", emailAddress: "user@example.com" } }));
    mkdirSync(join(home, ".claude"));
    // A claude.ai login (never sent anywhere but the scripted API); the account then carries the organisation.
    writeFileSync(join(home, ".claude", ".credentials.json"), JSON.stringify({ claudeAiOauth: { accessToken: "sk-ant-oat01-scripted-access-token-0000", refreshToken: "sk-ant-ort01-scripted", expiresAt: Date.now() + 86_400_000, scopes: ["user:inference", "user:profile"], subscriptionType: "max" } }));
    const project = tempDir("status-project");
    writeFileSync(join(project, "ktx.yaml"), "llm:\n  provider:\n    backend: claude-code\n  models:\n    default: sonnet\n");
    const api = await scriptedApi([turn.text("OK")], { onExhausted: "repeat-last" });
    // The hidden test endpoint is an API-key one; the wrapper drops the key so the CLI uses the claude.ai login.
    const cliPath = script("drop-key", `unset ANTHROPIC_API_KEY; exec '${realCli()}' "$@"`);
    let stdout = "";
    const code = await runStatus(["--project-dir", project, "--api-base-url", api.baseUrl, "--api-key", "sk-test-scripted", "--cli-path", cliPath], {
      stdout: (text) => void (stdout += text),
      stderr: () => undefined,
      stderrIsTTY: false,
      env: testEnv({ HOME: home }),
    });
    expect(code).toBe(0);
    expect(stdout).toMatch(/login +subscription \(OAuth\) via claude\.ai/);
    expect(stdout).toContain("Evil \\u001b]52;c;ZXZpbA==\\u0007Org\\u001b[2J");
    expect(stdout).not.toMatch(RAW_CONTROL);
  });
});
