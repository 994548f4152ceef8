import { WireInterceptor } from "../dist/claude-code/wire/interceptor.js";
import { startScriptedMessagesApi, turn } from "../dist/testing/index.js";
import { ProxyAgent } from "undici";
import { readFileSync } from "node:fs";
const api = await startScriptedMessagesApi([turn.text("Yes")], { firstParty: true, onExhausted: "repeat-last" });
const i = await WireInterceptor.start({ env: {}, upstream: { proxy: api.firstParty.proxyUrl, ca: api.firstParty.caPem } });
i.useVersion("2.1.330");
const s = i.newSession();
const marks = [];
const orig = WireInterceptor.prototype.request;
WireInterceptor.prototype.request = function (req, res, host, session) {
  const t0 = performance.now(); marks.push(["enter", t0]);
  res.on("finish", () => marks.push(["finish", performance.now()]));
  // refuse path: non-messages path not allowed → quick 403
  return orig.call(this, req, res, host, session);
};
const through = new ProxyAgent({ uri: s.env.HTTPS_PROXY, requestTls: { ca: readFileSync(s.env.NODE_EXTRA_CA_CERTS, "utf8") } });
for (let k = 0; k < 30; k++) {
  const t = performance.now(); marks.push(["send", t]);
  const r = await through.request({ origin: "https://api.anthropic.com", path: "/api/nothing", method: "GET", headers: {} });
  await r.body.text(); marks.push(["done", performance.now()]);
}
const rows = []; for (let k = marks.length - 16; k < marks.length; k++) rows.push(`${marks[k][0]} +${(marks[k][1] - marks[k-1][1]).toFixed(2)}`);
console.log(rows.join("\n"));
await through.close(); await i.close(); await api.close();
