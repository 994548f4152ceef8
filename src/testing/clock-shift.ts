/**
 * A clock for a CLI that runs across midnight in seconds (the recorder's MIDNIGHT_CALL, wire-recorder.ts):
 * a small LD_PRELOAD library, built with the machine's C compiler, that adds `KTX_CLOCK_OFFSET_S` seconds
 * to the wall clock (`clock_gettime` CLOCK_REALTIME, `gettimeofday`, `time`); monotonic clocks are left
 * alone, so timeouts still hold. Linux (glibc) only; undefined where it cannot be built. Also the git worktree
 * the recorder's worktree call runs in.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const CLOCK_OFFSET_VAR = "KTX_CLOCK_OFFSET_S";

const SOURCE = `#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
#include <sys/time.h>
static long long offset_s = 0;
static int ready = 0;
static void init(void) { if (ready) return; const char *v = getenv("${CLOCK_OFFSET_VAR}"); offset_s = v ? atoll(v) : 0; ready = 1; }
int clock_gettime(clockid_t id, struct timespec *tp) {
  static int (*real)(clockid_t, struct timespec *) = 0;
  if (!real) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
  int r = real(id, tp);
  init();
  if (r == 0 && tp && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) tp->tv_sec += offset_s;
  return r;
}
int gettimeofday(struct timeval *tv, void *tz) {
  static int (*real)(struct timeval *, void *) = 0;
  if (!real) real = (int (*)(struct timeval *, void *))dlsym(RTLD_NEXT, "gettimeofday");
  int r = real(tv, tz);
  init();
  if (r == 0 && tv) tv->tv_sec += offset_s;
  return r;
}
time_t time(time_t *t) { struct timespec ts; clock_gettime(CLOCK_REALTIME, &ts); if (t) *t = ts.tv_sec; return ts.tv_sec; }
`;

/** Builds the library in `dir`; its path, or undefined (not Linux, no compiler, a failed build). */
export function clockShiftLibrary(dir: string): string | undefined {
  if (process.platform !== "linux") return undefined;
  const source = join(dir, "clock-shift.c");
  const library = join(dir, "clock-shift.so");
  writeFileSync(source, SOURCE);
  for (const compiler of ["cc", "gcc", "clang"]) {
    try {
      execFileSync(compiler, ["-shared", "-fPIC", "-O2", "-o", library, source, "-ldl"], { stdio: "ignore", timeout: 60_000 });
      return library;
    } catch {
      // The next compiler, if any.
    }
  }
  return undefined;
}

/**
 * The shell line a wrapper puts before `exec`-ing the CLI so that it starts 3 s before the next midnight UTC
 * on the clock of `library` (the recorder's MIDNIGHT_CALL and the e2e test of the date-change reminder).
 */
export function midnightClockLine(library: string, now = Date.now()): string {
  const offset = Math.floor((Math.ceil(now / 86_400_000) * 86_400_000 - 3_000 - now) / 1000);
  return `export TZ=UTC ${CLOCK_OFFSET_VAR}=${offset} LD_PRELOAD='${library}'`;
}

/** A repository with one commit in `root`/repo and a linked worktree of it, `root`/wt (git's own, no user config): the worktree's path. */
export function gitWorktree(root: string): string {
  const repo = join(root, "repo");
  const worktree = join(root, "wt");
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: root, GIT_AUTHOR_NAME: "r", GIT_AUTHOR_EMAIL: "r@example.invalid", GIT_COMMITTER_NAME: "r", GIT_COMMITTER_EMAIL: "r@example.invalid" };
  const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, stdio: "ignore", env });
  mkdirSync(repo, { recursive: true });
  git(repo, "init", "-q", "-b", "main");
  writeFileSync(join(repo, "README.md"), "r\n");
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "r");
  git(repo, "worktree", "add", "-q", "-b", "wt", worktree);
  return worktree;
}
