/**
 * `await runtime.close()` returns in a host that nothing else keeps alive (top-level await), with the
 * defaults (reused processes and a warm spare idle), with calls in flight, twice in a row and on a
 * signal; every CLI is reaped before it resolves.
 */
import { execa } from "execa";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, scriptedApi, testEnv } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const HOST = join(import.meta.dirname, "../fixtures/close-host.mjs");

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function runHost(mode: string, onReady?: (host: ReturnType<typeof execa>) => void) {
  const api = await scriptedApi((request) => (JSON.stringify(request.body?.messages ?? []).includes("slow") ? { text: "late", delayMs: 1_500 } : { text: "ok" }));
  const host = execa(process.execPath, [HOST, api.baseUrl, mode], { reject: false, env: { ...process.env, KTX_TEST_OWNER: testEnv().KTX_TEST_OWNER! } });
  const lines: Array<Record<string, unknown>> = [];
  let buffer = "";
  host.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let index = buffer.indexOf("\n"); index >= 0; index = buffer.indexOf("\n")) {
      const line = JSON.parse(buffer.slice(0, index)) as Record<string, unknown>;
      buffer = buffer.slice(index + 1);
      lines.push(line);
      if (line.ready) onReady?.(host);
    }
  });
  const result = await host;
  const held = lines.find((line) => line.pids)!.pids as number[];
  return { result, lines, held, after: lines.find((line) => line.after) };
}

describe("close() in a host with nothing else alive", () => {
  it.each(["idle", "twice"])("returns (%s): the line after it runs, exit code 0, no CLI left", async (mode) => {
    const { result, held, after } = await runHost(mode);
    // Two shapes served and a spare: the defaults held at least two CLIs when close() was called.
    expect(held.length).toBeGreaterThanOrEqual(2);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(after).toEqual({ after: true, pids: [] });
    expect(held.filter(alive)).toEqual([]);
  }, 60_000);

  it.each([
    ["in-flight", "waits for a call in flight, which succeeds", "late"],
    ["abort-in-flight", "with abortInFlight: the call rejects with AbortError", "AbortError"],
  ])("%s: %s; close() returns", async (mode, _what, slow) => {
    const { result, lines, held, after } = await runHost(mode);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(lines.find((line) => "slow" in line)).toEqual({ slow });
    expect(after).toEqual({ after: true, pids: [] });
    expect(held.filter(alive)).toEqual([]);
  }, 60_000);

  it("from an app's SIGTERM handler: close() returns, the host ends with code 0, no CLI left", async () => {
    const { result, held, after } = await runHost("signal", (host) => host.kill("SIGTERM"));
    expect(result.exitCode, result.stderr).toBe(0);
    expect(after).toEqual({ after: true, pids: [] });
    expect(held.filter(alive)).toEqual([]);
  }, 60_000);
});
