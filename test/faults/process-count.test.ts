/** The leftover-process check every fault test ends with sees grandchildren and orphans, not only direct children. */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { childPids, cleanup, leftoverPids, remainingChildren, testEnv } from "../support.js";

const started: number[] = [];

afterEach(async () => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

/** Runs `sh -c body` with the test environment and resolves with the first line it prints (a pid). */
async function shell(body: string): Promise<{ sh: number; printed: number }> {
  const child = spawn("sh", ["-c", body], { env: testEnv(), stdio: ["ignore", "pipe", "ignore"] });
  started.push(child.pid!);
  const [chunk] = (await once(child.stdout!, "data")) as [Buffer];
  const printed = Number(chunk.toString().trim());
  started.push(printed);
  return { sh: child.pid!, printed };
}

describe("leftover process detection", () => {
  it("counts a grandchild, which a direct-children count misses", async () => {
    const { sh, printed } = await shell("sleep 30 & echo $!; wait");
    expect(childPids()).toEqual([sh]);
    expect(leftoverPids()).toEqual([sh, printed].sort((a, b) => a - b));
  });

  it("finds an orphan re-parented away from the test process by the marker in its environment", async () => {
    const { sh, printed } = await shell("sleep 30 & echo $!");
    // The shell exits at once; its sleep is re-parented to init (or a subreaper), out of our tree.
    while (childPids().includes(sh)) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(childPids()).toEqual([]);
    expect(leftoverPids()).toEqual([printed]);
  });
});
