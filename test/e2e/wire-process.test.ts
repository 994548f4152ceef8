/**
 * The runtime's interceptor runs in a process of its own (src/claude-code/wire/interceptor-process.ts):
 * what that process gets from its host, what happens when it dies, and that it never outlives the host.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { INTERCEPTOR_SCRIPT, InterceptorProcess } from "../../src/claude-code/wire/interceptor-process.js";
import type { ToProcess } from "../../src/claude-code/wire/process-protocol.js";
import { InterceptorError } from "../../src/errors/index.js";
import { turn } from "../../src/testing/scripted-api.js";
import { callRecords, cleanup, failure, firstPartyApi, firstPartyRuntimeFor, tempDir, pidAlive } from "../support.js";

afterEach(cleanup);

const PROCESS_HOST = fileURLToPath(new URL("../../dist/claude-code/wire/interceptor-process.js", import.meta.url));


async function gone(pid: number, withinMs = 5_000): Promise<boolean> {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    if (!pidAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return !pidAlive(pid);
}

describe("the interceptor's own process", () => {
  it("pushes each request's record as its answer ends: a reused call's end asks it nothing, and every request is still recorded", async () => {
    const api = await firstPartyApi([turn.tools({ name: "mcp__ktx__echo", input: { text: "a" } }), turn.text("done"), turn.text("again")]);
    const transcripts = tempDir("transcripts");
    const runtime = firstPartyRuntimeFor(api, { reuse: {}, transcript: { dir: transcripts } });
    const asked: Array<ToProcess["type"]> = [];
    const original = InterceptorProcess.prototype.ask;
    const ask = vi.spyOn(InterceptorProcess.prototype, "ask").mockImplementation(function (this: InterceptorProcess, make: (reply: number) => ToProcess) {
      asked.push(make(0).type);
      return original.call(this, make);
    });
    try {
      const echo = { name: "echo", description: "Echoes", inputSchema: z.object({ text: z.string() }), execute: async ({ text }: { text: string }) => text };
      const loop = await runtime.runAgentLoop({ modelRole: "default", systemPrompt: "Use echo.", userPrompt: "go", toolSet: [echo], stepBudget: 3, telemetryTags: {} });
      expect(loop.stopReason).toBe("natural");
      expect(await runtime.generateText({ role: "default", prompt: "again" })).toBe("again");
    } finally {
      ask.mockRestore();
    }
    // A record read only after the CLI's result (a loaded machine) makes that call ask instead: never both calls.
    expect(asked.filter((type) => type === "end").length).toBeLessThan(2);
    await runtime.close();
    const records = readdirSync(transcripts).flatMap((file) => callRecords(join(transcripts, file)).flatMap((call) => call.requests ?? []));
    expect(records.map((record) => record.bytes.total).sort()).toEqual(api.messageRequests.map((request) => Buffer.byteLength(request.rawBody)).sort());
    expect(records.every((record) => record.status === 200 && record.usage !== undefined)).toBe(true);
  });

  it("is a child of the runtime with an empty environment and no Node flags (its way out crosses in its start message)", async () => {
    const api = await firstPartyApi([turn.text("hello")]);
    // A NODE_OPTIONS that would stop any Node started with it: the interceptor's process must not see it.
    const runtime = firstPartyRuntimeFor(api, {}, { NODE_OPTIONS: "--require=/nonexistent/ktx-should-not-load.cjs" });
    expect(await runtime.generateText({ role: "default", prompt: "Say hi" })).toBe("hello");
    const pid = runtime.interceptorPid!;
    expect(pid).toBeGreaterThan(0);
    expect(pid).not.toBe(process.pid);
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    expect(Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])).toBe(process.pid);
    // Only the variables node itself sets for the IPC channel.
    expect(readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean).map((entry) => entry.split("=")[0]).sort()).toEqual(["NODE_CHANNEL_FD", "NODE_CHANNEL_SERIALIZATION_MODE"]);
    // No Node flags of the host's either (vitest runs its workers with some): the script and its CA file's directory.
    const [script, caDir, ...more] = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).slice(1);
    expect([script, more]).toEqual([INTERCEPTOR_SCRIPT, []]);
    expect(caDir).toMatch(/\/ktx-wire-[^/]+$/);
    await runtime.close();
    expect(await gone(pid)).toBe(true);
  });

  it("when it dies between calls: its idle CLI is retired, and the next call starts a new interceptor and a new CLI", async () => {
    const api = await firstPartyApi([turn.text("one"), turn.text("two")]);
    const runtime = firstPartyRuntimeFor(api, { reuse: {} });
    expect(await runtime.generateText({ role: "default", prompt: "first" })).toBe("one");
    const [first] = runtime.reusePids;
    const interceptor = runtime.interceptorPid!;
    process.kill(interceptor, "SIGKILL");
    expect(await gone(interceptor)).toBe(true);
    // The idle CLI behind it goes: it could only reach a proxy that is gone.
    expect(await gone(first!, 10_000)).toBe(true);
    expect(await runtime.generateText({ role: "default", prompt: "second" })).toBe("two");
    expect(runtime.interceptorPid).toBeDefined();
    expect(runtime.interceptorPid).not.toBe(interceptor);
    expect(runtime.reusePids).not.toContain(first);
    expect(api.messageRequests).toHaveLength(2);
    await runtime.close();
  });

  it("when it dies during a call: the call fails with InterceptorError at once, and the next one runs", async () => {
    const api = await firstPartyApi([turn.tools({ name: "mcp__ktx__kill", input: {} }), turn.text("after")]);
    const runtime = firstPartyRuntimeFor(api, { reuse: {} });
    const kill = {
      name: "kill",
      description: "Stops the interceptor.",
      inputSchema: z.object({}),
      execute: async () => {
        process.kill(runtime.interceptorPid!, "SIGKILL");
        return { markdown: "done" };
      },
    };
    const started = Date.now();
    const error = await failure(runtime.generateText({ role: "default", prompt: "go", tools: { kill }, maxTurns: 3 }));
    expect(error).toBeInstanceOf(InterceptorError);
    expect((error as Error).message).toMatch(/interceptor process \(pid \d+\) exited \(SIGKILL\)/);
    // Failed when the process went, not after the CLI's own retries against a proxy that is gone.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(api.messageRequests).toHaveLength(1);
    expect(await runtime.generateText({ role: "default", prompt: "again" })).toBe("after");
    expect(api.messageRequests).toHaveLength(2);
    await runtime.close();
  });

  it("starts CLIs before it is up: the runtime binds its socket and writes its CA file, and a connection made before the process is ready waits and is answered by it", async () => {
    const started = await InterceptorProcess.start({ env: {} });
    try {
      // The port and CA file are the runtime's; the process is still booting (a Node start takes tens of ms).
      expect(started.isReady).toBe(false);
      expect(readFileSync(started.caFile, "utf8")).toMatch(/-----BEGIN CERTIFICATE-----/);
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(started.port, "127.0.0.1", () => socket.write("CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: api.anthropic.com:443\r\n\r\n"));
        let text = "";
        socket.setEncoding("utf8");
        socket.on("data", (chunk: string) => (text += chunk));
        socket.on("close", () => resolve(text));
        socket.on("error", reject);
      });
      // Without the session's credentials the interceptor itself refuses it: the process took the socket over.
      expect(answer).toMatch(/^HTTP\/1\.1 407 /);
      expect(started.isReady).toBe(true);
    } finally {
      await started.close();
    }
    expect(existsSync(started.caFile)).toBe(false);
  });

  it("never outlives its host: a host killed with SIGKILL takes the interceptor and its CA file with it", async () => {
    const dir = tempDir("host");
    const script = join(dir, "host.mjs");
    writeFileSync(
      script,
      `import { InterceptorProcess } from ${JSON.stringify(PROCESS_HOST)};\nconst wire = await InterceptorProcess.start({ env: {} });\nprocess.stdout.write(JSON.stringify({ pid: wire.pid, caFile: wire.caFile }) + "\\n");\nsetInterval(() => {}, 1000);\n`,
    );
    const host = spawn(process.execPath, [script], { stdio: ["ignore", "pipe", "inherit"] });
    const line = await new Promise<string>((resolve, reject) => {
      host.stdout.once("data", (chunk) => resolve(String(chunk)));
      host.once("exit", (code) => reject(new Error(`host exited ${code}`)));
    });
    const { pid, caFile } = JSON.parse(line) as { pid: number; caFile: string };
    expect(pidAlive(pid)).toBe(true);
    expect(existsSync(caFile)).toBe(true);
    host.kill("SIGKILL");
    expect(await gone(pid)).toBe(true);
    expect(existsSync(caFile)).toBe(false);
    // Nothing of it is left in the process table either.
    expect(execFileSync("ps", ["-eo", "pid="], { encoding: "utf8" }).split("\n").map((value) => Number(value.trim()))).not.toContain(pid);
  });
});
