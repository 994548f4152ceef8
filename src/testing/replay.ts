/** Helpers to run the runtime against a recorded transcript instead of the real CLI. */
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, readSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { registerStandInCli } from "../binary/stand-in.js";

/** The compiled stand-in (the same path from src/ under vitest and from dist/). */
export const REPLAY_CLI_SCRIPT = fileURLToPath(new URL("../../dist/transcripts/replay-cli.js", import.meta.url));

/**
 * Writes an executable that behaves like the CLI did in `transcriptPath`; pass it as `cliPath`.
 * (`allowUnverifiedCli` is not needed: it reports the recorded version.) A recording made with an
 * `apiEndpoint` replays with one (nothing listens there); one made on the first-party path replays
 * without the runtime's interceptor on its own: the path is registered as a stand-in (src/binary/stand-in.ts),
 * since the replay answers without any request.
 */
export function createReplayCli(transcriptPath: string, dir = mkdtempSync(join(tmpdir(), "ktx-replay-"))): string {
  const path = join(dir, "claude-replay");
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  // `--version` (read once per runtime) is answered by the shell when the header names a version: a
  // Node start less per runtime. Anything else, or a header it cannot read, goes to the stand-in.
  const version = recordedVersion(transcriptPath);
  const answerVersion = version ? `if [ "$#" = 1 ] && [ "$1" = --version ]; then printf '%s\\n' ${quote(`${version} (Claude Code)`)}; exit 0; fi\n` : "";
  // A session's recording holds one process per segment: each start of this stand-in claims the next (replay-cli.ts).
  const launches = join(dir, "launches");
  mkdirSync(launches, { recursive: true });
  writeFileSync(path, `#!/bin/sh\n${answerVersion}KTX_REPLAY_LAUNCHES=${quote(launches)}; export KTX_REPLAY_LAUNCHES\nexec ${quote(process.execPath)} ${quote(REPLAY_CLI_SCRIPT)} ${quote(transcriptPath)} "$@"\n`);
  chmodSync(path, 0o755);
  registerStandInCli(path); // It answers without any request: runtimes run it without the interceptor.
  return path;
}

/** The `cliVersion` of the transcript's header line (its first), or undefined when it has none. */
function recordedVersion(transcriptPath: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(transcriptPath, "r");
    const buffer = Buffer.alloc(64 * 1024);
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, length).toString("utf8");
    const newline = text.indexOf("\n");
    if (newline < 0) return undefined;
    const header = JSON.parse(text.slice(0, newline)) as { kind?: unknown; cliVersion?: unknown };
    return header.kind === "header" && typeof header.cliVersion === "string" && /^\d+\.\d+\.\d+$/.test(header.cliVersion) ? header.cliVersion : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
