import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClaudeCodeRuntime } from "/work/wt-wire/dist/index.js";
import { startScriptedMessagesApi, turn } from "/work/wt-wire/dist/testing/index.js";
const api = await startScriptedMessagesApi([turn.text("x")], { firstParty: true, onExhausted: "repeat-last" });
const home = api.firstParty.login(mkdtempSync(join(tmpdir(), "ktx-home-")));
const projectDir = mkdtempSync(join(tmpdir(), "ktx-proj-"));
for (const wire of [false, true, false, true]) {
  const runtime = new ClaudeCodeRuntime({ projectDir, models: { default: "sonnet" }, env: { PATH: process.env.PATH, HOME: home, ...api.firstParty.env() }, warm: false, reuse: false, wire });
  await runtime.generateText({ role: "default", system: "Be brief.", prompt: "Same" });
  await runtime.close();
}
for (const q of api.messageRequests) console.log(q.rawBody.length, q.rawHeaders.filter((_, i) => i % 2 === 0).join(","));
const b = api.messageRequests.map(q => JSON.parse(q.rawBody).messages[0].content.map(c => c.text.slice(0, 80)));
console.log(JSON.stringify(b, null, 1));
await api.close();
