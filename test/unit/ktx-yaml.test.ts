/**
 * ktx.yaml as KTX reads it: KTX-shaped example files (test/fixtures/ktx-yaml/), a file without `llm`,
 * codex, partial models, vertex.location, unknown keys as warnings, env:/file: references, and the
 * ingest.workUnits / ingest.rateLimit blocks with KTX's defaults.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  KtxConfigReferenceError,
  KtxLlmConfigError,
  UnsupportedLlmBackendError,
  createClaudeCodeRuntimeFromConfig,
  defaultKtxIngest,
  loadKtxLlmConfig,
  parseKtxLlmConfig,
  type KtxLlmConfig,
} from "../../src/index.js";
import { createKtxLlmRuntime } from "../../src/ai-sdk/index.js";
import { resolveConfigReference } from "../../src/config/references.js";
import { cleanup, tempDir } from "../support.js";

afterEach(cleanup);

const EXAMPLES = join(import.meta.dirname, "../fixtures/ktx-yaml");
const exampleFiles = readdirSync(EXAMPLES).filter((name) => name.endsWith(".yaml")).sort();

/** A home directory with the gateway secret the gateway example refers to. */
function home(): string {
  const dir = tempDir("ktx-home");
  mkdirSync(join(dir, ".ktx", "secrets"), { recursive: true });
  writeFileSync(join(dir, ".ktx", "secrets", "gateway-key"), "gw-secret-from-file\n");
  return dir;
}

const ENV = { ANTHROPIC_API_KEY: "sk-ant-from-env", GOOGLE_CLOUD_PROJECT: "my-gcp-project" };

function load(name: string, options: { env?: Record<string, string>; homeDir?: string } = {}): KtxLlmConfig {
  const text = readFileSync(join(EXAMPLES, name), "utf8");
  return parseKtxLlmConfig(text, { source: join(EXAMPLES, name), env: options.env ?? ENV, homeDir: options.homeDir ?? home() });
}

function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

/** What each KTX-shaped example gives: backend, models, ingest (beyond KTX's defaults) and warning paths. */
const EXPECTED: Record<string, { backend: string; models: Record<string, string>; ingest?: Partial<KtxLlmConfig["ingest"]>; warnings?: string[] }> = {
  "anthropic.yaml": {
    backend: "anthropic",
    models: { default: "claude-sonnet-4-6", triage: "claude-haiku-4-5", candidateExtraction: "claude-sonnet-4-6", curator: "claude-opus-4-7", reconcile: "claude-opus-4-7", repair: "claude-haiku-4-5" },
  },
  "codex.yaml": {
    backend: "codex",
    models: { default: "gpt-5.5", triage: "gpt-5.5", candidateExtraction: "gpt-5.5", curator: "gpt-5.5", reconcile: "gpt-5.5", repair: "gpt-5.5" },
  },
  "full-claude-code.yaml": {
    backend: "claude-code",
    models: { default: "sonnet", triage: "haiku", candidateExtraction: "sonnet", curator: "opus", reconcile: "opus", repair: "haiku" },
    ingest: { workUnits: { stepBudget: 40, maxConcurrency: 2, failureMode: "continue" } },
  },
  "gateway-file-secret.yaml": {
    backend: "gateway",
    models: { default: "anthropic/claude-sonnet-4-6", triage: "anthropic/claude-haiku-4-5" },
    ingest: { workUnits: { stepBudget: 40, maxConcurrency: 1, failureMode: "abort" } },
  },
  "ingest-rate-limit.yaml": {
    backend: "claude-code",
    models: { default: "sonnet" },
    ingest: {
      workUnits: { stepBudget: 40, maxConcurrency: 2, failureMode: "continue" },
      rateLimit: { enabled: true, throttleThreshold: 0.8, minConcurrencyUnderPressure: 1, maxWaitMs: 600000, retry: { maxAttempts: 6, baseDelayMs: 1000, maxDelayMs: 60000, jitter: true } },
    },
  },
  "local-warehouse.yaml": { backend: "none", models: {}, warnings: ["project", "memory"] },
  "minimal.yaml": { backend: "none", models: {} },
  "relationship-verification.yaml": { backend: "none", models: {}, warnings: ["project"] },
  "vertex.yaml": { backend: "vertex", models: { default: "claude-sonnet-4-6" } },
};

describe("KTX-shaped example ktx.yaml files", () => {
  it("has an expectation for every example file", () => {
    expect(exampleFiles).toEqual(Object.keys(EXPECTED).sort());
    expect(exampleFiles.length).toBeGreaterThanOrEqual(9);
  });

  it.each(exampleFiles)("%s parses as KTX reads it", (name) => {
    const expected = EXPECTED[name]!;
    const config = load(name);
    expect(config.provider.backend).toBe(expected.backend);
    expect(config.models).toEqual(expected.models);
    expect(config.ingest).toEqual({ ...defaultKtxIngest(), ...expected.ingest });
    expect(config.warnings.map((w) => w.path)).toEqual(expected.warnings ?? []);
    expect(config.source).toBe(join(EXAMPLES, name));
    // Nothing unresolved is left anywhere in the result.
    expect(JSON.stringify(config)).not.toMatch(/"(env|file):/);
  });

  it("resolves the examples' references: env: for keys and projects, file: under ~ for the gateway secret", () => {
    expect(load("anthropic.yaml").provider.anthropic).toEqual({ api_key: "sk-ant-from-env" });
    expect(load("vertex.yaml").provider.vertex).toEqual({ project: "my-gcp-project", location: "us-east5" });
    expect(load("gateway-file-secret.yaml").provider.gateway).toEqual({ api_key: "gw-secret-from-file" });
  });

  it("loads an example as a project's ktx.yaml and builds the claude-code runtime from it; codex is refused by name", () => {
    const project = tempDir("ktx-project");
    writeFileSync(join(project, "ktx.yaml"), readFileSync(join(EXAMPLES, "full-claude-code.yaml")));
    const { path, config } = loadKtxLlmConfig(project, { env: {} });
    expect(config.source).toBe(path);
    const runtime = createClaudeCodeRuntimeFromConfig(config, { projectDir: project, warm: false }) as { resolveModel(role: string): string };
    expect(["default", "triage", "curator", "repair"].map((role) => runtime.resolveModel(role))).toEqual([
      "claude-sonnet-4-6",
      "claude-haiku-4-5",
      "claude-opus-4-7",
      "claude-haiku-4-5",
    ]);
    const codex = thrown(() => createClaudeCodeRuntimeFromConfig(load("codex.yaml"), { projectDir: project }));
    expect(codex).toBeInstanceOf(UnsupportedLlmBackendError);
    expect(codex.message).toMatch(/"codex": this package serves the claude-code and anthropic backends/);
  });
});

describe("what KTX accepts", () => {
  it("reads a ktx.yaml without llm as backend none with no models, and an empty llm block the same", () => {
    for (const input of ["connections: {}\n", "llm: {}\n", {}, { storage: { state: "sqlite" } }]) {
      const config = parseKtxLlmConfig(input);
      expect(config.provider).toEqual({ backend: "none" });
      expect(config.models).toEqual({});
      expect(config.warnings).toEqual([]);
    }
  });

  it("takes models as a partial record: any subset of roles, without default when the backend is none", () => {
    expect(parseKtxLlmConfig({ llm: { models: { triage: "haiku" } } }).models).toEqual({ triage: "haiku" });
    expect(parseKtxLlmConfig({ llm: { provider: { backend: "claude-code" }, models: { curator: "opus" } } }).models).toEqual({ curator: "opus" });
  });

  it("requires vertex.location whenever the vertex block is present, whatever the backend", () => {
    for (const backend of ["vertex", "claude-code"]) {
      const error = thrown(() => parseKtxLlmConfig({ llm: { provider: { backend, vertex: { project: "p" } }, models: { default: "sonnet" } } }));
      expect(error).toBeInstanceOf(KtxLlmConfigError);
      expect((error as KtxLlmConfigError).issues).toEqual([{ path: "llm.provider.vertex.location", message: "required (expected string)" }]);
    }
  });

  it("reports unknown keys as warnings, ignores them, and still rejects bad values of known keys", () => {
    const config = parseKtxLlmConfig(
      "colour: blue\nllm:\n  provider:\n    backend: claude-code\n    antropic: {}\n  models:\n    default: sonnet\n    curatorr: opus\n  promptCaching:\n    systemTtll: 1h\ningest:\n  adapters: [dbt]\n  workUnits:\n    stepBudgett: 10\n",
    );
    expect(config.warnings.map((w) => w.path)).toEqual(["colour", "llm.provider.antropic", "llm.models.curatorr", "llm.promptCaching.systemTtll", "ingest.workUnits.stepBudgett"]);
    expect(config.warnings[2]).toEqual({
      path: "llm.models.curatorr",
      message: "llm.models.curatorr is not a ktx.yaml key KTX knows; it is ignored.",
      fix: "Check the spelling against docs/guides/ktx-backend.md, or remove llm.models.curatorr.",
    });
    expect(config.models).toEqual({ default: "sonnet" });
    expect(config.promptCaching).toEqual({});
    expect(config.ingest.workUnits.stepBudget).toBe(40);
    const error = thrown(() => parseKtxLlmConfig({ llm: { provider: { backend: "claude-code", extra: 1 }, models: { default: "sonnet" }, promptCaching: { systemTtl: "2h" } } }));
    expect((error as KtxLlmConfigError).issues.map((i) => i.path)).toEqual(["llm.promptCaching.systemTtl"]);
  });

  it("returns ingest.workUnits and ingest.rateLimit with KTX's defaults, and checks their values", () => {
    expect(defaultKtxIngest()).toEqual({
      workUnits: { stepBudget: 40, maxConcurrency: 1, failureMode: "continue" },
      rateLimit: { enabled: true, throttleThreshold: 0.8, minConcurrencyUnderPressure: 1, retry: { maxAttempts: 6, baseDelayMs: 1000, maxDelayMs: 60000, jitter: true } },
    });
    const partial = parseKtxLlmConfig({ ingest: { rateLimit: { enabled: false, retry: { maxAttempts: 2 } } } });
    expect(partial.ingest.rateLimit).toEqual({ ...defaultKtxIngest().rateLimit, enabled: false, retry: { ...defaultKtxIngest().rateLimit.retry, maxAttempts: 2 } });
    const error = thrown(() => parseKtxLlmConfig({ ingest: { workUnits: { failureMode: "retry", maxConcurrency: 1.5 }, rateLimit: { maxWaitMs: -1 } } }));
    expect((error as KtxLlmConfigError).issues.map((i) => i.path).sort()).toEqual(["ingest.rateLimit.maxWaitMs", "ingest.workUnits.failureMode", "ingest.workUnits.maxConcurrency"]);
  });

  it("gives a parsed configuration back as it is, and a copy of one parses to the same", () => {
    const config = load("ingest-rate-limit.yaml");
    expect(parseKtxLlmConfig(config)).toBe(config);
    expect(parseKtxLlmConfig(structuredClone(config))).toEqual(config);
  });
});

describe("env: and file: references", () => {
  it("resolves env: (trimmed) and file: (absolute, relative to the ktx.yaml, ~) and passes literals through", () => {
    const dir = tempDir("refs");
    writeFileSync(join(dir, "key.txt"), "  sk-from-file \n");
    const homeDir = home();
    expect(resolveConfigReference("env:KEY", { env: { KEY: " sk-env " } })).toEqual({ ok: true, value: "sk-env" });
    expect(resolveConfigReference(`file:${join(dir, "key.txt")}`)).toEqual({ ok: true, value: "sk-from-file" });
    expect(resolveConfigReference("file:key.txt", { baseDir: dir })).toEqual({ ok: true, value: "sk-from-file" });
    expect(resolveConfigReference("file:~/.ktx/secrets/gateway-key", { homeDir })).toEqual({ ok: true, value: "gw-secret-from-file" });
    expect(resolveConfigReference("sk-literal")).toEqual({ ok: true, value: "sk-literal" });
    writeFileSync(join(dir, "ktx.yaml"), "llm:\n  provider:\n    backend: anthropic\n    anthropic:\n      api_key: file:./key.txt\n  models:\n    default: env:KTX_MODEL\n");
    const { config } = loadKtxLlmConfig(dir, { env: { KTX_MODEL: "claude-opus-4-7" } });
    expect(config.provider.anthropic).toEqual({ api_key: "sk-from-file" });
    expect(config.models.default).toBe("claude-opus-4-7");
  });

  it("fails at load with a typed error naming the field, the reference and why, for a field the backend uses", () => {
    const yaml = "llm:\n  provider:\n    backend: anthropic\n    anthropic:\n      api_key: env:ANTHROPIC_API_KEY\n      base_url: file:~/nope/url.txt\n  models:\n    default: claude-sonnet-4-6\n";
    const error = thrown(() => parseKtxLlmConfig(yaml, { source: "/p/ktx.yaml", env: { ANTHROPIC_API_KEY: "  " }, homeDir: "/home/none" }));
    expect(error).toBeInstanceOf(KtxConfigReferenceError);
    expect(error).toBeInstanceOf(KtxLlmConfigError);
    expect((error as KtxConfigReferenceError).code).toBe("unresolved_config_reference");
    expect((error as KtxConfigReferenceError).issues).toEqual([
      { path: "llm.provider.anthropic.api_key", message: "env:ANTHROPIC_API_KEY cannot be resolved: the environment variable ANTHROPIC_API_KEY is empty" },
      { path: "llm.provider.anthropic.base_url", message: "file:~/nope/url.txt cannot be resolved: the file /home/none/nope/url.txt does not exist" },
    ]);
    expect(error.message).toMatch(/in \/p\/ktx\.yaml/);
    const unset = thrown(() => parseKtxLlmConfig({ llm: { provider: { backend: "claude-code" }, models: { default: "env:KTX_MODEL" } } }, { env: {} }));
    expect((unset as KtxConfigReferenceError).issues).toEqual([{ path: "llm.models.default", message: "env:KTX_MODEL cannot be resolved: the environment variable KTX_MODEL is not set" }]);
  });

  it("never sends a reference as a value: an unresolvable one in a block the backend does not use is dropped with a warning", () => {
    const config = parseKtxLlmConfig(
      { llm: { provider: { backend: "claude-code", anthropic: { api_key: "env:ANTHROPIC_API_KEY" }, vertex: { location: "env:VERTEX_REGION" } }, models: { default: "sonnet" } } },
      { env: {} },
    );
    expect(config.provider).toEqual({ backend: "claude-code", anthropic: {} });
    expect(config.warnings.map((w) => w.path)).toEqual(["llm.provider.anthropic.api_key", "llm.provider.vertex.location"]);
    expect(config.warnings[0]!.message).toMatch(/env:ANTHROPIC_API_KEY\) is ignored: the environment variable ANTHROPIC_API_KEY is not set, and the claude-code backend does not use it/);
  });

  it("resolves references with the factory's env, so the anthropic runtime never gets the reference text", () => {
    const config = { llm: { provider: { backend: "anthropic", anthropic: { api_key: "env:MY_KEY" } }, models: { default: "claude-sonnet-4-6" } } };
    const error = thrown(() => createKtxLlmRuntime(config, { projectDir: tempDir("factory"), env: {} }));
    expect(error).toBeInstanceOf(KtxConfigReferenceError);
    expect(createKtxLlmRuntime(config, { projectDir: tempDir("factory"), env: { MY_KEY: "sk-real" } })).toBeDefined();
  });
});
