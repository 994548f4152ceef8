/**
 * Faults of the CLI process and the stream, injected with a scripted stand-in CLI
 * (test/fixtures/stand-in-cli.mjs). Each ends in a typed error, and no child process remains.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
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
import { z } from "zod";
import { cleanup, failure, remainingChildren, script, tempDir, TEST_PASS_ENV, testEnv } from "../support.js";

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
    // A fixture stand-in of this suite (not one the testing helpers wrote) makes no request: the interceptor is off explicitly.
    wire: false,
    env: testEnv({ STAND_IN_MODE: mode, ...extraEnv }),
    passEnv: TEST_PASS_ENV,
    warm: false, reuse: false,
    logger: { debug() {}, info: (m) => messages.push(m), warn: (m) => messages.push(m), error: (m) => messages.push(m) },
    ...options,
  });
  return { runtime, messages };
}


/** The JSON lines a recorded run sent in one direction ("out": ours, "in": the CLI's). */
function recorded(transcriptPath: string, kind: "out" | "in"): any[] {
  return readFileSync(transcriptPath, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { kind: string; text?: string })
    .filter((record) => record.kind === kind)
    .map((record) => JSON.parse(record.text!));
}

/** Our control responses in a recorded run, by the CLI's request_id. */
function answersIn(transcriptPath: string): Record<string, any> {
  const responses = recorded(transcriptPath, "out").filter((m) => m.type === "control_response");
  return Object.fromEntries(responses.map((m) => [m.response.request_id, m.response]));
}

const loopWith = (tools: Array<{ name: string; execute: (input: any, context: { signal: AbortSignal }) => unknown }>) => ({
  modelRole: "default" as const,
  systemPrompt: "s",
  userPrompt: "u",
  stepBudget: 4,
  toolSet: tools.map((tool) => ({ description: tool.name, inputSchema: z.object({ term: z.string().optional() }), ...tool })),
});

describe("a missing or wrong CLI", () => {
  it("reports a missing binary", async () => {
    const error = await failure(standIn("ok", { cliPath: "/nonexistent/claude" }).runtime.generateTextResult({ prompt: "hi" }));
    expect(error).toBeInstanceOf(CliNotFoundError);
    expect(error!.message).toMatch(/\/nonexistent\/claude: file not found.*npm ci/s);
  });

  it("reports a binary that is not executable", async () => {
    const path = join(tempDir("bin"), "claude");
    writeFileSync(path, "#!/bin/sh\necho hi\n");
    chmodSync(path, 0o644);
    const error = await failure(standIn("ok", { cliPath: path }).runtime.generateTextResult({ prompt: "hi" }));
    expect(error).toBeInstanceOf(CliNotFoundError);
    expect(error!.message).toMatch(/not executable/);
  });

  it("reports a different program", async () => {
    const error = await failure(standIn("ok", { cliPath: "/bin/echo" }).runtime.generateTextResult({ prompt: "hi" }));
    expect(error).toBeInstanceOf(CliNotFoundError);
    expect(error!.message).toMatch(/it is not Claude Code/);
  });
});

describe("a CLI that dies or misbehaves", () => {
  it("exits non-zero before init: CliCrashError with the exit code and stderr tail", async () => {
    const error = (await failure(standIn("exit-before-init").runtime.generateTextResult({ prompt: "hi" }))) as CliCrashError;
    expect(error).toBeInstanceOf(CliCrashError);
    expect(error.exitCode).toBe(3);
    expect(error.message).toMatch(/exited with code 3 before answering initialize/);
    expect(error.stderrTail).toContain("fatal: something broke during start-up");
  });

  it("is killed by a signal mid-stream", async () => {
    const error = (await failure(standIn("kill-self").runtime.generateTextResult({ prompt: "hi" }))) as CliCrashError;
    expect(error).toBeInstanceOf(CliCrashError);
    expect(error.signal).toBe("SIGKILL");
    expect(error.message).toMatch(/killed by SIGKILL before its result/);
  });

  it("exits 0 without a result", async () => {
    const error = await failure(standIn("exit-0-no-result").runtime.generateTextResult({ prompt: "hi" }));
    expect(error).toBeInstanceOf(CliCrashError);
    expect(error!.message).toMatch(/exited with code 0 before its result/);
  });

  it("closes its stdout early but keeps running", async () => {
    const error = await failure(standIn("close-stdout").runtime.generateTextResult({ prompt: "hi" }));
    expect(error).toBeInstanceOf(CliCrashError);
    expect(error!.message).toMatch(/closed its stdout before its result/);
  });

  it("ends on a truncated last line, naming the line it could not read", async () => {
    const error = await failure(standIn("truncated-last-line").runtime.generateTextResult({ prompt: "hi" }));
    expect(error).toBeInstanceOf(CliCrashError);
    expect(error!.message).toMatch(/not JSON, first: .*"type\\":\\"result/);
  });

  it("tolerates a non-JSON noise line and passes an unknown message type through, logging both", async () => {
    const { runtime, messages } = standIn("malformed-then-ok");
    expect((await runtime.generateTextResult({ prompt: "hi" })).text).toBe("hi");
    expect(messages.some((m) => m.includes("non-JSON stdout line: this is not json {"))).toBe(true);
    expect(messages.some((m) => m.includes('unknown CLI message type "hologram"'))).toBe(true);
  });

  it("stops with ProtocolError on a known message type with a broken shape", async () => {
    const error = await failure(standIn("invalid-known-type").runtime.generateTextResult({ prompt: "hi" }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error!.message).toMatch(/does not match the stream-json protocol/);
  });

  it("parses a single 100 MiB line", async () => {
    const result = await standIn("huge-line").runtime.generateTextResult({ prompt: "hi" });
    expect(result.text).toBe(`len ${100 * 1024 * 1024}`);
  });

  it("fails clearly when a line is over maxLineBytes, without reading it into memory", async () => {
    const error = await failure(standIn("huge-line", { maxLineBytes: 1024 * 1024 }, { STAND_IN_BYTES: String(8 * 1024 * 1024) }).runtime.generateTextResult({ prompt: "hi" }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error!.message).toMatch(/over maxLineBytes=1048576/);
  });
});

describe("hangs, timeouts and aborts", () => {
  it("stops a CLI that stops talking after idleTimeoutMs", async () => {
    const error = (await failure(standIn("hang-after-init", { idleTimeoutMs: 400 }).runtime.generateTextResult({ prompt: "hi" }))) as TimeoutError;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.kind).toBe("idle");
    expect(error.message).toMatch(/wrote nothing for idleTimeoutMs=400 ms and was stopped.*raise idleTimeoutMs/s);
  });

  it("stops a run over timeoutMs, escalating to SIGKILL when SIGTERM is ignored", async () => {
    const error = (await failure(standIn("ignore-sigterm", { timeoutMs: 400, idleTimeoutMs: 0 }).runtime.generateTextResult({ prompt: "hi" }))) as TimeoutError;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.kind).toBe("overall");
    expect(error.message).toMatch(/timeoutMs=400/);
  });

  it("starts no session when the signal is aborted before the call", async () => {
    // A wrapper that logs each launch: nothing may run, not even the once-per-path `--version` check.
    const launches = join(tempDir("launches"), "log");
    const cliPath = script("claude", `echo "$@" >> ${launches}\nexec node ${STAND_IN} "$@"`);
    const controller = new AbortController();
    controller.abort(new Error("changed my mind"));
    const error = await failure(standIn("ok", { cliPath }).runtime.generateTextResult({ prompt: "hi", signal: controller.signal }));
    expect(error).toBeInstanceOf(AbortError);
    expect(error!.message).toBe("The Claude Code run was aborted by its AbortSignal: changed my mind.");
    expect(existsSync(launches)).toBe(false);
  });

  it("aborts a call whose CLI never answers initialize, without ever sending the prompt", async () => {
    const dir = tempDir("transcripts");
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("user pressed ctrl-c during start-up")), 300);
    const { runtime } = standIn("no-initialize-answer", { transcript: { dir } });
    const error = await failure(runtime.generateTextResult({ prompt: "hi", signal: controller.signal }));
    expect(error).toBeInstanceOf(AbortError);
    expect(error!.message).toBe("The Claude Code run was aborted by its AbortSignal: user pressed ctrl-c during start-up.");
    const transcriptPath = (error as AbortError).transcriptPath!;
    expect(recorded(transcriptPath, "in")).toEqual([]);
    expect(recorded(transcriptPath, "out").map((m) => m.request?.subtype ?? m.type)).toEqual(["initialize"]);
  });

  it("aborts a running call", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("user pressed ctrl-c")), 300);
    const error = await failure(standIn("hang-after-init").runtime.generateTextResult({ prompt: "hi", signal: controller.signal }));
    expect(error).toBeInstanceOf(AbortError);
    expect(error!.message).toMatch(/user pressed ctrl-c/);
  });
});

describe("close", () => {
  it("close() lets a call in flight finish; close({ abortInFlight }) aborts it, sending interrupt before stopping the CLI", async () => {
    const dir = tempDir("transcripts");
    const finishing = standIn("ok").runtime;
    const pending = finishing.generateTextResult({ prompt: "hi" });
    await finishing.close();
    expect((await pending).text).toBe("hi");

    const { runtime } = standIn("hang-after-init");
    const call = failure(runtime.generateTextResult({ prompt: "hi", transcript: { dir, name: "closed" } }));
    // Close once the CLI is mid-turn (it wrote init in answer to the prompt).
    const path = join(dir, "closed.jsonl");
    const sawInit = () => existsSync(path) && readFileSync(path, "utf8").includes(String.raw`\"subtype\":\"init\"`);
    while (!sawInit()) await new Promise((resolve) => setTimeout(resolve, 25));
    await runtime.close({ abortInFlight: true });
    const error = (await call) as AbortError;
    expect(error).toBeInstanceOf(AbortError);
    expect(error.message).toBe("The Claude Code run was aborted by its AbortSignal: the runtime was closed.");
    expect(recorded(error.transcriptPath!, "out").map((m) => m.request?.subtype ?? m.type)).toEqual(["initialize", "user", "interrupt"]);
  });
});

describe("our stdin closed by the CLI", () => {
  it("drops and logs a write that meets EPIPE, and still finishes the run", async () => {
    const { runtime, messages } = standIn("close-stdin");
    expect((await runtime.generateTextResult({ prompt: "hi" })).text).toBe("hi");
    expect(messages.some((m) => /write to CLI dropped/.test(m))).toBe(true);
  });
});

describe("control requests we cannot serve", () => {
  it("answers an unknown subtype and an unknown MCP server with error envelopes", async () => {
    const dir = tempDir("transcripts");
    const { runtime } = standIn("unknown-control", { transcript: { dir } });
    const result = await runtime.generateTextResult({ prompt: "hi" });
    const answers = answersIn(result.transcriptPath!);
    expect(answers["cli-1"]).toMatchObject({ subtype: "error", error: expect.stringMatching(/does not handle control request subtype "teleport"/) });
    expect(answers["cli-2"]).toMatchObject({ subtype: "error", error: expect.stringMatching(/No MCP server named "github"/) });
  });
});

describe("tool calls and permission questions from the CLI", () => {
  it("aborts the tool handler on control_cancel_request, sends no reply for it, and still finishes the run", async () => {
    const dir = tempDir("transcripts");
    const signals = tempDir("signal");
    const [started, aborted] = [join(signals, "started"), join(signals, "aborted")];
    let abortReason: unknown;
    const slow = {
      name: "slow",
      execute: (_input: unknown, { signal }: { signal: AbortSignal }) => {
        writeFileSync(started, "");
        return new Promise((_resolve, reject) =>
          signal.addEventListener("abort", () => {
            abortReason = signal.reason;
            writeFileSync(aborted, "");
            reject(new Error("aborted"));
          }),
        );
      },
    };
    const { runtime } = standIn("cancel-tool", { transcript: { dir } }, { STAND_IN_STARTED_FILE: started, STAND_IN_ABORTED_FILE: aborted });
    const result = await runtime.runAgentLoop(loopWith([slow]));
    expect(result.stopReason).toBe("natural");
    // The stand-in saw the handler aborted before it ended the turn: the cancel did it, not the end of the run.
    expect(result.text).toBe("handler aborted");
    expect(String(abortReason)).toMatch(/Cancelled by the Claude Code CLI/);
    const answers = answersIn(result.transcriptPath!);
    // The MCP handshake was answered; the cancelled call was not, although the stand-in waited 300 ms for it.
    expect(Object.keys(answers).sort()).toEqual(["mcp-init", "mcp-initialized"]);
    expect(answers["mcp-init"]).toMatchObject({ subtype: "success", response: { mcp_response: { id: 0, result: { serverInfo: { name: "ktx" } } } } });
  });

  it("answers can_use_tool: allow for the call's own tool, deny naming the available tools for any other", async () => {
    const dir = tempDir("transcripts");
    const lookup = { name: "lookup", execute: () => "never called" };
    const { runtime } = standIn("can-use-tool", { transcript: { dir } });
    const result = await runtime.runAgentLoop(loopWith([lookup]));
    expect(result.stopReason).toBe("natural");
    const answers = answersIn(result.transcriptPath!);
    expect(answers["perm-0"]).toEqual({ subtype: "success", request_id: "perm-0", response: { behavior: "allow", updatedInput: { term: "billing" } } });
    for (const [id, tool] of [["perm-1", "Bash"], ["perm-2", "mcp__github__x"]] as const) {
      expect(answers[id]).toEqual({
        subtype: "success",
        request_id: id,
        response: { behavior: "deny", message: `Tool ${tool} is not available in this KTX run. Only these tools exist: mcp__ktx__lookup.` },
      });
    }
  });
});

describe("warm processes and the model switch", () => {
  it("runs the call on a fresh process when a warm one refuses the model switch", async () => {
    const { runtime, messages } = standIn("no-model-switch", { models: { default: "sonnet", triage: "haiku" }, warm: { size: 1, idleMs: 60_000 } });
    expect((await runtime.generateTextResult({ prompt: "hi" })).warmStart).toBe(false);
    // The pool refilled for the sonnet launch when the call ended; a triage call takes it and must switch it to haiku.
    expect(runtime.warmIdlePids).toHaveLength(1);
    const triage = await runtime.generateTextResult({ role: "triage", prompt: "hi" });
    expect(triage.text).toBe("hi");
    expect(triage.warmStart).toBe(false);
    expect(messages).toContain("a warm Claude Code process failed before the call started (ProtocolError); retrying on a fresh process");
    await runtime.close();
  });
});
