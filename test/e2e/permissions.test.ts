/**
 * Permissions on the real CLI with the scripted API: mode "ask" sends each use of the caller's tools to
 * `canUseTool`, a person's slow answer pauses the idle clock, a denial is a tool error the model sees, an
 * allow with changed input reaches the tool, an interrupt or abort while the callback waits ends the turn
 * cleanly, and `setPermissionMode` switches between turns.
 *
 * The first test runs at a base URL: it switches the session to "plan", which is refused behind the
 * interceptor (its own test below). The others run on the first-party path behind the interceptor.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AbortError, ClaudeCodeHost, InvalidInputError, IsolationError, type PermissionRequest } from "../../src/index.js";
import { RateLimitGovernor } from "../../src/limits/governor.js";
import { type RecordedRequest, type ScriptedTurn, turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, baseUrlApi, cleanup, cliOption, firstPartyApi, firstPartyEnv, firstPartyRuntimeFor, remainingChildren, tempDir, testEnv, toolResultsIn } from "../support.js";

afterEach(async () => {
  await cleanup();
});

/** The last `case=` of the request's user messages, and how many model responses followed it. */
function caseOf(request: RecordedRequest): { name: string; step: number } {
  const messages: Array<{ role: string; content?: unknown }> = request.body?.messages ?? [];
  let at = -1;
  let name = "unknown";
  messages.forEach((message, index) => {
    const text = typeof message.content === "string" ? message.content : JSON.stringify(message.content ?? "");
    const found = message.role === "user" ? [...text.matchAll(/case=(\w+)/g)].at(-1) : undefined;
    if (found) [at, name] = [index, found[1]!];
  });
  return { name, step: messages.slice(at + 1).filter((message) => message.role === "assistant").length };
}

/** Each case: one call of the lookup tool, then the text after its result. */
function script(request: RecordedRequest): ScriptedTurn {
  const { name, step } = caseOf(request);
  if (name === "plain") return turn.text("plain");
  if (name === "slow") return { text: "a long answer still streaming", chunkDelayMs: 400 };
  return step === 0 ? { toolCalls: [{ name: "mcp__ktx__lookup", input: { term: "grain" }, id: `toolu_${name}` }] } : turn.text(`after ${name}`);
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function hostOn(api: { baseUrl: string }, extra: { idleTimeoutMs?: number } = {}): ClaudeCodeHost {
  return new ClaudeCodeHost({
    projectDir: tempDir("project"),
    env: testEnv(),
    passEnv: TEST_PASS_ENV,
    apiEndpoint: { baseUrl: api.baseUrl, apiKey: "sk-test-scripted" },
    ...cliOption(),
    warm: false,
    rateLimitGovernor: new RateLimitGovernor(),
    ...extra,
  });
}

describe("permissions", () => {
  it('mode "ask": a slow denial is a tool error the model sees, an allow changes the input, an interrupt cancels the question, modes switch between turns', { timeout: 240_000 }, async () => {
    const api = await baseUrlApi(script);
    // An idle clock of 1 s: a 2 s answer passes only because the clock stands still while the question waits.
    const host = hostOn(api, { idleTimeoutMs: 1_000 });
    const received: unknown[] = [];
    const tools = { lookup: { description: "Look a term up.", inputSchema: z.object({ term: z.string() }), execute: async ({ term }: { term: string }) => (received.push(term), `${term}: one row's level of detail`) } };
    const asked: Array<{ request: PermissionRequest; aborted?: unknown }> = [];
    let answer: (request: PermissionRequest, signal: AbortSignal) => Promise<unknown> = async () => ({ behavior: "deny", message: "unset" });
    const session = host.createSession({
      model: "sonnet",
      system: "You look things up.",
      tools,
      permissions: { mode: "ask", canUseTool: (request, { signal }) => (asked.push({ request }), answer(request, signal)) as never },
    });

    // Deny after 2 s: the model's next request carries the denial as the tool's error result; the turn ends normally.
    answer = async () => (await wait(2_000), { behavior: "deny", message: "A person said no to this lookup." });
    const started = performance.now();
    const denied = await session.send("case=deny look up grain").result;
    expect(performance.now() - started).toBeGreaterThan(2_000);
    expect(denied).toMatchObject({ text: "after deny", stopReason: "natural" });
    expect(asked.map(({ request }) => request)).toEqual([{ toolName: "mcp__ktx__lookup", input: { term: "grain" }, toolUseId: "toolu_deny", displayName: "Lookup", mode: "ask" }]);
    expect(toolResultsIn(api.messageRequests.at(-1)!.body).at(-1)).toEqual({ tool_use_id: "toolu_deny", is_error: true, text: "A person said no to this lookup." });
    expect(denied.toolCalls.map((call) => [call.name, call.ok])).toEqual([["mcp__ktx__lookup", false]]);
    expect(received).toEqual([]);

    // Allow with changed input: the tool's handler gets the changed input, the model its output.
    answer = async () => ({ behavior: "allow", updatedInput: { term: "grain of a fact table" } });
    const allowed = await session.send("case=allow look up grain").result;
    expect(allowed.text).toBe("after allow");
    expect(received).toEqual(["grain of a fact table"]);
    expect(toolResultsIn(api.messageRequests.at(-1)!.body).at(-1)).toMatchObject({ tool_use_id: "toolu_allow", text: "grain of a fact table: one row's level of detail" });

    // interrupt() while the question waits: the callback's signal aborts, the turn ends with AbortError, the session goes on.
    let aborted: unknown;
    answer = (_request, signal) =>
      new Promise((_resolve, reject) => {
        signal.addEventListener("abort", () => ((aborted = signal.reason), reject(signal.reason)), { once: true });
      });
    const waiting = session.send("case=interrupt look up grain");
    while (asked.length < 3) await wait(10);
    await wait(1_500);
    session.interrupt();
    await expect(waiting.result).rejects.toBeInstanceOf(AbortError);
    expect(aborted).toBeDefined();
    expect(received).toEqual(["grain of a fact table"]);
    const [pid] = host.reusePids;

    // Plan: the CLI asks with its reason; deny: the caller's tools run unasked, on the same process.
    session.setPermissionMode("plan");
    answer = async () => ({ behavior: "deny", message: "Not while planning." });
    expect((await session.send("case=plan look up grain").result).text).toBe("after plan");
    expect(asked.at(-1)!.request).toMatchObject({ mode: "plan", decisionReason: "mode" });
    const askedBefore = asked.length;
    session.setPermissionMode("deny");
    expect((await session.send("case=denymode look up grain").result).text).toBe("after denymode");
    expect(asked).toHaveLength(askedBefore);
    expect(received).toEqual(["grain of a fact table", "grain"]);
    expect(host.reusePids).toEqual([pid]);
    expect(() => session.setPermissionMode("bogus" as never)).toThrow(InvalidInputError);

    await session.close();
    await host.close();
    expect(await remainingChildren()).toEqual([]);
  });

  it('the KTX runtime: "ask" asks per tool use, an abort while the question waits rejects with AbortError and leaves no process', { timeout: 180_000 }, async () => {
    const api = await firstPartyApi(script);
    const received: string[] = [];
    const tools = { lookup: { description: "Look a term up.", inputSchema: z.object({ term: z.string() }), execute: async ({ term }: { term: string }) => (received.push(term), `${term}: found`) } };
    let signalSeen: AbortSignal | undefined;
    const runtime = firstPartyRuntimeFor(api, {
      permissions: {
        mode: "ask",
        canUseTool: (request, { signal }) => {
          signalSeen = signal;
          if (request.toolUseId === "toolu_ktxallow") return { behavior: "allow" };
          return new Promise(() => {});
        },
      },
    });
    const ok = await runtime.generateTextResult({ prompt: "case=ktxallow look up grain", system: "You look things up.", tools });
    expect(ok.text).toBe("after ktxallow");
    expect(received).toEqual(["grain"]);

    const controller = new AbortController();
    const pending = runtime.generateTextResult({ prompt: "case=ktxabort look up grain", system: "You look things up.", tools, signal: controller.signal });
    const before = signalSeen;
    while (signalSeen === before) await wait(10);
    controller.abort(new Error("the user went away"));
    await expect(pending).rejects.toBeInstanceOf(AbortError);
    expect(signalSeen!.aborted).toBe(true);
    expect(received).toEqual(["grain"]);
    await runtime.close();
    expect(await remainingChildren()).toEqual([]);
  });

  it('default "deny" is unchanged: the caller\'s tools run unasked on a dontAsk launch that pre-approves them', { timeout: 120_000 }, async () => {
    const api = await firstPartyApi(script);
    const host = new ClaudeCodeHost({ projectDir: tempDir("project"), env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
    expect(host.interceptor).toBe("on");
    const received: string[] = [];
    const tools = { lookup: { description: "Look a term up.", inputSchema: z.object({ term: z.string() }), execute: async ({ term }: { term: string }) => (received.push(term), `${term}: found`) } };
    const session = host.createSession({ model: "sonnet", system: "You look things up.", tools });
    expect(session.mode).toBe("deny");
    expect((await session.send("case=default look up grain").result).text).toBe("after default");
    expect(received).toEqual(["grain"]);
    expect(toolResultsIn(api.messageRequests.at(-1)!.body).at(-1)).toMatchObject({ tool_use_id: "toolu_default", text: "grain: found" });
    // A session that pre-approves its tools cannot be switched to a mode that asks.
    expect(() => session.setPermissionMode("acceptEdits")).toThrow(/pre-approves the tools/);
    // acceptAll is the same launch: the switch is the library's, the tool still runs unasked.
    session.setPermissionMode("acceptAll");
    expect((await session.send("case=acceptall look up grain").result).text).toBe("after acceptall");
    expect(received).toEqual(["grain", "grain"]);
    await session.close();
    await host.close();
    expect(await remainingChildren()).toEqual([]);
  });
});

describe("permissions behind the interceptor (first-party path, wire check on)", () => {
  it('mode "plan" is refused before any process starts: it adds request parts no recorded shape has', { timeout: 60_000 }, async () => {
    const api = await firstPartyApi(script);
    const runtime = firstPartyRuntimeFor(api, { permissions: { mode: "plan", canUseTool: () => ({ behavior: "allow" }) } });
    const failure = await runtime.generateTextResult({ prompt: "case=wireplan look up grain", system: "You look things up." }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(IsolationError);
    expect((failure as Error).message).toMatch(/permission mode "plan"/);
    expect(api.messageRequests).toEqual([]);
    expect(runtime.reusePids).toEqual([]);
    await runtime.close();
    expect(await remainingChildren()).toEqual([]);
  });

  it.each(["ask", "acceptEdits"] as const)('mode "%s": the KTX call passes the wire check, its tool use asked about (allowed under ask, denied under acceptEdits)', { timeout: 120_000 }, async (mode) => {
    const api = await firstPartyApi(script);
    const received: string[] = [];
    const tools = { lookup: { description: "Look a term up.", inputSchema: z.object({ term: z.string() }), execute: async ({ term }: { term: string }) => (received.push(term), `${term}: found`) } };
    const asked: PermissionRequest[] = [];
    const runtime = firstPartyRuntimeFor(api, { permissions: { mode, canUseTool: (request) => (asked.push(request), mode === "ask" ? { behavior: "allow" } : { behavior: "deny", message: "Not this one." }) } });
    const result = await runtime.generateTextResult({ prompt: `case=wire${mode} look up grain`, system: "You look things up.", tools });
    expect(result).toMatchObject({ text: `after wire${mode}`, network: { interceptor: "on" } });
    expect(asked.map((request) => [request.toolName, request.mode])).toEqual([["mcp__ktx__lookup", mode]]);
    // A denial is checked as the tool's result: the interceptor knew its text before the CLI sent it.
    expect(received).toEqual(mode === "ask" ? ["grain"] : []);
    expect(result.toolCalls.map((call) => call.ok)).toEqual([mode === "ask"]);
    await runtime.close();
    expect(await remainingChildren()).toEqual([]);
  });
});

describe("a session behind the interceptor", () => {
  it('mode "ask": each turn\'s tool use is asked about and the continuing turns pass the wire check; switching to "plan" fails only that turn', { timeout: 180_000 }, async () => {
    const api = await firstPartyApi(script);
    const host = new ClaudeCodeHost({ projectDir: tempDir("project"), env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
    expect(host.interceptor).toBe("on");
    const received: string[] = [];
    const tools = { lookup: { description: "Look a term up.", inputSchema: z.object({ term: z.string() }), execute: async ({ term }: { term: string }) => (received.push(term), `${term}: found`) } };
    const asked: string[] = [];
    const session = host.createSession({
      model: "sonnet",
      system: "You look things up.",
      tools,
      permissions: { mode: "ask", canUseTool: (request) => (asked.push(request.toolUseId), request.toolUseId === "toolu_wdeny" ? { behavior: "deny", message: "No." } : { behavior: "allow" }) },
    });
    expect((await session.send("case=wallow look up grain").result).text).toBe("after wallow");
    expect((await session.send("case=wdeny look up grain").result).text).toBe("after wdeny");
    expect(asked).toEqual(["toolu_wallow", "toolu_wdeny"]);
    expect(received).toEqual(["grain"]);
    session.setPermissionMode("plan");
    await expect(session.send("case=wplan look up grain").result).rejects.toBeInstanceOf(IsolationError);
    session.setPermissionMode("acceptEdits");
    expect((await session.send("case=wedits look up grain").result).text).toBe("after wedits");
    expect(asked).toEqual(["toolu_wallow", "toolu_wdeny", "toolu_wedits"]);
    await session.close();
    await host.close();
    expect(await remainingChildren()).toEqual([]);
  });
});
