/**
 * Issue 32, finding 6: `ktx-claude-code login` was the one child started without the allowlisted
 * environment, and a signal to our process left `claude auth login` orphaned under PID 1. A stand-in
 * CLI records the environment it got and its pid, then waits like a login waiting for the browser.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { script, tempDir, testEnv } from "../support.js";
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

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
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
      expect(alive(login.pid)).toBe(true);
      // Its environment: none of the hostile variables, the library's own settings, the terminal's kind.
      for (const name of Object.keys(HOSTILE)) expect(login.env, name).not.toHaveProperty(name);
      expect(login.env).toMatchObject({ DISABLE_AUTOUPDATER: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", TERM: "xterm-256color" });
      expect(login.env.HOME).toBeTruthy();
      login.main.kill(signal);
      const exit = await login.exited;
      expect(await until(() => !alive(login.pid), 5_000), `claude auth login (pid ${login.pid}) outlived ${signal}`).toBe(true);
      // The command reports the login's end by the signal passed on.
      expect(exit.code).toBe(128 + ({ SIGTERM: 15, SIGINT: 2, SIGHUP: 1 } as const)[signal]);
    });
  }
});
