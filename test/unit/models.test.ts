/** Model pinning: KTX's alias table, claude-* ids, refusal at construction with role, value and source. */
import { describe, expect, it } from "vitest";
import { ClaudeCodeRuntime, InvalidInputError, KTX_CLAUDE_CODE_MODEL_ALIASES, UnsupportedModelError, modelAliasTable, resolveRoleModels } from "../../src/index.js";
import { isClaudeModelId } from "../../src/claude-code/models.js";
import { tempDir } from "../support.js";

function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

describe("the alias table", () => {
  it("is KTX's own claude-code table by default", () => {
    expect(KTX_CLAUDE_CODE_MODEL_ALIASES).toEqual({ sonnet: "claude-sonnet-4-6", opus: "claude-opus-4-7", haiku: "claude-haiku-4-5" });
    expect(Object.isFrozen(KTX_CLAUDE_CODE_MODEL_ALIASES)).toBe(true);
  });

  it("takes overrides and additions whose targets are claude-* ids, and refuses others", () => {
    expect(modelAliasTable({ sonnet: "claude-sonnet-4-5", fast: "claude-haiku-4-5" })).toEqual({ ...KTX_CLAUDE_CODE_MODEL_ALIASES, sonnet: "claude-sonnet-4-5", fast: "claude-haiku-4-5" });
    const error = thrown(() => modelAliasTable({ sonnet: "sonnet", "claude-x": "claude-sonnet-4-6", Big: "claude-opus-4-7" }));
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error.message).toMatch(/"sonnet" -> "sonnet": the target must be a full claude-\* model id/);
    expect(error.message).toMatch(/"claude-x" is not an alias name/);
    expect(error.message).toMatch(/"Big" is not an alias name/);
  });

  it("recognises claude-* ids, dated and with the [1m] suffix, and nothing else", () => {
    for (const id of ["claude-sonnet-4-6", "claude-opus-4-1-20250805", "claude-3-5-haiku-20241022", "claude-sonnet-4-6[1m]", "claude-sonnet-5-5"]) expect(isClaudeModelId(id)).toBe(true);
    for (const value of ["sonnet", "gpt-5.5", "anthropic/claude-sonnet-4-6", "Claude-Sonnet-4-6", "claude-", "claude sonnet", "claude-sonnet-4-6 "]) expect(isClaudeModelId(value)).toBe(false);
  });
});

describe("resolveRoleModels", () => {
  it("maps aliases to KTX's ids, passes claude-* ids as they are, and fills roles from default", () => {
    const models = resolveRoleModels({ default: "sonnet", triage: "haiku", curator: "claude-opus-4-1" });
    expect(models.default).toEqual({ role: "default", configured: "sonnet", from: "role", id: "claude-sonnet-4-6", via: "alias" });
    expect(models.triage).toMatchObject({ configured: "haiku", id: "claude-haiku-4-5", via: "alias" });
    expect(models.curator).toMatchObject({ configured: "claude-opus-4-1", id: "claude-opus-4-1", via: "id" });
    expect(models.reconcile).toEqual({ role: "reconcile", configured: "sonnet", from: "default", id: "claude-sonnet-4-6", via: "alias" });
    expect(resolveRoleModels({ default: "sonnet" }, { aliases: { sonnet: "claude-sonnet-4-5" } }).repair.id).toBe("claude-sonnet-4-5");
  });

  it("refuses every unusable role at once, naming role, value and source, with a hint for near misses", () => {
    const error = thrown(() => resolveRoleModels({ default: "gpt-5.5", triage: "anthropic/claude-haiku-4-5", curator: "Opus", repair: "haiku" }, { source: "/p/ktx.yaml" }));
    expect(error).toBeInstanceOf(UnsupportedModelError);
    const refused = error as UnsupportedModelError;
    expect(refused.code).toBe("unsupported_model");
    expect([refused.role, refused.value, refused.source]).toEqual(["default", "gpt-5.5", "/p/ktx.yaml"]);
    expect(refused.problems).toEqual([
      { role: "default", value: "gpt-5.5" },
      { role: "triage", value: "anthropic/claude-haiku-4-5" },
      { role: "curator", value: "Opus" },
    ]);
    // KTX's own backend's message first, word for word (for the first value), then every role at fault.
    expect(refused.message.split("\n")[0]).toBe('Unsupported Claude Code model "gpt-5.5". Use sonnet, opus, haiku, or a claude-* model id.');
    expect(refused.message).toContain('llm.models.default in /p/ktx.yaml: "gpt-5.5"');
    expect(refused.message).toContain('llm.models.triage in /p/ktx.yaml: "anthropic/claude-haiku-4-5" (drop the provider prefix: claude-haiku-4-5)');
    expect(refused.message).toContain('"Opus" (model names are lowercase: opus)');
    expect(refused.message).toMatch(/Use an alias — sonnet \(claude-sonnet-4-6\), opus \(claude-opus-4-7\), haiku \(claude-haiku-4-5\) — or a full claude-\* model id/);
    // Without a source the message names the runtime option.
    expect(thrown(() => resolveRoleModels({ default: "o3" })).message).toContain('models.default: "o3"');
  });
});

describe("ClaudeCodeRuntime models", () => {
  it("resolves at construction: the pinned id per role, and the table from modelAliases", () => {
    const runtime = new ClaudeCodeRuntime({ projectDir: tempDir("models"), models: { default: "sonnet", triage: "fast" }, modelAliases: { fast: "claude-haiku-4-5" }, warm: false });
    expect(runtime.resolveModel("triage")).toBe("claude-haiku-4-5");
    expect(runtime.resolveModel()).toBe("claude-sonnet-4-6");
    expect(runtime.models.curator).toMatchObject({ from: "default", id: "claude-sonnet-4-6" });
  });

  it("fails at construction, before any process, for a value that is neither an alias nor a claude-* id", () => {
    const error = thrown(() => new ClaudeCodeRuntime({ projectDir: tempDir("models"), models: { default: "sonnet", reconcile: "gemini-2.5-pro" }, modelsSource: "/p/ktx.yaml", cliPath: "/nowhere/claude" }));
    expect(error).toBeInstanceOf(UnsupportedModelError);
    expect(error).toMatchObject({ role: "reconcile", value: "gemini-2.5-pro", source: "/p/ktx.yaml" });
  });
});
