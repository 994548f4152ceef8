/**
 * Shutdown on a signal: an app that handles SIGINT itself (process.once) keeps control and exits as it
 * chooses; an app without a handler ends as Node would; a host killed outright (SIGKILL) gets its CLIs
 * ended by the watcher (src/transport/host-death.ts). Either way no CLI outlives the host and the
 * transcript of the call in flight keeps every line recorded before the signal.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { HOST_DEATH_WATCHER_MARK } from "../../src/transport/host-death.js";
import { cleanup, leftoverPids, remainingChildren, scriptedApi, tempDir, testEnv } from "../support.js";

afterEach(async () => {
  expect(await remainingChildren()).toEqual([]);
  await cleanup();
});

const isWatcher = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(HOST_DEATH_WATCHER_MARK);
  } catch {
    return false;
  }
};

const HOST = join(import.meta.dirname, "../fixtures/signal-host.mjs");

async function startHost(mode: "once" | "none") {
  // The slow call's answer takes a minute: it is in flight when the signal comes.
  const api = await scriptedApi((request) => (JSON.stringify(request.body?.messages ?? []).includes("slow") ? { text: "late", delayMs: 60_000 } : { text: "ok" }));
  const transcripts = tempDir("transcripts");
  const host = execa(process.execPath, [HOST, api.baseUrl, mode, transcripts], { reject: false, env: { ...process.env, KTX_TEST_OWNER: testEnv().KTX_TEST_OWNER! } });
  const state = await new Promise<{ idle: number[] }>((resolve, reject) => {
    let out = "";
    host.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("\n")) resolve(JSON.parse(out.split("\n")[0]!));
    });
    void host.then((result) => reject(new Error(`host ended early: ${result.stderr}`)));
  });
  // The slow call has reached the API.
  while (!api.messageRequests.some((request) => JSON.stringify(request.body?.messages ?? []).includes("slow"))) await new Promise((resolve) => setTimeout(resolve, 20));
  const slowTranscript = () =>
    readdirSync(transcripts)
      .map((name) => readFileSync(join(transcripts, name), "utf8"))
      .find((text) => text.includes('\\"content\\":\\"slow\\"') || text.includes("slow"))!;
  return { host, state, slowTranscript };
}

describe("a signal to the host", () => {
  it("leaves an app's own process.once('SIGINT') handler in control: it aborts, closes and exits 0; no CLI is left", async () => {
    const { host, state, slowTranscript } = await startHost("once");
    expect(state.idle.length).toBe(1);
    host.kill("SIGINT");
    const result = await host;
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain("closed");
    // The aborted call's transcript is complete: the CLI's exit is in it.
    expect(slowTranscript()).toMatch(/"kind":"exit"/);
  });

  it.runIf(process.platform === "linux")("a host killed outright (SIGKILL) mid-call leaves no CLI after 2 s, although the in-flight answer takes a minute", async () => {
    const { host, state } = await startHost("none");
    expect(state.idle.length).toBe(1);
    // The host and its CLIs are there to be found (the check below finds them re-parented, by their marker).
    expect(leftoverPids()).toEqual(expect.arrayContaining([host.pid, ...state.idle]));
    // The watcher has no marker (PATH is its whole environment): taken now, while it is still in the host's tree.
    const watchers = leftoverPids().filter(isWatcher);
    expect(watchers.length).toBe(1);
    const killedAt = Date.now();
    host.kill("SIGKILL");
    expect((await host).signal).toBe("SIGKILL");
    // Without the watcher the in-flight CLI saw only its stdin close and kept waiting for its answer (60 s here).
    // The orphan CLIs are found by the marker the host passed on, wherever they were re-parented.
    const left = await remainingChildren(Math.max(0, killedAt + 2_000 - Date.now()));
    expect(left).toEqual([]);
    while (watchers.some(isWatcher) && Date.now() - killedAt < 2_000) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(watchers.filter(isWatcher)).toEqual([]);
  });

  it("ends a host without a handler as Node would (by SIGINT), with its CLIs, and keeps the transcript written so far", async () => {
    const { host, state, slowTranscript } = await startHost("none");
    expect(state.idle.length).toBe(1);
    host.kill("SIGINT");
    const result = await host;
    expect(result.signal).toBe("SIGINT");
    const transcript = slowTranscript();
    expect(transcript).toMatch(/^\{"kind":"header"/);
    expect(transcript).toMatch(/"subtype\\":\\"init\\"/);
    // remainingChildren (afterEach) also finds CLIs re-parented away from the dead host by their marker.
  });
});
