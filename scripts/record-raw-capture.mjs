#!/usr/bin/env node
/**
 * Records a raw stream-json capture the way a user makes one — `claude -p --output-format
 * stream-json --verbose > run.ndjson` — with the real CLI against the scripted Messages API on
 * 127.0.0.1 and an empty HOME (loopback only). The model delegates to a subagent (Task), which reads a
 * file, so the capture has subagent activity, tool results and a final result.
 * `--first-party`: as a logged-in user runs it (a throwaway claude.ai login in the HOME, api.anthropic.com
 * through the scripted API's front on 127.0.0.1 as HTTPS_PROXY with its test CA; any other host refused);
 * without it, at the scripted API's base URL with an API key (how the committed captures were made).
 * Usage: npm run build && node scripts/record-raw-capture.mjs <claude binary> <out.ndjson> [--partial] [--first-party]
 */
import { spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startScriptedMessagesApi } from "../dist/testing/index.js";

const [cliArg, outArg, ...flags] = process.argv.slice(2);
if (!cliArg || !outArg) {
  console.error("usage: node scripts/record-raw-capture.mjs <claude binary> <out.ndjson> [--partial] [--first-party]");
  process.exit(2);
}
const home = mkdtempSync(join(tmpdir(), "ktx-capture-home-"));
const project = mkdtempSync(join(tmpdir(), "ktx-capture-project-"));
const notes = join(project, "NOTES.txt");
writeFileSync(notes, "grain: the level of detail of one row\n");

let main = 0;
let sub = 0;
const api = await startScriptedMessagesApi((request) => {
  const tools = (request.body?.tools ?? []).map((tool) => tool.name);
  const first = JSON.stringify(request.body?.messages?.[0]?.content ?? "");
  if (tools.length === 0) return { text: "ok" };
  if (first.includes("Use a subagent.")) {
    // The main thread: delegate once, then answer with what the subagent found.
    return main++ === 0
      ? { text: "I will ask a subagent.", toolCalls: [{ name: tools.includes("Task") ? "Task" : "Agent", input: { description: "Read the notes", prompt: `Read ${notes} and say what grain means.`, subagent_type: "general-purpose", run_in_background: false } }] }
      : { text: "Grain is the level of detail of one row (found by the subagent)." };
  }
  // The subagent: read the file, then report.
  return sub++ === 0 ? { toolCalls: [{ name: "Read", input: { file_path: notes } }] } : { text: "The notes say: grain is the level of detail of one row." };
}, { firstParty: flags.includes("--first-party") });
// First party: the login and the front (proxy and CA); the suite's trap proxy, when set, still takes plain HTTP.
const route = api.firstParty
  ? { ...api.firstParty.env(), HOME: api.firstParty.login(home) }
  : { HOME: home, ANTHROPIC_BASE_URL: api.baseUrl, ANTHROPIC_API_KEY: "sk-test-scripted" };

const args = ["-p", "What does grain mean in my notes? Use a subagent.", "--output-format", "stream-json", "--verbose", "--model", "sonnet", ...(flags.includes("--partial") ? ["--include-partial-messages"] : [])];
const child = spawn(resolve(cliArg), args, {
  cwd: project,
  env: {
    PATH: process.env.PATH,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    CLAUDE_CODE_MAX_RETRIES: "0",
    // Kept when set: the test suite's trap proxy, which proves the run stays on loopback.
    ...Object.fromEntries(["HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "KTX_TEST_OWNER"].flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : []))),
    ...route,
  },
  stdio: ["ignore", "pipe", "inherit"],
});
const out = createWriteStream(outArg);
child.stdout.pipe(out);
const code = await new Promise((done) => child.on("close", done));
await new Promise((done) => out.end(done));
await api.close();
rmSync(home, { recursive: true, force: true });
rmSync(project, { recursive: true, force: true });
console.error(`exit ${code}; ${api.messageRequests.length} API requests (main ${main}, subagent ${sub})${api.firstParty ? `, first party (to ${[...new Set(api.requests.map((request) => request.host))].join(", ")}; refused: ${api.firstParty.refused.join(", ") || "none"})` : ""}; wrote ${outArg}`);
