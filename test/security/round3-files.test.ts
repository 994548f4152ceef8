/**
 * Issue 32, finding 7: every file the library opens is opened as what it must be. A symlink or hard
 * link planted in the transcript dir is never written through, `transcript show` of a FIFO is refused
 * at once instead of hanging, and a CLI output path that cannot be written is a typed error. (Policy and
 * config files that are not regular files: round3-policy.test.ts.)
 */
import { execFileSync, spawnSync } from "node:child_process";
import { linkSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { transcriptCommand } from "../../src/cli/transcript.js";
import { OutputWriteError, TranscriptWriteError } from "../../src/errors/index.js";
import { turn } from "../../src/testing/scripted-api.js";
import { openRunTranscript } from "../../src/transcripts/recorder.js";
import { failure, runtimeFor, scriptedApi, tempDir } from "../support.js";
import { endSuiteAfterAll } from "./harness.js";

endSuiteAfterAll(() => undefined);

const MAIN = join(import.meta.dirname, "../../dist/cli/main.js");
const FIXTURE = join(import.meta.dirname, "../../fixtures/transcripts/2.1.330/text.jsonl");
const cli = (...args: string[]) => spawnSync(process.execPath, [MAIN, ...args], { encoding: "utf8", timeout: 30_000 });

describe("transcripts are never written through a planted link (finding 7)", () => {
  for (const kind of ["symlink", "hard link"] as const) {
    it(`a ${kind} planted.jsonl -> ../victim in the transcript dir is refused; the victim is untouched and no CLI starts`, async () => {
      const root = tempDir("transcript-root");
      const dir = join(root, "transcripts");
      const victim = join(root, "victim");
      writeFileSync(victim, "precious\n");
      execFileSync("mkdir", [dir]);
      if (kind === "symlink") symlinkSync("../victim", join(dir, "planted.jsonl"));
      else linkSync(victim, join(dir, "planted.jsonl"));
      const api = await scriptedApi([turn.text("should never be asked")]);
      const error = await failure(runtimeFor(api).generateText({ prompt: "secret prompt", transcript: { dir, name: "planted" } }));
      expect(error).toBeInstanceOf(TranscriptWriteError);
      expect(error!.message).toContain(join(dir, "planted.jsonl"));
      expect(readFileSync(victim, "utf8")).toBe("precious\n");
      expect(api.messageRequests).toHaveLength(0);
    });
  }

  it("a chosen name may still replace its own earlier transcript (a regular file)", async () => {
    const dir = tempDir("transcripts");
    writeFileSync(join(dir, "again.jsonl"), "an older run, longer than the new one\n".repeat(50));
    const transcript = await openRunTranscript(dir, { name: "again", secrets: [] });
    transcript.observer.exit?.({ exitCode: 0, signal: undefined });
    await transcript.close();
    expect(readFileSync(join(dir, "again.jsonl"), "utf8")).toMatch(/^\{"kind":"exit","t":[0-9.]+,"exitCode":0,"signal":null\}\n$/);
  });
});

describe("the command-line tool reads and writes only what it must (finding 7)", () => {
  it("transcript show <fifo> is refused at once with a typed error (exit 2), not a hang", () => {
    const fifo = join(tempDir("fifo"), "run.jsonl");
    execFileSync("mkfifo", [fifo]);
    for (const command of [["show"]]) {
      const [sub, ...rest] = command;
      const run = cli("transcript", sub!, ...rest, fifo);
      expect(run.signal, `transcript ${sub} hung on the FIFO`).toBeNull();
      expect(run.status, `transcript ${sub}`).toBe(2);
      expect(run.stderr).toContain(`InvalidInputError: ${fifo} is a FIFO (named pipe), not a transcript file`);
    }
  });

  it("transcript trace --out /missing/x.json and import --out give a typed write error (exit 2), not a raw ENOENT", () => {
    const trace = cli("transcript", "trace", FIXTURE, "--out", "/missing/x.json");
    expect(trace.status).toBe(2);
    expect(trace.stderr).toMatch(/^OutputWriteError: Could not write \/missing\/x\.json \(ENOENT\): its directory does not exist\./);
    expect(trace.stderr).not.toMatch(/^Error: ENOENT/m);
    expect(trace.stderr).not.toMatch(/\n\s+at /);
    const capture = join(tempDir("capture"), "run.ndjson");
    writeFileSync(capture, `${JSON.stringify({ type: "system", subtype: "init", cwd: "/p", session_id: "s", tools: [], mcp_servers: [], model: "m", claude_code_version: "2.1.330" })}\n`);
    const run = cli("transcript", "import", capture, "--out", "/missing/x.json");
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^OutputWriteError: Could not write \/missing\/x\.json \(ENOENT\)/);
  });

  it("--out refuses to write through a symlink (in this process: the exit code is shown above)", async () => {
    const dir = tempDir("out");
    const victim = join(dir, "victim");
    writeFileSync(victim, "precious\n");
    symlinkSync(victim, join(dir, "trace.json"));
    const error = await failure(transcriptCommand(["trace", FIXTURE, "--out", join(dir, "trace.json")], { stdout: () => undefined, stderr: () => undefined }, "usage"));
    expect(error).toBeInstanceOf(OutputWriteError);
    expect(error!.message).toMatch(/\(ELOOP\): it is a symbolic link/);
    expect(readFileSync(victim, "utf8")).toBe("precious\n");
  });
});
