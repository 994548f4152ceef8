/**
 * A runtime on a CLI version that cannot reuse processes (2.1.142, 2.1.200: they refuse the rewind) says so when it
 * resolves the CLI: once per runtime through its logger, once per process as a `KTX_CC_NO_REUSE` process warning,
 * naming the version and the fix. A stand-in CLI reports the version (its `--version` is answered by a shell line).
 */
import { afterEach, expect, it } from "vitest";
import { ClaudeCodeRuntime } from "../../src/index.js";
import { createScriptedCli } from "../../src/testing/index.js";
import { cleanup, tempDir } from "../support.js";

afterEach(cleanup);

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

async function processWarningsDuring(action: () => Promise<void>): Promise<Error[]> {
  const seen: Error[] = [];
  const listener = (warning: Error) => seen.push(warning);
  process.on("warning", listener);
  try {
    await action();
    // process warnings are delivered on the next tick
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off("warning", listener);
  }
  return seen.filter((warning) => (warning as { code?: string }).code === "KTX_CC_NO_REUSE");
}

it("on 2.1.142 and 2.1.200 warns once per runtime and once per process, naming the version and the fix; not on 2.1.286+ nor with reuse off", async () => {
  for (const version of ["2.1.142", "2.1.200"]) {
    const first = runtimeOn(version);
    const second = runtimeOn(version);
    const emitted = await processWarningsDuring(async () => {
      await first.runtime.cli();
      await first.runtime.cli();
      await second.runtime.cli();
    });
    for (const { warnings } of [first, second]) {
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`Claude Code CLI ${version} refuses rewind_conversation`);
      expect(warnings[0]).toContain("from 2.1.286 on");
    }
    expect(emitted.map((warning) => warning.message)).toEqual([first.warnings[0]]);
    await Promise.all([first.runtime.close(), second.runtime.close()]);
  }

  const quiet = [runtimeOn("2.1.286"), runtimeOn("2.1.330"), runtimeOn("2.1.142", { reuse: false })];
  const emitted = await processWarningsDuring(async () => {
    for (const { runtime } of quiet) await runtime.cli();
  });
  expect(emitted).toEqual([]);
  for (const { runtime, warnings } of quiet) {
    expect(warnings).toEqual([]);
    await runtime.close();
  }
});
