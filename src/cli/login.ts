/**
 * `ktx-claude-code login`: the pinned Claude Code CLI's own login (`claude auth login`), in this
 * terminal. The package puts no `claude` on PATH, and `npx claude` outside a project fetches some
 * other package, so this is the login every "log in" advice names (LOGIN_COMMAND).
 */
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { resolveCli } from "../binary/locate.js";
import { isScrubbedEnvName } from "../transport/env.js";
import { type CommandSpec, isStop, parseCommand, text } from "./args.js";

export const LOGIN_USAGE = `  login [--console | --sso] [--email E] [--cli PATH]
                                             log in to Claude Code with the pinned CLI (its own login, in this terminal)
`;

export interface LoginIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

const LOGIN_COMMAND_SPEC: CommandSpec = {
  name: "login",
  positionals: { shown: "", count: 0, what: "positional arguments" },
  summary: "Logs in to Claude Code with the pinned CLI's own login (`claude auth login`), in this terminal, into your real HOME: the login every KTX run through this library uses.",
  options: {
    console: { type: "boolean", help: "log in with an Anthropic Console account instead of a Claude subscription (the CLI's `--console`)" },
    sso: { type: "boolean", help: "log in through your organisation's SSO" },
    email: { type: "string", value: "E", help: "the account's e-mail address" },
    cli: { type: "string", value: "PATH", help: "another Claude Code binary (default: the pinned one)" },
  },
  notes: ["Exit code: the CLI's own."],
  examples: ["npx --no-install ktx-claude-code login", "npx --no-install ktx-claude-code login --sso --email me@example.com"],
};

/**
 * Runs `<pinned claude> auth login [flags]` with inherited stdio and the user's own environment (the
 * real HOME: this is the one command meant to write the user's login). Provider-routing and
 * credential variables are removed, as for every run, so the login is the one KTX's runs will use.
 */
export async function runLogin(args: string[], io: LoginIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const parsed = parseCommand(LOGIN_COMMAND_SPEC, args);
  if (isStop(parsed)) {
    if (parsed.stdout) io.stdout(parsed.stdout);
    if (parsed.stderr) io.stderr(parsed.stderr);
    return parsed.exitCode;
  }
  const values = { console: parsed.values.console === true, sso: parsed.values.sso === true, email: text(parsed.values.email), cli: text(parsed.values.cli) };
  const cli = await resolveCli({ cliPath: values.cli });
  const loginArgs = ["auth", "login", ...(values.console ? ["--console"] : []), ...(values.sso ? ["--sso"] : []), ...(values.email ? ["--email", values.email] : [])];
  const childEnv: NodeJS.ProcessEnv = {
    ...Object.fromEntries(Object.entries(env).filter(([name]) => !isScrubbedEnvName(name))),
    DISABLE_AUTOUPDATER: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  };
  io.stderr(`Running the installed Claude Code CLI ${cli.version}: ${cli.path} ${loginArgs.join(" ")}\n`);
  const child = spawn(cli.path, loginArgs, { stdio: "inherit", env: childEnv });
  // Ctrl-C reaches the CLI through the terminal; this process waits for it to decide.
  const ignore = () => {};
  process.on("SIGINT", ignore);
  try {
    return await new Promise<number>((resolve, reject) => {
      child.once("error", reject);
      child.once("exit", (code, signal) => resolve(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1)));
    });
  } finally {
    process.off("SIGINT", ignore);
  }
}

