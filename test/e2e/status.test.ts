/**
 * `ktx-claude-code status` and `doctor` end to end: the real pinned CLI with an isolated HOME, the
 * scripted Messages API on the first-party path for the healthy case (a claude.ai login in the test
 * HOME, the front as the environment's proxy and CA, as a user behind a corporate proxy has: no flag,
 * no base URL), no session at all for the failing case. Run through `node dist/cli/main.js` and by
 * calling runStatus/runDoctor. The hidden `--api-base-url`/`--api-key` are tested as such, once.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { runDoctor, runStatus } from "../../src/cli/status.js";
import { turn } from "../../src/testing/scripted-api.js";
import type { Script, ScriptedApiOptions } from "../../src/testing/scripted-api.js";
import { baseUrlApi, cleanup, cliArgs, cliVersionInUse, firstPartyApi, firstPartyEnv, realCli, remainingChildren, script, tempDir, testEnv } from "../support.js";

const MAIN = join(import.meta.dirname, "../../dist/cli/main.js");

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

const CLAUDE_CODE_YAML = `storage:
  state: sqlite
llm:
  provider:
    backend: claude-code
  models:
    default: sonnet
    triage: haiku
  promptCaching:
    toolsTtl: 5m
    historyTtl: 1h
`;

function project(yaml = CLAUDE_CODE_YAML): string {
  const dir = tempDir("status-project");
  writeFileSync(join(dir, "ktx.yaml"), yaml);
  return dir;
}

function capture(extra: { stderrIsTTY?: boolean; env?: Record<string, string>; cwd?: string } = {}) {
  let stdout = "";
  let stderr = "";
  return {
    io: { stdout: (text: string) => void (stdout += text), stderr: (text: string) => void (stderr += text), stderrIsTTY: false, env: testEnv(), ...extra },
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
  };
}

/**
 * The scripted API on the first-party path and the environment that reaches it: status and doctor take
 * their CLI's environment from the caller (`io.env`, or the process's own for `node dist/cli/main.js`).
 */
async function firstParty(script: Script, options?: ScriptedApiOptions) {
  const api = await firstPartyApi(script, options);
  return { api, env: firstPartyEnv(api) };
}

const cli = (args: string[], options: { env?: Record<string, string>; cwd?: string } = {}) =>
  execa(process.execPath, [MAIN, ...args], { reject: false, env: options.env ?? testEnv(), extendEnv: false, cwd: options.cwd });

describe("ktx-claude-code status (healthy: the first-party path)", () => {
  it("prints the CLI, the session check, the model per role, the isolation surface and the prompt-caching warnings", async () => {
    const { api, env } = await firstParty([turn.text("OK")]);
    const dir = project();
    const { exitCode, stdout, stderr } = await cli(["status", "--project-dir", dir, ...cliArgs("--cli-path")], { env });
    expect(exitCode).toBe(0);
    expect(stdout).toContain(`project       ${dir}`);
    expect(stdout).toContain("backend       claude-code");
    expect(stdout).toContain(realCli());
    expect(stdout).toContain(`version ${await cliVersionInUse()} (verified)`);
    expect(stdout).toMatch(/session {7}ok: the local session answered \(model claude-sonnet-4-6\)/);
    expect(stdout).toMatch(/models \(alias -> pinned id the CLI is given\)/);
    expect(stdout).toMatch(/default +sonnet -> claude-sonnet-4-6 +\(answered\)\n/);
    expect(stdout).toMatch(/triage +haiku -> claude-haiku-4-5\n/);
    expect(stdout).toMatch(/curator +sonnet -> claude-sonnet-4-6 +\(from default, answered\)/);
    expect(stdout).toMatch(/tools {10}none/);
    expect(stdout).toMatch(/MCP servers {4}none/);
    expect(stdout).toMatch(/plugins {8}none/);
    // A claude.ai login: no API key is the CLI's source.
    expect(stdout).toMatch(/apiKeySource {3}none/);
    expect(stdout).toMatch(/host-discovered, diagnostic only/);
    // Which login the call billed to, and what can route its requests (the first-party front and its CA).
    expect(stdout).toMatch(/login {9}subscription \(OAuth\) via claude\.ai \(Claude Max\) \(from the probe's initialize reply\)/);
    expect(stdout).toContain(`network       HTTPS_PROXY=${api.firstParty!.proxyUrl}`);
    expect(stdout).toContain(`NODE_EXTRA_CA_CERTS=${api.firstParty!.caFile}`);
    // What KTX's hook and a runtime without `wire` use (on), and what the interceptor saw of the probe.
    expect(stdout).toMatch(/egress {8}calls: interceptor on \(every request checked.*\); the probe ran behind the interceptor: 1 Messages request\(s\) checked by the runtime's interceptor; nothing else sent/);
    expect(stdout).toMatch(/! claude-code ignores llm\.promptCaching\.toolsTtl \("5m"\)/);
    expect(stdout).toMatch(/! claude-code ignores llm\.promptCaching\.historyTtl \("1h"\)/);
    expect(stdout).not.toMatch(/problems/);
    // Not a terminal: one plain progress line on stderr, no spinner.
    expect(stderr).toBe("Checking the local Claude Code session (one short model call, the default model)..."); // execa strips the final newline
    // status probes the default's model only, at api.anthropic.com (through the front), and nothing else left.
    expect(api.messageRequests).toHaveLength(1);
    expect(api.messageRequests[0]!.body.model).toBe("claude-sonnet-4-6");
    expect(api.messageRequests[0]!.host).toBe("api.anthropic.com");
    expect(api.firstParty!.refused).toEqual([]);
  });

  it("reports the same as JSON", async () => {
    const { env } = await firstParty([turn.text("OK")]);
    const dir = project();
    const out = capture({ env });
    const code = await runStatus(["--json", "--project-dir", dir, ...cliArgs("--cli-path")], out.io);
    expect(code).toBe(0);
    const report = JSON.parse(out.stdout);
    expect(report).toMatchObject({
      command: "status",
      ok: true,
      projectDir: dir,
      configPath: join(dir, "ktx.yaml"),
      backend: "claude-code",
      cli: { path: realCli(), version: await cliVersionInUse(), verified: true },
      session: { ok: true, model: "claude-sonnet-4-6", apiKeySource: "none" },
      isolation: { tools: [], mcpServers: [], plugins: [], apiKeySource: "none" },
      // The calls of KTX's hook and of a runtime without `wire` run behind the interceptor, as the probe did.
      network: { interceptor: "on" },
      egress: { requests: 1, refused: [] },
      failures: [],
    });
    expect(report.isolation.hostDiscovered).toEqual({ slashCommands: expect.any(Array), skills: expect.any(Array), agents: expect.any(Array) });
    expect(report.models).toHaveLength(6);
    expect(report.models.find((m: { role: string }) => m.role === "triage")).toEqual({ role: "triage", configured: "haiku", from: "role", resolved: "claude-haiku-4-5" });
    expect(report.models.find((m: { role: string }) => m.role === "repair")).toEqual({ role: "repair", configured: "sonnet", from: "default", resolved: "claude-sonnet-4-6", checked: "ok" });
    expect(report.warnings.map((w: { path: string }) => w.path)).toEqual(["llm.promptCaching.toolsTtl", "llm.promptCaching.historyTtl"]);
  });

  it("finds the nearest ktx.yaml walking up from the working directory", async () => {
    const { env } = await firstParty([turn.text("OK")]);
    const dir = project();
    const nested = join(dir, "docs", "deep");
    mkdirSync(nested, { recursive: true });
    const { exitCode, stdout } = await cli(["status", "--json"], { cwd: nested, env });
    expect(exitCode).toBe(0);
    expect(JSON.parse(stdout).projectDir).toBe(dir);
  });

  it("shows a spinner on a terminal and clears it when the probe ends", async () => {
    const { env } = await firstParty([turn.text("OK")]);
    const out = capture({ stderrIsTTY: true, env });
    expect(await runStatus(["--project-dir", project()], out.io)).toBe(0);
    expect(out.stderr).toMatch(/^\r⠋ Checking the local Claude Code session/);
    expect(out.stderr.endsWith("\r\x1b[2K")).toBe(true);
    expect(out.stderr).not.toContain("\n");
  });

  // Base URL on purpose: the hidden test flags themselves (an explicit endpoint, never read from the
  // environment), which every other test here leaves unused. With them the CLI is an API-key client
  // and the interceptor is off.
  it("with the hidden --api-base-url and --api-key, probes that base URL as an API-key client", async () => {
    const api = await baseUrlApi([turn.text("OK")]);
    const out = capture();
    expect(await runStatus(["--project-dir", project(), "--api-base-url", api.baseUrl, "--api-key", "sk-test-scripted", ...cliArgs("--cli-path")], out.io)).toBe(0);
    expect(out.stdout).toMatch(/session {7}ok: the local session answered \(model claude-sonnet-4-6\)/);
    expect(out.stdout).toMatch(/apiKeySource {3}ANTHROPIC_API_KEY/);
    expect(out.stdout).toMatch(/login {9}API key via ANTHROPIC_API_KEY \(from the probe's initialize reply\)/);
    expect(out.stdout).toContain(`network       HTTPS_PROXY=${process.env.HTTPS_PROXY}`);
    expect(out.stdout).toMatch(/interceptor off \(an apiEndpoint: the CLI talks to its base URL directly\)/);
    expect(api.messageRequests).toHaveLength(1);
    expect(api.messageRequests[0]!.host).toBe(`127.0.0.1:${api.port}`);
    expect(api.messageRequests[0]!.headers["x-api-key"]).toBe("sk-test-scripted");
  });
});

describe("ktx-claude-code doctor", () => {
  it("passes with a working session (exit 0), probing every distinct model", async () => {
    const { api, env } = await firstParty([turn.text("OK"), turn.text("OK")]);
    const { exitCode, stdout } = await cli(["doctor", "--project-dir", project()], { env });
    expect(exitCode).toBe(0);
    expect(stdout).toMatch(/ok {3}Claude Code CLI 2\.1\.330 \(verified\)/);
    expect(stdout).toMatch(/ok {3}local Claude Code session answered \(model claude-sonnet-4-6\)/);
    expect(stdout).toMatch(/ok {3}model sonnet -> claude-sonnet-4-6 \(default, candidateExtraction, curator, reconcile, repair\) answered/);
    expect(stdout).toMatch(/ok {3}model haiku -> claude-haiku-4-5 \(triage\) answered/);
    expect(api.messageRequests.map((request) => request.body.model)).toEqual(["claude-sonnet-4-6", "claude-haiku-4-5"]);
    expect(api.messageRequests.map((request) => request.host)).toEqual(["api.anthropic.com", "api.anthropic.com"]);
    expect(stdout).toMatch(/ok {3}isolation: tools none; MCP servers none; plugins none/);
    expect(stdout).toMatch(/info login: subscription \(OAuth\) via claude\.ai \(Claude Max\)/);
    expect(stdout).toContain(`info network: HTTPS_PROXY=${api.firstParty!.proxyUrl}`);
    expect(stdout).toMatch(/warn claude-code ignores llm\.promptCaching\.toolsTtl/);
    expect(stdout).toMatch(/doctor: all checks passed$/);
  });

  it("fails without a local session (exit 1), with the fix on the failure, even with ANTHROPIC_API_KEY in the environment", async () => {
    const env = testEnv({ ANTHROPIC_API_KEY: "sk-ant-parent-key-must-not-be-used" });
    const { exitCode, stdout } = await cli(["doctor", "--project-dir", project()], { env });
    expect(exitCode).toBe(1);
    expect(stdout).toMatch(/FAIL Claude Code is not logged in on this machine\.\n\s+fix: Authenticate Claude Code locally with the Claude Code CLI, then rerun/);
    expect(stdout).toMatch(/doctor: 1 check failed$/);
  });

  it("reports the missing session as JSON, and status reports it with exit 0", async () => {
    const doctor = capture();
    expect(await runDoctor(["--json", "--project-dir", project()], doctor.io)).toBe(1);
    const report = JSON.parse(doctor.stdout);
    expect(report).toMatchObject({ command: "doctor", ok: false, session: { ok: false, code: "auth_failed" } });
    expect(report.failures).toEqual([
      { check: "session", message: "Claude Code is not logged in on this machine.", fix: expect.stringMatching(/^Authenticate Claude Code locally with the Claude Code CLI, then rerun/) },
    ]);
    const status = capture();
    expect(await runStatus(["--project-dir", project()], status.io)).toBe(0);
    expect(status.stdout).toMatch(/session {7}FAILED: Claude Code is not logged in/);
    expect(status.stdout).toMatch(/problems\n {4}x Claude Code is not logged in on this machine\.\n {6}fix: Authenticate Claude Code locally/);
  });

  it("fails on another backend without calling any model, and names the fix", async () => {
    const { api, env } = await firstParty([turn.text("OK")], { onExhausted: "repeat-last" });
    const dir = project("llm:\n  provider:\n    backend: anthropic\n  models:\n    default: claude-sonnet-5-5\n");
    const out = capture({ env });
    expect(await runDoctor(["--project-dir", dir], out.io)).toBe(1);
    expect(out.stdout).toMatch(/FAIL llm\.provider\.backend is "anthropic".*\n\s+fix: Set llm\.provider\.backend: claude-code/);
    expect(out.stdout).toMatch(/skip local Claude Code session not checked \(the backend is not claude-code\)/);
    expect(api.messageRequests).toHaveLength(0);
    expect(out.stderr).toBe("");
  });

  it("fails on an invalid ktx.yaml, naming the path, and when no ktx.yaml is found", async () => {
    const invalid = capture();
    expect(await runDoctor(["--project-dir", project("llm:\n  provider:\n    backend: claude-kode\n  models:\n    default: sonnet\n")], invalid.io)).toBe(1);
    expect(invalid.stdout).toMatch(/FAIL Invalid KTX llm configuration in .*ktx\.yaml:\n\s+- llm\.provider\.backend: "claude-kode" is not a backend; use one of none, anthropic, vertex, gateway, claude-code, codex/);
    const nowhere = capture({ cwd: tempDir("no-project") });
    expect(await runDoctor([], nowhere.io)).toBe(1);
    expect(nowhere.stdout).toMatch(/FAIL No ktx\.yaml found in .* or any directory above it\.\n\s+fix: Run the command inside your KTX project, or pass --project-dir/);
  });

  it("fails on a model the API does not know, naming the role, the value and the ktx.yaml, without blaming the session", async () => {
    // The default answers; the curator's model gets the API's 404 (the CLI tries twice, then reports unrecognized_model).
    const { env } = await firstParty([turn.text("OK"), turn.error(404, "model: claude-opus-9-9"), turn.error(404, "model: claude-opus-9-9")]);
    const dir = project("llm:\n  provider:\n    backend: claude-code\n  models:\n    default: sonnet\n    curator: claude-opus-9-9\n");
    const out = capture({ env });
    expect(await runDoctor(["--json", "--project-dir", dir], out.io)).toBe(1);
    const report = JSON.parse(out.stdout);
    expect(report.session).toMatchObject({ ok: true });
    expect(report.failures).toEqual([
      {
        check: "models",
        message: `The API does not know the model claude-opus-9-9 (llm.models.curator: "claude-opus-9-9" in ${join(dir, "ktx.yaml")}): it may not exist, or your account may not have access to it.`,
        fix: `Set llm.models.curator to sonnet, opus, haiku or a claude-* model id your account can use in ${join(dir, "ktx.yaml")}.`,
      },
    ]);
    expect(report.models.find((m: { role: string }) => m.role === "curator")).toMatchObject({ resolved: "claude-opus-9-9", checked: "failed" });
  });

  it("fails before any model call on a model claude-code cannot pin, and on a missing default", async () => {
    const { api, env } = await firstParty([turn.text("OK")], { onExhausted: "repeat-last" });
    const bad = capture({ env });
    const dir = project("llm:\n  provider:\n    backend: claude-code\n  models:\n    default: sonnet\n    triage: gpt-4o-mini\n");
    expect(await runDoctor(["--project-dir", dir], bad.io)).toBe(1);
    expect(bad.stdout).toContain(`FAIL Unsupported Claude Code model "gpt-4o-mini". Use sonnet, opus, haiku, or a claude-* model id.\n  - llm.models.triage in ${join(dir, "ktx.yaml")}: "gpt-4o-mini"`);
    expect(bad.stdout).toMatch(/skip local Claude Code session not checked \(the configured models cannot be used\)/);
    const missing = capture({ env });
    expect(await runDoctor(["--project-dir", project("llm:\n  provider:\n    backend: claude-code\n  models:\n    triage: haiku\n")], missing.io)).toBe(1);
    expect(missing.stdout).toMatch(/FAIL llm\.models\.default is missing in .*ktx\.yaml.*\n\s+fix: Add llm\.models\.default: sonnet/);
    expect(api.messageRequests).toHaveLength(0);
  });

  it("fails on an unverified CLI version without running it for a model call", async () => {
    const { api, env } = await firstParty([turn.text("OK")], { onExhausted: "repeat-last" });
    const future = script("claude-future", `case "$1" in --version) echo "9.9.9 (Claude Code)";; *) exec '${realCli()}' "$@";; esac`);
    const out = capture({ env });
    expect(await runDoctor(["--json", "--project-dir", project(), "--cli-path", future], out.io)).toBe(1);
    const report = JSON.parse(out.stdout);
    expect(report.cli).toMatchObject({ path: future, version: "9.9.9", verified: false });
    expect(report.failures[0]).toMatchObject({ check: "cli", message: expect.stringMatching(/9\.9\.9.*2\.1\.330/s), fix: expect.stringMatching(/npm ci/) });
    expect(report.session).toEqual({ ok: null, skipped: "the Claude Code CLI is not usable" });
    expect(api.messageRequests).toHaveLength(0);
  });

  it("fails when the CLI starts with a wider surface than asked for, and shows what init reported", async () => {
    const { env } = await firstParty([turn.text("OK")]);
    const widened = script("claude-widened", `for a; do shift; case "$a" in --tools=*|--disallowedTools=*) ;; *) set -- "$@" "$a";; esac; done\nexec '${realCli()}' "$@"`);
    const out = capture({ env });
    expect(await runDoctor(["--project-dir", project(), "--cli-path", widened], out.io)).toBe(1);
    expect(out.stdout).toMatch(/FAIL The Claude Code check failed: The Claude Code CLI did not start with the isolated surface.*tools were .*Bash/);
    expect(out.stdout).toMatch(/fix: Use a verified Claude Code CLI \(npm ci installs one\)/);
  });

  it("--live: one call per distinct model on the login, through the interceptor, each reported as passed", async () => {
    const { api, env } = await firstParty([turn.text("OK")], { onExhausted: "repeat-last" });
    const out = capture({ env });
    expect(await runDoctor(["--live", "--project-dir", project()], out.io)).toBe(0);
    expect(out.stdout).toMatch(/ok {3}live: claude-sonnet-4-6 \(default, candidateExtraction, curator, reconcile, repair\) passed the interceptor: 1 Messages request\(s\) checked; nothing else sent/);
    expect(out.stdout).toMatch(/ok {3}live: claude-haiku-4-5 \(triage\) passed the interceptor: 1 Messages request\(s\) checked; nothing else sent/);
    expect(out.stderr).toMatch(/one short model call per model, through the interceptor/);
    expect(api.messageRequests.map((request) => request.body.model)).toEqual(["claude-sonnet-4-6", "claude-haiku-4-5"]);
    expect(out.stdout).toMatch(/doctor: all checks passed\n$/);
    const json = capture({ env });
    expect(await runDoctor(["--live", "--json", "--project-dir", project()], json.io)).toBe(0);
    expect(JSON.parse(json.stdout).live).toEqual([
      { model: "claude-sonnet-4-6", roles: ["default", "candidateExtraction", "curator", "reconcile", "repair"], verdict: "pass", requests: 1, refused: [], differences: [] },
      { model: "claude-haiku-4-5", roles: ["triage"], verdict: "pass", requests: 1, refused: [], differences: [] },
    ]);
  });

  it("--live: a model's request the interceptor refuses is shown with exactly what differed (exit 1), 0 requests at the API", async () => {
    const { api, env } = await firstParty([turn.text("should not be reached")]);
    // What a newer model makes the CLI add to every request, here on a model recorded without it (through the CLI's own
    // ANTHROPIC_BETAS, set by a wrapper): 2.1.330's shape records which models send it, so this is text the call did not give.
    const variant = script("claude-variant", `export ANTHROPIC_BETAS=per-turn-control-2026-07-01\nexec '${realCli()}' "$@"`);
    const out = capture({ env });
    expect(await runDoctor(["--live", "--project-dir", project(), "--cli-path", variant], out.io)).toBe(1);
    expect(out.stdout).toMatch(/FAIL live: claude-sonnet-4-6 \(default, [^)]*\) refused by the interceptor:\n {7}- beta "per-turn-control-2026-07-01" is not one the CLI version sends\n {7}fix: find what added it \(a managed CLAUDE\.md, a policy file, a wrapper\); `wire: false` turns the check off/);
    expect(out.stdout).toMatch(/FAIL live: claude-haiku-4-5 \(triage\) refused by the interceptor:\n {7}- beta "per-turn-control-2026-07-01"/);
    expect(api.messageRequests).toHaveLength(0);
  });

  it("--live needs the interceptor: with an apiEndpoint nothing is checked, which is a failure; status refuses the flag", async () => {
    // Base URL: the point is that --live cannot run there.
    const api = await baseUrlApi([turn.text("OK"), turn.text("OK")], { onExhausted: "repeat-last" });
    const out = capture();
    expect(await runDoctor(["--live", "--project-dir", project(), "--api-base-url", api.baseUrl, "--api-key", "sk-test-scripted"], out.io)).toBe(1);
    expect(out.stdout).toMatch(/FAIL doctor --live needs the runtime's interceptor, and it is off \(an apiEndpoint[^\n]*\n\s+fix: Run it without --api-base-url/);
    expect(out.stdout).toMatch(/skip live: claude-sonnet-4-6 \(default, [^)]*\) \(the interceptor is off \(an apiEndpoint/);
    const status = capture();
    expect(await runStatus(["--live"], status.io)).toBe(2);
    expect(status.stderr).toMatch(/--live is a doctor option/);
  });

  it("refuses bad arguments with the usage (exit 2)", async () => {
    const { exitCode, stderr } = await cli(["doctor", "--frobnicate"]);
    expect(exitCode).toBe(2);
    expect(stderr).toMatch(/Usage: ktx-claude-code status\|doctor/);
    const half = capture();
    expect(await runStatus(["--api-base-url", "http://127.0.0.1:9"], half.io)).toBe(2);
    expect(half.stderr).toMatch(/--api-base-url and --api-key go together/);
  });
});
