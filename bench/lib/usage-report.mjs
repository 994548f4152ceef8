/** Goals and the printed table of the usage section (bench/usage.mjs), kept out of run.mjs. */

export function usageGoals(usage, goal) {
  for (const [workload, w] of Object.entries(usage.workloads)) {
    const o = w.variants.ours;
    const d = w.variants.direct;
    // Against KTX's AI-SDK backend, every request the CLI sends counted (the OAuth profile request included) and every byte on the wire.
    if (o?.allRequestsPerCall !== undefined && d) {
      goal(`usage ${workload} (${usage.path ?? "base-url"}): all requests per call, ours / KTX's AI-SDK backend`, "shown only", `${o.allRequestsPerCall} / ${d.allRequestsPerCall}`, null);
      goal(`usage ${workload} (${usage.path ?? "base-url"}): bytes on the wire per call (headers + body), ours / KTX's AI-SDK backend`, "shown only", Math.round((o.wireBytesPerCall.total / d.wireBytesPerCall.total) * 100) / 100, null);
    }
    if (w.ratios.oursOverSdkRequests === undefined) continue;
    goal(`usage ${workload}: requests per call, ours / Agent SDK`, "<= 1", w.ratios.oursOverSdkRequests, w.ratios.oursOverSdkRequests <= 1);
    goal(`usage ${workload}: request bytes per call, ours / Agent SDK as KTX runs it`, "<= 0.9", w.ratios.oursOverSdkBytes, w.ratios.oursOverSdkBytes <= 0.9);
  }
}

/** What calls on one reused process share against fresh processes, on the usage section's path. */
export function reuseWireTable(usage, table) {
  const rows = Object.entries(usage.reuse).filter(([, r]) => r?.sessionIds);
  if (rows.length === 0) return;
  table(
    `Reuse on the ${usage.path ?? "base-url"} path: ${usage.reuseCalls} calls per shape on fresh processes against ${usage.reuseCalls} on one reused process (same HOME and project)`,
    ["call", "session ids: fresh / reused", "profile requests: fresh / reused", "Messages body bytes equal", "betas equal", "body fields differing (per-call ids masked)", "headers differing (values, first seen)"],
    rows.map(([workload, r]) => [
      workload,
      `${r.sessionIds.fresh} / ${r.sessionIds.reused}`,
      `${r.profileRequests.fresh} / ${r.profileRequests.reused}`,
      r.bodyBytesEqual ? "yes" : "NO",
      r.betasEqual ? "yes" : "NO",
      r.bodyDifferences.map((d) => d.path).join(", ") || "none",
      r.headerDifferences.map((h) => `${h.name} (${h.fresh.length} value pairs)`).join("; ") || "none",
    ]),
  );
  // Per call, the first request's value on fresh processes and on the reused one (short values only; all in the JSON).
  for (const [workload, r] of rows) {
    for (const name of Object.keys(r.reusedHeaderByCall ?? {})) {
      const firsts = (byCall) => byCall.map((list) => list[0] ?? "-").join(" | ");
      const line = `  ${workload} ${name}, first request of each call: fresh ${firsts(r.freshHeaderByCall[name])}; reused ${firsts(r.reusedHeaderByCall[name])}`;
      process.stdout.write(`${line.length > 400 ? `${line.slice(0, 400)} …` : line}\n`);
    }
  }
  const billing = rows[0][1].billing;
  process.stdout.write(`Billing line fields (${rows[0][0]}), fresh -> reused: ${Object.entries(billing).map(([k, v]) => `${k} ${v.fresh} -> ${v.reused}`).join("; ")}\n`);
}

export function usageTable(usage, table, fmt) {
  const perKind = (v) => (v?.byKind ? Object.entries(v.byKind).map(([kind, k]) => `${kind} ${fmt(k.requestsPerCall, 2)} x ${k.headerBytesPerRequest} + ${k.bodyBytesPerRequest} B`).join("; ") : "-");
  if (usage.workloads.text.variants.ours?.byKind) {
    table(
      `Every request per call on the ${usage.path ?? "base-url"} path, by kind: requests per call x (header + body bytes per request)`,
      ["call", "ours", "Agent SDK as KTX's backend runs it", "KTX's AI-SDK backend (direct)", "ours: all requests / bytes on the wire", "direct: all requests / bytes on the wire"],
      Object.entries(usage.workloads).map(([workload, w]) => [
        workload,
        perKind(w.variants.ours),
        perKind(w.variants.sdk),
        perKind(w.variants.direct),
        `${w.variants.ours.allRequestsPerCall} / ${w.variants.ours.wireBytesPerCall.total}`,
        `${w.variants.direct.allRequestsPerCall} / ${w.variants.direct.wireBytesPerCall.total}`,
      ]),
    );
  }
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
