/**
 * A runtime on a CLI version that cannot reuse processes (2.1.142, 2.1.200: they refuse the rewind) says so when it
 * resolves the CLI: once per runtime through its logger, once per process as a `KTX_CC_NO_REUSE` process warning,
 * naming the version and the fix. A stand-in CLI reports the version (its `--version` is answered by a shell line);
 * no call is made, the warning comes when the runtime resolves the CLI.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import { afterEach, expect, it } from "vitest";
import { ClaudeCodeRuntime } from "../../src/index.js";
import { createScriptedCli } from "../../src/testing/index.js";
import { cleanup, tempDir } from "../support.js";

afterEach(cleanup);

const ROOT = join(import.meta.dirname, "../..");

function runtimeOn(version: string, options: { reuse?: false } = {}) {
  const cli = createScriptedCli([], { version, dir: tempDir("no-reuse-cli") });
  const warnings: string[] = [];
  const runtime = new ClaudeCodeRuntime({
    projectDir: tempDir("no-reuse-project"),
    models: { default: "sonnet" },
    cliPath: cli.path,
    warm: false,
    wire: false,
    ...options,
    logger: { debug() {}, info() {}, warn: (message) => warnings.push(message), error() {} },
  });
  return { runtime, warnings };
}

/**
 * The process-wide part runs in a Node process of its own (the built package, as a host imports it): this worker
 * shares its module graph with other files, one of which may already have announced a version.
 */
async function processWarningsInFreshHost(version: string): Promise<{ codes: string[]; messages: string[] }> {
  const cli = createScriptedCli([], { version, dir: tempDir("no-reuse-host-cli") });
  const script = `
    const { ClaudeCodeRuntime } = await import(${JSON.stringify(pathToFileURL(join(ROOT, "dist/index.js")).href)});
    const seen = [];
    process.on("warning", (warning) => seen.push(warning));
    const make = () => new ClaudeCodeRuntime({ projectDir: ${JSON.stringify(tempDir("no-reuse-host-project"))}, models: { default: "sonnet" }, cliPath: ${JSON.stringify(cli.path)}, warm: false, wire: false });
    const runtimes = [make(), make()];
    for (const runtime of runtimes) { await runtime.cli(); await runtime.cli(); }
    await Promise.all(runtimes.map((runtime) => runtime.close()));
    await new Promise((resolve) => setImmediate(resolve));
    console.log(JSON.stringify({ codes: seen.map((w) => w.code ?? w.name), messages: seen.map((w) => w.message) }));
  `;
  const { stdout } = await execa(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, NODE_NO_WARNINGS: "" } });
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as { codes: string[]; messages: string[] };
}

it("on 2.1.142 and 2.1.200 warns once per runtime through its logger, naming the version and the fix; not on 2.1.286+ nor with reuse off", async () => {
  for (const version of ["2.1.142", "2.1.200"]) {
    const first = runtimeOn(version);
    const second = runtimeOn(version);
    await first.runtime.cli();
    await first.runtime.cli();
    await second.runtime.cli();
    for (const { warnings } of [first, second]) {
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`Claude Code CLI ${version} refuses rewind_conversation`);
      expect(warnings[0]).toContain("from 2.1.286 on");
    }
    await Promise.all([first.runtime.close(), second.runtime.close()]);
  }
  for (const { runtime, warnings } of [runtimeOn("2.1.286"), runtimeOn("2.1.330"), runtimeOn("2.1.142", { reuse: false })]) {
    await runtime.cli();
    expect(warnings).toEqual([]);
    await runtime.close();
  }
});

it("emits one KTX_CC_NO_REUSE process warning per process and version, however many runtimes resolve it; none on a version with reuse", async () => {
  const old = await processWarningsInFreshHost("2.1.142");
  expect(old.codes.filter((code) => code === "KTX_CC_NO_REUSE")).toHaveLength(1);
  expect(old.messages.find((message) => message.includes("rewind_conversation"))).toMatch(/^Claude Code CLI 2\.1\.142 refuses rewind_conversation.*from 2\.1\.286 on/);
  const current = await processWarningsInFreshHost("2.1.330");
  expect(current.codes).not.toContain("KTX_CC_NO_REUSE");
});
