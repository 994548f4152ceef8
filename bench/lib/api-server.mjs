/**
 * The scripted Anthropic Messages API (src/testing/scripted-api.ts, from dist/) on 127.0.0.1, run as
 * its own process. Prints `{"baseUrl": ...}` once listening; exits when its stdin closes.
 */
import { dist } from "./common.mjs";
import { scriptedTurn } from "./workloads.mjs";

const { startScriptedMessagesApi } = await import(dist("testing/scripted-api.js"));

const api = await startScriptedMessagesApi((request) => scriptedTurn(request.body));
// The API records every request for test assertions; a bench makes thousands, so drop them.
const forget = setInterval(() => {
  api.requests.length = 0;
  api.messageRequests.length = 0;
}, 200);

process.stdout.write(`${JSON.stringify({ baseUrl: api.baseUrl })}\n`);
process.stdin.resume();
process.stdin.on("end", async () => {
  clearInterval(forget);
  await api.close();
  process.exit(0);
});
