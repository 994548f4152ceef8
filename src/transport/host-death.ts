/**
 * Ends our CLI children when the host is killed outright (SIGKILL, the OOM killer), which no handler of
 * the host sees (host-exit.ts covers exit and signals). The CLI's stdin then closes, but the CLI only
 * reads that as "no more input": mid-turn it finishes the turn, waiting for its API response, and
 * exits after (32 s with a 30 s response).
 *
 * A watcher does it instead: one small POSIX shell process per host, running while the host has CLI
 * children. The host writes `+<pid>` when a CLI starts and `-<pid>` when it is reaped, on a pipe only
 * the host holds open. When the host dies, the kernel closes that pipe, `read` sees end-of-file, and
 * the watcher sends SIGTERM to the pids still listed, then SIGKILL to any still alive a second later.
 *
 * Why not the alternatives: `prctl(PR_SET_PDEATHSIG)` needs a native addon (Node has no binding) or a
 * Linux-only exec wrapper (`setpriv --pdeathsig`) that would stand between us and the CLI's pid,
 * exit status and spawn errors; a supervisor per CLI costs a process per CLI. The watcher costs one
 * `sh` per host (started when the first CLI starts, ended when the last is reaped) and a short pipe
 * write per CLI start and end. It is a child of the host that ignores the terminal's signals (the host
 * decides what they do) and outlives it by design: only end-of-file ends it. (Started in the background of
 * a shell that exits at once it would not be a child, but Node closes a child's stdin when the child
 * exits, which ended the watch at once.) Not on Windows (no POSIX shell; there a killed host's CLI ends when its turn does).
 */
import { type ChildProcess, spawn } from "node:child_process";

/** The first line of the watcher's script: how it is told from other processes (`ps`, the tests' process counts). */
export const HOST_DEATH_WATCHER_MARK = "# ktx-claude-code host-death watcher";

/** The watcher: reads the pid list from stdin until end-of-file, then ends what is still listed. */
const WATCHER = `${HOST_DEATH_WATCHER_MARK}
trap '' INT TERM HUP
pids=" "
while IFS= read -r line; do
  case "$line" in
    +*) pids="$pids\${line#+} " ;;
    -*) p="\${line#-}"; case "$pids" in *" $p "*) pids="\${pids%% $p *} \${pids#* $p }" ;; esac ;;
  esac
done
[ -z "\${pids# }" ] && exit 0
kill -TERM $pids 2>/dev/null
for tick in 1 2 3 4 5 6 7 8 9 10; do
  alive=""
  for p in $pids; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
  [ -z "$alive" ] && exit 0
  pids=$alive
  sleep 0.1
done
kill -KILL $pids 2>/dev/null
exit 0
`;

/**
 * The watcher's whole environment: a fixed PATH for `sleep` (`kill` is the shell's own) and nothing of the
 * host's (no credentials, no shell or Node switches such as `BASH_ENV` or `NODE_OPTIONS`, not its PATH).
 */
const WATCHER_ENV = { PATH: "/usr/bin:/bin" };

interface Watcher {
  child: ChildProcess;
  pids: Set<number>;
  broken: boolean;
}

let current: Watcher | undefined;
/** Set once starting a watcher failed (no /bin/sh): then nothing is tried again. */
let unavailable = process.platform === "win32";

function start(): Watcher | undefined {
  let child: ChildProcess;
  try {
    child = spawn("/bin/sh", ["-c", WATCHER], { stdio: ["pipe", "ignore", "ignore"], env: WATCHER_ENV, windowsHide: true });
  } catch {
    unavailable = true;
    return undefined;
  }
  const watcher: Watcher = { child, pids: new Set(), broken: false };
  const fail = () => {
    watcher.broken = true;
    if (current === watcher) current = undefined;
  };
  child.on("error", () => {
    unavailable = true;
    fail();
  });
  // EPIPE: the watcher is gone (killed by someone); the next CLI starts a new one.
  child.stdin?.on("error", fail);
  // Neither the launcher shell nor the pipe keeps the host alive.
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return watcher;
}

/**
 * Lists `pid` with the watcher until the returned function is called (when the CLI is reaped). A
 * no-op where no watcher can run.
 */
export function endWithHostDeath(pid: number | undefined): () => void {
  if (pid === undefined || unavailable) return () => undefined;
  current ??= start();
  const watcher = current;
  if (!watcher || watcher.broken) return () => undefined;
  watcher.pids.add(pid);
  watcher.child.stdin?.write(`+${pid}\n`);
  return () => {
    if (!watcher.pids.delete(pid) || watcher.broken) return;
    watcher.child.stdin?.write(`-${pid}\n`);
    // The last CLI is gone: end-of-file with an empty list ends the watcher, nothing is killed.
    if (watcher.pids.size === 0) {
      watcher.child.stdin?.end();
      if (current === watcher) current = undefined;
    }
  };
}
