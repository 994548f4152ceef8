/** The `ktx-claude-code` command: transcript inspection and the fixture drift report. */
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, realCli } from "../support.js";

const MAIN = join(import.meta.dirname, "../../dist/cli/main.js");
const FIXTURES = join(import.meta.dirname, "../../fixtures/transcripts");
const run = (...args: string[]) => execa(process.execPath, [MAIN, ...args], { reject: false, env: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" } });

afterEach(cleanup);

describe("ktx-claude-code transcript", () => {
  const loop = join(FIXTURES, "2.1.330", "tool-loop.jsonl");

  it("shows every record with timing and direction", async () => {
    const { exitCode, stdout } = await run("transcript", "show", loop);
    expect(exitCode).toBe(0);
    expect(stdout).toMatch(/ms {2}>> control_request\/initialize/);
    expect(stdout).toMatch(/ms {2}<< control_request\/mcp_message\/tools\/call/);
    expect(stdout).toMatch(/exit code=0/);
  });

  it("summarises a run, as text and as JSON", async () => {
    const text = await run("transcript", "summary", loop);
    expect(text.stdout).toMatch(/tool calls: mcp__ktx__lookup, mcp__ktx__count/);
    const json = JSON.parse((await run("transcript", "summary", loop, "--json")).stdout);
    expect(json.result).toMatchObject({ subtype: "success", isError: false });
    expect(json.cliVersion).toBe("2.1.330");
  });

  it("diffs two runs structurally", async () => {
    const { stdout } = await run("transcript", "diff", loop, join(FIXTURES, "2.1.142", "tool-loop.jsonl"));
    expect(stdout).toMatch(/control requests changed/);
    expect(stdout).toMatch(/system\/init: removed fields .*capabilities/);
  });

  it("explains its usage on a bad command", async () => {
    const { exitCode, stderr } = await run("transcript", "frobnicate");
    expect(exitCode).toBe(2);
    expect(stderr).toMatch(/Usage: ktx-claude-code/);
  });
});

describe("ktx-claude-code fixtures compare", () => {
  it("runs scenarios live on a CLI and reports drift against the recorded fixtures", async () => {
    const { exitCode, stdout } = await run("fixtures", "compare", "--cli", realCli(), "--against", "2.1.142", "--scenarios", "tool-loop,text", "--json");
    expect(exitCode).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.version).toBe("2.1.330");
    const loop = report.drifts.find((drift: { scenario: string }) => drift.scenario === "tool-loop");
    // 2.1.142 sent the MCP handshake twice; the pinned CLI sends it once.
    expect(loop.diff.controlRequests.before.filter((key: string) => key.endsWith("/initialize"))).toHaveLength(2);
    expect(loop.diff.controlRequests.after.filter((key: string) => key.endsWith("/initialize"))).toHaveLength(1);
    expect(loop.diff.outcome).toBeUndefined();
  });
});
