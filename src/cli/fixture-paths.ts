/**
 * What `fixtures record` and `fixtures verify` write into the shipped fixtures (issue 39, item 2): no
 * path of the recording machine — the binary's path (a cache under its HOME), its HOME, its temp dirs,
 * the scenario's project dir — and no write at all when the recording is the same as the fixture's
 * under the normalisation `transcript diff` uses, so re-verifying a version leaves `git status` clean.
 */
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { normalizeArgs } from "../transcripts/normalize.js";
import { diffTranscripts, isEmptyDiff } from "../transcripts/inspect/diff.js";
import { CWD_PLACEHOLDER, machinePaths } from "../transcripts/inspect/run-noise.js";
import { loadTranscript, projectDirLength, type LoadedTranscript } from "../transcripts/reader.js";

/** The header's `cliPath` in a fixture: which binary recorded it is the header's `cliVersion`. */
export const CLI_PLACEHOLDER = "<cli>";

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The machine's HOME as a whole path (`/root`, `/root/…`, not `/rootless`), for any path the masks above missed. */
function homeMask(): Array<[RegExp, string]> {
  const homes = new Set<string>();
  for (const home of [homedir(), process.env.HOME]) {
    if (!home || home === "/") continue;
    homes.add(home);
    if (existsSync(home)) homes.add(realpathSync(home));
  }
  return [...homes].map((home) => [new RegExp(`${escapeRegExp(JSON.stringify(home).slice(1, -1))}(?=[/\\\\"\\s]|$)`, "g"), "<home>"]);
}

function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === "string") return map(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, mapStrings(inner, map)]));
  return value;
}

/**
 * A recorded transcript's text with the recording machine's paths replaced by placeholders that name
 * no machine (`<cwd>`, `<cwd-slug>`, `<home>`, `<tmp>`, `<cli>`): the masks `transcript diff` applies
 * (run-noise.ts), so the fixture compares exactly as the recording did. The header keeps the project
 * dir's length (`cwdLength`): the token counts follow it, and a drift report runs in a dir as long.
 * The replay stand-in puts its own project dir where the header's `cwd` (`<cwd>`) stands.
 */
export function scrubMachinePaths(text: string): string {
  const lines = text.split("\n");
  const header = JSON.parse(lines[0]!) as Record<string, unknown>;
  const cwd = typeof header.cwd === "string" ? header.cwd : "";
  const roots = [tmpdir(), "/tmp"].filter(existsSync).map((root) => realpathSync(root));
  const masks = [...machinePaths(cwd, roots), ...homeMask()];
  const scrub = (value: string) => masks.reduce((out, [pattern, replacement]) => out.replace(pattern, replacement), value);
  return lines
    .map((line) => {
      if (!line.trim()) return line;
      const record = JSON.parse(line) as Record<string, unknown>;
      // Every header: a session's transcript has one per CLI process its turns ran on, all in one project dir.
      if (record.kind === "header") {
        const { cwd: _cwd, cliPath: _cli, ...rest } = record;
        const scrubbed = mapStrings(rest, scrub) as Record<string, unknown>;
        // The header's own key order, with the two paths in their places.
        return JSON.stringify(
          Object.fromEntries(
            Object.keys(record).flatMap((key): Array<[string, unknown]> => {
              if (key === "cwd") return cwd === CWD_PLACEHOLDER ? [[key, cwd]] : [[key, CWD_PLACEHOLDER], ["cwdLength", projectDirLength(record as never)]];
              if (key === "cliPath") return [[key, CLI_PLACEHOLDER]];
              if (key === "cwdLength") return cwd === CWD_PLACEHOLDER ? [[key, record.cwdLength]] : [];
              return [[key, scrubbed[key]]];
            }),
          ),
        );
      }
      return JSON.stringify(mapStrings(record, scrub));
    })
    .join("\n");
}

/**
 * Whether two recordings of a scenario are the same for a fixture: no difference under `transcript
 * diff`'s normalisation, and the same launch (arguments, environment names, CLI version, project dir
 * length), which the replay and the drift report rely on but the diff does not compare.
 */
export function sameRecording(before: LoadedTranscript, after: LoadedTranscript): boolean {
  const launch = (transcript: LoadedTranscript) =>
    JSON.stringify([normalizeArgs(transcript.header.args), transcript.header.envNames, transcript.header.cliVersion, projectDirLength(transcript.header)]);
  return launch(before) === launch(after) && isEmptyDiff(diffTranscripts(before, after));
}

export type FixtureWrite = "new" | "written" | "unchanged";

/**
 * Writes a recorded transcript (its text as the recorder wrote it) to `path` with the machine's paths
 * scrubbed — only when there is no fixture there yet or the recording differs from it; an unchanged
 * fixture is left byte for byte as it was.
 */
export function writeFixture(path: string, recordedText: string): FixtureWrite {
  const scrubbed = scrubMachinePaths(recordedText);
  if (!existsSync(path)) {
    writeFileSync(path, scrubbed);
    return "new";
  }
  if (readFileSync(path, "utf8") === scrubbed) return "unchanged";
  const work = mkdtempSync(join(tmpdir(), "ktx-fixture-"));
  try {
    const candidate = join(work, "recorded.jsonl");
    writeFileSync(candidate, scrubbed);
    if (sameRecording(loadTranscript(path), loadTranscript(candidate))) return "unchanged";
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  writeFileSync(path, scrubbed);
  return "written";
}
