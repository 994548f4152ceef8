/**
 * Soak: many mixed calls (text, 1- and 2-tool loops, an API error, max-turns) on one reused process of the
 * real CLI: every call gets its own answer and sees none of the earlier calls; memory stays under the
 * retire limit. 200 calls in `npm test`; KTX_SOAK_CALLS=1000 for the long run (it also checks for slowdown).
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type RecordedRequest, type ScriptedTurn, turn } from "../../src/testing/scripted-api.js";
import { cleanup, firstPartyApi, remainingChildren, runtimeFor } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const CALLS = Number(process.env.KTX_SOAK_CALLS ?? 200);
const KINDS = ["text", "tool1", "tool2", "e500", "maxturns"] as const;

function script(request: RecordedRequest): ScriptedTurn {
  const prompt = JSON.stringify(request.body?.messages?.[0] ?? "");
  const kind = /case=(\w+)/.exec(prompt)?.[1];
  const id = /#(\d+)/.exec(prompt)?.[1];
  const step = (request.body?.messages ?? []).filter((m: { role: string }) => m.role === "assistant").length;
  const call = (n: number) => ({ toolCalls: [{ name: "mcp__ktx__lookup", input: { id: Number(id), n }, id: `toolu_${id}_${step}` }] });
  switch (kind) {
    case "text":
      return turn.text(`text ${id}`);
    case "tool1":
      return step === 0 ? call(1) : turn.text(`tool1 ${id}`);
    case "tool2":
      return step < 2 ? call(step + 1) : turn.text(`tool2 ${id}`);
    case "e500":
      return turn.error(500, "scripted", { "x-should-retry": "false" });
    default:
      return call(step);
  }
}

describe("session reuse soak", () => {
  it(`serves ${CALLS} mixed calls from one process without a failure or a leak between calls`, { timeout: 60_000 + CALLS * 1_000 }, async () => {
    const api = await firstPartyApi(script);
    const runtime = runtimeFor(api, { reuse: { maxCalls: CALLS + 1 } });
    const latencies: number[] = [];
    const rss: number[] = [];
    const failures: string[] = [];
    for (let i = 0; i < CALLS; i += 1) {
      const kind = KINDS[i % KINDS.length]!;
      const seen: number[] = [];
      const before = api.messageRequests.length;
      const started = performance.now();
      const out = await runtime.runAgentLoop({
        modelRole: "default",
        systemPrompt: "soak",
        userPrompt: `case=${kind} #${i}`,
        stepBudget: 3,
        // Handlers are this call's own closures; the definitions are the same for every call.
        toolSet: { lookup: { description: "Looks an item up.", inputSchema: z.object({ id: z.number(), n: z.number() }), execute: async ({ id, n }: { id: number; n: number }) => (seen.push(id), `item ${id}.${n}`) } },
      });
      latencies.push(performance.now() - started);
      const want = { text: ["natural", `text ${i}`], tool1: ["natural", `tool1 ${i}`], tool2: ["natural", `tool2 ${i}`], e500: ["error", ""], maxturns: ["budget", ""] }[kind];
      const got = [out.stopReason, kind === "e500" || kind === "maxturns" ? "" : out.text];
      if (got.join("|") !== want.join("|")) failures.push(`#${i} ${kind}: ${got.join("|")} ${out.error?.message ?? ""}`);
      if (seen.some((id) => id !== i)) failures.push(`#${i} ${kind}: a handler saw calls of ${JSON.stringify(seen)}`);
      // No request of this call carries an earlier call's prompt.
      for (const request of api.messageRequests.slice(before)) {
        const prompts = JSON.stringify(request.body.messages).match(/case=\w+ #\d+/g) ?? [];
        if (prompts.some((p) => p !== `case=${kind} #${i}`)) failures.push(`#${i} ${kind}: history leaked: ${prompts.join(", ")}`);
      }
      if (i % 50 === 49) rss.push(rssOf(runtime.reusePids[0]));
    }
    expect(failures).toEqual([]);
    expect(runtime.reuseStats).toMatchObject({ started: 1, reusedCalls: CALLS - 1, retired: {} });
    expect(Math.max(...rss)).toBeLessThan(450);
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const early = median(latencies.slice(5, 55));
    const late = median(latencies.slice(-50));
    console.log(`soak: ${CALLS} calls, p50 ${median(latencies).toFixed(1)} ms, early ${early.toFixed(1)} ms, late ${late.toFixed(1)} ms, RSS MiB every 50 calls: ${rss.map((r) => r.toFixed(0)).join(" ")}`);
    // Latency is only compared on the long run, where a slowdown would show beyond machine noise.
    if (CALLS >= 1000) expect(late).toBeLessThan(early * 2);
    await runtime.close();
    expect(await remainingChildren()).toEqual([]);
  });
});

function rssOf(pid: number | undefined): number {
  const status = pid === undefined ? "" : readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}
