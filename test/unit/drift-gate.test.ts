/**
 * The pieces of a clean drift gate: a project dir as long as a recording's whatever TMPDIR is, the
 * HOME masked wherever it is, and what the runtime reads taken from the wire schemas.
 */
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { runtimeReadsField, runtimeReadsType } from "../../src/cli/drift-reads.js";
import { systemInitSchema, resultMessageSchema } from "../../src/protocol/messages.js";
import { makeDirOfLength } from "../../src/testing/scenarios.js";
import { RunNoise } from "../../src/transcripts/inspect/run-noise.js";
import { cleanup, tempDir } from "../support.js";

const savedTmpdir = process.env.TMPDIR;
afterEach(() => {
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
  cleanup();
});

it("makes a dir exactly as long as asked, under a long TMPDIR too (then under /tmp), or says it cannot", () => {
  const made: string[] = [];
  for (const length of [30, 49, 80]) {
    const dir = makeDirOfLength("ktx-scenario-object-schema-violation-", length)!;
    made.push(dir);
    expect(dir).toHaveLength(length);
  }
  const long = join(tempDir("gate"), "a-much-longer-temporary-directory-name-for-the-gate");
  mkdirSync(long);
  process.env.TMPDIR = long;
  expect(tmpdir()).toBe(long);
  const short = makeDirOfLength("ktx-scenario-text-", 30)!;
  expect(short).toHaveLength(30);
  expect(short.startsWith("/tmp/ktx-scenario-text-")).toBe(true);
  const roomy = makeDirOfLength("ktx-scenario-text-", long.length + 20)!;
  expect(roomy.startsWith(`${long}/`)).toBe(true);
  expect(roomy).toHaveLength(long.length + 20);
  // Not even "/tmp/" and a random tail fit.
  expect(makeDirOfLength("ktx-scenario-text-", 8)).toBeUndefined();
  made.push(short, roomy);
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

it("masks the HOME before any /.claude path, wherever HOME is, and keeps a project's own .claude", () => {
  const noise = new RunNoise("/tmp/ktx-scenario-text-16CaxH", "2.1.330");
  const line = (home: string) =>
    JSON.stringify({ type: "system", subtype: "init", memory_paths: { auto: `${home}/.claude/projects/-tmp-ktx-scenario-text-16CaxH/memory/` }, styles: `${home}/.claude/output-styles`, project: "/tmp/ktx-scenario-text-16CaxH/.claude/settings.json" });
  const [a, b] = [noise.comparable(line("/tmp/ktx-scenario-home-vCYEY5")), noise.comparable(line("/home/someone/else/entirely"))];
  expect(a).toEqual(b);
  expect(a).toMatchObject({ memory_paths: { auto: "<home>/.claude/projects/<cwd-slug>/memory/" }, styles: "<home>/.claude/output-styles", project: "<cwd>/.claude/settings.json" });
  // A name that only starts like it is not the CLI's dir.
  expect(noise.comparable(JSON.stringify({ path: "/opt/x/.claude-code/bin" }))).toEqual({ path: "/opt/x/.claude-code/bin" });
});

it("what the runtime reads comes from the wire schemas", () => {
  for (const field of Object.keys(systemInitSchema.shape)) expect(runtimeReadsField("system/init", field), field).toBe(true);
  for (const field of Object.keys(resultMessageSchema.shape)) expect(runtimeReadsField("result/success", field), field).toBe(true);
  expect(runtimeReadsField("system/init", "sandbox_enabled")).toBe(false);
  expect(runtimeReadsField("system/init", "capabilities")).toBe(false);
  expect(runtimeReadsField("assistant", "message.usage.input_tokens")).toBe(true);
  expect(runtimeReadsField("assistant", "message.container")).toBe(false);
  expect(runtimeReadsField("result/error_max_turns", "modelUsage.claude-sonnet-4-6.costUSD")).toBe(true);
  expect(runtimeReadsField("control_response/success to initialize", "response.response.account")).toBe(true);
  expect(runtimeReadsField("control_response/success to initialize", "response.response.capabilities")).toBe(false);
  expect(runtimeReadsField("control_request/can_use_tool", "request.tool_name")).toBe(true);
  expect(runtimeReadsField("control_request/mcp_message/tools/call", "request.message.params.arguments")).toBe(true);
  expect(runtimeReadsType("result/error_max_turns")).toBe(true);
  expect(runtimeReadsType("system/session_state_changed")).toBe(false);
});
