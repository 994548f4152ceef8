/**
 * The pool's memory rules with stand-in processes (no CLI): a process's memory is read once per call,
 * at its release; the memory limit and the idle budget both use that figure; spares are read afresh.
 */
import { describe, expect, it } from "vitest";
import { ProcessPool } from "../../src/claude-code/pool/process-pool.js";
import { silentLogger } from "../../src/session/logger.js";
import type { PooledProcess } from "../../src/session/pooled-process.js";

/** What the pool asks of a process, with its resident memory set by the test and its reads counted. */
function standIn(rss: number) {
  let exit!: () => void;
  const exited = new Promise<{ exitCode: number; signal: undefined }>((resolve) => (exit = () => resolve({ exitCode: 0, signal: undefined })));
  const state = { rss, reads: 0, retired: undefined as string | undefined };
  const proc = {
    pid: 4242,
    callCount: 0,
    get retired() {
      return state.retired;
    },
    settled: Promise.resolve(true),
    proc: { exited },
    rssMiB() {
      state.reads += 1;
      return state.rss;
    },
    async retire(reason: string) {
      state.retired = reason;
      exit();
      return exited;
    },
  };
  return { proc: proc as unknown as PooledProcess, state };
}

/** One call on the pool: acquire, count it, release. */
async function serve(pool: ProcessPool, shape: string, start: () => PooledProcess) {
  const { entry, source } = await pool.acquire("launch", shape, start);
  const kept = await pool.release(entry);
  return { source, kept };
}

describe("ProcessPool memory", () => {
  it("reads a kept process's memory once per call, however many processes are idle", async () => {
    const pool = new ProcessPool({ maxIdle: 3, maxIdleMiB: 10_000 }, false, silentLogger);
    const processes = ["a", "b", "c"].map(() => standIn(100));
    for (const [index, shape] of ["a", "b", "c"].entries()) expect(await serve(pool, shape, () => processes[index]!.proc)).toEqual({ source: "cold", kept: true });
    for (let round = 0; round < 4; round += 1) for (const shape of ["a", "b", "c"]) expect((await serve(pool, shape, () => standIn(1).proc)).source).toBe("reused");
    // 5 calls each, one read at each call's release (the idle budget reused them).
    expect(processes.map((p) => p.state.reads)).toEqual([5, 5, 5]);
    await pool.close();
  });

  it("retires a process over maxRssMiB at its release, and keeps the idle processes under maxIdleMiB by the figures read then", async () => {
    const pool = new ProcessPool({ maxIdle: 3, maxRssMiB: 300, maxIdleMiB: 500 }, false, silentLogger);
    const big = standIn(350);
    expect(await serve(pool, "big", () => big.proc)).toEqual({ source: "cold", kept: false });
    expect(big.state.retired).toBe("memory limit");

    const first = standIn(200);
    const second = standIn(200);
    expect((await serve(pool, "first", () => first.proc)).kept).toBe(true);
    expect((await serve(pool, "second", () => second.proc)).kept).toBe(true);
    // 400 MiB idle; a third process of 200 MiB goes over 500: the least recently used one is retired.
    const third = standIn(200);
    expect((await serve(pool, "third", () => third.proc)).kept).toBe(true);
    expect([first.state.retired, second.state.retired, third.state.retired]).toEqual(["idle budget", undefined, undefined]);
    expect(pool.stats.retired).toEqual({ "memory limit": 1, "idle budget": 1 });
    await pool.close();
  });
});
