/**
 * End to end: the real pinned CLI driven by the runtime against the scripted Messages API, on the
 * first-party path (the runtime's interceptor on, as in real use) unless a test needs the base URL.
 */
import { existsSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  ClaudeCodeAuthError,
  IsolationError,
  StructuredOutputError,
  UnsupportedCliVersionError,
  runClaudeCodeAuthProbe,
  runClaudeCodeAuthProbeDetailed,
} from "../../src/index.js";
import { turn } from "../../src/testing/scripted-api.js";
import { locateBundledCli } from "../../src/binary/locate.js";
import { baseUrlApi, cleanup, cliOption, cliVersionInUse, firstPartyApi, firstPartyEnv, realCli, remainingChildren, runtimeFor, script, systemText, tempDir, testEnv } from "../support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

describe("generateText", () => {
  it("returns the model's text and the model the CLI resolved, with our system prompt and no built-in tools", async () => {
    const api = await firstPartyApi([turn.text("hello from the scripted model")]);
    const result = await runtimeFor(api).generateTextResult({ prompt: "say hello", system: "You are a KTX test." });
    expect(result.text).toBe("hello from the scripted model");
    // KTX's pinned id for "sonnet", never the CLI's own alias target (claude-sonnet-5-5 on 2.1.330).
    expect(result.model).toBe("claude-sonnet-4-6");
    expect(result.cliVersion).toBe(await cliVersionInUse());
    expect(api.messageRequests).toHaveLength(1);
    const body = api.messageRequests[0]!.body;
    expect(systemText(body)).toContain("You are a KTX test.");
    const toolNames = (body.tools ?? []).map((tool: { name: string }) => tool.name);
    for (const builtin of ["Bash", "Read", "Write", "Edit", "WebFetch", "Task", "Agent", "Skill", "Glob", "Grep"]) expect(toolNames).not.toContain(builtin);
    // The prompt is the user message's last block: for 4.x models the CLI puts its reminders (environment, date) before it.
    expect(body.messages[0].content.at(-1).text).toBe("say hello");
  });

  it("carries a 1 MiB system prompt over stdin", async () => {
    const api = await firstPartyApi([turn.text("ok")]);
    const big = `BEGIN ${"k".repeat(1024 * 1024)} END`;
    const result = await runtimeFor(api).generateTextResult({ prompt: "go", system: big });
    expect(result.text).toBe("ok");
    expect(systemText(api.messageRequests[0]!.body)).toContain(big);
  });
});

describe("generateObject", () => {
  const schema = z.object({ answer: z.string(), n: z.number() });

  it("returns the structured output validated and typed", async () => {
    const api = await firstPartyApi([turn.object({ answer: "forty-two", n: 42 })]);
    const result = await runtimeFor(api).generateObjectResult({ prompt: "answer", schema });
    expect(result.object).toEqual({ answer: "forty-two", n: 42 });
    const tools = api.messageRequests[0]!.body.tools.map((tool: { name: string }) => tool.name);
    expect(tools).toContain("StructuredOutput");
  });

  it("fails with StructuredOutputError when the model keeps violating the schema (the CLI's own retries run out)", async () => {
    const api = await firstPartyApi([turn.object({ wrong: true })], { onExhausted: "repeat-last" });
    const error = (await runtimeFor(api).generateObjectResult({ prompt: "answer", schema }).catch((e: unknown) => e)) as StructuredOutputError;
    expect(error).toBeInstanceOf(StructuredOutputError);
    // The message carries the CLI's last validation error; `received` is the result the CLI ended with.
    expect(error.message).toMatch(/within the CLI's retries: .*after 5 attempts.*must have required property 'answer'/);
    expect(error.received).toMatchObject({ type: "result", subtype: "error_max_structured_output_retries", is_error: true });
    // The CLI's 5 attempts, each one API request with the previous violation fed back.
    expect(api.messageRequests).toHaveLength(5);
  });

  it("fails with StructuredOutputError carrying the object when only our zod schema rejects it", async () => {
    const even = z.object({ n: z.number().refine((n) => n % 2 === 0, "must be even") });
    const api = await firstPartyApi([turn.object({ n: 3 })]);
    const error = (await runtimeFor(api).generateObjectResult({ prompt: "answer", schema: even }).catch((e: unknown) => e)) as StructuredOutputError;
    expect(error).toBeInstanceOf(StructuredOutputError);
    expect(error.received).toEqual({ n: 3 });
    expect(error.message).toMatch(/must be even/);
  });

  it("fails with StructuredOutputError when the model answers in prose and the CLI still reports success", async () => {
    const api = await firstPartyApi([turn.text("I think the answer is 42.")], { onExhausted: "repeat-last" });
    const error = (await runtimeFor(api).generateObjectResult({ prompt: "answer", schema }).catch((e: unknown) => e)) as StructuredOutputError;
    expect(error).toBeInstanceOf(StructuredOutputError);
    expect(error.message).toMatch(/prose|StructuredOutput/);
  });
});

describe("authentication and the scrubbed environment", () => {
  it("reports a missing local session as ClaudeCodeAuthError even with ANTHROPIC_API_KEY in the parent env", async () => {
    const runtime = runtimeFor(undefined, { env: testEnv({ ANTHROPIC_API_KEY: "sk-ant-parent-key-must-not-be-used" }) });
    const error = await runtime.generateTextResult({ prompt: "hi" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClaudeCodeAuthError);
    expect((error as Error).message).toMatch(/Authenticate Claude Code locally/);
  });

  it("the auth probe answers ok:false with the fix, and ok:true against a working endpoint", async () => {
    const failing = await runClaudeCodeAuthProbe({
      ...cliOption(),
      projectDir: tempDir("probe"),
      model: "sonnet",
      env: testEnv({ ANTHROPIC_API_KEY: "sk-ant-parent-key-must-not-be-used", ANTHROPIC_AUTH_TOKEN: "also-not-used" }),
    });
    expect(Object.keys(failing).sort()).toEqual(["message", "ok"]);
    expect(failing.ok).toBe(false);
    if (!failing.ok) expect(failing.message).toMatch(/authenticate Claude Code locally with the Claude Code CLI, then rerun: run `npx --no-install ktx-claude-code login`/i);

    // The probe as KTX runs it: the first-party path, behind the runtime's interceptor (the default).
    const api = await firstPartyApi([turn.text("OK")], { onExhausted: "repeat-last" });
    const passing = await runClaudeCodeAuthProbe({ ...cliOption(), projectDir: tempDir("probe"), model: "sonnet", env: firstPartyEnv(api) });
    // KTX's shape exactly; the model and the CLI are in the detailed probe.
    expect(passing).toEqual({ ok: true });
    const detailed = await runClaudeCodeAuthProbeDetailed({ ...cliOption(), projectDir: tempDir("probe"), model: "sonnet", env: firstPartyEnv(api) });
    expect(detailed).toMatchObject({ ok: true, model: "claude-sonnet-4-6", cliVersion: await cliVersionInUse() });
  });

  it("never sends a request to a base URL found in the parent environment", async () => {
    // Base URL: this is a test of the explicit apiEndpoint against a base URL in the parent environment.
    const trap = await baseUrlApi([turn.text("leaked")], { onExhausted: "repeat-last" });
    const api = await baseUrlApi([turn.text("through the explicit endpoint")]);
    const parentEnv = testEnv({ ANTHROPIC_BASE_URL: trap.baseUrl, ANTHROPIC_API_KEY: "sk-ant-trap", ANTHROPIC_AUTH_TOKEN: "trap-token" });
    const viaEndpoint = await runtimeFor(api, { env: parentEnv }).generateTextResult({ prompt: "hi" });
    expect(viaEndpoint.text).toBe("through the explicit endpoint");
    const withoutEndpoint = await runtimeFor(undefined, { env: parentEnv }).generateTextResult({ prompt: "hi" }).catch((e: unknown) => e);
    expect(withoutEndpoint).toBeInstanceOf(ClaudeCodeAuthError);
    expect(trap.requests).toHaveLength(0);
  });
});

describe("isolation check and version pinning", () => {
  it("stops with IsolationError naming the difference when the CLI starts with built-in tools", async () => {
    // Base URL: the init check itself; on the first-party path the wire check refuses the request first
    // (test/e2e/wire.test.ts, "a CLI that starts with built-in tools sends nothing").
    const api = await baseUrlApi([turn.text("should not be reached")]);
    // A CLI that ignores our tool restrictions (here: a wrapper dropping them).
    const widened = script("claude-widened", `for a; do shift; case "$a" in --tools=*|--disallowedTools=*) ;; *) set -- "$@" "$a";; esac; done\nexec '${realCli()}' "$@"`);
    const error = (await runtimeFor(api, { cliPath: widened }).generateTextResult({ prompt: "hi" }).catch((e: unknown) => e)) as IsolationError;
    expect(error).toBeInstanceOf(IsolationError);
    expect(error.message).toMatch(/tools were .*Bash/);
    // init arrives with the turn, when the CLI has already sent its request; no answer is acted upon.
    expect(api.messageRequests.length).toBeLessThanOrEqual(1);
  });

  it.each(["first-party", "base URL"])("still has no built-in tool when a CLI ignores --tools= (%s): --disallowedTools names every built-in of the version", async (path) => {
    // Both paths: a claude.ai login (first-party) offers one more built-in, RemoteTrigger, than a base URL does.
    const script_ = [turn.text("answered with no built-ins")];
    const api = path === "first-party" ? await firstPartyApi(script_) : await baseUrlApi(script_);
    const noToolsFlag = script("claude-no-tools-flag", `for a; do shift; case "$a" in --tools=*) ;; *) set -- "$@" "$a";; esac; done\nexec '${realCli()}' "$@"`);
    const result = await runtimeFor(api, { cliPath: noToolsFlag }).generateTextResult({ prompt: "hi" });
    expect(result.text).toBe("answered with no built-ins");
    // The model was offered no tool at all.
    expect(api.messageRequests[0]!.body.tools ?? []).toEqual([]);
  });

  it("refuses a credential that reaches the CLI before the prompt is sent", async () => {
    // Base URL: the smuggled ANTHROPIC_BASE_URL points at this server, which must see nothing.
    const api = await baseUrlApi([turn.text("should not be reached")]);
    // A CLI that picks up an API key behind our back (here: a wrapper exporting one).
    const keyed = script("claude-keyed", `ANTHROPIC_API_KEY=sk-ant-smuggled ANTHROPIC_BASE_URL='${api.baseUrl}' exec '${realCli()}' "$@"`);
    const error = await runtimeFor(undefined, { cliPath: keyed }).generateTextResult({ prompt: "hi" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IsolationError);
    expect((error as Error).message).toMatch(/apiKeySource was "ANTHROPIC_API_KEY"/);
    expect(api.messageRequests).toHaveLength(0);
  });

  it("stops with IsolationError when built-in plugins are left on", async () => {
    const api = await firstPartyApi([turn.text("should not be reached")]);
    const plugins = script("claude-plugins", `for a; do shift; case "$a" in --settings=*) ;; *) set -- "$@" "$a";; esac; done\nexec '${realCli()}' "$@"`);
    const error = await runtimeFor(api, { cliPath: plugins }).generateTextResult({ prompt: "hi" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IsolationError);
    expect((error as Error).message).toMatch(/plugins were .*cc-plugin/);
  });

  it("refuses an unverified CLI version unless allowUnverifiedCli, naming the verified ones", async () => {
    // Base URL: an unverified version has no recorded wire shape, so behind the interceptor it would be
    // refused for that too; this test is of the version gate alone.
    const api = await baseUrlApi([turn.text("ran anyway")]);
    const future = script("claude-future", `case "$1" in --version) echo "9.9.9 (Claude Code)";; *) exec '${realCli()}' "$@";; esac`);
    const refused = await runtimeFor(api, { cliPath: future }).generateTextResult({ prompt: "hi" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UnsupportedCliVersionError);
    expect((refused as Error).message).toMatch(/9\.9\.9.*2\.1\.330/s);
    expect(api.messageRequests).toHaveLength(0);
    const allowed = await runtimeFor(api, { cliPath: future, allowUnverifiedCli: true }).generateTextResult({ prompt: "hi" });
    expect(allowed.text).toBe("ran anyway");
  });

  it("resolves the pinned binary from the platform package", () => {
    const path = locateBundledCli();
    expect(path).toMatch(/@anthropic-ai[/\\]claude-code-[a-z0-9-]+[/\\]claude$/);
    expect(existsSync(path)).toBe(true);
  });
});
