/**
 * The checks behind `ktx-claude-code status` and `doctor`, as data: the project's llm config, the
 * CLI (path, version, verified), one isolated probe call through the local Claude Code session (the
 * same call and verdict as `runClaudeCodeAuthProbe`), the pinned model id per role (`doctor` also
 * probes every other distinct model), the isolation surface the CLI reported in `system/init`, and
 * the configuration warnings. Rendering is in status.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type ResolvedCli, resolveCli } from "../binary/locate.js";
import { VERIFIED_CLI_VERSIONS } from "../binary/versions.js";
import { KtxLlmConfigError, findKtxProjectDir, loadKtxLlmConfig } from "../config/parse.js";
import type { KtxLlmConfig } from "../config/schema.js";
import { type KtxConfigWarning, claudeCodeConfigWarnings } from "../config/warnings.js";
import { AuthConfigError, ClaudeCodeApiError, ClaudeCodeAuthError, ClaudeCodeError, IsolationError, UnsupportedCliVersionError } from "../errors/index.js";
import { type ResolvedModels, UnknownModelError, UnsupportedModelError, isUnrecognizedModelError, resolveRoleModels } from "../claude-code/models.js";
import { AUTH_FIX } from "../claude-code/auth-probe.js";
import { ClaudeCodeRuntime } from "../claude-code/runtime.js";
import type { CallLogin, ModelRole, NetworkRoute } from "../runtime/types.js";
import { describeInterceptor, interceptorState, loginAhead, networkRoute } from "../claude-code/checks/billing.js";
import { createKtxClaudeCodeEnv } from "../transport/env.js";
import { type IsolationSurface, egressFrom, loginFrom, surfaceFrom } from "./status-transcript.js";
import { WIRE_VERSIONS, wireShapeFor, wireShapeProblem } from "../claude-code/wire/shape.js";
import type { ApiEndpoint, Env } from "../transport/env.js";
import type { AuthOption } from "../transport/auth.js";
import { RateLimitGovernor } from "../limits/governor.js";
import { type UsageStatus, usageFromTranscript } from "../limits/usage-status.js";

export interface StatusFailure {
  check: "project" | "config" | "backend" | "cli" | "auth" | "session" | "isolation" | "wire" | "models" | "live";
  message: string;
  fix: string;
}

export interface RoleModel {
  role: ModelRole;
  /** What ktx.yaml says for the role (the default's value when the role has none). */
  configured: string;
  /** "role" when ktx.yaml names a model for it, "default" when it falls back. */
  from: "role" | "default";
  /** The pinned model id the CLI is given (this library's alias table, never the CLI's own). */
  resolved: string;
  /** Whether the model answered a probe call: status probes the default's model, doctor every distinct one. */
  checked?: "ok" | "failed";
}

export type { IsolationSurface } from "./status-transcript.js";

/**
 * `doctor --live`: one model's minimal call through the runtime's interceptor, on the user's own login.
 * `pass`: its requests passed the check (`refused` lists anything else the CLI tried, refused); `refused`:
 * the interceptor refused its request (`differences`, exactly as the check named them); `failed`: the call
 * failed otherwise (`message`); `skipped`: no call (`message` says why).
 */
export interface LiveCheck {
  model: string;
  roles: string[];
  verdict: "pass" | "refused" | "failed" | "skipped";
  /** Messages requests the interceptor checked and forwarded (null: no interceptor record). */
  requests: number | null;
  refused: string[];
  differences: string[];
  message?: string;
}

export interface StatusReport {
  projectDir: string | null;
  configPath: string | null;
  backend: string | null;
  cli: { path: string; version: string; verified: boolean; verifiedVersions: string[] } | null;
  session: { ok: true; model: string; apiKeySource: string | null } | { ok: false; code: string; message: string } | { ok: null; skipped: string };
  models: RoleModel[];
  isolation: IsolationSurface | null;
  /** The subscription's usage windows the probe call reported (null for an API-key session or no probe). */
  usage: UsageStatus | null;
  /** The login a call bills to: read ahead from files, and what the probe's initialize reply said. */
  login: { ahead: CallLogin | null; probe: CallLogin | null };
  /** Proxies, CA bundles and client certificates every CLI run gets (docs/environment.md). */
  network: NetworkRoute;
  /** The probe call as the runtime's interceptor saw it: its Messages requests and what it refused (null: no interceptor, or no probe). */
  egress: { requests: number; refused: string[] } | null;
  /** `doctor --live`: each distinct model's call through the interceptor (null without `--live`). */
  live: LiveCheck[] | null;
  warnings: KtxConfigWarning[];
  failures: StatusFailure[];
}

export interface StatusOptions {
  projectDir?: string;
  cwd?: string;
  env?: Env;
  cliPath?: string;
  /** Test-only explicit endpoint (never read from the environment). */
  apiEndpoint?: ApiEndpoint;
  /** The `auth` option of the runtimes the report is for (docs/options.md, "Authentication"); the probe uses it too. */
  auth?: AuthOption;
  /** Their `passEnv` (where an `auth` kind may take its variables from `env`). */
  passEnv?: string[];
  /**
   * The `wire` option of the runtimes the report is for: `network.interceptor` says what their calls
   * get. Default off, as the runtime's and KTX's hook's default (`createClaudeCodeRuntime` without `wire`).
   */
  wire?: boolean;
  /** Probe every distinct configured model, not only the default's (doctor). */
  probeAllModels?: boolean;
  /** `doctor --live`: every distinct model's probe must run through the interceptor; each one's verdict is reported (`live`). */
  live?: boolean;
  timeoutMs?: number;
  /** Called around the probe, for the progress indicator. */
  onProbe?(phase: "start" | "end"): void;
}

export async function collectStatus(options: StatusOptions): Promise<StatusReport> {
  const report: StatusReport = {
    projectDir: null,
    configPath: null,
    backend: null,
    cli: null,
    session: { ok: null, skipped: "not checked" },
    models: [],
    isolation: null,
    usage: null,
    login: { ahead: null, probe: null },
    network: { proxies: {}, trustedCa: {}, clientCertificate: [] },
    egress: null,
    live: null,
    warnings: [],
    failures: [],
  };
  // What every run would get, whatever the probe's outcome: the same environment a runtime builds.
  const fail = (failure: StatusFailure) => report.failures.push(failure);
  const envFor = (auth: AuthOption | undefined) => createKtxClaudeCodeEnv(options.env ?? process.env, { apiEndpoint: options.apiEndpoint, auth, passEnv: auth ? options.passEnv : undefined });
  let childEnv: Record<string, string>;
  try {
    childEnv = envFor(options.auth);
  } catch (error) {
    if (!(error instanceof AuthConfigError)) throw error;
    // Reported as a failure; the rest of the report is for the environment without the kind's variables.
    childEnv = envFor(undefined);
    fail({ check: "auth", message: error.message, fix: error.advice });
  }
  report.network = networkRoute(childEnv);
  report.login.ahead = loginAhead(childEnv, options.apiEndpoint && (options.apiEndpoint.apiKey !== undefined ? "apiKey" : "oauthToken"), options.auth) ?? null;

  // Project and config.
  const projectDir = options.projectDir ? resolve(options.cwd ?? process.cwd(), options.projectDir) : findKtxProjectDir(options.cwd ?? process.cwd());
  let config: KtxLlmConfig | undefined;
  if (!projectDir) {
    fail({
      check: "project",
      message: `No ktx.yaml found in ${resolve(options.cwd ?? process.cwd())} or any directory above it.`,
      fix: "Run the command inside your KTX project, or pass --project-dir <dir>.",
    });
  } else {
    report.projectDir = projectDir;
    report.configPath = join(projectDir, "ktx.yaml");
    try {
      config = loadKtxLlmConfig(projectDir, { env: options.env }).config;
    } catch (error) {
      if (!(error instanceof KtxLlmConfigError)) throw error;
      fail({
        check: "config",
        message: error.message,
        fix: "Fix the fields named above in ktx.yaml (docs/guides/ktx-backend.md has an example; docs/ktx-llm-config.schema.json gives editors completion).",
      });
    }
  }
  if (config) {
    report.backend = config.provider.backend;
    report.warnings = [...config.warnings, ...claudeCodeConfigWarnings(config)];
    if (config.provider.backend !== "claude-code") {
      fail({
        check: "backend",
        message:
          `llm.provider.backend is "${config.provider.backend}"; these checks are for the claude-code backend, which is not selected` +
          (config.provider.backend === "codex" ? " (this package does not run codex; KTX's own codex runtime does)." : "."),
        fix: "Set llm.provider.backend: claude-code in ktx.yaml to run KTX through your local Claude Code session.",
      });
    }
  }
  let models: ResolvedModels | undefined;
  const probes = new Map<string, ProbeResult>();
  if (config?.provider.backend === "claude-code") {
    models = pinnedModels(config, report.configPath!, fail);
    if (models) report.models = Object.values(models).map(({ role, configured, from, id }) => ({ role, configured, from, resolved: id }));
  }

  // The CLI: read its version even when unverified, to report it.
  let cli: ResolvedCli | undefined;
  try {
    cli = await resolveCli({ cliPath: options.cliPath, allowUnverifiedCli: true });
    report.cli = { path: cli.path, version: cli.version, verified: cli.verified, verifiedVersions: Object.keys(VERIFIED_CLI_VERSIONS) };
    if (!cli.verified) {
      const refusal = new UnsupportedCliVersionError(cli.path, cli.version, Object.keys(VERIFIED_CLI_VERSIONS));
      fail({ check: "cli", message: refusal.message, fix: "Reinstall dependencies (npm ci) to get a verified Claude Code CLI (package.json names every verified version; docs/compatibility.md)." });
    }
    // What a runtime with these options would use (billing.ts decides, as for every runtime); the probe runs
    // so too. A verified version without a shape (a shape file that did not load) cannot run behind it: the
    // probe then runs without it, unchecked, and that is said as a failure.
    const state = interceptorState({ apiEndpoint: options.apiEndpoint, cliPath: options.cliPath, auth: options.auth });
    const unshaped = state === "on" && !wireShapeFor(cli.version);
    report.network.interceptor = unshaped ? "off" : state;
    if (cli.verified && unshaped) {
      fail({
        check: "wire",
        message: `Claude Code ${cli.version} has no recorded first-party request shape (recorded: ${WIRE_VERSIONS.join(", ")}${wireShapeProblem(cli.version) ? `; its shape file did not load: ${wireShapeProblem(cli.version)}` : ""}), so the runtime's interceptor cannot check its requests: every call is refused with IsolationError unless \`wire: false\` (the probe ran without the interceptor, unchecked).`,
        fix: "Reinstall the package (npm ci) so its shape files are intact, or run with `wire: false` (no wire check) (docs/isolation.md, \"The wire check\").",
      });
    }
  } catch (error) {
    if (!ClaudeCodeError.isInstance(error)) throw error;
    fail({ check: "cli", message: error.message, fix: "Reinstall dependencies (npm ci), or pass --cli-path pointing at a Claude Code binary." });
  }

  // The probe: one isolated call through the local session.
  if (!config || config.provider.backend !== "claude-code") {
    report.session = { ok: null, skipped: config ? "the backend is not claude-code" : "the configuration could not be read" };
  } else if (!models) {
    report.session = { ok: null, skipped: "the configured models cannot be used" };
  } else if (!cli || !cli.verified) {
    report.session = { ok: null, skipped: "the Claude Code CLI is not usable" };
  } else {
    const probe = await probeSession(projectDir!, models.default.id, cli, options);
    probes.set(models.default.id, probe);
    report.isolation = probe.isolation;
    report.egress = probe.egress;
    report.usage = probe.usage;
    report.login.probe = probe.login;
    const unknown = probe.ok ? undefined : unknownModelFailure(probe.error, models.default.id, report.models, report.configPath);
    if (probe.ok || unknown) {
      // An unknown model is a model problem: the session itself answered.
      report.session = probe.ok
        ? { ok: true, model: probe.model, apiKeySource: probe.isolation?.apiKeySource ?? null }
        : { ok: true, model: models.default.id, apiKeySource: probe.isolation?.apiKeySource ?? null };
      markChecked(report.models, models.default.id, probe.ok ? "ok" : "failed");
      if (unknown) fail(unknown);
      if (options.probeAllModels || options.live) await probeOtherModels(report, projectDir!, models.default.id, cli, options, fail, probes);
    } else {
      report.session = { ok: false, code: probe.error.code, message: probe.message };
      fail({ check: probe.error instanceof IsolationError ? "isolation" : "session", message: probe.message, fix: fixFor(probe.error) });
      // --live: a request the interceptor refused says nothing of the other models' requests: each is still called.
      if (options.live && wireDifferences(probe.error).length > 0) await probeOtherModels(report, projectDir!, models.default.id, cli, options, fail, probes);
    }
  }
  if (options.live) report.live = liveChecks(report, probes, fail);
  return report;
}

/** What the interceptor refused a request for, when that is why a probe failed. */
const wireDifferences = (error: ClaudeCodeError): string[] => (error instanceof IsolationError ? error.differences.filter((difference) => difference.startsWith("wire: ")) : []);

/**
 * `doctor --live`: each distinct model's probe as the interceptor judged it. A refusal is already a failure
 * of the probe (isolation, models); what this adds is the verdict per model, and a failure when the
 * interceptor could not be used at all, since then nothing was checked.
 */
function liveChecks(report: StatusReport, probes: ReadonlyMap<string, ProbeResult>, fail: (failure: StatusFailure) => void): LiveCheck[] {
  const state = report.network.interceptor;
  const off = state === undefined ? "no usable Claude Code CLI" : state === "on" ? undefined : describeInterceptor(state);
  if (off && report.models.length > 0) {
    fail({
      check: "live",
      message: `doctor --live needs the runtime's interceptor, and it is ${off}: no model call was checked.`,
      fix: state === "apiEndpoint" ? "Run it without --api-base-url: --live checks your own login on the first-party path." : "Use a verified CLI version whose shape is recorded (npm ci), then rerun doctor --live.",
    });
  }
  const ids = [...new Set(report.models.map((entry) => entry.resolved))];
  return ids.map((model) => {
    const roles = report.models.filter((entry) => entry.resolved === model).map((entry) => entry.role);
    const probe = probes.get(model);
    const base = { model, roles, requests: probe?.egress?.requests ?? null, refused: probe?.egress?.refused ?? [], differences: [] as string[] };
    if (off) return { ...base, verdict: "skipped" as const, message: `the interceptor is ${off}` };
    if (!probe) return { ...base, verdict: "skipped" as const, message: "not called (an earlier check failed)" };
    if (probe.ok) return { ...base, verdict: "pass" as const };
    const wire = wireDifferences(probe.error);
    if (wire.length > 0) return { ...base, verdict: "refused" as const, differences: wire.map((difference) => difference.slice("wire: ".length)), message: probe.error.message };
    return { ...base, verdict: "failed" as const, message: probe.error.message };
  });
}

/** The pinned id per role, or undefined (with a failure) when a model or the default is unusable. */
function pinnedModels(config: KtxLlmConfig, configPath: string, fail: (failure: StatusFailure) => void): ResolvedModels | undefined {
  const defaultModel = config.models.default;
  if (defaultModel === undefined) {
    fail({
      check: "config",
      message: `llm.models.default is missing in ${configPath}; the claude-code backend needs the model of every role without its own.`,
      fix: "Add llm.models.default: sonnet (or opus, haiku, or a claude-* model id) to ktx.yaml.",
    });
    return undefined;
  }
  try {
    return resolveRoleModels({ ...config.models, default: defaultModel }, { source: configPath });
  } catch (error) {
    if (!(error instanceof UnsupportedModelError)) throw error;
    fail({ check: "models", message: error.message, fix: `Change the model${error.problems.length === 1 ? "" : "s"} named above in ${configPath}.` });
    return undefined;
  }
}

function markChecked(models: RoleModel[], id: string, verdict: "ok" | "failed"): void {
  for (const entry of models) if (entry.resolved === id) entry.checked = verdict;
}

/** doctor: one probe call per other distinct model id, in role order. */
async function probeOtherModels(
  report: StatusReport,
  projectDir: string,
  defaultId: string,
  cli: ResolvedCli,
  options: StatusOptions,
  fail: (failure: StatusFailure) => void,
  probes: Map<string, ProbeResult>,
): Promise<void> {
  const others = [...new Set(report.models.map((entry) => entry.resolved))].filter((id) => id !== defaultId);
  for (const id of others) {
    const probe = await probeSession(projectDir, id, cli, options);
    probes.set(id, probe);
    markChecked(report.models, id, probe.ok ? "ok" : "failed");
    if (probe.ok) continue;
    fail(
      unknownModelFailure(probe.error, id, report.models, report.configPath) ?? {
        check: "models",
        message: `The probe call with model ${id} (${rolesOf(report.models, id)}) failed: ${probe.error.message}`,
        fix: fixFor(probe.error),
      },
    );
  }
}

const rolesOf = (models: RoleModel[], id: string) =>
  models
    .filter((entry) => entry.resolved === id)
    .map((entry) => `${entry.from === "role" ? "" : "via default: "}${entry.role}`)
    .join(", ");

/**
 * A model the API does not know: a 404, or the CLI's `[claude-code:unrecognized_model]` on stderr.
 * Names each role using it, the value written, and the ktx.yaml path.
 */
export function unknownModelFailure(error: ClaudeCodeError, id: string, models: readonly RoleModel[], configPath: string | null): StatusFailure | undefined {
  if (!isUnrecognizedModelError(error) && !(error instanceof UnknownModelError) && !(error instanceof ClaudeCodeApiError && error.status === 404)) return undefined;
  const own = models.filter((entry) => entry.resolved === id && entry.from === "role");
  const named = (own.length > 0 ? own : models.filter((entry) => entry.resolved === id)).map(
    (entry) => `llm.models.${entry.from === "role" ? entry.role : "default"}: ${JSON.stringify(entry.configured)}${entry.configured === id ? "" : ` (-> ${id})`}`,
  );
  const where = configPath ? ` in ${configPath}` : "";
  return {
    check: "models",
    message: `The API does not know the model ${id} (${[...new Set(named)].join("; ")}${where}): it may not exist, or your account may not have access to it.`,
    fix: `Set ${own.length > 0 ? own.map((entry) => `llm.models.${entry.role}`).join(", ") : "llm.models.default"} to sonnet, opus, haiku or a claude-* model id your account can use${where}.`,
  };
}

type ProbeResult = { usage: UsageStatus | null; login: CallLogin | null; egress: StatusReport["egress"] } & (
  | { ok: true; model: string; isolation: IsolationSurface | null }
  | { ok: false; message: string; error: ClaudeCodeError; isolation: IsolationSurface | null }
);

/**
 * The auth probe's call and verdict (see claude-code/auth-probe.ts), recorded to a temporary transcript so
 * the `system/init` surface can be reported too; the transcript is deleted afterwards.
 */
async function probeSession(projectDir: string, model: string, cli: ResolvedCli, options: StatusOptions): Promise<ProbeResult> {
  const dir = mkdtempSync(join(tmpdir(), "ktx-status-"));
  options.onProbe?.("start");
  try {
    const runtime = new ClaudeCodeRuntime({
      projectDir,
      models: { default: model },
      cliPath: cli.path,
      // Omitted: the runtime takes process.env itself (and scrubs it like any base environment).
      ...(options.env ? { env: options.env } : {}),
      ...(options.apiEndpoint ? { apiEndpoint: options.apiEndpoint } : {}),
      ...(options.auth ? { auth: options.auth, passEnv: options.passEnv } : {}),
      timeoutMs: options.timeoutMs ?? 60_000,
      warm: false, reuse: false,
      // The probe is the library's own call, as a runtime's by default: behind the interceptor whenever the
      // version's shape is recorded; without it (unchecked, and said as a failure above) when it is not.
      wire: wireShapeFor(cli.version) !== undefined,
      // A probe never waits for a usage reset: a reached limit is reported at once.
      rateLimitGovernor: new RateLimitGovernor({ enabled: false }),
    });
    try {
      const result = await runtime.generateTextResult({
        prompt: "Reply with the single word OK.",
        system: "You are a connectivity check. Reply with OK.",
        transcript: { dir, name: "probe" },
      });
      return { ok: true, model: result.model, egress: egressFrom(result.transcriptPath), isolation: surfaceFrom(result.transcriptPath), usage: usageFromTranscript(result.transcriptPath), login: result.login ?? loginFrom(result.transcriptPath) };
    } catch (error) {
      if (!ClaudeCodeError.isInstance(error)) throw error;
      const message =
        error instanceof ClaudeCodeAuthError ? `Claude Code is not logged in on this machine.` : `The Claude Code check failed: ${error.message}`;
      return { ok: false, message, error, egress: egressFrom(error.transcriptPath), isolation: surfaceFrom(error.transcriptPath), usage: usageFromTranscript(error.transcriptPath), login: loginFrom(error.transcriptPath) };
    }
  } finally {
    options.onProbe?.("end");
    rmSync(dir, { recursive: true, force: true });
  }
}

function fixFor(error: ClaudeCodeError): string {
  if (error instanceof ClaudeCodeAuthError) return AUTH_FIX;
  if (error instanceof IsolationError && wireDifferences(error).length > 0) {
    return "Use a verified Claude Code CLI (npm ci installs one) and see docs/isolation.md: the runtime's interceptor refused the request for what is named above, and nothing left the machine. A CLI variant for your account or model is no fault of the setup: run with `wire: false` (unchecked) until a recorded shape admits it (\"Real accounts\").";
  }
  if (error instanceof IsolationError) return "Use a verified Claude Code CLI (npm ci installs one) and see docs/isolation.md; the run was stopped before any tool could run.";
  return "Check the message above; rerun with the same command once it is resolved.";
}
