/**
 * The pool's hold of a process whose call a usage limit stopped (process-pool.ts `hold`): outside the
 * idle list and its budget until the call's retry takes it, back to idle when the call ends otherwise,
 * ended after idleMs unused or when the pool closes. Fake processes: only the pool's bookkeeping runs.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type PoolEntry, ProcessPool } from "../../src/claude-code/pool/process-pool.js";
import type { PooledProcess } from "../../src/session/pooled-process.js";
import { silentLogger } from "../../src/session/logger.js";

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

/** A process that served one call and was rewound (`rewound: false`: it could not be). */
function served(pool: ProcessPool, shape: string, rewound = true): PoolEntry {
  let exit!: (info: { exitCode: number }) => void;
  const exited = new Promise<{ exitCode: number }>((resolve) => (exit = resolve));
  const proc = {
    settled: Promise.resolve(rewound),
    retired: rewound ? undefined : "call failed",
    callCount: 1,
    pid: 4242,
    rssMiB: () => 200,
    proc: { exited },
    retire: vi.fn(async (reason: string) => {
      proc.retired ??= reason;
      exit({ exitCode: 0 });
      return { exitCode: 0 };
    }),
  };
  return pool.adopt("launch", shape, proc as unknown as PooledProcess);
}

const pool = () => new ProcessPool({ maxIdle: 1, idleMs: 60_000 }, false, silentLogger);

describe("a process held for its call's retry", () => {
  it("is not idle (no other call takes it, the idle budget does not end it) until the retry takes it", async () => {
    const processes = pool();
    const [first, second] = [served(processes, "shape"), served(processes, "shape")];
    expect(await processes.hold(first)).toBe(true);
    expect(await processes.hold(second)).toBe(true);
    // maxIdle 1 would have ended one of two idle processes.
    expect(processes.idleMemory()).toEqual([]);
    expect(first.proc.retire).not.toHaveBeenCalled();
    expect(processes.takeHeld(first, "shape")).toBe(first);
    expect(processes.takeHeld(first, "shape")).toBeUndefined();
    expect(processes.stats).toMatchObject({ reusedCalls: 1, heldRetries: 1 });
  });

  it("goes back to the idle list when its call ends without the retry", async () => {
    const processes = pool();
    const entry = served(processes, "shape");
    await processes.hold(entry);
    processes.letGo(entry);
    expect(processes.idleMemory()).toEqual([{ pid: 4242, rssMiB: 200 }]);
    expect(processes.takeHeld(entry, "shape")).toBeUndefined();
  });

  it("is ended after idleMs unused, as an idle process would be; the retry then gets none", async () => {
    const processes = pool();
    const entry = served(processes, "shape");
    await processes.hold(entry);
    await vi.advanceTimersByTimeAsync(59_999);
    expect(entry.proc.retire).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(entry.proc.retire).toHaveBeenCalledWith("idle");
    expect(processes.takeHeld(entry, "shape")).toBeUndefined();
    expect(processes.stats.retired).toEqual({ idle: 1 });
  });

  it("is not held when it could not be rewound, and is ended when the pool closes", async () => {
    const processes = pool();
    const broken = served(processes, "shape", false);
    expect(await processes.hold(broken)).toBe(false);
    const entry = served(processes, "shape");
    await processes.hold(entry);
    await processes.close();
    expect(entry.proc.retire).toHaveBeenCalledWith("pool closed");
    expect(processes.takeHeld(entry, "shape")).toBeUndefined();
  });
});
