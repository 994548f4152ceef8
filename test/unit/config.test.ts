/** KTX's llm configuration: parsing, paths in errors, prompt-caching defaults and warnings, the runtime factory. */
import { afterEach, describe, expect, it } from "vitest";
import {
  ClaudeCodeRuntime,
  DEFAULT_PROMPT_CACHING,
  KtxLlmConfigError,
  UnsupportedLlmBackendError,
  claudeCodeConfigWarnings,
  createClaudeCodeRuntimeFromConfig,
  parseKtxLlmConfig,
  promptCachingWarnings,
  resolvePromptCaching,
  resolveRoleModel,
  UnsupportedModelError,
  defaultKtxIngest,
} from "../../src/index.js";
import { AiSdkKtxLlmRuntime, createKtxLlmRuntime } from "../../src/ai-sdk/index.js";
import { findKtxProjectDir, loadKtxLlmConfig } from "../../src/config/parse.js";
import { turn } from "../../src/testing/scripted-api.js";
import { cleanup, scriptedApi, tempDir } from "../support.js";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

afterEach(cleanup);

const KTX_YAML = `
connections: {}
storage:
  state: sqlite
llm:
  provider:
    backend: claude-code
  models:
    default: sonnet
    triage: haiku
    curator: opus
ingest:
  adapters: [metabase]
`;

function issuesOf(run: () => unknown): Array<{ path: string; message: string }> {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(KtxLlmConfigError);
    return [...(error as KtxLlmConfigError).issues];
  }
  throw new Error("expected a KtxLlmConfigError");
}

describe("parseKtxLlmConfig", () => {
  it("reads the llm block of a whole ktx.yaml and ignores KTX's other keys", () => {
    const config = parseKtxLlmConfig(KTX_YAML);
    expect(config).toEqual({
      provider: { backend: "claude-code" },
      models: { default: "sonnet", triage: "haiku", curator: "opus" },
      ingest: defaultKtxIngest(),
      warnings: [],
    });
    expect(resolveRoleModel(config, "triage")).toBe("haiku");
    expect(resolveRoleModel(config, "reconcile")).toBe("sonnet");
  });

  it("accepts a parsed ktx.yaml object, the llm block as an object, and the llm block as YAML text alike", () => {
    const block = { provider: { backend: "anthropic", anthropic: { api_key: "k", base_url: "http://127.0.0.1:1" } }, models: { default: "claude-sonnet-5-5" } };
    const fromFile = parseKtxLlmConfig({ llm: block, storage: { state: "sqlite" } });
    expect(parseKtxLlmConfig(block)).toEqual(fromFile);
    expect(parseKtxLlmConfig("provider:\n  backend: anthropic\n  anthropic:\n    api_key: k\n    base_url: http://127.0.0.1:1\nmodels:\n  default: claude-sonnet-5-5\n")).toEqual(fromFile);
    // Parsing a parsed config gives it back unchanged.
    expect(parseKtxLlmConfig(fromFile)).toEqual(fromFile);
  });

  it("defaults the backend to none, as KTX does, and keeps promptCaching exactly as written", () => {
    expect(parseKtxLlmConfig({ models: { default: "sonnet" } }).provider.backend).toBe("none");
    const config = parseKtxLlmConfig({ provider: { backend: "claude-code" }, models: { default: "sonnet" }, promptCaching: { toolsTtl: "5m" } });
    expect(config.promptCaching).toEqual({ toolsTtl: "5m" });
  });

  it("resolves prompt caching with KTX's defaults: on, system/tools/history marked, 1h/1h/5m", () => {
    expect(DEFAULT_PROMPT_CACHING).toEqual({
      enabled: true,
      cacheSystem: true,
      cacheTools: true,
      cacheHistory: true,
      systemTtl: "1h",
      toolsTtl: "1h",
      historyTtl: "5m",
      vertexFallbackTo5m: false,
    });
    const config = parseKtxLlmConfig({ models: { default: "x" }, promptCaching: { enabled: false, historyTtl: "1h" } });
    expect(resolvePromptCaching(config)).toEqual({ ...DEFAULT_PROMPT_CACHING, enabled: false, historyTtl: "1h" });
  });

  it("names the offending path of every problem", () => {
    expect(issuesOf(() => parseKtxLlmConfig({ llm: { provider: { backend: "openai" }, models: { default: "sonnet" } } }))).toEqual([
      { path: "llm.provider.backend", message: '"openai" is not a backend; use one of none, anthropic, vertex, gateway, claude-code, codex' },
    ]);
    const many = issuesOf(() =>
      parseKtxLlmConfig({
        llm: { provider: { backend: "claude-code", antropic: {} }, models: { default: "", curatorr: "opus" }, promptCaching: { systemTtl: "2h", enabled: "yes" } },
        ingest: { workUnits: { stepBudget: 0 }, rateLimit: { throttleThreshold: 1.5 } },
      }),
    );
    // Unknown keys are not among the errors: they are warnings (see ktx-yaml.test.ts).
    expect(many.map((i) => i.path).sort()).toEqual(
      ["ingest.rateLimit.throttleThreshold", "ingest.workUnits.stepBudget", "llm.models.default", "llm.promptCaching.enabled", "llm.promptCaching.systemTtl"].sort(),
    );
  });

  it("puts the paths and the source in the error message", () => {
    const error = (() => {
      try {
        parseKtxLlmConfig("llm:\n  provider:\n    backend: bedrock\n  models: {default: sonnet}\n", { source: "/p/ktx.yaml" });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error?.message).toMatch(/in \/p\/ktx\.yaml/);
    expect(error?.message).toMatch(/llm\.provider\.backend: "bedrock" is not a backend; use one of/);
  });

  it("reports a non-mapping and a YAML syntax error", () => {
    expect(issuesOf(() => parseKtxLlmConfig("- a\n- b\n"))).toEqual([{ path: "(root)", message: "expected a mapping (ktx.yaml or its llm block), got a list" }]);
    expect(issuesOf(() => parseKtxLlmConfig(""))[0]!.message).toMatch(/got an empty document/);
    expect(issuesOf(() => parseKtxLlmConfig("llm:\n  provider: [\n"))[0]!.path).toBe("(yaml)");
  });

  it("finds the nearest ktx.yaml walking up and loads it", () => {
    const project = tempDir("cfg");
    writeFileSync(join(project, "ktx.yaml"), KTX_YAML);
    const nested = join(project, "a", "b");
    mkdirSync(nested, { recursive: true });
    expect(findKtxProjectDir(nested)).toBe(project);
    expect(loadKtxLlmConfig(project).config.models.curator).toBe("opus");
    expect(issuesOf(() => loadKtxLlmConfig(nested))[0]!.message).toMatch(/does not exist/);
  });
});

describe("prompt-caching warnings", () => {
  const claudeCode = (promptCaching?: Record<string, unknown>) =>
    parseKtxLlmConfig({ provider: { backend: "claude-code" }, models: { default: "sonnet" }, ...(promptCaching ? { promptCaching } : {}) });

  it("says nothing for a claude-code config without promptCaching, or for other backends", () => {
    expect(promptCachingWarnings(claudeCode())).toEqual([]);
    expect(promptCachingWarnings(parseKtxLlmConfig({ provider: { backend: "anthropic" }, models: { default: "x" }, promptCaching: { toolsTtl: "5m" } }))).toEqual([]);
  });

  it("names each ignored field with its value, and gives the fix", () => {
    const warnings = promptCachingWarnings(claudeCode({ enabled: true, systemTtl: "1h", toolsTtl: "5m", cacheHistory: false }));
    // In the schema's field order.
    expect(warnings.map((w) => w.path)).toEqual(["llm.promptCaching.enabled", "llm.promptCaching.cacheHistory", "llm.promptCaching.systemTtl", "llm.promptCaching.toolsTtl"]);
    expect(warnings[3]!.message).toMatch(/^claude-code ignores llm\.promptCaching\.toolsTtl \("5m"\): the CLI sends no tools breakpoint/);
    for (const warning of warnings) expect(warning.fix).toMatch(/anthropic, vertex or gateway/);
  });

  it("also flags other backends' credentials, which claude-code never falls back to", () => {
    const config = parseKtxLlmConfig({ provider: { backend: "claude-code", anthropic: { api_key: "sk" } }, models: { default: "sonnet" } });
    expect(claudeCodeConfigWarnings(config)).toEqual([expect.objectContaining({ path: "llm.provider.anthropic", message: expect.stringMatching(/never falls back/) })]);
  });
});

describe("createKtxLlmRuntime", () => {
  it("paces claude-code calls by ktx.yaml's ingest.rateLimit unless the caller brings its own", () => {
    const yaml = "llm:\n  provider:\n    backend: claude-code\n  models:\n    default: sonnet\ningest:\n  rateLimit:\n    throttleThreshold: 0.5\n    maxWaitMs: 60000\n";
    const fromYaml = createKtxLlmRuntime(yaml, { projectDir: tempDir("factory"), warm: false, reuse: false }) as ClaudeCodeRuntime;
    expect(fromYaml.options.rateLimit).toMatchObject({ enabled: true, throttleThreshold: 0.5, minConcurrencyUnderPressure: 1, maxWaitMs: 60000 });
    const own = createKtxLlmRuntime(yaml, { projectDir: tempDir("factory"), warm: false, reuse: false, rateLimit: { enabled: false } }) as ClaudeCodeRuntime;
    expect(own.options.rateLimit).toEqual({ enabled: false });
  });

  const logger = () => {
    const warnings: string[] = [];
    return { warnings, logger: { debug() {}, info() {}, warn: (m: string) => void warnings.push(m), error() {} } };
  };

  it("returns ClaudeCodeRuntime for claude-code with the models of the config, pinned to KTX's ids", () => {
    const runtime = createKtxLlmRuntime(KTX_YAML, { projectDir: tempDir("factory"), warm: false, reuse: false });
    expect(runtime).toBeInstanceOf(ClaudeCodeRuntime);
    const claude = runtime as ClaudeCodeRuntime;
    expect(claude.resolveModel("curator")).toBe("claude-opus-4-7");
    expect(claude.resolveModel("triage")).toBe("claude-haiku-4-5");
    expect(claude.resolveModel("repair")).toBe("claude-sonnet-4-6");
  });

  it("warns once per ignored promptCaching field through the logger", () => {
    const { warnings, logger: log } = logger();
    createKtxLlmRuntime(
      { provider: { backend: "claude-code" }, models: { default: "sonnet" }, promptCaching: { historyTtl: "1h", cacheTools: false } },
      { projectDir: tempDir("factory"), warm: false, reuse: false, logger: log },
    );
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/llm\.promptCaching\.cacheTools/);
    expect(warnings[1]).toMatch(/llm\.promptCaching\.historyTtl/);
    const quiet = logger();
    createKtxLlmRuntime({ provider: { backend: "claude-code" }, models: { default: "sonnet" } }, { projectDir: tempDir("factory"), warm: false, reuse: false, logger: quiet.logger });
    expect(quiet.warnings).toEqual([]);
  });

  it("the core factory and the ai-sdk one have distinct names: they behave differently (issue 39)", async () => {
    const [core, aiSdk] = [await import("../../src/index.js"), await import("../../src/ai-sdk/index.js")];
    expect(Object.keys(core)).not.toContain("createKtxLlmRuntime");
    expect(Object.keys(core)).toContain("createClaudeCodeRuntimeFromConfig");
    expect(Object.keys(aiSdk)).toContain("createKtxLlmRuntime");
    expect(Object.keys(aiSdk)).not.toContain("createClaudeCodeRuntimeFromConfig");
  });

  it("the core factory builds claude-code and refuses anthropic, naming the ktx-claude-code/ai-sdk entry point that builds it", () => {
    expect(createClaudeCodeRuntimeFromConfig(KTX_YAML, { projectDir: tempDir("factory"), warm: false, reuse: false })).toBeInstanceOf(ClaudeCodeRuntime);
    let thrown: unknown;
    try {
      createClaudeCodeRuntimeFromConfig({ provider: { backend: "anthropic" }, models: { default: "claude-sonnet-5-5" } }, { projectDir: tempDir("factory") });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UnsupportedLlmBackendError);
    expect((thrown as UnsupportedLlmBackendError).backend).toBe("anthropic");
    expect((thrown as Error).message).toMatch(/import \{ createKtxLlmRuntime \} from "ktx-claude-code\/ai-sdk" \(install its optional peers ai and @ai-sdk\/anthropic\)/);
  });

  it("returns the AI SDK runtime for anthropic", () => {
    const runtime = createKtxLlmRuntime({ provider: { backend: "anthropic" }, models: { default: "claude-sonnet-5-5" } }, { projectDir: tempDir("factory"), getModel: () => "unused" });
    expect(runtime).toBeInstanceOf(AiSdkKtxLlmRuntime);
    expect((runtime as AiSdkKtxLlmRuntime).promptCaching).toEqual(DEFAULT_PROMPT_CACHING);
  });

  it("builds the anthropic models from llm.provider.anthropic and llm.models when no getModel is given", async () => {
    const api = await scriptedApi([turn.text("from the configured endpoint")]);
    const runtime = createKtxLlmRuntime(
      { provider: { backend: "anthropic", anthropic: { api_key: "sk-from-config", base_url: `${api.baseUrl}/v1` } }, models: { default: "claude-sonnet-5-5", triage: "claude-haiku-5-5" } },
      { projectDir: tempDir("factory") },
    );
    const result = await runtime.generateTextResult({ role: "triage", prompt: "hi" });
    expect(result.text).toBe("from the configured endpoint");
    expect(api.messageRequests[0]!.body.model).toBe("claude-haiku-5-5");
    expect(api.messageRequests[0]!.headers["x-api-key"]).toBe("sk-from-config");
  });

  it("uses an explicit apiEndpoint for anthropic as the claude-code runtime does, and names the claude-code-only options it ignores", async () => {
    const api = await scriptedApi([turn.text("through the explicit endpoint")]);
    const { warnings, logger: log } = logger();
    const runtime = createKtxLlmRuntime(
      { provider: { backend: "anthropic", anthropic: { api_key: "sk-config", base_url: "http://127.0.0.1:9/v1" } }, models: { default: "claude-sonnet-5-5" } },
      { projectDir: tempDir("factory"), apiEndpoint: { baseUrl: api.baseUrl, apiKey: "sk-endpoint" }, warm: false, reuse: false, cliPath: "/nowhere/claude", logger: log },
    );
    expect((await runtime.generateTextResult({ prompt: "hi" })).text).toBe("through the explicit endpoint");
    expect(api.messageRequests[0]!.headers["x-api-key"]).toBe("sk-endpoint");
    expect(warnings).toEqual(["cliPath, warm, reuse are claude-code options; the anthropic backend ignores them."]);
  });

  it.each(["none", "vertex", "gateway", "codex"] as const)("refuses the %s backend with UnsupportedLlmBackendError, even with getModel, never falling through", (backend) => {
    const config = { provider: { backend, ...(backend === "vertex" ? { vertex: { location: "us-east5" } } : {}) }, models: { default: "claude-sonnet-5-5" } };
    let thrown: unknown;
    try {
      createKtxLlmRuntime(config, { projectDir: tempDir("factory"), getModel: () => "would-be-used" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UnsupportedLlmBackendError);
    expect((thrown as UnsupportedLlmBackendError).code).toBe("unsupported_llm_backend");
    expect((thrown as UnsupportedLlmBackendError).backend).toBe(backend);
    expect((thrown as Error).message).toContain(`"${backend}"`);
    if (backend !== "none") expect((thrown as Error).message).toMatch(/serves the claude-code and anthropic backends|serves claude-code and anthropic/);
    if (backend !== "none") expect((thrown as Error).message).toMatch(/no other backend is used in its place/);
    if (backend === "codex") expect((thrown as Error).message).toMatch(/KTX's own codex runtime.*llm\.provider\.backend: claude-code/s);
  });

  it("throws KtxLlmConfigError for an invalid config before constructing anything, naming llm.models.default when it is missing", () => {
    expect(() => createKtxLlmRuntime({ provider: { backend: "claude-code", surprise: 1 }, models: { default: 3 } }, { projectDir: tempDir("factory") })).toThrow(KtxLlmConfigError);
    for (const backend of ["claude-code", "anthropic"]) {
      const issues = issuesOf(() => createKtxLlmRuntime(`llm:\n  provider:\n    backend: ${backend}\n  models:\n    triage: haiku\n`, { projectDir: tempDir("factory") }));
      expect(issues).toEqual([{ path: "llm.models.default", message: `required when llm.provider.backend is ${backend} (the model of every role without its own)` }]);
    }
  });

  it("refuses a model claude-code cannot pin at construction, naming the role, the value and the ktx.yaml", () => {
    const project = tempDir("factory");
    writeFileSync(join(project, "ktx.yaml"), KTX_YAML.replace("triage: haiku", "triage: gpt-4o"));
    let thrown: unknown;
    try {
      createKtxLlmRuntime(loadKtxLlmConfig(project).config, { projectDir: project, warm: false, reuse: false });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UnsupportedModelError);
    expect(thrown).toMatchObject({ code: "unsupported_model", role: "triage", value: "gpt-4o", source: join(project, "ktx.yaml") });
    expect((thrown as Error).message).toContain(`llm.models.triage in ${join(project, "ktx.yaml")}: "gpt-4o"`);
  });

  it("logs the load's warnings (unknown keys) through the logger", () => {
    const { warnings, logger: log } = logger();
    createKtxLlmRuntime({ llm: { provider: { backend: "claude-code", timeout: 3 }, models: { default: "sonnet" } } }, { projectDir: tempDir("factory"), warm: false, reuse: false, logger: log });
    expect(warnings).toEqual([expect.stringMatching(/^llm\.provider\.timeout is not a ktx\.yaml key KTX knows; it is ignored\./)]);
  });
});
