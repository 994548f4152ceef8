/**
 * The host-death watcher (src/transport/host-death.ts) on its own: a host that registers processes and
 * is then killed outright. Listed processes end, released ones are left alone, and the watcher goes too.
 */
import { readFileSync } from "node:fs";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { HOST_DEATH_WATCHER_MARK } from "../../src/transport/host-death.js";
import { cleanup, leftoverPids, remainingChildren, testEnv } from "../support.js";

const spared: number[] = [];
afterEach(async () => {
  for (const pid of spared.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

// Starts three `sleep`s, lists them with the watcher, releases the middle one (as if it had been reaped), prints the pids and waits.
const HOST = `
import { spawn } from "node:child_process";
import { endWithHostDeath } from ${JSON.stringify(new URL("../../dist/transport/host-death.js", import.meta.url).href)};
const sleeps = [0, 1, 2].map(() => spawn("sleep", ["60"], { stdio: "ignore" }));
const releases = sleeps.map((child) => endWithHostDeath(child.pid));
releases[1]();
if (process.argv[1] === "release-all") releases.forEach((release) => release());
process.stdout.write(JSON.stringify(sleeps.map((child) => child.pid)) + "\\n");
setInterval(() => {}, 1000);
`;

const alive = (pid: number) => leftoverPids().includes(pid);
const isWatcher = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(HOST_DEATH_WATCHER_MARK);
  } catch {
    return false;
  }
};

async function startHost(mode: "keep" | "release-all") {
  const host = execa(process.execPath, ["--input-type=module", "-e", HOST, mode], { env: testEnv(), extendEnv: false, reject: false });
  const pids = await new Promise<number[]>((resolve, reject) => {
    host.stdout!.once("data", (chunk: Buffer) => resolve(JSON.parse(chunk.toString().split("\n")[0]!)));
    void host.then((result) => reject(new Error(`host ended early: ${result.stderr}`)));
  });
  return { host, pids };
}

describe.runIf(process.platform === "linux")("the host-death watcher", () => {
  it("ends the listed processes within 2 s of a SIGKILL of the host, spares a released one, and exits itself", async () => {
    const { host, pids } = await startHost("keep");
    const [first, released, third] = pids as [number, number, number];
    spared.push(released);
    // Taken while the host lives: re-parented, the watcher carries no marker to be found by (PATH is its whole environment).
    const watchers = leftoverPids().filter(isWatcher);
    expect(watchers.length).toBe(1);
    const killedAt = Date.now();
    host.kill("SIGKILL");
    await host;
    while ((alive(first) || alive(third) || watchers.some(isWatcher)) && Date.now() - killedAt < 2_000) await new Promise((resolve) => setTimeout(resolve, 20));
    expect([alive(first), alive(third)]).toEqual([false, false]);
    expect(watchers.filter(isWatcher)).toEqual([]);
    expect(alive(released)).toBe(true);
  });

  it("exits with nothing killed once every process is released, before the host ends", async () => {
    const { host, pids } = await startHost("release-all");
    spared.push(...pids);
    const started = Date.now();
    while (leftoverPids().some(isWatcher) && Date.now() - started < 2_000) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(leftoverPids().filter(isWatcher)).toEqual([]);
    host.kill("SIGKILL");
    await host;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(pids.map(alive)).toEqual([true, true, true]);
  });
});
