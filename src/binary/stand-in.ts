/**
 * Stand-in CLIs made by `ktx-claude-code/testing` (`createScriptedCli`, `createReplayCli`) in this
 * process: they answer without any request, so a runtime whose `cliPath` is one runs without the
 * interceptor, as it would with an `apiEndpoint` (billing.ts `interceptorState`).
 *
 * Only the host process can say so: the helper registers the path it wrote, in memory. Nothing a CLI
 * says about itself (its version, its output, a file beside it) marks it, since a wrapper around the
 * real CLI could say the same. The set lives on `globalThis` under a registered symbol so the package's
 * `dist/` and `src/` copies (a test importing both) share it.
 */
import { resolve } from "node:path";

const KEY = Symbol.for("ktx-claude-code.stand-in-clis");

function registry(): Set<string> {
  const holder = globalThis as { [KEY]?: Set<string> };
  return (holder[KEY] ??= new Set<string>());
}

/** Marks a path the testing helpers just wrote as a stand-in CLI. */
export function registerStandInCli(path: string): void {
  registry().add(resolve(path));
}

/** Whether `cliPath` is a stand-in the testing helpers wrote in this process. */
export function isStandInCli(cliPath: string | undefined): boolean {
  return cliPath !== undefined && registry().has(resolve(cliPath));
}
