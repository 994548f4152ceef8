/**
 * Issue 40, finding 5: the host-death watcher (`/bin/sh -c …`, src/transport/host-death.ts) inherited
 * the host's whole environment — API keys, `BASH_ENV`, `NODE_OPTIONS` — although every process the
 * library starts is promised an allowlisted one. A host with those variables runs a call on the real
 * CLI and keeps its process for reuse; the watcher's /proc/<pid>/environ must hold PATH alone. Then the
 * host is killed outright, and the watcher, with that environment, must still end the held CLI.
 */
import { readFileSync } from "node:fs";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { HOST_DEATH_WATCHER_MARK } from "../../src/transport/host-death.js";
import { turn } from "../../src/testing/scripted-api.js";
import { leftoverPids, scriptedApi, testEnv } from "../support.js";
import { endSuiteAfterAll } from "./harness.js";

endSuiteAfterAll(() => undefined);

/** The host's secrets and shell/Node switches: none may reach the watcher. */
const HOST_ONLY = {
  ANTHROPIC_API_KEY: "sk-ant-api03-host-only-key",
  CLAUDE_CODE_OAUTH_TOKEN: "sk-ant-oat01-host-only-token",
  BASH_ENV: "/nonexistent/host-bash-env",
  ENV: "/nonexistent/host-sh-env",
  NODE_OPTIONS: "--max-old-space-size=1234",
};

// One call on the real CLI, its process kept for reuse; prints the held pids and waits.
const HOST = `
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClaudeCodeRuntime } from ${JSON.stringify(new URL("../../dist/index.js", import.meta.url).href)};
const [baseUrl] = process.argv.slice(1);
const runtime = new ClaudeCodeRuntime({
  ...(process.env.KTX_CC_CLI ? { cliPath: process.env.KTX_CC_CLI } : {}),
  projectDir: mkdtempSync(join(tmpdir(), "ktx-watcher-env-")),
  models: { default: "sonnet" },
  env: { PATH: process.env.PATH, HOME: process.env.HOME, HTTPS_PROXY: process.env.HTTPS_PROXY, HTTP_PROXY: process.env.HTTP_PROXY, NO_PROXY: process.env.NO_PROXY, KTX_TEST_OWNER: process.env.KTX_TEST_OWNER },
  // The marker reaches the CLI, so the suite's orphan search finds it if the watcher fails.
  passEnv: ["KTX_TEST_OWNER"],
  apiEndpoint: { baseUrl, apiKey: "sk-test" },
  warm: false,
});
await runtime.generateText({ prompt: "hi" });
process.stdout.write(JSON.stringify({ held: runtime.reusePids }) + "\\n");
setInterval(() => {}, 1000);
`;

const isWatcher = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(HOST_DEATH_WATCHER_MARK);
  } catch {
    return false;
  }
};
/** Live and ours (zombies aside), wherever it was re-parented. */
const alive = (pid: number) => leftoverPids().includes(pid);
const environ = (pid: number) =>
  readFileSync(`/proc/${pid}/environ`, "latin1")
    .split("\0")
    .filter(Boolean)
    .map((entry) => entry.slice(0, entry.indexOf("=")));

describe.runIf(process.platform === "linux")("the host-death watcher's environment", () => {
  it("holds PATH alone while a runtime holds a CLI, and the watcher still ends that CLI when the host is killed", { timeout: 60_000 }, async () => {
    const api = await scriptedApi([turn.text("ok")]);
    const host = execa(process.execPath, ["--input-type=module", "-e", HOST, api.baseUrl], { env: testEnv(HOST_ONLY), extendEnv: false, reject: false });
    const { held } = await new Promise<{ held: number[] }>((resolve, reject) => {
      let out = "";
      host.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("\n")) resolve(JSON.parse(out.split("\n")[0]!));
      });
      void host.then((result) => reject(new Error(`host ended early: ${result.stderr}`)));
    });
    // Read while the host lives, asserted once it is killed (a failure leaves nothing running).
    const hostEnv = environ(host.pid!);
    const watchers = leftoverPids().filter(isWatcher);
    const watcherEnv = watchers.map(environ);
    const killedAt = Date.now();
    host.kill("SIGKILL");
    await host;
    while ((held.some(alive) || watchers.some(isWatcher)) && Date.now() - killedAt < 5_000) await new Promise((resolve) => setTimeout(resolve, 20));

    expect(held.length).toBe(1);
    // The host itself has them (so the watcher could have inherited them).
    expect(hostEnv).toEqual(expect.arrayContaining(Object.keys(HOST_ONLY)));
    expect(watcherEnv).toEqual([["PATH"]]);
    expect(held.filter(alive)).toEqual([]);
    expect(watchers.filter(isWatcher)).toEqual([]);
  });
});
