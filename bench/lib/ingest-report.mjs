/**
 * The ingest section's arithmetic (bench/ingest.mjs): each wait run against the mean of the baselines
 * run just before and just after it, the spread of those figures, and where each wait run's extra
 * time went.
 */

const round = (x, digits = 3) => (x === undefined || Number.isNaN(x) ? undefined : Math.round(x * 10 ** digits) / 10 ** digits);
const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;

/**
 * `runs` alternate baseline, wait, baseline, …, baseline. Load that drifts during the section moves
 * both baselines around a wait run; their mean is that run's baseline, and how far apart they are
 * (`bracketDrift`, over the scripted wait) is how much of the figure the drift could be.
 */
export function pairUp(runs, calls, rejectAfter) {
  const pairs = [];
  for (let index = 1; index < runs.length; index += 2) {
    const [before, wait, after] = [runs[index - 1], runs[index], runs[index + 1]];
    const scriptedWaitMs = wait.rejection ? wait.rejection.headerResetAt - wait.rejection.at : undefined;
    const baselineMs = mean([before.wallMs, after.wallMs]);
    const extraMs = wait.wallMs - baselineMs;
    pairs.push({
      baselinesMs: [before.wallMs, after.wallMs],
      waitMs: wait.wallMs,
      scriptedWaitMs,
      extraMs: Math.round(extraMs),
      extraOverScriptedWait: scriptedWaitMs ? round(extraMs / scriptedWaitMs) : undefined,
      bracketDrift: scriptedWaitMs ? round((after.wallMs - before.wallMs) / scriptedWaitMs) : undefined,
      breakdown: breakdown(wait, baselineMs, [before, after], calls, rejectAfter, scriptedWaitMs),
    });
  }
  const measured = pairs.filter((pair) => pair.scriptedWaitMs !== undefined);
  const ratios = measured.map((pair) => pair.extraOverScriptedWait);
  const extraMs = measured.reduce((sum, pair) => sum + pair.extraMs, 0);
  const scriptedMs = measured.reduce((sum, pair) => sum + pair.scriptedWaitMs, 0);
  const baselines = runs.filter((_, index) => index % 2 === 0).map((run) => run.wallMs);
  return {
    pairs,
    // The summed extra over the summed waits: each wait run weighs by its wait.
    extraOverScriptedWait: scriptedMs > 0 ? round(extraMs / scriptedMs) : undefined,
    extraMs: measured.length ? Math.round(extraMs / measured.length) : undefined,
    scriptedWaitMs: measured.length ? Math.round(scriptedMs / measured.length) : undefined,
    spread: ratios.length ? { min: Math.min(...ratios), max: Math.max(...ratios) } : undefined,
    // The largest drift between the two baselines around one wait run, over that run's wait.
    maxBracketDrift: measured.length ? Math.max(...measured.map((pair) => Math.abs(pair.bracketDrift))) : undefined,
    baselinesMs: { all: baselines, min: Math.min(...baselines), max: Math.max(...baselines) },
  };
}

/**
 * Where one wait run's extra time went: the pause (how late after the reset the governor let calls go,
 * and how late it heard of the rejection), the calls run again, the CLI processes started against the
 * baselines', and the time before and after the pause against the baseline's share of it.
 */
function breakdown(wait, baselineMs, baselines, calls, rejectAfter, scriptedWaitMs) {
  const t = wait.timeline;
  if (!t || !scriptedWaitMs || !wait.rejection) return undefined;
  const perCallMs = baselineMs / calls;
  const startedInBaselines = mean(baselines.map((run) => run.pool.started));
  return {
    // From the API's first rejection until the governor heard of it (the CLI reports it with its result).
    reportLagMs: t.waitStartedAt - wait.rejection.at,
    // From the reset the CLI saw (whole seconds) until the calls went again: the margin, plus timer lateness.
    resumedAfterResetMs: t.waitFinishedAt - wait.rejection.headerResetAt,
    pauseBeyondScriptedWaitMs: t.pauseMs - scriptedWaitMs,
    retriedCalls: wait.events.call_retry,
    // Retried calls that ran on a process that had served a call before (the default pool rewinds a
    // rejected call's process and keeps it), and CLI processes started beyond the baselines' mean.
    processesStarted: wait.pool.started,
    extraProcessesStarted: round(wait.pool.started - startedInBaselines, 1),
    afterPauseOverBaselineShareMs: Math.round(t.afterPauseMs - (calls - rejectAfter) * perCallMs),
    beforePauseOverBaselineShareMs: Math.round(t.pauseStartMs - rejectAfter * perCallMs),
  };
}

/** The pause as the run's events show it (performance.now offsets and wall-clock instants). */
export function timeline(events, started, wallMs) {
  const find = (type) => events.find((event) => event.type === type);
  const waitStarted = find("wait_started");
  const waitFinished = find("wait_finished");
  if (!waitStarted || !waitFinished) return undefined;
  return {
    pauseStartMs: Math.round(waitStarted.t - started),
    pauseMs: Math.round(waitFinished.t - waitStarted.t),
    afterPauseMs: Math.round(started + wallMs - waitFinished.t),
    waitStartedAt: waitStarted.at,
    waitFinishedAt: waitFinished.at,
  };
}
