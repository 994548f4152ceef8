import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClaudeCodeRuntime } from "/work/wt-wire/dist/index.js";
import { startScriptedMessagesApi, turn } from "/work/wt-wire/dist/testing/index.js";
const api = await startScriptedMessagesApi([turn.text("fresh")], { firstParty: true, onExhausted: "repeat-last" });
const home = api.firstParty.login(mkdtempSync(join(tmpdir(), "ktx-home-")), { expired: true });
const rt = new ClaudeCodeRuntime({ projectDir: mkdtempSync(join(tmpdir(), "ktx-proj-")), models: { default: "sonnet" }, env: { PATH: process.env.PATH, HOME: home, ...api.firstParty.env() }, warm: false, reuse: false, wire: true, transcript: { dir: mkdtempSync(join(tmpdir(), "ktx-tr-")) } });
try { const r = await rt.generateTextResult({ prompt: "hi" }); console.log("OK", r.text); } catch (e) { console.log("ERR", e.name, e.message.slice(0, 300)); }
for (const q of api.requests) console.log(q.method, q.host, q.path);
console.log(api.firstParty.refused);
await rt.close(); await api.close();
