/**
 * Issue 40, finding 6: a `remote-settings.json` holding only `{"env":{"LANG":"C.UTF-8"}}` "fails every
 * call with an IsolationError about plugins and an unverified CLI". The file was not the cause: the
 * read-ahead passes it, and what fails is the init check, because 2.1.330 turns its built-in
 * `cc-plugin-sec-default` plugin on for a Team or Enterprise login (with the file or without it, and
 * whatever `--settings` says). The error now says that, instead of blaming a CLI version. A policy env
 * with other names still stops the call before any CLI starts, naming file, key, each variable and the
 * reason that holds for it. Real CLI, first party behind the interceptor, the scripted API on loopback.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkInit, initAdvice } from "../../src/claude-code/checks/isolation.js";
import { IsolationError } from "../../src/errors/index.js";
import type { SystemInitMessage } from "../../src/protocol/messages.js";
import { turn } from "../../src/testing/scripted-api.js";
import { failure, firstPartyApi, firstPartyEnv, realCli, runtimeFor, script } from "../support.js";
import { Markers, endSuiteAfterAll, plant } from "./harness.js";

endSuiteAfterAll(() => undefined);

const markers = new Markers();

/** A claude.ai login whose credentials say `subscriptionType` (what a Team or Enterprise login writes instead of "max"). */
function loginOf(env: Record<string, string>, subscriptionType: string): void {
  const file = join(env.HOME!, ".claude", ".credentials.json");
  const credentials = JSON.parse(readFileSync(file, "utf8"));
  credentials.claudeAiOauth.subscriptionType = subscriptionType;
  writeFileSync(file, JSON.stringify(credentials), { mode: 0o600 });
}

const remoteSettings = (env: Record<string, string>) => join(env.HOME!, ".claude", "remote-settings.json");

describe("remote-settings.json env (finding 6)", () => {
  it("holding only locale and time zone names passes: the call runs on the real CLI", async () => {
    const api = await firstPartyApi([turn.text("fine")], { onExhausted: "repeat-last" });
    const env = firstPartyEnv(api);
    plant({ [remoteSettings(env)]: { env: { LANG: "C.UTF-8", LANGUAGE: "en_GB:en", LC_ALL: "C.UTF-8", TZ: "UTC" } } });
    const result = await runtimeFor(api, { env }).generateTextResult({ prompt: "hi" });
    expect(result.text).toBe("fine");
  });

  it("holding any other name stops the call before a CLI starts, naming file, key, each variable and its reason", async () => {
    const api = await firstPartyApi([turn.text("should never be asked")]);
    const env = firstPartyEnv(api);
    plant({
      [remoteSettings(env)]: {
        env: {
          LANG: "C.UTF-8",
          HTTPS_PROXY: "http://127.0.0.1:9",
          NODE_OPTIONS: "--require /tmp/x.js",
          NODE_TLS_REJECT_UNAUTHORIZED: "0",
          ANTHROPIC_API_KEY: "sk-ant-api03-planted",
          OTEL_LOG_USER_PROMPTS: "1",
          KTX_APP_FLAG: "1",
        },
      },
    });
    const wrapper = script("claude-marked", `if [ "$1" = "--version" ]; then echo "2.1.330 (Claude Code)"; exit 0; fi\n: > '${markers.path("started")}'\nexec '${realCli()}' "$@"`);
    const error = await failure(runtimeFor(api, { env, cliPath: wrapper }).generateTextResult({ prompt: "secret prompt" }));
    expect(error).toBeInstanceOf(IsolationError);
    const message = error!.message;
    const file = remoteSettings(env).replaceAll(/[.*+?^${}()|[\]\\]/g, "\\$&");
    expect(message).toMatch(new RegExp(`${file} sets HTTPS_PROXY in env: it may route requests to another server`));
    expect(message).toMatch(new RegExp(`${file} sets NODE_OPTIONS in env: it may run code inside or beside the CLI`));
    expect(message).toMatch(new RegExp(`${file} sets NODE_TLS_REJECT_UNAUTHORIZED in env: it changes TLS`));
    expect(message).toMatch(new RegExp(`${file} sets ANTHROPIC_API_KEY in env: it may carry a credential`));
    expect(message).toMatch(new RegExp(`${file} sets OTEL_LOG_USER_PROMPTS in env: it may export telemetry or logs, prompts among them`));
    expect(message).toMatch(new RegExp(`${file} sets KTX_APP_FLAG in env: it is not a locale, time zone or request knob`));
    expect(message).not.toMatch(/LANG|plugin|unverified CLI/);
    expect(markers.found()).toEqual([]);
    expect(api.requests).toHaveLength(0);
  });

  it("a Team login's built-in plugin is named as such, with or without the file, and not blamed on a CLI version", async () => {
    const messages: string[] = [];
    for (const planted of [true, false]) {
      const api = await firstPartyApi([turn.text("should never be asked")]);
      const env = firstPartyEnv(api);
      loginOf(env, "team");
      if (planted) plant({ [remoteSettings(env)]: { env: { LANG: "C.UTF-8" } } });
      const error = await failure(runtimeFor(api, { env }).generateTextResult({ prompt: "secret prompt" }));
      expect(error).toBeInstanceOf(IsolationError);
      expect(api.messageRequests).toHaveLength(0);
      messages.push(error!.message);
    }
    for (const message of messages) {
      expect(message).toMatch(/plugins were \["cc-plugin-sec-default"\], expected none \(cc-plugin-sec-default@builtin: built into the CLI, which turns it on for a Team or Enterprise login/);
      expect(message).toMatch(/ktx-claude-code runs none, and it cannot turn this one off/);
      expect(message).not.toMatch(/unverified CLI|remote-settings/);
    }
    // The file changes nothing: the same failure without it.
    expect(messages[0]).toBe(messages[1]);
  });

  it("names only the organisation's plugin so: another built-in plugin left on keeps the CLI-version advice", () => {
    const expected = { toolIds: [] as string[], structuredOutput: false, apiKeyAllowed: false, cwd: "/tmp" };
    const init = (plugins: SystemInitMessage["plugins"]) =>
      ({ type: "system", subtype: "init", session_id: "s", cwd: "/tmp", tools: [], mcp_servers: [], model: "m", permissionMode: "dontAsk", apiKeySource: "none", plugins }) as SystemInitMessage;
    const other = init([{ name: "cc-plugin-privacy", path: "builtin", source: "cc-plugin-privacy@builtin" }]);
    expect(checkInit(other, expected)).toEqual(['plugins were ["cc-plugin-privacy"], expected none']);
    expect(initAdvice(other)).toBeUndefined();
    const organisation = init([{ name: "cc-plugin-sec-default", path: "builtin", source: "cc-plugin-sec-default@builtin" }]);
    expect(checkInit(organisation, expected).join()).toMatch(/cc-plugin-sec-default@builtin: built into the CLI, which turns it on for a Team or Enterprise login/);
    expect(initAdvice(organisation)).toMatch(/cannot turn this one off/);
  });
});
