/** The pool's shape key: what must be equal for two calls to share a CLI process. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { shapeKey as sessionKey } from "../../src/claude-code/process-pool.js";
import { prepareToolSet } from "../../src/mcp/tools.js";

const launch = (model: string, maxTurns = 4) => ({ path: "/bin/claude", args: ["-p", `--max-turns=${maxTurns}`, `--model=${model}`], cwd: "/p", env: { B: "2", A: "1" } });
const tools = (description: string, handler = async () => "ok") =>
  prepareToolSet({ lookup: { description, inputSchema: z.object({ id: z.number() }), execute: handler } });

describe("sessionKey", () => {
  const base = { system: "s", tools: tools("Looks up.") };

  it("ignores the model when set_model works, and the tool handlers always", () => {
    expect(sessionKey(launch("sonnet"), true, base)).toBe(sessionKey(launch("haiku"), true, { ...base, tools: tools("Looks up.", async () => "other closure") }));
    expect(sessionKey(launch("sonnet"), false, base)).not.toBe(sessionKey(launch("haiku"), false, base));
  });

  it("separates everything fixed in a process", () => {
    const key = sessionKey(launch("sonnet"), true, base);
    expect(sessionKey(launch("sonnet", 5), true, base)).not.toBe(key);
    expect(sessionKey(launch("sonnet"), true, { ...base, system: "t" })).not.toBe(key);
    expect(sessionKey(launch("sonnet"), true, { ...base, jsonSchema: { type: "object" } })).not.toBe(key);
    expect(sessionKey(launch("sonnet"), true, { ...base, tools: tools("Looks things up.") })).not.toBe(key);
    expect(sessionKey(launch("sonnet"), true, { ...base, tools: prepareToolSet({ lookup: { description: "Looks up.", inputSchema: z.object({ id: z.string() }), execute: async () => "" } }) })).not.toBe(key);
    expect(sessionKey({ ...launch("sonnet"), env: { A: "1", B: "3" } }, true, base)).not.toBe(key);
    expect(sessionKey({ ...launch("sonnet"), cwd: "/q" }, true, base)).not.toBe(key);
    expect(sessionKey(launch("sonnet"), true, { ...base, toolTimeoutMs: 5 })).not.toBe(key);
  });
});
