/**
 * The scripted Anthropic Messages API (src/testing/scripted-api.ts, from dist/) on 127.0.0.1, run as
 * its own process. With `--first-party` it also runs its first-party front (src/testing/first-party.ts):
 * an HTTPS proxy on 127.0.0.1 answering for api.anthropic.com with a test CA, the way a logged-in CLI
 * reaches the API. Prints `{"baseUrl": ..., "firstParty"?: {"proxyUrl", "caFile"}}` once listening;
 * exits when its stdin closes, after printing `{"connects": n}` (the first-party front's CONNECTs).
 * A `count` line on stdin prints `{"messages": n, "all": n}`: the requests received so far (the
 * provider section's requests per call).
 */
import { dist } from "./common.mjs";
import { scriptedTurn } from "./workloads.mjs";

const { startScriptedMessagesApi } = await import(dist("testing/scripted-api.js"));

const firstParty = process.argv.includes("--first-party");
const api = await startScriptedMessagesApi((request) => scriptedTurn(request.body), { firstParty });
// The API records every request for test assertions; a bench makes thousands, so drop them (counted first).
const totals = { messages: 0, all: 0 };
const tally = () => {
  totals.messages += api.messageRequests.length;
  totals.all += api.requests.length;
  api.requests.length = 0;
  api.messageRequests.length = 0;
};
const forget = setInterval(tally, 200);

process.stdout.write(`${JSON.stringify({ baseUrl: api.baseUrl, ...(api.firstParty ? { firstParty: { proxyUrl: api.firstParty.proxyUrl, caFile: api.firstParty.caFile } } : {}) })}\n`);
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  for (const line of chunk.split("\n")) {
    if (line.trim() !== "count") continue;
    tally();
    process.stdout.write(`${JSON.stringify(totals)}\n`);
  }
});
process.stdin.on("end", async () => {
  clearInterval(forget);
  process.stdout.write(`${JSON.stringify({ connects: api.firstParty?.connects ?? 0 })}\n`);
  await api.close();
  process.exit(0);
});
