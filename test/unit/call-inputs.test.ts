/**
 * Call inputs are validated like the runtime options: unknown keys refused with the key named, every
 * field of KTX's port accepted, and every message naming the field, the value and what is allowed.
 * The runtime's CLI path does not exist, so a call that got past validation would fail otherwise
 * (CliNotFoundError), never silently run.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Tracer } from "@opentelemetry/api";
import { ClaudeCodeRuntime } from "../../src/claude-code/runtime.js";
import { createInMemoryTracer } from "../../src/testing/in-memory-tracer.js";
import { InvalidInputError } from "../../src/errors/index.js";
import type { KtxGenerateObjectPortInput, KtxGenerateTextPortInput, KtxRunLoopParams } from "../../src/port/ktx-port.js";
import { checkLoopParams, checkObjectInput, checkTextInput } from "../../src/runtime/call-inputs.js";
import type { KtxGenerateObjectInput, KtxGenerateTextInput, RunLoopParams } from "../../src/runtime/types.js";

const tool = { name: "search", description: "Search", inputSchema: z.object({ q: z.string() }), execute: async () => ({ markdown: "found" }) };
const schema = z.object({ title: z.string() });
const signal = new AbortController().signal;

// Required<…>: the compiler makes each object name every field of the type, so a field KTX's port
// (or this library's input) gains that the schema lacks fails here.
const ktxText: Required<KtxGenerateTextPortInput> = { role: "triage", prompt: "p", system: "s", tools: { search: tool }, temperature: 0, onMetrics: () => undefined, abortSignal: signal };
const ktxObject: Required<KtxGenerateObjectPortInput<{ title: string }, typeof schema>> = { ...ktxText, schema };
const ktxLoop: Required<KtxRunLoopParams> = {
  modelRole: "curator",
  systemPrompt: "s",
  userPrompt: "u",
  toolSet: { search: tool },
  stepBudget: 8,
  telemetryTags: { operationName: "ingest", source: "RESEARCH", unitKey: "wu-1", jobId: "j" },
  abortSignal: signal,
};
const richText: Required<KtxGenerateTextInput> = { ...ktxText, signal, timeoutMs: 1000, transcript: { dir: "/tmp/t", name: "a" }, maxTurns: 2 };
const richObject: Required<KtxGenerateObjectInput<{ title: string }, typeof schema>> = { ...richText, schema };
const richLoop: Required<RunLoopParams> = { ...ktxLoop, signal, timeoutMs: Number.POSITIVE_INFINITY, transcript: false, onStepFinish: () => undefined };
// An arrow that returns a value (push returns the new length) and an async one type-check as onStepFinish (issue 39).
const steps: number[] = [];
const countingLoop: RunLoopParams = { ...ktxLoop, onStepFinish: (event) => steps.push(event.stepIndex) };
const asyncLoop: RunLoopParams = { ...ktxLoop, onStepFinish: async (event) => event.stepBudget };

describe("call inputs", () => {
  it("every field of KTX's port and of the richer calls passes, with optional fields explicitly undefined too", () => {
    expect(() => checkTextInput(ktxText)).not.toThrow();
    expect(() => checkObjectInput(ktxObject)).not.toThrow();
    expect(() => checkLoopParams(ktxLoop)).not.toThrow();
    expect(() => checkLoopParams(countingLoop)).not.toThrow();
    expect(() => checkLoopParams(asyncLoop)).not.toThrow();
    expect(() => checkTextInput(richText)).not.toThrow();
    expect(() => checkObjectInput(richObject)).not.toThrow();
    expect(() => checkLoopParams(richLoop)).not.toThrow();
    // What KTX's call sites pass (../shared/ktx/README.md): an array tool set, no tools, undefined options.
    expect(() => checkTextInput({ role: "default", prompt: "p", system: undefined, temperature: undefined, abortSignal: undefined })).not.toThrow();
    expect(() => checkLoopParams({ ...ktxLoop, toolSet: [tool], abortSignal: undefined })).not.toThrow();
  });

  const projectDir = mkdtempSync(join(tmpdir(), "ktx-call-inputs-"));
  const runtime = new ClaudeCodeRuntime({ projectDir, models: { default: "sonnet" }, cliPath: join(projectDir, "no-such-claude"), warm: false, reuse: false });
  afterAll(() => runtime.close());

  async function rejection(call: Promise<unknown>): Promise<InvalidInputError> {
    const error = await call.then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(InvalidInputError);
    return error as InvalidInputError;
  }

  it("an unknown key is refused with the key named and the near miss suggested, in all five calls", async () => {
    const text = await rejection(runtime.generateText({ prompt: "hi", maxturns: 2 } as KtxGenerateTextInput));
    expect(text.field).toBe("maxturns");
    expect(text.message).toMatch(/^Invalid generateText input: maxturns is not a known key \(did you mean maxTurns\?\), given 2; allowed keys: .*maxTurns/);
    expect((await rejection(runtime.generateTextResult({ prompt: "hi", maxturns: 2 } as KtxGenerateTextInput))).field).toBe("maxturns");
    const object = await rejection(runtime.generateObject({ prompt: "hi", schema, shema: schema } as KtxGenerateObjectInput<unknown>));
    expect(object.message).toMatch(/shema is not a known key/);
    expect((await rejection(runtime.generateObjectResult({ prompt: "hi", schema, tempreature: 0 } as KtxGenerateObjectInput<unknown>))).field).toBe("tempreature");
    const loop = await rejection(runtime.runAgentLoop({ ...ktxLoop, abortSignal: undefined, step_budget: 3 } as RunLoopParams));
    expect(loop.message).toMatch(/^Invalid runAgentLoop params: step_budget is not a known key \(did you mean stepBudget\?\), given 3;/);
  });

  it("a value of the wrong kind names the field, the value and what is allowed", async () => {
    const timeout = await rejection(runtime.generateText({ prompt: "hi", timeoutMs: "1000" } as unknown as KtxGenerateTextInput));
    expect(timeout.message).toBe('Invalid generateText input: timeoutMs is "1000"; allowed: a positive integer of milliseconds, or Infinity for none.');
    const role = await rejection(runtime.generateText({ prompt: "hi", role: "triag" } as unknown as KtxGenerateTextInput));
    expect(role.message).toMatch(/role is "triag"; allowed: one of default, triage, candidateExtraction, curator, reconcile, repair/);
    const turns = await rejection(runtime.generateText({ prompt: "hi", maxTurns: 0 }));
    expect(turns.message).toMatch(/maxTurns is 0; allowed: an integer > 0/);
    const noSchema = await rejection(runtime.generateObject({ prompt: "hi", schema: { type: "object" } } as unknown as KtxGenerateObjectInput<unknown>));
    expect(noSchema.message).toMatch(/schema is an object with type; allowed: a zod schema/);
    const tags = await rejection(runtime.runAgentLoop({ ...ktxLoop, abortSignal: undefined, telemetryTags: { unitKey: 7 } } as unknown as RunLoopParams));
    expect(tags.message).toMatch(/telemetryTags\.unitKey is 7; allowed: a string/);
    const empty = await rejection(runtime.generateText({ prompt: "  " }));
    expect(empty.message).toBe('prompt is "  "; allowed: a non-empty string (not only whitespace).');
    const budget = await rejection(runtime.runAgentLoop({ ...ktxLoop, abortSignal: undefined, stepBudget: 0 }));
    expect(budget.message).toMatch(/^stepBudget is 0; allowed: a positive integer/);
  });
});

describe("experimentalTelemetry's tracer", () => {
  it("the whole createInMemoryTracer() object given as the tracer is refused before the call, saying to pass its tracer", async () => {
    const recorder = createInMemoryTracer();
    const projectDir = mkdtempSync(join(tmpdir(), "ktx-call-inputs-"));
    const runtime = new ClaudeCodeRuntime({
      projectDir,
      models: { default: "sonnet" },
      cliPath: join(projectDir, "no-such-claude"),
      warm: false,
      reuse: false,
      experimentalTelemetry: { isEnabled: true, tracer: recorder as unknown as Tracer },
    });
    for (const call of [runtime.generateText({ prompt: "hi" }), runtime.runAgentLoop({ ...ktxLoop, abortSignal: undefined })]) {
      const error = await call.then(
        () => undefined,
        (failure: unknown) => failure as InvalidInputError,
      );
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error!.field).toBe("experimentalTelemetry.tracer");
      expect(error!.message).toMatch(/^experimentalTelemetry\.tracer is the object createInMemoryTracer\(\) returns \(\{ tracer, spans, unended, tree \}\); allowed: an OpenTelemetry Tracer \(with startSpan\)\. Pass its tracer property/);
    }
    expect(recorder.spans).toEqual([]);
    await runtime.close();
  });
});

describe("runtime option messages", () => {
  const base = { projectDir: "/tmp", models: { default: "sonnet" } };
  const message = (options: object) => {
    try {
      new ClaudeCodeRuntime({ ...base, ...options } as ConstructorParameters<typeof ClaudeCodeRuntime>[0]);
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidInputError);
      return (error as Error).message;
    }
    throw new Error("accepted");
  };

  it("name the field, the value and what is allowed, through unions and nested objects", () => {
    expect(message({ timeoutMs: "1000" })).toBe('Invalid ClaudeCodeRuntime options: timeoutMs is "1000"; allowed: a positive integer of milliseconds, or Infinity for none.');
    expect(message({ thinking: "of" })).toMatch(/^Invalid ClaudeCodeRuntime options: thinking is "of"; allowed: "adaptive", "off" or \{ budgetTokens: an integer >= 1024 \}/);
    expect(message({ thinking: { curator: { budgetTokens: 5 } } })).toMatch(/thinking\.curator\.budgetTokens is 5; allowed: an integer >= 1024/);
    expect(message({ warm: { size: "a" } })).toMatch(/warm\.size is "a"; allowed: an integer >= 0/);
    expect(message({ warm: true })).toMatch(/warm is true; allowed: false, or \{ size\?, idleMs\? \}/);
    expect(message({ reuse: { controlTimeoutMs: -1 } })).toMatch(/reuse\.controlTimeoutMs is -1; allowed: an integer > 0/);
    expect(message({ reuse: { maxidle: 1 } })).toMatch(/reuse\.maxidle is not a known key \(did you mean reuse\.maxIdle\?\), given 1; allowed keys: maxIdle, maxIdleMiB, idleMs, maxCalls, maxRssMiB, controlTimeoutMs/);
    expect(message({ onEvent: 3 })).toMatch(/onEvent is 3; allowed: a function/);
  });

  it("never echo a secret or the values of an environment", () => {
    const key = message({ apiEndpoint: { baseUrl: "http://127.0.0.1:1", apiKey: 12345 } });
    expect(key).toMatch(/apiEndpoint\.apiKey is \(a value, not shown\); allowed: a string/);
    expect(key).not.toMatch(/12345/);
    const typo = message({ apiEndpoint: { baseUrl: "http://127.0.0.1:1", apiKey: "k", oauth_token: "sk-ant-oat-secret" } });
    expect(typo).toMatch(/apiEndpoint\.oauth_token is not a known key \(did you mean apiEndpoint\.oauthToken\?\), given \(a value, not shown\)/);
    expect(typo).not.toMatch(/sk-ant-oat-secret/);
    const env = message({ env: { HOME: "/home/x", TOKEN: 42 } });
    expect(env).toMatch(/env is an object with HOME, TOKEN; allowed: an object of string/);
    expect(env).not.toMatch(/home\/x|42/);
  });
});
