/**
 * `ktx-claude-code login`: the pinned Claude Code CLI's own login (`claude auth login`), in this
 * terminal. The package puts no `claude` on PATH, and `npx claude` outside a project fetches some
 * other package, so this is the login every "log in" advice names (LOGIN_COMMAND).
 */
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { resolveCli } from "../binary/locate.js";
import { createKtxClaudeCodeEnv } from "../transport/env.js";
import { type CommandSpec, isStop, parseCommand, text } from "./args.js";

export { LOGIN_USAGE } from "./usage.js";

export interface LoginIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

export const LOGIN_COMMAND_SPEC: CommandSpec = {
  name: "login",
  positionals: { shown: "", count: 0, what: "positional arguments" },
  summary: "Logs in to Claude Code with the installed CLI's own login (`claude auth login`), in this terminal, into your real HOME: the login every KTX run through this library uses.",
  options: {
    console: { type: "boolean", help: "log in with an Anthropic Console account instead of a Claude subscription (the CLI's `--console`)" },
    sso: { type: "boolean", help: "log in through your organisation's SSO" },
    email: { type: "string", value: "E", help: "the account's e-mail address" },
    cli: { type: "string", value: "PATH", help: "another Claude Code binary (default: the installed one)" },
  },
  notes: ["Exit code: the CLI's own."],
  examples: ["npx --no-install ktx-claude-code login", "npx --no-install ktx-claude-code login --sso --email me@example.com"],
};

/**
 * Names a terminal login needs beyond the allowlist every child gets: the terminal's kind (the CLI draws
 * its prompts for it) and the desktop session a browser is opened in. None carries a credential, routes
 * an API request or runs code; `BROWSER` (a program to run) stays out, and the CLI then prints the URL.
 */
const LOGIN_TERMINAL_NAMES = ["TERM", "COLORTERM", "DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR"];

/** Signals that end this command: each is passed on to the login, which is then waited for (issue 32: none left orphaned). */
const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
/** A login that has not ended this long after a passed-on signal is killed. */
const KILL_AFTER_MS = 3_000;

/**
 * Runs `<installed claude> auth login [flags]` with inherited stdio and the allowlisted environment every
 * child gets (transport/env.ts), with the real HOME: this is the one command meant to write the user's
 * login. Diagnostics files, local OAuth servers, authorize URLs and debug switches of the caller's
 * environment never reach it. A SIGINT, SIGTERM or SIGHUP to this process is passed on to the login and
 * waited for, so no `claude auth login` is left behind.
 */
export async function runLogin(args: string[], io: LoginIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const parsed = parseCommand(LOGIN_COMMAND_SPEC, args);
  if (isStop(parsed)) {
    if (parsed.stdout) io.stdout(parsed.stdout);
    if (parsed.stderr) io.stderr(parsed.stderr);
    return parsed.exitCode;
  }
  const values = { console: parsed.values.console === true, sso: parsed.values.sso === true, email: text(parsed.values.email), cli: text(parsed.values.cli) };
  const childEnv = {
    ...Object.fromEntries(LOGIN_TERMINAL_NAMES.flatMap((name) => (env[name] !== undefined ? [[name, env[name]!]] : []))),
    ...createKtxClaudeCodeEnv(env),
  };
  const cli = await resolveCli({ cliPath: values.cli, env });
  const loginArgs = ["auth", "login", ...(values.console ? ["--console"] : []), ...(values.sso ? ["--sso"] : []), ...(values.email ? ["--email", values.email] : [])];
  io.stderr(`Running the installed Claude Code CLI ${cli.version}: ${cli.path} ${loginArgs.join(" ")}\n`);
  const child = spawn(cli.path, loginArgs, { stdio: "inherit", env: childEnv });
  let killTimer: NodeJS.Timeout | undefined;
  // Ctrl-C reaches the CLI through the terminal already; a signal sent to this process alone is passed on.
  const forward = (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    killTimer ??= setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS);
  };
  for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
  try {
    return await new Promise<number>((resolve, reject) => {
      child.once("error", reject);
      child.once("exit", (code, signal) => resolve(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1)));
    });
  } finally {
    if (killTimer) clearTimeout(killTimer);
    for (const signal of FORWARDED_SIGNALS) process.off(signal, forward);
  }
}
