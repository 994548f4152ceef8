/** Helpers to run the runtime against a recorded transcript instead of the real CLI. */
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The compiled stand-in (the same path from src/ under vitest and from dist/). */
export const REPLAY_CLI_SCRIPT = fileURLToPath(new URL("../../dist/transcripts/replay-cli.js", import.meta.url));

/**
 * Writes an executable that behaves like the CLI did in `transcriptPath`; pass it as `cliPath`.
 * (`allowUnverifiedCli` is not needed: it reports the recorded version.) A recording made with an
 * `apiEndpoint` replays with one (nothing listens there); one made on the first-party path replays with
 * `wire: false`, since the replay answers without any request and the runtime's interceptor (on by
 * default there) would fail the call.
 */
export function createReplayCli(transcriptPath: string, dir = mkdtempSync(join(tmpdir(), "ktx-replay-"))): string {
  const path = join(dir, "claude-replay");
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  writeFileSync(path, `#!/bin/sh\nexec ${quote(process.execPath)} ${quote(REPLAY_CLI_SCRIPT)} ${quote(transcriptPath)} "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}
