/**
 * The subscription-mode scripted Messages API for the ingest bench, in its own process. Every answer
 * carries usage headers (5-hour window at 20 %). With `--reject-after N`, request N+1 onwards is
 * rejected (429, 5-hour limit reached) until `--reset-ms` after that first rejection, then answers
 * again. Prints `{"baseUrl"}` once listening, `{"rejection": {...}}` at the first rejection, and
 * (`--mark-at N`, a baseline) `{"mark": {at}}` when request N+1 arrives: where a rejection would be.
 */
import { dist } from "./common.mjs";

const arg = (name, fallback) => {
  const index = process.argv.indexOf(`--${name}`);
  return index < 0 ? fallback : Number(process.argv[index + 1]);
};
const rejectAfter = arg("reject-after", Infinity);
const resetMs = arg("reset-ms", 8_000);
const markAt = arg("mark-at", rejectAfter);

const { startScriptedMessagesApi, turn } = await import(dist("testing/scripted-api.js"));

let resetAt;
let answered = 0;
let rejected = 0;
const api = await startScriptedMessagesApi((_request, index) => {
  if (index === markAt) process.stdout.write(`${JSON.stringify({ mark: { at: Date.now() } })}\n`);
  if (index === rejectAfter) {
    const at = Date.now();
    resetAt = at + resetMs;
    // The CLI sees the reset in whole seconds, rounded up: that is the wait the API asked for.
    const headerResetAt = Math.ceil(resetAt / 1000) * 1000;
    process.stdout.write(`${JSON.stringify({ rejection: { at, resetAt, headerResetAt } })}\n`);
  }
  if (resetAt !== undefined && Date.now() < resetAt) {
    rejected += 1;
    return turn.limitReached({ resetsAt: new Date(resetAt) });
  }
  answered += 1;
  return turn.withRateLimit(turn.text("ok"), { status: "allowed", utilization: 0.2 });
});
const forget = setInterval(() => {
  api.requests.length = 0;
  api.messageRequests.length = 0;
}, 200);

process.stdout.write(`${JSON.stringify({ baseUrl: api.baseUrl })}\n`);
process.stdin.resume();
process.stdin.on("end", async () => {
  clearInterval(forget);
  process.stdout.write(`${JSON.stringify({ counts: { answered, rejected } })}\n`);
  await api.close();
  process.exit(0);
});
