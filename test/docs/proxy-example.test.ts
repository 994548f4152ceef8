/**
 * The example of docs/guides/proxy.md, run as the page has it (public import, its own process) on the
 * first-party path: the scripted API's HTTPS front is the "corporate proxy" of the child's environment and
 * its test CA the NODE_EXTRA_CA_CERTS, as the page's command line sets them. The only change is options a
 * test needs, spread in front of the runtime's own (the test's pass-through names, no spares).
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, expect, it } from "vitest";
import { turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, cleanup, cliOption, firstPartyApi, firstPartyEnv, remainingChildren, tempDir } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const page = readFileSync(new URL("../../docs/guides/proxy.md", import.meta.url), "utf8");

it("runs behind the environment's proxy and CA: the answer, then the route shown on the result", { timeout: 120_000 }, async () => {
  const code = /```ts\n([\s\S]*?)```/.exec(page)?.[1];
  expect(code).toContain("new ClaudeCodeRuntime({ ");
  // The page's command line sets exactly the two variables the test's environment sets.
  expect(/```sh\n([\s\S]*?)```/.exec(page)?.[1]).toMatch(/^HTTPS_PROXY=\S+ NODE_EXTRA_CA_CERTS=\S+ node app\.mjs\n$/);
  const api = await firstPartyApi([turn.text("Hello there, nice to meet.")]);
  const env = firstPartyEnv(api);
  const file = join(import.meta.dirname, `.proxy-example-${process.pid}.mjs`);
  writeFileSync(file, code!.replace("new ClaudeCodeRuntime({ ", "new ClaudeCodeRuntime({ ...JSON.parse(process.env.PROXY_EXAMPLE_OPTIONS), "));
  try {
    const options = { warm: false, passEnv: TEST_PASS_ENV, ...cliOption() };
    const run = await execa(process.execPath, [file], { cwd: tempDir("project"), env: { ...env, PROXY_EXAMPLE_OPTIONS: JSON.stringify(options) }, extendEnv: false, reject: false });
    expect(run.stderr).toBe("");
    expect(run.exitCode).toBe(0);
    const [text, network, ...rest] = run.stdout.split("\n");
    expect(text).toBe("Hello there, nice to meet.");
    expect(rest).toEqual([]);
    const route = JSON.parse(network!);
    // The suite's loopback guard adds HTTP_PROXY and NO_PROXY to every test environment; they are shown too.
    expect(route).toEqual({ proxies: expect.objectContaining({ HTTPS_PROXY: api.firstParty!.proxyUrl }), trustedCa: { NODE_EXTRA_CA_CERTS: api.firstParty!.caFile }, clientCertificate: [], interceptor: "on" });
    expect(Object.keys(route.proxies)).toEqual(expect.arrayContaining(Object.keys(env).filter((name) => /_PROXY$/i.test(name))));
    // The page's sample output has the same shape.
    const sample = JSON.parse(/```json\n([\s\S]*?)```/.exec(page)![1]!);
    expect(Object.keys(sample)).toEqual(Object.keys(route));
    expect(sample.interceptor).toBe("on");
  } finally {
    rmSync(file, { force: true });
  }
  // Through the interceptor and then the proxy: the scripted API answered the one Messages request.
  expect(api.messageRequests).toHaveLength(1);
  expect(await remainingChildren()).toEqual([]);
});
