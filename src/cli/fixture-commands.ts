/**
 * The `fixtures` subcommands' arguments and help, in a module of their own (no runtime import): main.ts
 * parses with them, and test/docs/cli-reference.test.ts checks docs/cli.md against them.
 */
import type { CommandSpec } from "./args.js";

const SCENARIO_OPTION = { type: "string", value: "S,S", help: "only these scenarios of the catalog (default: all 13)" } as const;
const CACHE_OPTION = { type: "string", value: "DIR", help: "where other CLI versions are installed (default: ~/.cache/ktx-claude-code/cli, or $XDG_CACHE_HOME)" } as const;

export const FIXTURE_COMMANDS: Record<string, CommandSpec> = {
  record: {
    name: "fixtures record",
    positionals: { shown: "", count: 0, what: "positional arguments" },
    summary: "Records the scenario catalog with the real CLI against the scripted Messages API, one transcript per scenario and version.",
    options: {
      versions: { type: "string", value: "V,V", help: "CLI versions (default: every verified one); others are installed on demand" },
      scenarios: { type: "string", value: "S,S", help: "only these scenarios of the catalog (default: all 13); a session scenario (session-tool-interrupt-crash) is recorded only when named" },
      out: { type: "string", value: "DIR", help: "where to write (default: the package's fixtures/transcripts)" },
      "cache-dir": CACHE_OPTION,
      verification: { type: "boolean", help: "record a version the verified table does not hold yet (a step of verifying it; `fixtures verify` does the whole)" },
    },
    notes: ["A version that is not verified is refused (exit 2) unless --verification."],
    examples: ["ktx-claude-code fixtures record --versions 2.1.330 --scenarios text,tool-loop --out /tmp/fixtures"],
  },
  compare: {
    name: "fixtures compare",
    positionals: { shown: "", count: 0, what: "positional arguments" },
    summary:
      "Runs the scenario catalog live on another CLI (a binary, or a version installed on demand) and reports the drift against recorded fixtures: a verdict, outcomes, crashes, protocol structure (what the runtime reads first), and each scenario's differences.",
    options: {
      cli: { type: "string", value: "PATH", help: "a Claude Code binary to run" },
      version: { type: "string", value: "X.Y.Z", help: "a version to install (once, into the cache) and run; the installed CLI's own version is that binary" },
      against: { type: "string", value: "X.Y.Z", help: "whose fixtures to compare with (default: the installed CLI's version when verified, else the newest verified)" },
      scenarios: SCENARIO_OPTION,
      "cache-dir": CACHE_OPTION,
      json: { type: "boolean", help: "the report as JSON, every value whole" },
    },
    notes: [
      "Exactly one of --cli and --version.",
      "The report leads with a verdict: same, additive only (new fields, message types or list items only), changed (something removed or changed), outcome differs; --json carries it as `verdict`.",
      "Exit codes: 0 same, 1 any other verdict, 2 it could not run (wrong arguments, no fixtures, an install that failed, a missing binary).",
      "Progress goes to stderr, the report to stdout.",
    ],
    examples: ["ktx-claude-code fixtures compare --version 2.1.286", "ktx-claude-code fixtures compare --cli ./claude --against 2.1.286 --scenarios text,tool-loop --json"],
  },
  verify: {
    name: "fixtures verify",
    positionals: { shown: "", count: 0, what: "positional arguments" },
    summary:
      "Verifies a CLI version in one command, from a checkout: the drift report against the pinned fixtures, the facts probed from the binary, the fixtures recorded into fixtures/transcripts/<X>/, its first-party wire shape recorded there (wire-shape.json), its entry written into src/binary/versions.ts and package.json's dependency union, then the replay and e2e suites run against it (KTX_CC_CLI). Nothing is committed: review the diff.",
    options: {
      cli: { type: "string", value: "PATH", help: "a Claude Code binary to verify" },
      version: { type: "string", value: "X.Y.Z", help: "a version to install (checked, once, into the cache) and verify" },
      suites: { type: "string", value: "S,S", help: "suites to run against it: replay, e2e, or none (default: replay,e2e)" },
      "cache-dir": CACHE_OPTION,
    },
    notes: [
      "Exactly one of --cli and --version.",
      "Exit codes: 0 every phase ran and the suites passed, 1 a suite failed (the written entry and fixtures are left for a look), 2 it could not run.",
      "Each phase's time is printed; progress goes to stderr, the summary to stdout.",
      "It writes into the checkout it runs from (`node dist/cli/main.js fixtures verify …` after `npm run build`), never into an installed package.",
    ],
    examples: ["ktx-claude-code fixtures verify --version 2.1.332"],
  },
  "record-wire": {
    name: "fixtures record-wire",
    positionals: { shown: "", count: 0, what: "positional arguments" },
    summary:
      "Records a CLI version's first-party wire shape: runs the CLI on the first-party path against the scripted API (loopback only, a throwaway login), through the runtime's interceptor in record mode, over text, object (with the structured-output nudge), a 2-tool loop, thinking, a reused process, a request answered 503 once (what the CLI sends again) and an expired login, and writes fixtures/transcripts/<X>/wire-shape.json, the file the interceptor checks that version's requests against (docs/isolation.md, \"The wire check\").",
    options: {
      cli: { type: "string", value: "PATH", help: "a Claude Code binary to record" },
      version: { type: "string", value: "X.Y.Z", help: "a version to install (checked, once, into the cache) and record; the installed CLI's own version is that binary" },
      out: { type: "string", value: "FILE", help: "where to write (default: the package's fixtures/transcripts/<X>/wire-shape.json)" },
      check: { type: "boolean", help: "compare the recording with the file instead of writing it" },
      "cache-dir": CACHE_OPTION,
    },
    notes: [
      "Exactly one of --cli and --version.",
      "Exit codes: 0 written (or, with --check, the same), 1 with --check: the recording differs from the file, 2 it could not run or the recording holds something the recorder cannot explain (named).",
      "Progress goes to stderr; the summary and what changed against the previous file to stdout.",
    ],
    examples: ["ktx-claude-code fixtures record-wire --version 2.1.332", "ktx-claude-code fixtures record-wire --cli ./claude --check"],
  },
};
