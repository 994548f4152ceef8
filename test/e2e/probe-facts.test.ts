/**
 * The probe behind scripts/probe-cli-facts.mjs and `fixtures verify` reads the CLI in use's entry of the
 * verified table exactly (the bundled one, or KTX_CC_CLI's): built-in tools over the aliases and KTX's
 * pinned ids, plugins with analytics on (run in a private network namespace), aliases, the model
 * switch, the MCP handshake count and the binary's sha256 — on the first-party path (a claude.ai login)
 * and at the base URL `fixtures verify` probes.
 */
import { describe, expect, it } from "vitest";
import { probeCliFacts } from "../../src/cli/probe-facts.js";
import { cliFactsInUse, realCli } from "../support.js";

describe("probeCliFacts", () => {
  // First party, as real users' CLIs run (a claude.ai login, api.anthropic.com through the scripted API's front):
  // the table's facts hold there. At the base URL too: that is the probe `fixtures verify` runs to write the entry.
  for (const firstParty of [true, false]) {
    it(`reproduces the verified-table entry of the CLI in use (${firstParty ? "first party" : "base URL, as fixtures verify probes"})`, { timeout: 240_000 }, async () => {
      const probed = await probeCliFacts(realCli(), { firstParty });
      // Without a private network namespace the analytics-on plugins are not read, and the entry cannot match.
      expect(probed.entry).toEqual(await cliFactsInUse());
      // What the entry is read from, for the maintainer: every model's tools, the switch's request.
      expect(Object.keys(probed.details.toolsByModel)).toEqual(expect.arrayContaining(["sonnet", "opus", "haiku", "claude-sonnet-4-6"]));
      expect(probed.details.modelSwitch.apiModels).toHaveLength(1);
    });
  }
});
