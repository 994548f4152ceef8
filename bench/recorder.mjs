/**
 * Section 6: what recording a transcript costs. The wire lines of every committed 2.1.330 fixture
 * are fed, in order, through the real recorder (openRunTranscript: redaction, JSON encoding, the
 * buffered file stream, close) and, as the baseline, through an observer that does nothing.
 * Reported per run (open to closed file) and per line, plus the redaction rate on one big line, and
 * ms per MiB on adversarial lines (issue 40: the red team's inputs, and the keywords of the rules that
 * cost most per character): goal <= 50 ms per MiB on the worst.
 *
 *   node bench/recorder.mjs [--reps 20]
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, argValue, cleanup, dist, emit, log, summarize, tempDir } from "./lib/common.mjs";

const reps = argValue("reps", 20);
const { openRunTranscript } = await import(dist("transcripts/recorder.js"));
const { findSecrets, ruleCount, GITLEAKS_VERSION } = await import(dist("transcripts/secret-rules/index.js"));
const { Redactor, REDACTION_LIMITS } = await import(dist("transcripts/redact.js"));

const FIXTURES = join(ROOT, "fixtures", "transcripts", "2.1.330");
/** Secrets as a real run passes them: the scrubbed variables' values and the endpoint key. */
const SECRETS = ["sk-ant-bench-dummy-0123456789", "oauth-token-bench-abcdefghijklmnop", "vertex-project-bench"];

function fixtureRuns() {
  return readdirSync(FIXTURES)
    .filter((file) => file.endsWith(".jsonl"))
    .sort()
    .map((file) => {
      const records = readFileSync(join(FIXTURES, file), "utf8").trim().split("\n").map((line) => JSON.parse(line));
      const header = records.find((record) => record.kind === "header");
      const wire = records.filter((record) => ["in", "out", "stderr"].includes(record.kind)).map((record) => [record.kind, record.text]);
      return { name: file.replace(/\.jsonl$/, ""), header, wire, bytes: wire.reduce((sum, [, text]) => sum + Buffer.byteLength(text), 0) };
    });
}

async function recordOnce(dir, run, index) {
  const started = performance.now();
  const transcript = await openRunTranscript(dir, { name: `${run.name}-${index}`, secrets: SECRETS });
  transcript.observer.start({ cliPath: run.header.cliPath, cliVersion: run.header.cliVersion, args: run.header.args, cwd: run.header.cwd, env: Object.fromEntries(run.header.envNames.map((name) => [name, "x"])) });
  const linesStarted = performance.now();
  for (const [direction, text] of run.wire) transcript.observer.wire(direction, text);
  const linesMs = performance.now() - linesStarted;
  transcript.observer.exit({ exitCode: 0 });
  await transcript.close();
  return { runMs: performance.now() - started, linesMs };
}

function baselineOnce(run) {
  const observer = { start() {}, wire() {}, exit() {} };
  const started = performance.now();
  observer.start();
  for (const [direction, text] of run.wire) observer.wire(direction, text);
  observer.exit();
  return performance.now() - started;
}

const runs = fixtureRuns();
const dir = tempDir("recorder");
const perRun = [];
const perLineUs = [];
const baseline = [];
for (let rep = 0; rep < reps + 1; rep += 1) {
  for (const run of runs) {
    const { runMs, linesMs } = await recordOnce(dir, run, rep);
    const base = baselineOnce(run);
    if (rep === 0) continue; // warm-up
    perRun.push(runMs);
    perLineUs.push((linesMs / run.wire.length) * 1000);
    baseline.push(base);
  }
}

// The maintained pattern set alone (gitleaks' rules and the local shapes, issue 32): what it adds to one
// call's recording, every wire line of a fixture run passed through it once. A reused call's lines are
// a subset of a cold run's (no launch, no initialize), so the per-run figure bounds the per-reused-call one.
const patternSetPerRunMs = [];
for (let rep = 0; rep < reps + 1; rep += 1) {
  for (const run of runs) {
    const started = performance.now();
    for (const [, text] of run.wire) findSecrets(text);
    if (rep > 0) patternSetPerRunMs.push(performance.now() - started);
  }
}

// Redaction scans every line: its rate on one 3.9 MiB line (under the 4 MiB a line is read to) says what a huge tool result costs to record.
const bigLine = JSON.stringify({ type: "user", message: { content: [{ type: "tool_result", content: "orders customer_id billing ".repeat(150_000) }] } });
const big = await openRunTranscript(dir, { name: "big", secrets: SECRETS });
const bigStarted = performance.now();
big.observer.wire("in", bigLine);
await big.close();
const bigMs = performance.now() - bigStarted;

// Adversarial lines of 1 MiB (issue 40), redacted without the per-line budget so the rules' own cost shows;
// `cutByBudget` says whether the recorder's default budget would have cut the line.
const MIB = 2 ** 20;
const repeatTo = (unit, n) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
const ADVERSARIAL = {
  "a://b: repeated": repeatTo("a://b:", MIB),
  "mysql repeated": repeatTo("mysql ", MIB),
  "a://<32 hex> repeated": repeatTo("a://0123456789abcdef0123456789abcdef", MIB),
  "PEM header, no END": `-----BEGIN RSA PRIVATE KEY-----\n${repeatTo("MIIEowIBAAKCAQEA", MIB - 32)}`,
  "PEM headers repeated": repeatTo("-----BEGIN OPENSSH PRIVATE KEY-----\\n", MIB),
  "backslashes": repeatTo("\\", MIB),
  '"token":" then backslashes': `{"token":"${repeatTo("\\", MIB - 11)}`,
  '\\u0041 repeated': repeatTo("\\u0041", MIB),
  "curl -u repeated": repeatTo("curl -u ", MIB),
  "api= repeated (generic-api-key)": repeatTo("api=", MIB),
  "glpat- repeated": repeatTo("glpat-", MIB),
};
const unbounded = new Redactor(SECRETS, { maxChars: Number.POSITIVE_INFINITY, budgetMs: Number.POSITIVE_INFINITY });
const bounded = new Redactor(SECRETS);
const adversarial = {};
for (const [name, text] of Object.entries(ADVERSARIAL)) {
  unbounded.redact(text);
  let best = Number.POSITIVE_INFINITY;
  for (let rep = 0; rep < Math.max(3, Math.min(reps, 5)); rep += 1) {
    const started = performance.now();
    unbounded.redact(text);
    best = Math.min(best, performance.now() - started);
  }
  const cutByBudget = bounded.redact(text).includes("is not recorded");
  adversarial[name] = { msPerMiB: Math.round((best / (text.length / MIB)) * 10) / 10, cutByBudget };
}
const worst = Object.entries(adversarial).sort((a, b) => b[1].msPerMiB - a[1].msPerMiB)[0];

const result = {
  fixtures: runs.length,
  linesPerRun: summarize(runs.map((run) => run.wire.length)),
  perRunMs: summarize(perRun),
  perLineUs: summarize(perLineUs),
  noopObserverPerRunMs: summarize(baseline),
  patternSet: { rules: ruleCount(), gitleaks: GITLEAKS_VERSION, perRunMs: summarize(patternSetPerRunMs) },
  bigLine: { mib: Math.round((bigLine.length / 2 ** 20) * 10) / 10, ms: Math.round(bigMs), MBps: Math.round(bigLine.length / 2 ** 20 / (bigMs / 1000)) },
  adversarial: { limits: REDACTION_LIMITS, perInput: adversarial, worst: { input: worst[0], msPerMiB: worst[1].msPerMiB }, goalMsPerMiB: 50 },
};
log(`  recorder pattern set (${ruleCount()} rules, gitleaks ${GITLEAKS_VERSION}): ${result.patternSet.perRunMs.p50} ms per run p50, ${result.patternSet.perRunMs.p95} p95`);
log(`  recorder: ${result.perRunMs.p50} ms per run (p50, ${runs.length} fixtures, open to closed file), ${result.perLineUs.p50} µs per line; one ${result.bigLine.mib} MiB line in ${result.bigLine.ms} ms`);
log(`  recorder adversarial lines (1 MiB each): worst ${worst[1].msPerMiB} ms per MiB (${worst[0]}; goal <= 50); ${Object.entries(adversarial).map(([name, { msPerMiB }]) => `${name} ${msPerMiB}`).join(", ")}`);
await cleanup();
emit(result);
