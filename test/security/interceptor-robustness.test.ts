/**
 * The runtime's interceptor under a local attacker and a stall (issue 45): any local user can connect to
 * its proxy port, and its process can be stopped. Neither may starve the runtime's calls or hold a call
 * past its `timeoutMs`. First-party path (`wire: true`, as test/e2e/wire.test.ts); loopback only.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { createServer } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { EXCHANGE_DEADLINE_MS, InterceptorProcess, unreachableError } from "../../src/claude-code/wire/interceptor-process.js";
import { UNAUTHENTICATED_DEADLINE_MS, UNAUTHENTICATED_MAX } from "../../src/claude-code/wire/tls-proxy.js";
import { ClaudeCodeApiError, InterceptorError, TimeoutError } from "../../src/errors/index.js";
import { ApiRetryBudgetError } from "../../src/limits/errors.js";
import { turn } from "../../src/testing/scripted-api.js";
import { cleanup, failure, firstPartyApi, firstPartyRuntimeFor, pidAlive } from "../support.js";

const undo: Array<() => void> = [];
afterEach(async () => {
  for (const step of undo.splice(0)) step();
  await cleanup();
});

/** The TCP ports `pid` listens on (its socket descriptors matched against /proc/net/tcp's LISTEN rows). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const match = /^socket:\[(\d+)\]$/.exec(link);
      if (match) inodes.add(match[1]!);
    } catch {
      // closed meanwhile
    }
  }
  return readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[3] === "0A" && inodes.has(fields[9]!))
    .map((fields) => parseInt(fields[1]!.split(":")[1]!, 16));
}

async function until(condition: () => boolean, withinMs: number): Promise<boolean> {
  const end = Date.now() + withinMs;
  while (Date.now() < end) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return condition();
}

/** `count` idle connections to 127.0.0.1:`port` that never send a byte; each notes when the other side closed it. */
async function idleFlood(port: number, count: number): Promise<Array<{ socket: Socket; closed: boolean }>> {
  const flood: Array<{ socket: Socket; closed: boolean }> = [];
  await Promise.all(
    Array.from({ length: count }, () => {
      const entry = { socket: connect({ host: "127.0.0.1", port }), closed: false };
      flood.push(entry);
      entry.socket.on("error", () => {});
      entry.socket.on("close", () => (entry.closed = true));
      return new Promise<void>((resolve) => {
        entry.socket.once("connect", () => resolve());
        entry.socket.once("close", () => resolve());
      });
    }),
  );
  undo.push(() => flood.forEach((entry) => entry.socket.destroy()));
  return flood;
}

describe("the interceptor under a local attacker and a stall", () => {
  it("a flood of idle unauthenticated connections is capped and closed after its deadline, and a real call still runs", async () => {
    const api = await firstPartyApi([turn.text("one"), turn.text("two")]);
    const runtime = firstPartyRuntimeFor(api);
    expect(await runtime.generateText({ role: "default", prompt: "first" })).toBe("one");
    const pid = runtime.interceptorPid!;
    const [port] = listeningPorts(pid);
    expect(port).toBeGreaterThan(0);
    // The descriptors a local attacker exhausts (20,000 in 13 s in the issue), lowered so a bounded flood reaches the limit.
    execFileSync("prlimit", ["--pid", String(pid), "--nofile=400:400"]);
    const flood = await idleFlood(port!, 500);
    // The oldest beyond the cap were dropped at once: the descriptors left for real sessions never run out.
    expect(await until(() => flood.filter((entry) => !entry.closed).length <= UNAUTHENTICATED_MAX, 2_000)).toBe(true);
    // A new CLI (reuse is off) connects, authenticates and is answered while the flood goes on: 25 more idle connections every 50 ms.
    let calling = true;
    const flooding = (async () => {
      while (calling && flood.length < 5_000) {
        flood.push(...(await idleFlood(port!, 25)));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const started = Date.now();
    const answer = await runtime.generateText({ role: "default", prompt: "second" }).finally(() => (calling = false));
    await flooding;
    expect(answer).toBe("two");
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(flood.length).toBeGreaterThan(500);
    // Every idle socket is closed once its deadline passes (generous margin for a loaded machine).
    expect(await until(() => flood.every((entry) => entry.closed), UNAUTHENTICATED_DEADLINE_MS + 10_000)).toBe(true);
    expect(api.messageRequests).toHaveLength(2);
    await runtime.close();
  });

  it("a stopped interceptor cannot hold a call past timeoutMs: the call fails, the process is replaced, the next call runs", async () => {
    const api = await firstPartyApi([turn.tools({ name: "mcp__ktx__stall", input: {} }), turn.text("after")]);
    const runtime = firstPartyRuntimeFor(api);
    const stopped: number[] = [];
    undo.push(() => {
      for (const pid of stopped) {
        if (!pidAlive(pid)) continue;
        process.kill(pid, "SIGCONT");
        process.kill(pid, "SIGKILL");
      }
    });
    const stall = {
      name: "stall",
      description: "Stops the interceptor's process.",
      inputSchema: z.object({}),
      execute: async () => {
        const pid = runtime.interceptorPid!;
        stopped.push(pid);
        process.kill(pid, "SIGSTOP");
        return { markdown: "done" };
      },
    };
    const timeoutMs = 6_000;
    const started = Date.now();
    const error = await failure(runtime.generateText({ role: "default", prompt: "go", tools: { stall }, maxTurns: 3, timeoutMs }));
    const elapsed = Date.now() - started;
    expect(stopped).toHaveLength(1);
    expect(error instanceof InterceptorError || error instanceof TimeoutError).toBe(true);
    // The call's own reaping (an interrupt, then the stop) and one exchange's deadline at most, on a loaded 2-core machine.
    expect(elapsed).toBeLessThan(timeoutMs + 12_000);
    // The stalled process is not left behind: it was killed, stopped as it was.
    expect(await until(() => !pidAlive(stopped[0]!), 5_000)).toBe(true);
    // The next call on the same runtime runs behind a new interceptor.
    expect(await runtime.generateText({ role: "default", prompt: "again" })).toBe("after");
    expect(runtime.interceptorPid).toBeDefined();
    expect(runtime.interceptorPid).not.toBe(stopped[0]);
    await runtime.close();
  });

  it("every exchange has a deadline: a call's end waits for a stopped process at most its remaining time, and the process is then killed", async () => {
    let lost: InterceptorError | undefined;
    const wire = await InterceptorProcess.start({ env: {}, onExit: (error) => (lost = error) });
    undo.push(() => void wire.close());
    const pid = wire.pid!;
    undo.push(() => {
      if (!pidAlive(pid)) return;
      process.kill(pid, "SIGCONT");
      process.kill(pid, "SIGKILL");
    });
    const session = wire.newSession();
    // Another process behind the same interceptor, idle: its proxy and CA settings point at the stalled one.
    const idle = wire.newSession();
    let retired = false;
    idle.onIdleBreak = () => (retired = true);
    session.beginCall({ model: "claude-sonnet-4-6", system: "s", prompt: "p", tools: [], cwd: ["/tmp/project"] }, () => {});
    // Stopped once up (start() returns before its process is: a stop during its boot is the start timeout's, 15 s).
    expect(await until(() => wire.isReady, 15_000)).toBe(true);
    process.kill(pid, "SIGSTOP");
    const started = Date.now();
    // One model response and no record of it: the end must ask the process, with 500 ms left of the call.
    const error = await failure(session.endCall(1, 500));
    expect(error).toBeInstanceOf(InterceptorError);
    expect((error as InterceptorError).reason).toBe("stalled");
    expect((error as Error).message).toMatch(/did not answer the call's end within what was left of its timeoutMs \(500 ms\)/);
    // The call did not wait for the process's own deadline.
    expect(Date.now() - started).toBeLessThan(EXCHANGE_DEADLINE_MS);
    // The process misses its deadline: it is killed (stopped as it is), and every session behind it is let go.
    expect(await until(() => lost !== undefined, EXCHANGE_DEADLINE_MS + 5_000)).toBe(true);
    expect(lost!.reason).toBe("stalled");
    expect(lost!.message).toMatch(/did not answer within 3 s \(a `(end|ping)` message/);
    expect(retired).toBe(true);
    expect(await until(() => !pidAlive(pid), 5_000)).toBe(true);
    // Nothing more runs behind it: a new call on it fails at once with the same error.
    expect(() => wire.newSession().beginCall({ model: "claude-sonnet-4-6", system: "s", prompt: "p", tools: [], cwd: ["/tmp/project"] }, () => {})).toThrow(lost!);
  });

  it("a CLI that cannot reach the interceptor gets an error naming the interceptor, not the API", async () => {
    // What the CLI's connection failures become (a proxy that refuses: 4 retries, each "a dropped connection", then the budget).
    const budget = new ApiRetryBudgetError(undefined, 4, 4_200, 8_000, { lastError: "unknown", stderrTail: "tail" });
    const named = unreachableError(budget, { port: 41234 });
    expect(named).toBeInstanceOf(InterceptorError);
    expect(named!.reason).toBe("unreachable");
    expect(named!.message).toMatch(/could not reach the runtime's interceptor on 127\.0\.0\.1:41234.*4 time\(s\) over 4 s/);
    expect(named!.message).toContain(`at most ${UNAUTHENTICATED_MAX} that have not authenticated, each for at most ${UNAUTHENTICATED_DEADLINE_MS / 1000} s`);
    expect(named!.message).toMatch(/rerun it.*`wire: false`/);
    expect(named!.stderrTail).toBe("tail");
    expect(named!.cause).toBe(budget);
    const connection = new ClaudeCodeApiError("The Anthropic API failed: API Error: Connection error.", undefined, "api_error");
    expect(unreachableError(connection, { port: 41234 })?.reason).toBe("unreachable");
    // An answer with a status came from the API (or from the interceptor, whose own answers say so): left as it is.
    expect(unreachableError(new ApiRetryBudgetError(529, 4, 4_200, 8_000), { port: 41234 })).toBeUndefined();
    expect(unreachableError(new ClaudeCodeApiError("overloaded", 529, "api_error"), { port: 41234 })).toBeUndefined();
  });

  it("end to end: a CLI whose interceptor refuses its connections fails with InterceptorError naming it", async () => {
    const api = await firstPartyApi([turn.text("never")]);
    const runtime = firstPartyRuntimeFor(api, { apiRetryBudgetMs: 5_000 });
    // A port nothing listens on stands in for an interceptor the CLI cannot reach (refused, as a saturated or gone one would be).
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const original = InterceptorProcess.prototype.newSession;
    const spy = vi.spyOn(InterceptorProcess.prototype, "newSession").mockImplementation(function (this: InterceptorProcess) {
      const session = original.call(this);
      for (const name of ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"]) session.env[name] = session.env[name]!.replace(/:\d+$/, `:${port}`);
      return session;
    });
    undo.push(() => spy.mockRestore());
    const error = await failure(runtime.generateText({ role: "default", prompt: "go" }));
    expect(error).toBeInstanceOf(InterceptorError);
    expect((error as InterceptorError).reason).toBe("unreachable");
    expect((error as Error).message).toMatch(/could not reach the runtime's interceptor on 127\.0\.0\.1:\d+/);
    expect(api.messageRequests).toHaveLength(0);
    await runtime.close();
  });
});
