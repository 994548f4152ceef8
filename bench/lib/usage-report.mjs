/** Goals and the printed table of the usage section (bench/usage.mjs), kept out of run.mjs. */

export function usageGoals(usage, goal) {
  for (const [workload, w] of Object.entries(usage.workloads)) {
    if (w.ratios.oursOverSdkRequests === undefined) continue;
    goal(`usage ${workload}: requests per call, ours / Agent SDK`, "<= 1", w.ratios.oursOverSdkRequests, w.ratios.oursOverSdkRequests <= 1);
    goal(`usage ${workload}: request bytes per call, ours / Agent SDK as KTX runs it`, "<= 0.9", w.ratios.oursOverSdkBytes, w.ratios.oursOverSdkBytes <= 0.9);
  }
}

export function usageTable(usage, table, fmt) {
  const cell = (v) => (v ? `${fmt(v.requestsPerCall, 2)} / ${v.requestBytesPerCall} (${v.bytesPerCall.system} / ${v.bytesPerCall.messages} / ${v.bytesPerCall.tools} / ${v.bytesPerCall.other})` : "-");
  table(
    `Usage per call (${usage.calls} calls each, ${usage.model}, ${usage.loopTools}-tool loop): requests / request bytes (system / messages / tools / rest)`,
    ["call", "ours", "Agent SDK as KTX's backend runs it", "the same, nonessential traffic off (no title request)", "direct Messages (anthropic backend)", "ours / SDK bytes", "ours / SDK bytes, no title", "ours / direct bytes"],
    Object.entries(usage.workloads).map(([workload, w]) => [
      workload,
      cell(w.variants.ours),
      cell(w.variants.sdk),
      cell(w.variants.sdkEssentialOnly),
      cell(w.variants.direct),
      fmt(w.ratios.oursOverSdkBytes, 3),
      fmt(w.ratios.oursOverSdkEssentialOnlyBytes, 3),
      fmt(w.ratios.oursOverDirectBytes, 2),
    ]),
  );
  const reminders = usage.workloads.text.variants.ours?.reminders ?? [];
  process.stdout.write(`Reminders the CLI still adds to a call's first user turn: ${reminders.map((r) => `${r.firstLine.slice(0, 40)} (${r.bytes} B)`).join("; ") || "none"}\n`);
  // Why they stay (each measured, docs/performance.md "What a request carries").
  if (reminders.length > 0) process.stdout.write("Kept because no variable or setting of the pinned CLI removes them short of --bare / CLAUDE_CODE_SIMPLE, which turn off the OAuth login a subscription needs; the token-budget reminder is removed (CLAUDE_CODE_TOTAL_TOKENS_REMINDER=off).\n");
}
