#!/usr/bin/env node
/**
 * Stand-in Claude Code CLI that plays the CLI side of a recorded transcript:
 *   node replay-cli.js <transcript.jsonl> [claude args…]
 * It writes the recorded CLI lines, waits wherever the recording has a line from the host, and checks
 * each host line against the recording (normalised). A divergence is reported on stderr, exit 86.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type LoadedTranscript, loadTranscript } from "./reader.js";
import { Replay, REPLAY_DIVERGENCE_EXIT, sessionSegments } from "./replay.js";

/**
 * The part of the recording this process plays. A session's transcript holds one segment per CLI process
 * its turns ran on (a header each): the n-th start of the stand-in plays the n-th, counted in the
 * directory `KTX_REPLAY_LAUNCHES` names (createReplayCli sets it). Any other transcript is played whole.
 */
function segmentFor(transcript: LoadedTranscript): LoadedTranscript {
  const segments = sessionSegments(transcript);
  if (segments.length <= 1) return segments[0] ?? transcript;
  const dir = process.env.KTX_REPLAY_LAUNCHES;
  if (!dir) return segments[0]!;
  for (const [index, segment] of segments.entries()) {
    try {
      // Claimed atomically: two starts never play the same process.
      mkdirSync(join(dir, `launch-${index + 1}`));
      return segment;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  throw new Error(`the recording has ${segments.length} CLI processes and all of them were played already; this start is one more than the recording had`);
}

async function main(): Promise<void> {
  const [transcriptPath, ...args] = process.argv.slice(2);
  if (!transcriptPath) {
    process.stderr.write("usage: replay-cli <transcript.jsonl> [claude args…]\n");
    process.exit(2);
  }
  const transcript = loadTranscript(transcriptPath);
  if (args.includes("--version") || args.includes("-v")) {
    process.stdout.write(`${transcript.header.cliVersion} (Claude Code)\n`);
    return;
  }
  const replay = new Replay(segmentFor(transcript), {
    writeStdout: (text) => process.stdout.write(text),
    writeStderr: (text) => process.stderr.write(text),
    cwd: process.cwd(),
  });
  process.stdin.on("data", (chunk: Buffer) => replay.pushInput(chunk));
  process.stdin.on("end", () => replay.endInput());
  process.stdin.on("error", () => replay.endInput());
  const exit = await replay.play(args);
  await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
  if (exit.signal) process.kill(process.pid, exit.signal as NodeJS.Signals);
  process.exit(exit.exitCode ?? 0);
}

main().catch((error: unknown) => {
  process.stderr.write(`replay-cli: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(REPLAY_DIVERGENCE_EXIT);
});
