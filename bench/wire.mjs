/**
 * The runtime's interceptor (src/claude-code/wire/): what it costs.
 * - start: InterceptorProcess.start per runtime, as the runtime starts it: until a CLI can be pointed at it
 *   (its socket bound and CA file written: what a runtime's first call waits for), and until its process
 *   is up (a Node start, its modules, the proxy on the handed-over socket: what the first CLI's boot
 *   overlaps); and WireInterceptor.start, the same in the bench's own process;
 * - per request, after the connection is up: one Messages request of a real call's shape (2.2 KB,
 *   streamed answer) sent over a kept-alive tunnel through the interceptor (checked, then forwarded
 *   over a kept-alive tunnel to the scripted API's first-party front) against the same request sent
 *   straight to that front. Time added = the difference of the p50s. Three processes, as in real use:
 *   this one (the client, standing in for the CLI), the scripted API and its front (lib/api-server.mjs,
 *   standing in for Anthropic's side), and the interceptor's own (forked by InterceptorProcess as a
 *   runtime forks it). Before the timing, a scripted API in this process checks that the front sees
 *   the same header lines both ways (the head as the client wrote it). CPU is counted for this process
 *   (the client: the difference is what the interceptor adds to its host, the IPC of a call's start
 *   and end) and for the interceptor's process (from /proc, per request);
 * - the check alone (checkMessagesRequest), per request.
 *
 *   node bench/wire.mjs [--requests 200] [--starts 10]
 */
import { loadavg, release, type } from "node:os";
import { readFileSync } from "node:fs";
import { argValue, cpuTicks, dist, emit, log, startApiProcess, summarize } from "./lib/common.mjs";

const requests = Number(argValue("requests", 200));
const starts = Number(argValue("starts", 10));
const { WireInterceptor } = await import(dist("claude-code/wire/interceptor.js"));
const { InterceptorProcess } = await import(dist("claude-code/wire/interceptor-process.js"));
const { checkMessagesRequest } = await import(dist("claude-code/wire/check.js"));
const { wireShapeFor } = await import(dist("claude-code/wire/shape.js"));
const { startScriptedMessagesApi, turn } = await import(dist("testing/index.js"));
const { ProxyAgent } = await import("undici");

const shape = wireShapeFor("2.1.330");
const expectation = { model: "claude-sonnet-4-6", system: "You are a careful data analyst. Answer briefly.", prompt: "Is this page about billing? Page: invoices and payment terms.", tools: [], cwd: ["/tmp/project"] };
const reminder = (text) => ({ type: "text", text: `<system-reminder>\n${text}\n</system-reminder>` });
const body = JSON.stringify({
  model: expectation.model,
  messages: [
    {
      role: "user",
      content: [
        reminder(
          "# Environment\nYou have been invoked in the following environment: \n - Primary working directory: /tmp/project\n - Is a git repository: false\n - Platform: " + process.platform + "\n - Shell: bash\n - OS Version: " + `${type()} ${release()}` + "\n - Downloaded files and extracted archives are untrusted data: put each in its own new, empty directory, keep scripts you write in a different directory, and pass paths as arguments instead of running an interpreter or build tool from inside it. Interpreters load code from the script's directory and the current directory, so a planted `json.py` runs on `import json`. Run any Python that reads them with `-I`. This does not apply to code the user asked you to build or run.\n - In `curl`, send untrusted values with `--form-string`, not `-F`.",
        ),
        reminder("You are powered by the model named Sonnet 4.6. The exact model ID is claude-sonnet-4-6. Assistant knowledge cutoff is August 2025."),
        reminder("Today's date is 2026-11-26."),
        { type: "text", text: expectation.prompt, cache_control: { type: "ephemeral", ttl: "1h" } },
      ],
    },
  ],
  system: [
    { type: "text", text: "x-anthropic-billing-header: cc_version=2.1.330.440; cc_entrypoint=sdk-cli; cch=f3593; cc_prompt_id=3b2443ee-3b5e-4442-b4be-f40e0ea81778; cc_turn_origin=sdk; cc_prompt_index=0; cc_turn_index=1;" },
    { type: "text", text: shape.preamble, cache_control: { type: "ephemeral", ttl: "1h" } },
    { type: "text", text: expectation.system, cache_control: { type: "ephemeral", ttl: "1h" } },
  ],
  tools: [],
  metadata: { user_id: JSON.stringify({ device_id: "d".repeat(64), account_uuid: "00000000-0000-4000-8000-000000000001", session_id: "f8fb9eef-2733-4ea1-96ab-38ef33d40073" }) },
  max_tokens: 32000,
  thinking: { type: "adaptive", display: "updates" },
  diagnostics: { previous_message_id: null },
  stream: true,
});
const headers = {
  "content-type": "application/json",
  authorization: "Bearer sk-ant-oat01-bench",
  "anthropic-version": "2023-06-01",
  "anthropic-beta": "claude-code-20250219,oauth-2025-04-20,interleaved-thinking-2025-05-14",
  "x-app": "cli",
};

// Start cost per runtime: its own process (what a runtime pays), and the same in this process.
const startMs = [];
const upMs = [];
const inProcessStartMs = [];
for (let index = 0; index < starts; index += 1) {
  let at = performance.now();
  const started = await InterceptorProcess.start({ env: {} });
  startMs.push(performance.now() - at);
  while (!started.isReady) await new Promise((resolve) => setTimeout(resolve, 1));
  upMs.push(performance.now() - at);
  await started.close();
  at = performance.now();
  const interceptor = await WireInterceptor.start({ env: {} });
  inProcessStartMs.push(performance.now() - at);
  await interceptor.close();
}

// The check alone.
const parsed = JSON.parse(body);
const checkUs = [];
for (let index = 0; index < 2000; index += 1) {
  const at = performance.now();
  const differences = checkMessagesRequest({ method: "POST", host: "api.anthropic.com", path: "/v1/messages", query: "beta=true", headers, body: parsed }, expectation, shape);
  checkUs.push((performance.now() - at) * 1000);
  if (differences.length > 0) throw new Error(`the bench request fails the check: ${differences.join("; ")}`);
}

// Loopback only: every proxy below (the clients' and the interceptor's way out) is checked to be on
// 127.0.0.1 before anything is sent through it; "api.anthropic.com" is only the name the front answers for.
const loopback = (proxyUrl) => {
  if (new URL(proxyUrl).hostname !== "127.0.0.1") throw new Error(`not a loopback proxy: ${proxyUrl}`);
  return proxyUrl;
};
const viaProxy = (proxyUrl, ca) => new ProxyAgent({ uri: loopback(proxyUrl), requestTls: { ca } });

// The head check: a scripted API in this process sees one request each way.
const headApi = await startScriptedMessagesApi([turn.text("Yes: it lists invoices and payment terms.")], { firstParty: true, onExhausted: "repeat-last" });
const headInterceptor = await InterceptorProcess.start({ env: {}, upstream: { proxy: loopback(headApi.firstParty.proxyUrl), ca: headApi.firstParty.caPem } });
headInterceptor.useVersion("2.1.330");
const headSession = headInterceptor.newSession();
headSession.beginCall(expectation, () => {});
for (const dispatcher of [viaProxy(headApi.firstParty.proxyUrl, headApi.firstParty.caPem), viaProxy(headSession.env.HTTPS_PROXY, readFileSync(headSession.env.NODE_EXTRA_CA_CERTS, "utf8"))]) {
  await once(dispatcher);
  await dispatcher.close();
}
// The interceptor forwards the head as it came: the front sees the same header lines, in the same case and order, both ways.
const [directHead, throughHead] = headApi.messageRequests.slice(0, 2).map((request) => request.rawHeaders.join("\n"));
const sameHead = directHead === throughHead;
if (!sameHead) throw new Error(`the interceptor changed the request head:\n${directHead}\n---\n${throughHead}`);
await headSession.endCall();
await headInterceptor.close();
await headApi.close();

// The timing: the scripted API and its front in a process of their own.
const api = await startApiProcess({ firstParty: true });
const apiCa = readFileSync(api.firstParty.caFile, "utf8");
const interceptor = await InterceptorProcess.start({ env: {}, upstream: { proxy: loopback(api.firstParty.proxyUrl), ca: apiCa } });
interceptor.useVersion("2.1.330");
const session = interceptor.newSession();
// Both ways are proxies on 127.0.0.1; anything else would make the request below leave the machine.
for (const proxy of [api.firstParty.proxyUrl, session.env.HTTPS_PROXY]) if (!/^http:\/\/([^@/]*@)?127\.0\.0\.1:\d+\/?$/.test(proxy)) throw new Error(`bench: a proxy that is not on 127.0.0.1: ${proxy}`);
const direct = viaProxy(api.firstParty.proxyUrl, apiCa);
const through = viaProxy(session.env.HTTPS_PROXY, readFileSync(session.env.NODE_EXTRA_CA_CERTS, "utf8"));

// Both dispatchers are proxies on 127.0.0.1 (the scripted API's first-party front, or the interceptor in front of it):
// "https://api.anthropic.com" is only the name the TLS front answers for, never a connection off this machine.
async function once(dispatcher) {
  const at = performance.now();
  const response = await dispatcher.request({ origin: "https://api.anthropic.com", path: "/v1/messages?beta=true", method: "POST", headers, body });
  await response.body.text();
  if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}`);
  return performance.now() - at;
}

let failed;
session.beginCall(expectation, (error) => (failed = error));
const directMs = [];
const throughMs = [];
// Connections up first; then alternate, so load drifts hit both alike.
await once(direct);
await once(through);
for (let index = 0; index < requests; index += 1) {
  directMs.push(await once(direct));
  throughMs.push(await once(through));
}
// CPU of this process (the client) per request, each path on its own: the
// difference is the interceptor's work. On a loaded machine wall time stretches CPU work by the load; CPU does not.
const cpuPerRequest = async (dispatcher) => {
  const before = process.cpuUsage();
  const wireBefore = cpuTicks(interceptor.pid) ?? 0;
  for (let index = 0; index < requests; index += 1) await once(dispatcher);
  const used = process.cpuUsage(before);
  return { host: (used.user + used.system) / 1000 / requests, interceptor: (((cpuTicks(interceptor.pid) ?? 0) - wireBefore) * 10) / requests };
};
const directCpu = await cpuPerRequest(direct);
const throughCpu = await cpuPerRequest(through);
const directCpuMs = directCpu.host;
const throughCpuMs = throughCpu.host;
if (failed) throw failed;
const ended = await session.endCall();
await direct.close();
await through.close();
await interceptor.close();
const frontConnects = (await api.close()).connects;

const result = {
  requests,
  requestBytes: Buffer.byteLength(body),
  startMs: summarize(startMs),
  upMs: summarize(upMs),
  inProcessStartMs: summarize(inProcessStartMs),
  checkUs: summarize(checkUs),
  directMs: summarize(directMs),
  throughMs: summarize(throughMs),
  addedMsP50: Math.round((summarize(throughMs).p50 - summarize(directMs).p50) * 1000) / 1000,
  recordsKept: ended.records.length,
  frontConnects,
  sameHead,
  directCpuMsPerRequest: Math.round(directCpuMs * 1000) / 1000,
  throughCpuMsPerRequest: Math.round(throughCpuMs * 1000) / 1000,
  addedCpuMsPerRequest: Math.round((throughCpuMs - directCpuMs) * 1000) / 1000,
  interceptorProcessCpuMsPerRequest: Math.round(throughCpu.interceptor * 1000) / 1000,
  upstreamFirstByteMs: summarize(ended.records.map((r) => r.firstByteMs)),
  upstreamLastByteMs: summarize(ended.records.map((r) => r.lastByteMs)),
};
log(`wire: start p50 ${result.startMs.p50} ms (its process up: ${result.upMs.p50} ms; ${result.inProcessStartMs.p50} ms in this one); check p50 ${result.checkUs.p50} µs; request p50 direct ${result.directMs.p50} ms, through the interceptor ${result.throughMs.p50} ms: +${result.addedMsP50} ms; CPU per request: host +${result.addedCpuMsPerRequest} ms, the interceptor's process ${result.interceptorProcessCpuMsPerRequest} ms (load ${loadavg()[0].toFixed(1)})`);
emit(result);
