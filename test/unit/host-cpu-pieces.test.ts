/**
 * Pieces rewritten to allocate less on a reused loop's hot path (docs/performance.md, "Host CPU of a reused
 * loop"), held to what they replaced: the MCP reply line, the in-flight list, the per-call cost, the CLI args.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { NEWEST_VERIFIED_CLI_VERSION, factsFor } from "../../src/binary/versions.js";
import { buildCliArgs, cliArgsFor } from "../../src/claude-code/checks/isolation.js";
import { InFlight } from "../../src/mcp/in-flight.js";
import { inputJsonSchemaText, prepareToolSet } from "../../src/mcp/tools.js";
import type { ResultMessage } from "../../src/protocol/messages.js";
import { controlSuccess, mcpSuccessLine } from "../../src/protocol/outbound.js";
import { ProcessCost } from "../../src/session/support.js";

describe("mcpSuccessLine", () => {
  it("is JSON.stringify(controlSuccess(id, { mcp_response })), byte for byte", () => {
    const replies: unknown[] = [
      { result: { content: [{ type: "text", text: 'quote " and \\ and \n and ünïcode' }] }, jsonrpc: "2.0", id: 17 },
      { jsonrpc: "2.0", id: "a-string-id", error: { code: -32603, message: "Internal error" } },
      { result: { content: [], isError: true }, jsonrpc: "2.0", id: 0 },
      undefined,
    ];
    for (const reply of replies) {
      for (const id of ["1461eb4a-bf8c-4237-8917-559a5fe11601", 'odd "id"']) {
        expect(mcpSuccessLine(id, reply)).toBe(JSON.stringify(controlSuccess(id, { mcp_response: reply })));
      }
    }
  });
});

describe("InFlight", () => {
  it("adds, removes and finds like a set, and keeps no removed item", () => {
    const list = new InFlight<{ id: number }>();
    const items = Array.from({ length: 5 }, (_, id) => ({ id }));
    for (const item of items) list.add(item);
    expect(list.size).toBe(5);
    expect(list.delete(items[1]!)).toBe(true);
    expect(list.delete(items[1]!)).toBe(false);
    expect(list.delete(items[4]!)).toBe(true);
    expect(list.size).toBe(3);
    expect(list.snapshot().map((item) => item.id).sort()).toEqual([0, 2, 3]);
    expect(list.find((item) => item.id === 3)).toBe(items[3]);
    expect(list.find((item) => item.id === 4)).toBeUndefined();
    for (const item of list.snapshot()) list.delete(item);
    expect(list.size).toBe(0);
    expect(list.snapshot()).toEqual([]);
    list.add(items[2]!);
    expect(list.snapshot()).toEqual([items[2]]);
  });

  it("gives a snapshot that stays whole while the items are removed during it", () => {
    const list = new InFlight<number>();
    for (let i = 0; i < 4; i += 1) list.add(i);
    const seen: number[] = [];
    for (const item of list.snapshot()) {
      seen.push(item);
      list.delete(item);
      list.delete(3 - item);
    }
    expect(seen).toEqual([0, 1, 2, 3]);
    expect(list.size).toBe(0);
  });
});

describe("ProcessCost", () => {
  const result = (cost: number, usage: Record<string, unknown>) =>
    ({ type: "result", subtype: "success", total_cost_usd: cost, modelUsage: { "claude-x": usage } }) as unknown as ResultMessage;

  it("makes a kept process's running totals each call's own, limits left as they are", () => {
    const cost = new ProcessCost();
    const first = cost.perCall(result(0.5, { inputTokens: 100, outputTokens: 10, contextWindow: 200_000, maxOutputTokens: 32_000, note: "x" }));
    expect(first.total_cost_usd).toBe(0.5);
    expect((first as { modelUsage?: unknown }).modelUsage).toEqual({ "claude-x": { inputTokens: 100, outputTokens: 10, contextWindow: 200_000, maxOutputTokens: 32_000, note: "x" } });
    const second = cost.perCall(result(0.75, { inputTokens: 160, outputTokens: 25, contextWindow: 200_000, maxOutputTokens: 32_000 }));
    expect(second.total_cost_usd).toBe(0.25);
    expect((second as { modelUsage?: unknown }).modelUsage).toEqual({ "claude-x": { inputTokens: 60, outputTokens: 15, contextWindow: 200_000, maxOutputTokens: 32_000 } });
  });

  it("never reports a negative share, and leaves the result it was given unchanged", () => {
    const cost = new ProcessCost();
    cost.perCall(result(1, { inputTokens: 100 }));
    const given = result(0.5, { inputTokens: 40 });
    const copy = structuredClone(given);
    const own = cost.perCall(given);
    expect(own.total_cost_usd).toBe(0);
    expect((own as { modelUsage?: Record<string, Record<string, number>> }).modelUsage!["claude-x"]!.inputTokens).toBe(0);
    expect(given).toEqual(copy);
  });
});

describe("cliArgsFor and shared tool schemas", () => {
  const facts = factsFor(NEWEST_VERIFIED_CLI_VERSION);

  it("gives the args buildCliArgs builds, one frozen array per spec", () => {
    const spec = { facts, model: "claude-x", maxTurns: 6, toolIds: ["mcp__ktx__a", "mcp__ktx__b"], structuredOutput: false };
    const args = cliArgsFor(spec);
    expect(args).toEqual(buildCliArgs(spec));
    expect(Object.isFrozen(args)).toBe(true);
    expect(cliArgsFor({ ...spec, toolIds: [...spec.toolIds] })).toBe(args);
    expect(cliArgsFor({ ...spec, maxTurns: 7 })).toEqual(buildCliArgs({ ...spec, maxTurns: 7 }));
    expect(cliArgsFor({ ...spec, includePartialMessages: true })).toEqual(buildCliArgs({ ...spec, includePartialMessages: true }));
  });

  it("shares one frozen JSON schema per zod schema, with its text", () => {
    const schema = z.object({ id: z.number(), tags: z.array(z.string()).optional() });
    const [a] = prepareToolSet({ t: { description: "d", inputSchema: schema, execute: () => "" } });
    const [b] = prepareToolSet({ t: { description: "other", inputSchema: schema, execute: () => "" } });
    expect(b!.inputJsonSchema).toBe(a!.inputJsonSchema);
    expect(Object.isFrozen(a!.inputJsonSchema)).toBe(true);
    expect(Object.isFrozen(a!.inputJsonSchema.properties)).toBe(true);
    expect(a!.inputJsonSchema).not.toHaveProperty("$schema");
    expect(() => {
      (a!.inputJsonSchema as Record<string, unknown>).type = "string";
    }).toThrow(TypeError);
    expect(inputJsonSchemaText(a!.inputJsonSchema)).toBe(JSON.stringify(a!.inputJsonSchema));
    expect(inputJsonSchemaText({ type: "object" })).toBe('{"type":"object"}');
  });
});
