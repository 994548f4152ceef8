/**
 * What differs between two runs of one program without meaning anything, masked before `diff`
 * compares lines — beyond what the replayer's normaliser masks (it never compares the CLI's lines,
 * which it plays verbatim): the project dir (also followed by a period, and as the CLI's `-tmp-…`
 * project slug), the HOME before any `/.claude` path (wherever HOME is), temporary dirs and the names
 * in them, the process id, wall-clock times, the jittered API retry delay, the CLI's own version (a
 * drift report names the versions once instead of in every init line), and the per-run ids: the API's
 * message, tool-use and request ids and uuids (session ids among them) are numbered by where they first
 * appear in the run (`msg_1`, `toolu_1`, `req_1`, `uuid_1`, …; see `learn`), so two runs whose ids differ
 * compare the same while a changed id structure (a tool result naming another tool use, another
 * number of distinct ids) still shows.
 *
 * The path masks (`machinePaths`) are also what `fixtures record` and `fixtures verify` write into
 * shipped fixtures in place of the recording machine's paths (fixture-paths.ts in src/cli).
 */
import { tmpdir } from "node:os";
import { normalizeLine } from "../normalize.js";

/**
 * uuids, and the API's ids: long random tails (`msg_01XFDUDYJgAACzvnptvVoYEL`) or a name ending in a
 * number (the scripted API's `msg_scripted_0`, `toolu_scripted_1_0`, `req_error_529`), so a name such
 * as the capability `msg_lifecycle_v1` stays. Bounded repetitions: no backtracking across a line.
 */
const RUN_IDS = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b(msg|toolu|req|srvtoolu)_(?:[A-Za-z0-9]{16,200}|(?:[A-Za-z0-9]{1,40}_){0,4}\d{1,20})\b/g;
const KTX_TEMP_DIRS = /(ktx-[a-z0-9-]+?-)[A-Za-z0-9]{6}(?![A-Za-z0-9-])/g;
/** Per-process sockets: `/cc-socks/<pid>`, `<tmp>/<pid>.sock`. */
const SOCKETS = /(\/cc-socks\/)\d+|(\/)\d+(?=\.sock\b)/g;
/** An absolute path up to a `/.claude` segment: the HOME the CLI ran with. */
const HOME_PATHS = /(?<![\w.~<>-])(?:\/[^/"\\\s]+)+?(?=\/\.claude(?![\w.-]))/g;
/** Keys whose values change from run to run: the process id, wall-clock times, the jittered back-off. */
const RUN_KEYS = new Set(["pid", "retry_delay_ms", "startedAt"]);
const WALL_CLOCK_KEY = /_wall_ms$|_at_ms$|^wall_/;

/** What a fixture's header holds in place of the recording's project dir (its length kept as `cwdLength`). */
export const CWD_PLACEHOLDER = "<cwd>";

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** A path as it appears inside a JSON string literal. */
const inJson = (text: string) => JSON.stringify(text).slice(1, -1);
/** The CLI's per-project directory name: every character that is not a letter or digit becomes `-`. */
export const projectSlug = (dir: string) => dir.replace(/[^A-Za-z0-9]/g, "-");

function maskRunKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskRunKeys);
  if (!value || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, RUN_KEYS.has(key) || WALL_CLOCK_KEY.test(key) ? `<${key}>` : maskRunKeys(inner)]));
}

/**
 * The masks of one run's machine paths, in order: its project dir and the CLI's slug of it, the HOME
 * before `/.claude`, and temporary dirs (the first segment under a temp root, and the slug of one),
 * each as a placeholder that names no machine (`<cwd>`, `<cwd-slug>`, `<home>`, `<tmp>`). Applied to
 * a placeholder they leave it as it is, so a fixture written with them compares as its recording did.
 */
export function machinePaths(cwd: string, extraRoots: readonly string[] = []): Array<[RegExp, string]> {
  const replacements: Array<[RegExp, string]> = [];
  // A whole path (not inside a longer name, e.g. `/project` in `/projects`); a period after it ends a sentence.
  const end = "(?![A-Za-z0-9_-]|\\.[A-Za-z0-9_-])";
  if (cwd && cwd !== CWD_PLACEHOLDER) {
    replacements.push([new RegExp(`${escapeRegExp(inJson(cwd))}${end}`, "g"), CWD_PLACEHOLDER]);
    replacements.push([new RegExp(`${escapeRegExp(projectSlug(cwd))}${end}`, "g"), "<cwd-slug>"]);
  }
  // The CLI's per-user dir names the run's HOME wherever it is (`<home>/.claude/output-styles`,
  // `memory_paths.auto`); a project's own `.claude` is already `<cwd>/.claude`.
  replacements.push([HOME_PATHS, "<home>"]);
  // Any other temporary dir (a HOME, a socket dir): its first segment is random, the rest is the program's.
  for (const root of new Set([tmpdir(), "/tmp", ...extraRoots])) {
    replacements.push([new RegExp(`${escapeRegExp(inJson(root))}/[^/"\\\\\\s]+`, "g"), "<tmp>"]);
    replacements.push([new RegExp(`${escapeRegExp(projectSlug(root))}-[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*`, "g"), "<tmp-slug>"]);
  }
  return replacements;
}

/** The masks for one run: its project dir and CLI version are known from its header. */
export class RunNoise {
  private readonly replacements: Array<[RegExp, string]>;
  /** Each per-run id in order of first appearance → its positional name (`msg_1`), one count per kind. */
  private readonly ids = new Map<string, string>();
  private readonly counts = new Map<string, number>();

  constructor(cwd: string, cliVersion: string | undefined) {
    this.replacements = machinePaths(cwd);
    if (cliVersion && /^\d+\.\d+\.\d+/.test(cliVersion)) this.replacements.push([new RegExp(`(?<![\\d.])${escapeRegExp(cliVersion)}(?![\\d]|\\.\\d)`, "g"), "<cli-version>"]);
  }

  /**
   * Numbers the ids of a run's lines before any is compared: call it with every line of the run, each
   * with its place — the message's key, direction and occurrence (`place`, compared as text). Ids are
   * numbered in the order of the place where each first appears (then its offset in the line), not of
   * time: two runs of one program interleave their directions differently (the MCP handshake and our
   * prompt race), and the same ids must still get the same names. Ids met only later are numbered then.
   */
  learn(lines: Iterable<{ text: string; place: string }>): void {
    const first = new Map<string, { kind: string; place: string; offset: number }>();
    for (const { text, place } of lines) {
      for (const match of this.maskPaths(text).matchAll(RUN_IDS)) {
        if (!first.has(match[0]) && !this.ids.has(match[0])) first.set(match[0], { kind: match[1] ?? "uuid", place, offset: match.index });
      }
    }
    const ordered = [...first].sort(([, a], [, b]) => (a.place < b.place ? -1 : a.place > b.place ? 1 : a.offset - b.offset));
    for (const [id, { kind }] of ordered) this.positional(id, kind);
  }

  /** A protocol line as a comparable value. */
  comparable(text: string): unknown {
    const masked = this.mask(text);
    try {
      return maskRunKeys(JSON.parse(masked));
    } catch {
      return masked;
    }
  }

  private maskPaths(text: string): string {
    let masked = normalizeLine(text);
    for (const [pattern, replacement] of this.replacements) masked = masked.replace(pattern, replacement);
    return masked;
  }

  private mask(text: string): string {
    return this.maskPaths(text).replace(RUN_IDS, (id: string, kind: string | undefined) => this.positional(id, kind ?? "uuid")).replace(KTX_TEMP_DIRS, "$1<tmp>").replace(SOCKETS, "$1$2<pid>");
  }

  private positional(id: string, kind: string): string {
    let name = this.ids.get(id);
    if (name === undefined) {
      const count = (this.counts.get(kind) ?? 0) + 1;
      this.counts.set(kind, count);
      name = `${kind}_${count}`;
      this.ids.set(id, name);
    }
    return name;
  }
}
