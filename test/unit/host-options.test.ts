/**
 * The split of the runtime's options between the host every caller shares and one caller on it
 * (src/claude-code/host-options.ts): each option on one side (`logger` on both), refused on the other
 * with a message that says where it goes, and a runtime without a host parsing exactly as before.
 */
import { describe, expect, it } from "vitest";
import { CALLER_OPTIONS, ClaudeCodeHost, ClaudeCodeRuntime, InvalidInputError } from "../../src/index.js";
import { runtimeOptionsSchema } from "../../src/claude-code/options.js";
import { callerOptionsSchema, hostOptionsSchema } from "../../src/claude-code/host-options.js";
import { tempDir } from "../support.js";

const logger = { debug() {}, info() {}, warn() {}, error() {} };

describe("host and caller options", () => {
  it("splits every runtime option: the caller's own, the host's the rest, `logger` on both", () => {
    const all = Object.keys(runtimeOptionsSchema.shape).sort();
    const host = Object.keys(hostOptionsSchema.shape);
    const caller = Object.keys(callerOptionsSchema.shape);
    expect([...new Set([...host, ...caller])].sort()).toEqual(all);
    expect(host.filter((name) => caller.includes(name))).toEqual(["logger"]);
    expect(caller.filter((name) => name !== "logger").sort()).toEqual([...CALLER_OPTIONS].sort());
  });

  it("refuses a caller's option on the host, and a host's option on a caller given a host, saying where each goes", () => {
    const projectDir = tempDir("project");
    const onHost = (() => new ClaudeCodeHost({ projectDir, models: { default: "sonnet" }, onEvent: () => {} } as never)) as () => unknown;
    expect(onHost).toThrow(InvalidInputError);
    expect(onHost).toThrow(/`models`, `onEvent` are callers' options, not the host's; give them to the caller on the host \(new ClaudeCodeRuntime\(\{ host, models, onEvent \}\)\)/);
    const host = new ClaudeCodeHost({ projectDir });
    const error = (() => {
      try {
        new ClaudeCodeRuntime({ host, models: { default: "sonnet" }, maxConcurrentRuns: 2 } as never);
      } catch (caught) {
        return caught as InvalidInputError;
      }
    })();
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error?.field).toBe("maxConcurrentRuns");
    expect(error?.message).toMatch(/`maxConcurrentRuns` is the host's.*set it in new ClaudeCodeHost/);
    // A caller's own options are checked as the runtime checks them.
    expect(() => new ClaudeCodeRuntime({ host, models: { default: "sonnet" }, thinking: "sometimes" } as never)).toThrow(/thinking is "sometimes"/);
    expect(() => new ClaudeCodeRuntime({ host, models: { default: "sonnet" }, modelz: {} } as never)).toThrow(/modelz is not a known key/);
    expect(() => new ClaudeCodeRuntime({ host: { projectDir }, models: { default: "sonnet" } } as never)).toThrow(/host must be a ClaudeCodeHost/);
    // The host's own options are as strict as the runtime's.
    expect(() => new ClaudeCodeHost({ projectDir, reuse: { maxidle: 1 } } as never)).toThrow(/reuse\.maxidle is not a known key \(did you mean reuse\.maxIdle\?\)/);
  });

  it("a runtime on a host sees the host's options with its own; its logger defaults to the host's", () => {
    const projectDir = tempDir("project");
    const host = new ClaudeCodeHost({ projectDir: `${projectDir}/.`, maxConcurrentRuns: 3, logger });
    const runtime = new ClaudeCodeRuntime({ host, models: { default: "opus", curator: "haiku" }, thinking: "off" });
    expect(runtime.host).toBe(host);
    expect(runtime.options).toMatchObject({ projectDir, maxConcurrentRuns: 3, thinking: "off", logger });
    expect(runtime.resolveModel("curator")).toMatch(/^claude-haiku/);
    const quiet = { ...logger };
    expect(new ClaudeCodeRuntime({ host, models: { default: "sonnet" }, logger: quiet }).options.logger).toBe(quiet);
  });

  it("a runtime without a host builds its own from its options, with nothing of the caller's in it", () => {
    const projectDir = tempDir("project");
    const options = { projectDir: `${projectDir}/.`, models: { default: "sonnet" }, thinking: "off" as const, includePartialMessages: true, maxConcurrentRuns: 2, reuse: false as const };
    const runtime = new ClaudeCodeRuntime(options);
    expect(runtime.options).toEqual({ ...options, projectDir });
    expect(runtime.host).toBeInstanceOf(ClaudeCodeHost);
    expect(runtime.host.options).toEqual({ projectDir, maxConcurrentRuns: 2, reuse: false });
    expect(runtime.reuseStats).toBeUndefined();
  });
});
