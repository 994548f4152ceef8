/** One log line per progress event (the logger gets them at info; text deltas and ticks are chattier). */
import { formatDuration, windowLabel } from "./errors.js";
import type { KtxProgressEvent } from "./events.js";

const percent = (value: number | undefined) => (value === undefined ? "" : ` at ${Math.round(value * 100)} %`);
const limitText = (value: number) => (Number.isFinite(value) ? String(value) : "unlimited");

/** Text deltas go to debug: they are the model's output, not progress. */
export const isChatty = (event: KtxProgressEvent): boolean => event.type === "text_delta";

export function describeEvent(event: KtxProgressEvent): string {
  const call = "callId" in event ? `call ${event.callId}${event.unitKey ? ` (${event.unitKey})` : ""}: ` : "";
  switch (event.type) {
    case "rate_limit_observed":
      return `usage ${event.status}${event.window ? ` for the ${windowLabel(event.window)} window` : ""}${percent(event.utilization)}${event.resetsAt ? `, resets at ${event.resetsAt.toISOString()}` : ""}`;
    case "concurrency_adjusted":
      return `calls started at once: ${limitText(event.from)} -> ${limitText(event.to)} (${event.reason})`;
    case "wait_started":
      return `waiting for the ${event.window ? `${windowLabel(event.window)} ` : ""}limit: new calls resume at ${event.resumeAt.toISOString()} (in ${formatDuration(event.remainingMs)}; ${event.waiting} waiting)`;
    case "wait_tick":
      return `still waiting for the ${event.window ? `${windowLabel(event.window)} ` : ""}limit: ${formatDuration(event.remainingMs)} left (${event.waiting} waiting)`;
    case "wait_finished":
      return `the ${event.window ? `${windowLabel(event.window)} ` : ""}limit wait is over; calls resume`;
    case "cli_retry":
      return `${call}the CLI retries the API request (attempt ${event.attempt ?? "?"}/${event.maxRetries ?? "?"}) in ${event.delayMs ?? "?"} ms after ${event.status !== undefined ? `status ${event.status}` : "a dropped connection"}${event.error ? ` (${event.error})` : ""}`;
    case "call_retry":
      return `${call}running the call again (attempt ${event.attempt}/${event.maxAttempts}): ${event.reason}`;
    case "step_finished":
      return `${call}step ${event.stepIndex} finished`;
    case "tool_call_started":
      return `${call}tool ${event.name} started`;
    case "tool_call_finished":
      return `${call}tool ${event.name} ${event.ok ? "finished" : "FAILED"} in ${event.durationMs} ms${event.error ? `: ${event.error.slice(0, 200)}` : ""}`;
    case "text_delta":
      return `${call}text: ${JSON.stringify(event.text)}`;
    case "compacted":
      return `${call}the CLI compacted the conversation (${event.trigger}): ${event.preTokens ?? "?"} -> ${event.postTokens ?? "?"} tokens`;
  }
}
