/** `ktx-claude-code login` execs the resolved CLI's own login with the terminal's stdio (a stand-in binary here). */
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { AUTH_FIX, ClaudeCodeAuthError, LOGIN_COMMAND } from "../../src/index.js";

const main = resolve(import.meta.dirname, "../../dist/cli/main.js");

/** Reports its argv and environment, echoes one stdin line, exits 7: enough to see stdio is the terminal's. */
function standIn(): string {
  const dir = mkdtempSync(join(tmpdir(), "login-cli-"));
  const path = join(dir, "claude");
  writeFileSync(
    path,
    `#!/bin/sh
if [ "$1" = "--version" ]; then echo "2.1.330 (Claude Code)"; exit 0; fi
echo "argv: $*"
echo "home: $HOME"
echo "api key: \${ANTHROPIC_API_KEY:-unset}"
echo "base url: \${ANTHROPIC_BASE_URL:-unset}"
echo "autoupdater: $DISABLE_AUTOUPDATER traffic: $CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"
read line
echo "typed: $line"
echo "on stderr" >&2
exit 7
`,
  );
  chmodSync(path, 0o755);
  return path;
}

function runMain(args: string[], env: NodeJS.ProcessEnv, input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [main, ...args], { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    child.on("error", fail);
    child.on("exit", (code) => done({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe("ktx-claude-code login", () => {
  it("runs `<cli> auth login` with this process's stdio, the user's HOME, no provider credentials, and its exit code", async () => {
    const cli = standIn();
    const home = mkdtempSync(join(tmpdir(), "login-home-"));
    const env = { PATH: process.env.PATH, HOME: home, ANTHROPIC_API_KEY: "sk-ant-not-for-login", ANTHROPIC_BASE_URL: "http://127.0.0.1:9" };
    const result = await runMain(["login", "--cli", cli, "--email", "me@example.com", "--sso"], env, "hello from the terminal\n");
    expect(result.code).toBe(7);
    expect(result.stdout.split("\n")).toEqual([
      "argv: auth login --sso --email me@example.com",
      `home: ${home}`,
      "api key: unset",
      "base url: unset",
      "autoupdater: 1 traffic: 1",
      "typed: hello from the terminal",
      "",
    ]);
    expect(result.stderr).toContain(`Running the installed Claude Code CLI 2.1.330: ${cli} auth login --sso --email me@example.com`);
    expect(result.stderr).toContain("on stderr");
  });

  it("refuses an unknown flag with the usage exit code", async () => {
    const result = await runMain(["login", "--cli", standIn(), "--bogus"], { PATH: process.env.PATH }, "");
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bogus/);
  });

  it("answers --help with its options and an example (exit 0)", async () => {
    const result = await runMain(["login", "--help"], { PATH: process.env.PATH }, "");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Usage: ktx-claude-code login/);
    expect(result.stdout).toMatch(/--sso/);
    expect(result.stdout).toMatch(/npx --no-install ktx-claude-code login --sso --email me@example.com/);
    // Several CLI versions are verified: the help names the installed one, never "the pinned CLI".
    expect(result.stdout).not.toMatch(/pinned/i);
    const top = await runMain(["--help"], { PATH: process.env.PATH }, "");
    expect(top.stdout).toContain("with the installed CLI");
    expect(top.stdout).not.toMatch(/pinned CLI/i);
  });

  it("is the command every log-in advice names", () => {
    expect(LOGIN_COMMAND).toBe("npx --no-install ktx-claude-code login");
    expect(AUTH_FIX).toContain("`npx --no-install ktx-claude-code login`");
    expect(new ClaudeCodeAuthError("Not logged in").message).toContain("`npx --no-install ktx-claude-code login`");
  });
});
