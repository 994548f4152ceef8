/**
 * `ktx-claude-code status` and `ktx-claude-code doctor`: what the claude-code backend of a KTX
 * project will use, and whether it works. `status` reports and exits 0; `doctor` runs the same
 * checks and exits 1 on any failure, printing each failure with its fix. Both accept `--json`.
 *
 * Options: `--project-dir DIR` (default: the nearest ktx.yaml walking up from the cwd), `--json`;
 * `doctor --live`: each distinct model's call must pass the runtime's interceptor, reported per model.
 * Hidden, for tests: `--cli-path PATH`, `--api-base-url URL` with `--api-key KEY` (an explicit
 * endpoint; never read from the environment).
 */
import { usageText } from "../limits/usage-status.js";
import { parseArgs } from "node:util";
import type { Env } from "../transport/env.js";
import type { LiveCheck, StatusReport } from "./status-probe.js";
import { terminalText } from "./terminal-text.js";
import { describeInterceptor, describeLogin, describeRoute } from "../claude-code/checks/billing.js";

export interface StatusIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Whether stderr is a terminal (spinner) or not (one plain line). Default: `process.stderr.isTTY`. */
  stderrIsTTY?: boolean;
  /** Base environment for the CLI (scrubbed like every run). Default: `process.env`. */
  env?: Env;
  /** Where to start looking for ktx.yaml. Default: `process.cwd()`. */
  cwd?: string;
}

const USAGE = `Usage: ktx-claude-code status|doctor [--project-dir DIR] [--json] [--live]

  --project-dir DIR   the KTX project (default: the nearest ktx.yaml at or above the current directory)
  --json              print the report as JSON
  --live              doctor only: one minimal call per configured model on your login, through the
                      runtime's interceptor; each model passes or shows exactly what was refused
  -h, --help          this help

doctor exits 1 when any check fails, each failure with its fix; status always exits 0.

Examples:
  ktx-claude-code doctor --project-dir ~/my-ktx-project
  ktx-claude-code doctor --live
`;

/** The options of `status` and `doctor` (docs/cli.md is checked against them); the last three are hidden, for tests. */
export const STATUS_OPTIONS = {
  "project-dir": { type: "string" },
  json: { type: "boolean" },
  live: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  "cli-path": { type: "string" },
  "api-base-url": { type: "string" },
  "api-key": { type: "string" },
} as const;
export const STATUS_HIDDEN_OPTIONS = ["cli-path", "api-base-url", "api-key"] as const;

interface ParsedArgs {
  projectDir?: string;
  json: boolean;
  live: boolean;
  cliPath?: string;
  apiEndpoint?: { baseUrl: string; apiKey: string };
}

function parse(argv: string[]): ParsedArgs | string {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: STATUS_OPTIONS,
      allowPositionals: false,
      strict: true,
    }));
  } catch (error) {
    return (error as Error).message;
  }
  if (values.help) return "";
  const baseUrl = values["api-base-url"] as string | undefined;
  const apiKey = values["api-key"] as string | undefined;
  if ((baseUrl === undefined) !== (apiKey === undefined)) return "--api-base-url and --api-key go together.";
  return {
    projectDir: values["project-dir"] as string | undefined,
    json: values.json === true,
    live: values.live === true,
    cliPath: values["cli-path"] as string | undefined,
    ...(baseUrl && apiKey ? { apiEndpoint: { baseUrl, apiKey } } : {}),
  };
}

/** A spinner on a terminal, one plain line otherwise. */
function progress(io: StatusIo, allModels: boolean, live = false): (phase: "start" | "end") => void {
  const tty = io.stderrIsTTY ?? Boolean(process.stderr.isTTY);
  // status probes the default role's model; doctor each distinct configured model.
  const label = `Checking the local Claude Code session (one short model call${allModels ? " per model" : ", the default model"}${live ? ", through the interceptor" : ""})`;
  let timer: NodeJS.Timeout | undefined;
  return (phase) => {
    if (phase === "start") {
      if (!tty) {
        io.stderr(`${label}...\n`);
        return;
      }
      const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
      let frame = 0;
      const draw = () => io.stderr(`\r${frames[frame++ % frames.length]} ${label}`);
      draw();
      timer = setInterval(draw, 100);
      timer.unref();
    } else if (timer) {
      clearInterval(timer);
      timer = undefined;
      io.stderr(`\r\x1b[2K`);
    }
  };
}

async function run(command: "status" | "doctor", argv: string[], io: StatusIo): Promise<number> {
  const args = parse(argv);
  if (typeof args === "string") {
    if (args === "") {
      io.stdout(USAGE);
      return 0;
    }
    io.stderr(terminalText(`${args}\n\n${USAGE}`));
    return 2;
  }
  if (args.live && command !== "doctor") {
    io.stderr(terminalText(`--live is a doctor option (ktx-claude-code doctor --live).\n\n${USAGE}`));
    return 2;
  }
  // The probe (the runtime, the CLI, the MCP server) is loaded only to run it: `--help` needs none of it.
  const { collectStatus } = await import("./status-probe.js");
  const report = await collectStatus({
    projectDir: args.projectDir,
    cwd: io.cwd,
    env: io.env,
    cliPath: args.cliPath,
    apiEndpoint: args.apiEndpoint,
    probeAllModels: command === "doctor",
    live: args.live,
    onProbe: progress(io, command === "doctor", args.live),
  });
  const ok = report.failures.length === 0;
  if (args.json) io.stdout(`${JSON.stringify({ command, ok, ...report }, null, 2)}\n`);
  else io.stdout(terminalText(command === "status" ? renderStatus(report) : renderDoctor(report)));
  return command === "doctor" && !ok ? 1 : 0;
}

/** `ktx-claude-code status`: reports; exit 0 unless the arguments are wrong (2). */
export function runStatus(argv: string[], io: StatusIo): Promise<number> {
  return run("status", argv, io);
}

/** `ktx-claude-code doctor`: the same checks; exit 1 on any failure, each printed with its fix. */
export function runDoctor(argv: string[], io: StatusIo): Promise<number> {
  return run("doctor", argv, io);
}

const list = (values: readonly string[]) => (values.length === 0 ? "none" : values.join(", "));

function cliLine(report: StatusReport): string {
  if (!report.cli) return "not found";
  return `${report.cli.path}\n${" ".repeat(16)}version ${report.cli.version} (${report.cli.verified ? "verified" : `NOT verified; verified: ${report.cli.verifiedVersions.join(", ")}`})`;
}

function sessionLine(report: StatusReport): string {
  const session = report.session;
  if (session.ok === true) return `ok: the local session answered (model ${session.model})`;
  if (session.ok === false) return `FAILED: ${session.message}`;
  return `not checked (${session.skipped})`;
}

function modelLines(report: StatusReport): string[] {
  if (report.models.length === 0) return ["  models        unknown (no usable configuration)"];
  const width = Math.max(...report.models.map((m) => m.role.length));
  const via = Math.max(...report.models.map((m) => (m.resolved === m.configured ? m.configured : `${m.configured} -> ${m.resolved}`).length));
  return [
    "  models (alias -> pinned id the CLI is given)",
    ...report.models.map((m) => {
      const mapping = m.resolved === m.configured ? m.configured : `${m.configured} -> ${m.resolved}`;
      const notes = [m.from === "default" ? "from default" : "", m.checked === "ok" ? "answered" : m.checked === "failed" ? "FAILED" : ""].filter(Boolean);
      return `    ${m.role.padEnd(width)}  ${notes.length > 0 ? `${mapping.padEnd(via)}  (${notes.join(", ")})` : mapping}`;
    }),
  ];
}

/**
 * Whether calls run behind the runtime's interceptor — as KTX's hook and the runtime decide it (on
 * unless `wire: false`) — and what the interceptor saw of the probe, which runs behind
 * it whenever the version's shape is recorded (docs/isolation.md, "The wire check").
 */
function egressText(report: StatusReport): string {
  const egress = report.egress;
  const state = report.network.interceptor;
  const interceptor = state ? `calls: interceptor ${describeInterceptor(state)}` : "interceptor not decided (no usable CLI)";
  if (!egress) {
    const why = state === "apiEndpoint" ? "an apiEndpoint" : state === "off" || state === "standIn" ? "the interceptor was off" : "no probe call through the runtime's interceptor";
    return `${interceptor}; not checked (${why})`;
  }
  const checked = `${interceptor}; the probe ran behind the interceptor: ${egress.requests} Messages request(s) checked by the runtime's interceptor`;
  return egress.refused.length === 0 ? `${checked}; nothing else sent` : `${checked}; refused: ${egress.refused.join(", ")}`;
}

function isolationLines(report: StatusReport): string[] {
  const surface = report.isolation;
  if (!surface) return ["  isolation     not observed (the probe did not run or the CLI sent no init message)"];
  const host = surface.hostDiscovered;
  return [
    "  isolation (the CLI's init message)",
    `    tools          ${list(surface.tools)}`,
    `    MCP servers    ${list(surface.mcpServers.map((s) => (s.status ? `${s.name} (${s.status})` : s.name)))}`,
    `    plugins        ${list(surface.plugins)}`,
    `    apiKeySource   ${surface.apiKeySource ?? "none"}`,
    `    host-discovered, diagnostic only (never callable in KTX runs):`,
    `      slash commands  ${list(host.slashCommands)}`,
    `      skills          ${list(host.skills)}`,
    `      agents          ${list(host.agents)}`,
  ];
}

function warningLines(report: StatusReport): string[] {
  if (report.warnings.length === 0) return [];
  return ["  warnings", ...report.warnings.flatMap((w) => [`    ! ${w.message}`, `      fix: ${w.fix}`])];
}

/** The probe's login when it ran, else what the files say (docs/isolation.md, "The login a call bills to"). */
function loginText(report: StatusReport): string {
  if (report.login.probe) return `${describeLogin(report.login.probe)} (from the probe's initialize reply)`;
  return `${describeLogin(report.login.ahead ?? undefined)} (read ahead from the config files; the probe did not report it)`;
}

export function renderStatus(report: StatusReport): string {
  const lines = [
    "ktx-claude-code status",
    `  project       ${report.projectDir ?? "not found"}`,
    `  backend       ${report.backend ?? "unknown"}`,
    `  CLI           ${cliLine(report)}`,
    `  session       ${sessionLine(report)}`,
    ...modelLines(report),
    ...isolationLines(report),
    `  usage         ${usageText(report.usage)}`,
    `  login         ${loginText(report)}`,
    `  network       ${describeRoute(report.network)}`,
    `  egress        ${egressText(report)}`,
    ...warningLines(report),
  ];
  if (report.failures.length > 0) {
    lines.push("  problems", ...report.failures.flatMap((f) => [`    x ${f.message}`, `      fix: ${f.fix}`]));
  }
  return `${lines.join("\n")}\n`;
}

/** `doctor --live`: a model's verdict, and exactly what the interceptor refused. */
function liveLines(check: LiveCheck): string[] {
  const label = `live: ${check.model} (${check.roles.join(", ")})`;
  const others = check.refused.length > 0 ? `; other requests refused: ${check.refused.join(", ")}` : "; nothing else sent";
  if (check.verdict === "pass") return [`  ok   ${label} passed the interceptor: ${check.requests ?? 0} Messages request(s) checked${others}`];
  if (check.verdict === "refused") {
    const variant = check.differences.some((difference) => difference.includes("(a CLI variant for your account or model:"));
    return [
      `  FAIL ${label} refused by the interceptor:`,
      ...check.differences.map((difference) => `       - ${difference}`),
      `       fix: ${variant ? "a CLI variant for your account or model that no recorded shape admits yet: run with `wire: false` (unchecked) until one does (docs/isolation.md, \"Real accounts\")" : "find what added it (a managed CLAUDE.md, a policy file, a wrapper); `wire: false` turns the check off (docs/isolation.md)"}`,
    ];
  }
  if (check.verdict === "failed") return [`  FAIL ${label}: the call failed before the interceptor judged it (the failure above)`];
  return [`  skip ${label} (${check.message ?? "not called"})`];
}

export function renderDoctor(report: StatusReport): string {
  const failed = (check: string) => report.failures.filter((f) => f.check === check);
  const lines: string[] = ["ktx-claude-code doctor"];
  const line = (ok: boolean, text: string) => lines.push(`${ok ? "  ok  " : "  FAIL"} ${text}`);
  const failures = (check: string) => {
    for (const f of failed(check)) lines.push(`  FAIL ${f.message}`, `       fix: ${f.fix}`);
  };

  if (failed("project").length + failed("config").length === 0) line(true, `ktx.yaml: ${report.configPath}`);
  failures("project");
  failures("config");
  if (report.backend === "claude-code") line(true, "llm.provider.backend: claude-code");
  failures("backend");
  if (report.cli && report.cli.verified) line(true, `Claude Code CLI ${report.cli.version} (verified) at ${report.cli.path}`);
  failures("cli");
  if (report.session.ok === true) line(true, `local Claude Code session answered (model ${report.session.model})`);
  if (report.session.ok === null) lines.push(`  skip local Claude Code session not checked (${report.session.skipped})`);
  failures("session");
  if (report.isolation && failed("isolation").length === 0) {
    const s = report.isolation;
    line(true, `isolation: tools ${list(s.tools)}; MCP servers ${list(s.mcpServers.map((m) => m.name))}; plugins ${list(s.plugins)}`);
  }
  failures("isolation");
  failures("wire");
  for (const id of [...new Set(report.models.map((m) => m.resolved))]) {
    const users = report.models.filter((m) => m.resolved === id);
    const roles = users.map((m) => m.role).join(", ");
    const written = [...new Set(users.map((m) => m.configured))].filter((value) => value !== id);
    const label = `model ${written.length > 0 ? `${written.join(", ")} -> ` : ""}${id} (${roles})`;
    if (users[0]!.checked === "ok") line(true, `${label} answered`);
    else if (users[0]!.checked === undefined) lines.push(`  info ${label}`);
  }
  failures("models");
  for (const check of report.live ?? []) lines.push(...liveLines(check));
  failures("live");
  if (report.usage) lines.push(`  info usage: ${usageText(report.usage)}`);
  lines.push(`  info login: ${loginText(report)}`, `  info network: ${describeRoute(report.network)}`, `  info egress: ${egressText(report)}`);
  for (const w of report.warnings) lines.push(`  warn ${w.message}`, `       fix: ${w.fix}`);
  const n = report.failures.length;
  lines.push(n === 0 ? "doctor: all checks passed" : `doctor: ${n} check${n === 1 ? "" : "s"} failed`);
  return `${lines.join("\n")}\n`;
}
