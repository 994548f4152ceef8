/**
 * Shipped fixtures name no machine (issue 39, item 2): no absolute path of the recording machine in any
 * file under fixtures/transcripts, and `fixtures record` / `fixtures verify` leave a fixture byte for
 * byte as it was when the new recording is the same under `transcript diff`'s normalisation.
 */
import { copyFileSync, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { CLI_PLACEHOLDER, scrubMachinePaths, writeFixture } from "../../src/cli/fixture-paths.js";
import { loadTranscript, projectDirLength } from "../../src/transcripts/reader.js";
import { cleanup, tempDir } from "../support.js";

afterEach(cleanup);

const ROOT = join(import.meta.dirname, "../../fixtures/transcripts");

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? files(join(dir, entry.name)) : [join(dir, entry.name)]));
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Absolute paths of any machine's usual roots, and this machine's HOME and temp dir, as whole path segments. */
const MACHINE_PATH = new RegExp(
  [
    "(?<![\\w.-])/home/",
    "(?<![\\w.-])/root(?=[/\"\\\\\\s]|$)",
    "(?<![\\w.-])/tmp(?=[/\"\\\\\\s]|$)",
    "(?<![\\w.-])/private/",
    "(?<![\\w.-])/var/folders",
    "(?<![\\w])[A-Za-z]:\\\\\\\\",
    "(?<![\\w])[A-Za-z]:\\\\(?![\\\\nrtu\"bf])",
    ...[homedir(), tmpdir()].filter((path) => path.length > 1).map((path) => `${escape(path)}(?=[/"\\\\\\s]|$)`),
  ].join("|"),
);

it("no shipped fixture holds an absolute path of the machine that recorded it", () => {
  const all = files(ROOT);
  expect(all.filter((path) => path.endsWith(".jsonl")).length).toBeGreaterThanOrEqual(6 * 13);
  const found: string[] = [];
  // The raw protocol captures ship too (fixtures/protocol-*), and hold their capture machine's paths as placeholders.
  const protocol = join(ROOT, "..");
  const captures = readdirSync(protocol).filter((name) => name.startsWith("protocol-")).flatMap((name) => files(join(protocol, name)));
  expect(captures.length).toBeGreaterThan(0);
  for (const path of [...all, ...captures]) {
    readFileSync(path, "utf8")
      .split("\n")
      .forEach((line, index) => {
        const match = MACHINE_PATH.exec(line);
        if (match) found.push(`${path.slice(protocol.length + 1)}:${index + 1}: …${line.slice(Math.max(0, match.index - 40), match.index + 60)}…`);
      });
  }
  expect(found, found.slice(0, 20).join("\n")).toEqual([]);
  // The header keeps what the replay and the drift report need: the project dir's length.
  for (const path of all.filter((file) => file.endsWith(".jsonl"))) {
    const { header } = loadTranscript(path);
    expect([header.cwd, header.cliPath]).toEqual(["<cwd>", CLI_PLACEHOLDER]);
    expect(projectDirLength(header)).toBeGreaterThan(10);
  }
});

/**
 * A shipped fixture as a new recording of the same run would come out of the recorder on this machine:
 * real paths (a project dir as long, a HOME and a socket under the temp dir, the binary in a cache under
 * HOME), another pid, other times, other ids.
 */
function asRecordedHere(fixture: string): string {
  const text = readFileSync(fixture, "utf8");
  const { header } = loadTranscript(fixture);
  const root = tmpdir();
  const cwd = join(root, "ktx-scenario-x-".padEnd(projectDirLength(header) - root.length - 1 - 6, "x") + "Ab12Cd");
  expect(cwd).toHaveLength(projectDirLength(header));
  return text
    .replace(`"cwd":"<cwd>","cwdLength":${projectDirLength(header)}`, `"cwd":${JSON.stringify(cwd)}`)
    .replace(`"cliPath":"<cli>"`, `"cliPath":${JSON.stringify(join(homedir(), ".cache/ktx-claude-code/cli/2.1.331/node_modules/@anthropic-ai/claude-code-linux-x64/claude"))}`)
    .replaceAll("<cwd-slug>", cwd.replace(/[^A-Za-z0-9]/g, "-"))
    .replaceAll("<cwd>", cwd)
    .replaceAll("<home>", join(root, "ktx-scenario-home-Zz9Yy8"))
    .replaceAll("<tmp>/", `${root}/cc-socks/`)
    .replace(/"startedAt":"[^"]+"/, '"startedAt":"2031-01-01T00:00:00.000Z"')
    .replace(/"pid":\d+/g, '"pid":77777')
    .replace(/ktx_\d+_(r?\d+)/g, "ktx_77777_$1")
    .replace(/\b(msg|toolu)_scripted_/g, "$1_other_");
}

it("a re-recording that is the same under transcript diff's normalisation leaves the fixture byte for byte as it was", () => {
  for (const scenario of ["text", "tool-loop", "api-500-then-ok"]) {
    const fixture = join(tempDir("fixture"), `${scenario}.jsonl`);
    copyFileSync(join(ROOT, "2.1.331", `${scenario}.jsonl`), fixture);
    const before = readFileSync(fixture);
    const mtime = statSync(fixture).mtimeMs;
    const recorded = asRecordedHere(fixture);
    expect(recorded).toContain(tmpdir());
    expect(recorded).not.toContain("<cwd>");
    expect(writeFixture(fixture, recorded), scenario).toBe("unchanged");
    expect(readFileSync(fixture).equals(before)).toBe(true);
    expect(statSync(fixture).mtimeMs).toBe(mtime);
  }
});

it("a recording that differs is written, without the machine's paths; a new one is written too", () => {
  const dir = tempDir("fixture");
  const fixture = join(dir, "text.jsonl");
  copyFileSync(join(ROOT, "2.1.331", "text.jsonl"), fixture);
  const recorded = asRecordedHere(fixture);
  const changed = recorded.replace(/\\"input_tokens\\":(\d+)/, (_, n: string) => `\\"input_tokens\\":${Number(n) + 3}`);
  expect(changed).not.toBe(recorded);
  expect(writeFixture(fixture, changed)).toBe("written");
  const written = readFileSync(fixture, "utf8");
  expect(written).not.toMatch(MACHINE_PATH);
  expect(written).toBe(scrubMachinePaths(changed));
  expect(loadTranscript(fixture).header).toMatchObject({ cwd: "<cwd>", cliPath: CLI_PLACEHOLDER, cwdLength: projectDirLength(loadTranscript(join(ROOT, "2.1.331", "text.jsonl")).header) });
  // Scrubbing is idempotent: the written fixture scrubs to itself.
  expect(scrubMachinePaths(written)).toBe(written);
  const fresh = join(dir, "new.jsonl");
  expect(writeFixture(fresh, recorded)).toBe("new");
  expect(readFileSync(fresh, "utf8")).not.toMatch(MACHINE_PATH);
});
