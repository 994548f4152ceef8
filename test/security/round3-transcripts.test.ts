/**
 * Issue 32, transcripts: finding 7 (every file opened as what it must be: no planted symlink or hard
 * link written through, `transcript show` of a FIFO refused at once, `--out` write errors typed) and
 * finding 5 (redaction from a maintained pattern set: gitleaks' rules as data plus the local shapes it
 * lacks; a real run's tool returns, and fails with, the eight shapes of the third round and the twelve
 * of the second, and the transcript holds none; `transcript import` redacts and says so in the header).
 * (Policy and config files that are not regular files: round3-read-ahead.test.ts.)
 */
import { execFileSync, spawnSync } from "node:child_process";
import { linkSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { transcriptCommand } from "../../src/cli/transcript.js";
import { OutputWriteError, TranscriptWriteError } from "../../src/errors/index.js";
import type { KtxRuntimeToolDescriptor } from "../../src/mcp/tools.js";
import type { RunLoopResult } from "../../src/runtime/types.js";
import { turn } from "../../src/testing/scripted-api.js";
import { openRunTranscript } from "../../src/transcripts/recorder.js";
import { ruleCount, skippedRules } from "../../src/transcripts/secret-rules/index.js";
import { failure, runtimeFor, scriptedApi, tempDir, testEnv } from "../support.js";
import { type Attack, attackBatch, endSuiteAfterAll, DB_PASSWORD, HARMLESS_NAMED, SECOND_ROUND_SECRETS } from "./harness.js";

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
      expect(run.stderr).toContain(`TranscriptFileError: ${fifo} is a FIFO (named pipe), not a transcript file`);
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

/** The eight shapes of the third round (issue 32), each with the part that must not survive. */
const ROUND_3: Record<string, { text: string; secret: string }> = {
  "AWS_SECRET_ACCESS_KEY=wJalr…": { text: "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Kd3Lx2Vb9", secret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Kd3Lx2Vb9" },
  ".netrc machine … password …": { text: "machine db.internal.example login deploy password Hunter2-netrc-Secret", secret: "Hunter2-netrc-Secret" },
  "mysql -p'…'": { text: "mysql -u root -p'My5ql-Pa55word' -h db.internal app", secret: "My5ql-Pa55word" },
  "Azure SAS sig=": { text: "https://acct.blob.core.windows.net/c/f.csv?sv=2022-11-02&ss=b&srt=o&sp=r&se=2030-01-01&sig=Xk9q8v7ZK3mQ2Lr5tWnB1cD4eF6gH8jK0lM2nP4qR6s%3D", secret: "Xk9q8v7ZK3mQ2Lr5tWnB1cD4eF6gH8jK0lM2nP4qR6s" },
  "Twilio SK<32 hex>": { text: "twilio api key SK3f9a2b7c4d1e6f8a0b5c2d7e9f1a3b4c", secret: "SK3f9a2b7c4d1e6f8a0b5c2d7e9f1a3b4c" },
  "Shopify shpat_…": { text: "shopify admin 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 in the deploy log", secret: "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" },
  "Telegram bot token <digits>:AA…": { text: "curl https://api.example/bot 5839201746:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1/getMe", secret: "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1" },
  'GCP "private_key_id"': { text: '{"type": "service_account", "project_id": "proj", "private_key_id": "3b8f2a7c4d1e6f9a0b5c2d7e9f1a3b4c5d6e7f80"}', secret: "3b8f2a7c4d1e6f9a0b5c2d7e9f1a3b4c5d6e7f80" },
};

let run: RunLoopResult;
const attacks: Attack[] = [...Object.entries(ROUND_3).map(([name, shape]) => [`third round: ${name}`, shape] as const), ...Object.entries(SECOND_ROUND_SECRETS).map(([name, shape]) => [`second round: ${name}`, shape] as const)].map(([name, { secret }]) => ({
  kind: "redaction",
  name: `${name} in tool output and a tool error never reaches the transcript`,
  held: () => {
    const text = readFileSync(run.transcriptPath!, "utf8");
    expect(text).not.toContain(secret);
    // Nor JSON-escaped once (a tool result inside a protocol line).
    expect(text).not.toContain(JSON.stringify(secret).slice(1, -1));
    expect(text).toContain("[REDACTED]");
  },
}));

attackBatch("the 8 shapes of issue 32 and the 12 of issue 20 in a real run's transcript", attacks, async () => {
  const all = [...Object.values(ROUND_3), ...Object.values(SECOND_ROUND_SECRETS)].map((shape) => shape.text).join("\n");
  const tools: KtxRuntimeToolDescriptor<any>[] = [
    { name: "leak", description: "returns secrets", inputSchema: z.object({}), execute: () => ({ output: all, nested: JSON.stringify({ log: all }) }) },
    {
      name: "fail",
      description: "fails quoting secrets",
      inputSchema: z.object({}),
      execute: () => {
        throw new Error(all);
      },
    },
  ];
  const api = await scriptedApi((_request, index) => (index === 0 ? turn.tools({ name: "mcp__ktx__leak", input: {} }, { name: "mcp__ktx__fail", input: {} }) : turn.text("done")));
  const env = testEnv({ DATABASE_URL: `postgres://app:${DB_PASSWORD}@db.internal:5432/app`, BUILD_REF: HARMLESS_NAMED });
  run = await runtimeFor(api, { env, transcript: { dir: tempDir("transcripts") } }).runAgentLoop({ modelRole: "default", systemPrompt: "", userPrompt: "use the tools", toolSet: tools, stepBudget: 4 });
  if (run.stopReason === "error") throw run.error;
  expect(run.toolCalls.map((call) => call.ok)).toEqual([true, false]);
});

describe("the maintained pattern set (finding 5)", () => {
  it("ships gitleaks' rules, every one compiled for JavaScript", () => {
    expect(skippedRules()).toEqual([]);
    expect(ruleCount()).toBeGreaterThan(200);
  });

  it("transcript import redacts a raw capture's secrets and says so in the header", async () => {
    const secrets = ["sk-ant-api03-capturedKey0123456789abcdefXYZ", "ghp_CapturedGithubToken0123456789abcdefAB", "AKIAIOSFODNN7CAPTURE", "MIIEowIBAAKCAQEAcapturedPemBody0123456789", "Capt-DB-Passw0rd"];
    const text = [`key ${secrets[0]}`, `token ${secrets[1]}`, `aws ${secrets[2]}`, `-----BEGIN RSA PRIVATE KEY-----\n${secrets[3]}\n-----END RSA PRIVATE KEY-----`, `postgres://app:${secrets[4]}@db:5432/app`].join("\n");
    const lines = [
      { type: "system", subtype: "init", cwd: "/p", session_id: "s", tools: [], mcp_servers: [], model: "claude-sonnet-4-6", claude_code_version: "2.1.330" },
      { type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: text }] } },
      { type: "result", subtype: "success", is_error: false, result: "done", num_turns: 1, session_id: "s" },
    ];
    const capture = join(tempDir("capture"), "run.ndjson");
    writeFileSync(capture, `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`);
    const out = join(tempDir("imported"), "run.jsonl");
    let stderr = "";
    const status = await transcriptCommand(["import", capture, "--out", out], { stdout: () => undefined, stderr: (text) => void (stderr += text) }, "usage");
    expect(status, stderr).toBe(0);
    expect(stderr).toMatch(/secrets redacted in 1 of them/);
    const written = readFileSync(out, "utf8");
    for (const secret of secrets) expect(written, secret).not.toContain(secret);
    const header = JSON.parse(written.split("\n")[0]!);
    expect(header.redacted).toMatchObject({ linesChanged: 1 });
    expect(header.redacted.rules).toMatch(/gitleaks v8\.30\.1/);
  });
});
