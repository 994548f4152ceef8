/**
 * What differs between two runs of one program without meaning anything, masked before `diff`
 * compares lines — beyond what the replayer's normaliser masks (it never compares the CLI's lines,
 * which it plays verbatim): the CLI's request and message ids, uuids, the project dir (also followed
 * by a period, and as the CLI's `-tmp-…` project slug), the HOME before any `/.claude` path (wherever
 * HOME is), temporary dirs and the names in them, the process id, wall-clock times, the jittered API retry delay, and the CLI's own version
 * (a drift report names the versions once instead of in every init line).
 */
import { tmpdir } from "node:os";
import { normalizeLine } from "../normalize.js";

/** uuids, and the API's ids (`msg_01XFDUDYJgAACzvnptvVoYEL`): long random tails only, so a name such as `msg_lifecycle_v1` stays. */
const RUN_IDS = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b(?:msg|toolu|req|srvtoolu)_[A-Za-z0-9]{16,}\b/g;
const KTX_TEMP_DIRS = /(ktx-[a-z0-9-]+?-)[A-Za-z0-9]{6}(?![A-Za-z0-9-])/g;
/** Per-process sockets: `/cc-socks/<pid>`, `<tmp>/<pid>.sock`. */
const SOCKETS = /(\/cc-socks\/)\d+|(\/)\d+(?=\.sock\b)/g;
/** Keys whose values change from run to run: the process id, wall-clock times, the jittered back-off. */
/** An absolute path up to a `/.claude` segment: the HOME the CLI ran with. */
const HOME_PATHS = /(?<![\w.~<>-])(?:\/[^/"\\\s]+)+?(?=\/\.claude(?![\w.-]))/g;
const RUN_KEYS = new Set(["pid", "retry_delay_ms", "startedAt"]);
const WALL_CLOCK_KEY = /_wall_ms$|_at_ms$|^wall_/;

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

/** The masks for one run: its project dir and CLI version are known from its header. */
export class RunNoise {
  private readonly replacements: Array<[RegExp, string]> = [];

  constructor(cwd: string, cliVersion: string | undefined) {
    // A whole path (not inside a longer name, e.g. `/project` in `/projects`); a period after it ends a sentence.
    const end = "(?![A-Za-z0-9_-]|\\.[A-Za-z0-9_-])";
    if (cwd) {
      this.replacements.push([new RegExp(`${escapeRegExp(inJson(cwd))}${end}`, "g"), "<cwd>"]);
      this.replacements.push([new RegExp(`${escapeRegExp(projectSlug(cwd))}${end}`, "g"), "<cwd-slug>"]);
    }
    // The CLI's per-user dir names the run's HOME wherever it is (`<home>/.claude/output-styles`,
    // `memory_paths.auto`); a project's own `.claude` is already `<cwd>/.claude`.
    this.replacements.push([HOME_PATHS, "<home>"]);
    // Any other temporary dir (a HOME, a socket dir): its first segment is random, the rest is the program's.
    for (const root of new Set([tmpdir(), "/tmp"])) {
      this.replacements.push([new RegExp(`${escapeRegExp(inJson(root))}/[^/"\\\\\\s]+`, "g"), `${inJson(root)}/<tmp>`]);
      this.replacements.push([new RegExp(`${escapeRegExp(projectSlug(root))}-[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*`, "g"), `${projectSlug(root)}-<tmp>`]);
    }
    if (cliVersion && /^\d+\.\d+\.\d+/.test(cliVersion)) this.replacements.push([new RegExp(`(?<![\\d.])${escapeRegExp(cliVersion)}(?![\\d]|\\.\\d)`, "g"), "<cli-version>"]);
  }

  /** A protocol line as a comparable value. */
  comparable(text: string): unknown {
    let masked = normalizeLine(text);
    for (const [pattern, replacement] of this.replacements) masked = masked.replace(pattern, replacement);
    masked = masked.replace(RUN_IDS, "<id>").replace(KTX_TEMP_DIRS, "$1<tmp>").replace(SOCKETS, "$1$2<pid>");
    try {
      return maskRunKeys(JSON.parse(masked));
    } catch {
      return masked;
    }
  }
}
