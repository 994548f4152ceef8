#!/usr/bin/env node
/**
 * Prints the VERIFIED_CLI_VERSIONS entry of a real CLI binary, in the table's own shape, and what it
 * was read from (src/cli/probe-facts.ts has the method; `fixtures verify` uses the same function).
 * Loopback only: the scripted Messages API on 127.0.0.1, an empty HOME; the analytics-on run only in
 * a private network namespace.
 * Usage: npm run build && node scripts/probe-cli-facts.mjs <path to claude>
 */
import { probeCliFacts } from "../dist/cli/probe-facts.js";

const cli = process.argv[2];
if (!cli) {
  console.error("usage: node scripts/probe-cli-facts.mjs <path to claude>");
  process.exit(2);
}
console.log(JSON.stringify(await probeCliFacts(cli), null, 2));
