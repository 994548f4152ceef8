/**
 * Issue 32, the command-line tool: finding 6 (`login` was the one child started without the
 * allowlisted environment, and a signal to our process left `claude auth login` orphaned; a stand-in
 * CLI records the environment it got and its pid, then waits like a login waiting for the browser) and
 * finding 3 (text bound for a terminal: model text, header fields and an organisation name written by
 * others reach `transcript show/summary/diff` and `status`; their escape sequences — OSC 52 clipboard
 * write, CSI 2J screen clear, OSC 8 link, a one-byte C1 CSI — must come out visible, never raw;
 * `--json` output stays exact JSON).
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runStatus } from "../../src/cli/status.js";
import { terminalText } from "../../src/cli/terminal-text.js";
import { transcriptCommand } from "../../src/cli/transcript.js";
import { turn } from "../../src/testing/scripted-api.js";
import { realCli, script, scriptedApi, tempDir, testEnv, pidAlive } from "../support.js";
import { endSuiteAfterAll } from "./harness.js";

endSuiteAfterAll(() => undefined);

const MAIN = join(import.meta.dirname, "../../dist/cli/main.js");

/** Variables the red team saw reach `claude auth login`, and a few of the same kind. */
const HOSTILE = {
  CLAUDE_CODE_DIAGNOSTICS_FILE: "/tmp/diagnostics-exfil.log",
  USE_LOCAL_OAUTH: "1",
  CLAUDE_LOCAL_OAUTH_API_BASE: "http://127.0.0.1:9/oauth",
  CLAUDE_AI_AUTHORIZE_URL: "http://127.0.0.1:9/authorize",
  DEBUG: "*",
  CLAUDE_CODE_CUSTOM_OAUTH_URL: "http://127.0.0.1:9/custom",
  ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
  BUN_OPTIONS: "--preload=/tmp/evil.js",
};


async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}

/** Starts `ktx-claude-code login --cli <stand-in>`; resolves once the stand-in is waiting, with its pid and environment. */
async function startLogin() {
  const dir = tempDir("login");
  const standIn = script(
    "claude",
    `if [ "$1" = "--version" ]; then echo "2.1.330 (Claude Code)"; exit 0; fi
env > '${join(dir, "env")}'
echo $$ > '${join(dir, "pid")}'
exec sleep 60`,
  );
  const main = spawn(process.execPath, [MAIN, "login", "--cli", standIn], { env: { ...testEnv(), ...HOSTILE, TERM: "xterm-256color" }, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => main.once("exit", (code, signal) => resolve({ code, signal })));
  expect(await until(() => existsSync(join(dir, "pid")) && readFileSync(join(dir, "pid"), "utf8").endsWith("\n"), 15_000), "the login never started").toBe(true);
  const env = Object.fromEntries(
    readFileSync(join(dir, "env"), "utf8")
      .trim()
      .split("\n")
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
  return { main, exited, pid: Number(readFileSync(join(dir, "pid"), "utf8")), env };
}

describe("login runs through the allowlisted environment and is reaped when we are signalled (finding 6)", () => {
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    it(`login gets the allowlisted environment, and a ${signal} to our process ends it too: none left orphaned`, async () => {
      const login = await startLogin();
      expect(pidAlive(login.pid)).toBe(true);
      // Its environment: none of the hostile variables, the library's own settings, the terminal's kind.
      for (const name of Object.keys(HOSTILE)) expect(login.env, name).not.toHaveProperty(name);
      expect(login.env).toMatchObject({ DISABLE_AUTOUPDATER: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", TERM: "xterm-256color" });
      expect(login.env.HOME).toBeTruthy();
      login.main.kill(signal);
      const exit = await login.exited;
      expect(await until(() => !pidAlive(login.pid), 5_000), `claude auth login (pid ${login.pid}) outlived ${signal}`).toBe(true);
      // The command reports the login's end by the signal passed on.
      expect(exit.code).toBe(128 + ({ SIGTERM: 15, SIGINT: 2, SIGHUP: 1 } as const)[signal]);
    });
  }
});

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

/**
 * The command in this process (a spawned `node dist/cli/main.js` costs a second of CPU each, and the
 * security section has a CPU budget): `show` writes to process.stdout itself, so that is captured too.
 */
async function cli(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => ((stdout += String(chunk)), true)) as typeof process.stdout.write;
  try {
    const status = await transcriptCommand(args.slice(1), { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) }, "usage");
    return { status, stdout, stderr };
  } finally {
    process.stdout.write = write;
  }
}

describe("escapes in transcripts are printed visibly (finding 3)", () => {
  const path = hostileTranscript();

  it("transcript show (and --raw) prints OSC 52, CSI 2J, OSC 8 and a C1 CSI visibly escaped", async () => {
    for (const args of [[], ["--raw"]]) {
      const run = await cli("transcript", "show", path, ...args);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).not.toMatch(RAW_CONTROL);
      expect(run.stdout).toContain("\\u001b]52;c;ZXZpbA==\\u0007");
      expect(run.stdout).toContain("\\u001b[2J");
      expect(run.stdout).toContain("\\u001b]8;;https://evil.example/\\u001b\\");
      expect(run.stdout).toContain("\\u009b31m");
    }
  });

  it("transcript summary and diff print them visibly; summary --json stays exact JSON", async () => {
    const summary = await cli("transcript", "summary", path);
    expect(summary.status, summary.stderr).toBe(0);
    expect(summary.stdout).not.toMatch(RAW_CONTROL);
    expect(summary.stdout).toContain("run\\u001b[2J.jsonl");
    const diff = await cli("transcript", "diff", FIXTURE, path);
    expect(diff.status).toBe(1);
    expect(diff.stdout).not.toMatch(RAW_CONTROL);
    expect(diff.stdout).toContain("\\u001b[2J");
    const json = await cli("transcript", "summary", path, "--json");
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
  it("the organisation the CLI reports from ~/.claude.json (oauthAccount.organizationName) in its initialize reply", async () => {
    const organization = `Evil ${OSC52}Org${CSI_2J}`;
    const project = tempDir("status-project");
    writeFileSync(join(project, "ktx.yaml"), "llm:\n  provider:\n    backend: claude-code\n  models:\n    default: sonnet\n");
    const api = await scriptedApi([turn.text("OK")], { onExhausted: "repeat-last" });
    // A claude.ai login would make the CLI call Anthropic's servers, which the suite never lets it do: a
    // wrapper adds the organisation to the real CLI's account instead, as a subscriber's login reports it.
    const js = join(tempDir("wrapper"), "org.mjs");
    writeFileSync(
      js,
      `import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
const child = spawn(${JSON.stringify(realCli())}, process.argv.slice(2), { stdio: ["inherit", "pipe", "inherit"] });
createInterface({ input: child.stdout }).on("line", (line) => process.stdout.write(line.replace('"account":{', '"account":{"organization":' + ${JSON.stringify(JSON.stringify(organization))} + ",") + "\\n"));
child.on("exit", (code) => process.exit(code ?? 1));
`,
    );
    const cliPath = script("org", `exec '${process.execPath}' '${js}' "$@"`);
    let stdout = "";
    const code = await runStatus(["--project-dir", project, "--api-base-url", api.baseUrl, "--api-key", "sk-test-scripted", "--cli-path", cliPath], {
      stdout: (text) => void (stdout += text),
      stderr: () => undefined,
      stderrIsTTY: false,
      env: testEnv(),
    });
    expect(code).toBe(0);
    expect(stdout).toMatch(/login +API key via ANTHROPIC_API_KEY \(Evil /);
    expect(stdout).toContain("Evil \\u001b]52;c;ZXZpbA==\\u0007Org\\u001b[2J");
    expect(stdout).not.toMatch(RAW_CONTROL);
  });
});
