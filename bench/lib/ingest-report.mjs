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
export function pairUp(runs) {
  const pairs = [];
  for (let index = 1; index < runs.length; index += 2) {
    const [before, wait, after] = [runs[index - 1], runs[index], runs[index + 1]];
    const scriptedWaitMs = wait.rejection ? wait.rejection.headerResetAt - wait.rejection.at : undefined;
    const baselineMs = mean([before.wallMs, after.wallMs]);
    const extraMs = wait.wallMs - baselineMs;
    const parts = breakdown(wait, baselineMs, [before, after], scriptedWaitMs);
    pairs.push({
      baselinesMs: [before.wallMs, after.wallMs],
      waitMs: wait.wallMs,
      scriptedWaitMs,
      extraMs: Math.round(extraMs),
      extraOverScriptedWait: scriptedWaitMs ? round(extraMs / scriptedWaitMs) : undefined,
      bracketDrift: scriptedWaitMs ? round((after.wallMs - before.wallMs) / scriptedWaitMs) : undefined,
      // The same without the time before the rejection, where the wait run does a baseline's work: only noise.
      fromRejectionOverScriptedWait: parts ? round((extraMs - parts.beforeMs) / scriptedWaitMs) : undefined,
      breakdown: parts,
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
    fromRejectionOverScriptedWait: scriptedMs > 0 && measured.every((pair) => pair.breakdown) ? round(measured.reduce((sum, pair) => sum + pair.extraMs - pair.breakdown.beforeMs, 0) / scriptedMs) : undefined,
    scriptedWaitMs: measured.length ? Math.round(scriptedMs / measured.length) : undefined,
    spread: ratios.length ? { min: Math.min(...ratios), max: Math.max(...ratios) } : undefined,
    // The largest drift between the two baselines around one wait run, over that run's wait.
    maxBracketDrift: measured.length ? Math.max(...measured.map((pair) => Math.abs(pair.bracketDrift))) : undefined,
    baselinesMs: { all: baselines, min: Math.min(...baselines), max: Math.max(...baselines) },
  };
}

/**
 * Where one wait run's extra time went, against the mean of its baselines; the three parts add up to
 * the extra time less the scripted wait:
 *   before  the rejection (request R+1) came this much later than request R+1 did in the baselines
 *   pause   the calls went again this long after the reset the CLI saw (the margin, timer lateness)
 *   after   the calls left after the pause took this much longer than the baselines' calls after R+1
 *           (the calls the limit stopped run again; CLIs started anew)
 * Plus what explains them: the CLI's report lag, the calls run again, those run on their held process,
 * and the CLI processes started beyond the baselines'.
 */
function breakdown(wait, baselineMs, baselines, scriptedWaitMs) {
  const t = wait.timeline;
  if (!t || !scriptedWaitMs || !wait.rejection || wait.markMs === undefined || baselines.some((run) => run.markMs === undefined)) return undefined;
  const markMs = mean(baselines.map((run) => run.markMs));
  const restMs = mean(baselines.map((run) => run.wallMs - run.markMs));
  return {
    beforeMs: Math.round(wait.markMs - markMs),
    pauseBeyondScriptedWaitMs: t.resumeMs - (wait.rejection.headerResetAt - wait.rejection.at) - wait.markMs,
    afterMs: Math.round(wait.wallMs - t.resumeMs - restMs),
    // From the API's first rejection until the governor heard of it (the CLI reports it with its result).
    reportLagMs: t.waitStartedMs - wait.markMs,
    retriedCalls: wait.events.call_retry,
    retriedOnHeldProcess: wait.pool.heldRetries,
    extraProcessesStarted: round(wait.pool.started - mean(baselines.map((run) => run.pool.started)), 1),
  };
}

/** The pause as the run's events show it: wall-clock offsets from the run's start. */
export function timeline(events, startedAt, wallMs) {
  const find = (type) => events.find((event) => event.type === type);
  const waitStarted = find("wait_started");
  const waitFinished = find("wait_finished");
  if (!waitStarted || !waitFinished) return undefined;
  return {
    waitStartedMs: waitStarted.at - startedAt,
    resumeMs: waitFinished.at - startedAt,
    pauseMs: waitFinished.at - waitStarted.at,
    afterPauseMs: Math.round(wallMs - (waitFinished.at - startedAt)),
  };
}
