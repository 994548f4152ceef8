/**
 * Faults of the CLI process and the stream, injected with a scripted stand-in CLI
 * (test/fixtures/stand-in-cli.mjs). Each ends in a typed error, and no child process remains.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  AbortError,
  ClaudeCodeRuntime,
  type ClaudeCodeRuntimeOptions,
  CliCrashError,
  CliNotFoundError,
  ProtocolError,
  TimeoutError,
} from "../../src/index.js";
import { cleanup, remainingChildren, tempDir, testEnv } from "../support.js";

const STAND_IN = join(import.meta.dirname, "../fixtures/stand-in-cli.mjs");

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

function standIn(mode: string, options: Partial<ClaudeCodeRuntimeOptions> = {}, extraEnv: Record<string, string> = {}) {
  const messages: string[] = [];
  const runtime = new ClaudeCodeRuntime({
    projectDir: tempDir("project"),
    models: { default: "sonnet" },
    cliPath: STAND_IN,
    env: testEnv({ STAND_IN_MODE: mode, ...extraEnv }),
    warm: false,
    logger: { debug() {}, info: (m) => messages.push(m), warn: (m) => messages.push(m), error: (m) => messages.push(m) },
    ...options,
  });
  return { runtime, messages };
}

const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as Error);

describe("a missing or wrong CLI", () => {
  it("reports a missing binary", async () => {
    const error = await failure(standIn("ok", { cliPath: "/nonexistent/claude" }).runtime.generateText({ prompt: "hi" }));
    expect(error).toBeInstanceOf(CliNotFoundError);
    expect(error!.message).toMatch(/\/nonexistent\/claude: file not found.*npm ci/s);
  });

  it("reports a binary that is not executable", async () => {
    const path = join(tempDir("bin"), "claude");
    writeFileSync(path, "#!/bin/sh\necho hi\n");
    chmodSync(path, 0o644);
    const error = await failure(standIn("ok", { cliPath: path }).runtime.generateText({ prompt: "hi" }));
    expect(error).toBeInstanceOf(CliNotFoundError);
    expect(error!.message).toMatch(/not executable/);
  });

  it("reports a different program", async () => {
    const error = await failure(standIn("ok", { cliPath: "/bin/echo" }).runtime.generateText({ prompt: "hi" }));
    expect(error).toBeInstanceOf(CliNotFoundError);
    expect(error!.message).toMatch(/it is not Claude Code/);
  });
});

describe("a CLI that dies or misbehaves", () => {
  it("exits non-zero before init: CliCrashError with the exit code and stderr tail", async () => {
    const error = (await failure(standIn("exit-before-init").runtime.generateText({ prompt: "hi" }))) as CliCrashError;
    expect(error).toBeInstanceOf(CliCrashError);
    expect(error.exitCode).toBe(3);
    expect(error.message).toMatch(/exited with code 3 before answering initialize/);
    expect(error.stderrTail).toContain("fatal: something broke during start-up");
  });

  it("is killed by a signal mid-stream", async () => {
    const error = (await failure(standIn("kill-self").runtime.generateText({ prompt: "hi" }))) as CliCrashError;
    expect(error).toBeInstanceOf(CliCrashError);
    expect(error.signal).toBe("SIGKILL");
    expect(error.message).toMatch(/killed by SIGKILL before its result/);
  });

  it("exits 0 without a result", async () => {
    const error = await failure(standIn("exit-0-no-result").runtime.generateText({ prompt: "hi" }));
    expect(error).toBeInstanceOf(CliCrashError);
    expect(error!.message).toMatch(/exited with code 0 before its result/);
  });

  it("closes its stdout early but keeps running", async () => {
    const error = await failure(standIn("close-stdout").runtime.generateText({ prompt: "hi" }));
    expect(error).toBeInstanceOf(CliCrashError);
    expect(error!.message).toMatch(/closed its stdout before its result/);
  });

  it("ends on a truncated last line, naming the line it could not read", async () => {
    const error = await failure(standIn("truncated-last-line").runtime.generateText({ prompt: "hi" }));
    expect(error).toBeInstanceOf(CliCrashError);
    expect(error!.message).toMatch(/not JSON, first: .*"type\\":\\"result/);
  });

  it("tolerates a non-JSON noise line and passes an unknown message type through, logging both", async () => {
    const { runtime, messages } = standIn("malformed-then-ok");
    expect((await runtime.generateText({ prompt: "hi" })).text).toBe("hi");
    expect(messages.some((m) => m.includes("non-JSON stdout line: this is not json {"))).toBe(true);
    expect(messages.some((m) => m.includes('unknown CLI message type "hologram"'))).toBe(true);
  });

  it("stops with ProtocolError on a known message type with a broken shape", async () => {
    const error = await failure(standIn("invalid-known-type").runtime.generateText({ prompt: "hi" }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error!.message).toMatch(/does not match the stream-json protocol/);
  });

  it("parses a single 100 MiB line", async () => {
    const result = await standIn("huge-line").runtime.generateText({ prompt: "hi" });
    expect(result.text).toBe(`len ${100 * 1024 * 1024}`);
  });

  it("fails clearly when a line is over maxLineBytes, without reading it into memory", async () => {
    const error = await failure(standIn("huge-line", { maxLineBytes: 1024 * 1024 }, { STAND_IN_BYTES: String(8 * 1024 * 1024) }).runtime.generateText({ prompt: "hi" }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error!.message).toMatch(/over maxLineBytes=1048576/);
  });
});

describe("hangs, timeouts and aborts", () => {
  it("stops a CLI that stops talking after idleTimeoutMs", async () => {
    const error = (await failure(standIn("hang-after-init", { idleTimeoutMs: 400 }).runtime.generateText({ prompt: "hi" }))) as TimeoutError;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.kind).toBe("idle");
  });

  it("stops a run over timeoutMs, escalating to SIGKILL when SIGTERM is ignored", async () => {
    const error = (await failure(standIn("ignore-sigterm", { timeoutMs: 400, idleTimeoutMs: 0 }).runtime.generateText({ prompt: "hi" }))) as TimeoutError;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.kind).toBe("overall");
    expect(error.message).toMatch(/timeoutMs=400/);
  });

  it("does not spawn at all when the signal is aborted before the call", async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await failure(standIn("ok").runtime.generateText({ prompt: "hi", signal: controller.signal }));
    expect(error).toBeInstanceOf(AbortError);
  });

  it("aborts a running call", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("user pressed ctrl-c")), 300);
    const error = await failure(standIn("hang-after-init").runtime.generateText({ prompt: "hi", signal: controller.signal }));
    expect(error).toBeInstanceOf(AbortError);
    expect(error!.message).toMatch(/user pressed ctrl-c/);
  });
});

describe("our stdin closed by the CLI", () => {
  it("drops and logs a write that meets EPIPE, and still finishes the run", async () => {
    const { runtime, messages } = standIn("close-stdin");
    expect((await runtime.generateText({ prompt: "hi" })).text).toBe("hi");
    expect(messages.some((m) => /write to CLI dropped/.test(m))).toBe(true);
  });
});

describe("control requests we cannot serve", () => {
  it("answers an unknown subtype and an unknown MCP server with error envelopes", async () => {
    const dir = tempDir("transcripts");
    const { runtime } = standIn("unknown-control", { transcript: { dir } });
    const result = await runtime.generateText({ prompt: "hi" });
    const out = readFileSync(result.transcriptPath!, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { kind: string; text?: string })
      .filter((record) => record.kind === "out")
      .map((record) => JSON.parse(record.text!));
    const answers = Object.fromEntries(out.filter((m) => m.type === "control_response").map((m) => [m.response.request_id, m.response]));
    expect(answers["cli-1"]).toMatchObject({ subtype: "error", error: expect.stringMatching(/does not handle control request subtype "teleport"/) });
    expect(answers["cli-2"]).toMatchObject({ subtype: "error", error: expect.stringMatching(/No MCP server named "github"/) });
  });
});
