/** The pool's shape key: what must be equal for two calls to share a CLI process. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LaunchKeys, ProcessPool, launchKey, shapeKey as sessionKey } from "../../src/claude-code/pool/process-pool.js";
import { silentLogger } from "../../src/session/logger.js";
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

describe("LaunchKeys (the launch key of a recent launch, found by comparing its parts)", () => {
  const spec = () => ({ path: "/bin/claude", args: ["-p", "--max-turns=4", "--model=sonnet"], cwd: "/p", env: { B: "2", A: "1" } });

  it("gives a repeated launch the key it would compute, and a changed one its new key", () => {
    const keys = new LaunchKeys();
    const first = keys.get(spec(), true);
    expect(first).toBe(launchKey(spec(), true));
    expect(keys.get(spec(), true)).toBe(first);
    const changes: Array<(s: ReturnType<typeof spec>) => unknown> = [
      (s) => (s.env.B = "3"),
      (s) => (s.env = { A: "1" } as typeof s.env),
      (s) => ((s.env as Record<string, string>).C = "4"),
      (s) => (s.env = { A: "1", C: "2" } as unknown as typeof s.env),
      (s) => (s.args = ["-p", "--max-turns=5", "--model=sonnet"]),
      (s) => s.args.push("--verbose"),
      (s) => (s.cwd = "/q"),
      (s) => (s.path = "/usr/bin/claude"),
    ];
    for (const change of changes) {
      const changed = spec();
      change(changed);
      expect(keys.get(changed, true)).toBe(launchKey(changed, true));
      expect(keys.get(changed, true)).not.toBe(first);
    }
    // The model is out of the key when it can be switched, in it otherwise.
    expect(keys.get({ ...spec(), args: ["-p", "--max-turns=4", "--model=haiku"] }, true)).toBe(first);
    expect(keys.get({ ...spec(), args: ["-p", "--max-turns=4", "--model=haiku"] }, false)).toBe(launchKey({ ...spec(), args: ["-p", "--max-turns=4", "--model=haiku"] }, false));
  });

  it("does not follow objects changed after they were seen", () => {
    const keys = new LaunchKeys();
    const launch = spec();
    const before = keys.get(launch, false);
    launch.env.A = "changed";
    launch.args[0] = "--changed";
    expect(keys.get(launch, false)).toBe(launchKey(launch, false));
    expect(keys.get(launch, false)).not.toBe(before);
    expect(keys.get(spec(), false)).toBe(before);
  });

  it("stays right past its size (the oldest launch is forgotten and computed again)", () => {
    const keys = new LaunchKeys(2);
    const launches = ["/a", "/b", "/c"].map((cwd) => ({ ...spec(), cwd }));
    for (const launch of launches) keys.get(launch, false);
    for (const launch of launches) expect(keys.get(launch, false)).toBe(launchKey(launch, false));
  });

  it("gives ProcessPool.keysFor the keys launchKey and shapeKey compute", () => {
    const pool = new ProcessPool({}, false, silentLogger);
    const shape = { system: "s", tools: tools("Looks up.") };
    for (let call = 0; call < 3; call += 1) {
      expect(pool.keysFor(spec(), true, shape)).toEqual({ launch: launchKey(spec(), true), shape: sessionKey(spec(), true, shape) });
    }
    expect(pool.keysFor(spec(), true, { ...shape, system: "t" }).shape).toBe(sessionKey(spec(), true, { ...shape, system: "t" }));
  });
});
