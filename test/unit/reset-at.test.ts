/** `resetsAt` as KTX's backend accepts it: unix seconds, unix milliseconds (by magnitude), a number as text, an ISO string. */
import { describe, expect, it } from "vitest";
import { RESET_SECONDS_BELOW, rateLimitEventSchema, rateLimitInfo, resetAtMs } from "../../src/protocol/messages.js";

const seconds = 1_795_446_825;

describe("resetAtMs", () => {
  it("reads the CLI's unix seconds, unix milliseconds, a number written as text and an ISO string as the same instant", () => {
    for (const value of [seconds, seconds * 1000, String(seconds), String(seconds * 1000), new Date(seconds * 1000).toISOString()]) {
      expect(resetAtMs(value), String(value)).toBe(seconds * 1000);
    }
  });

  it("splits at 1e11: below is seconds (up to the year 5138), from it on milliseconds (from March 1973)", () => {
    expect(resetAtMs(RESET_SECONDS_BELOW - 1)).toBe((RESET_SECONDS_BELOW - 1) * 1000);
    expect(resetAtMs(RESET_SECONDS_BELOW)).toBe(RESET_SECONDS_BELOW);
    expect(new Date(resetAtMs(RESET_SECONDS_BELOW)!).toISOString()).toBe("1973-03-03T09:46:40.000Z");
  });

  it("drops what is no time: negative, NaN, Infinity, words, objects", () => {
    for (const value of [-1, Number.NaN, Number.POSITIVE_INFINITY, "soon", "", {}, null, undefined]) expect(resetAtMs(value), String(value)).toBeUndefined();
  });

  it("applies to a rate_limit_event's reset and each window's, and a malformed one is dropped, not fatal", () => {
    const line = rateLimitEventSchema.parse({
      type: "rate_limit_event",
      rate_limit_info: { status: "rejected", resetsAt: seconds * 1000, rateLimitType: "five_hour", unifiedWindows: { seven_day: { resetsAt: String(seconds), utilization: 0.4 }, five_hour: { resetsAt: "never" } } },
    });
    const info = rateLimitInfo(line)!;
    expect(info.resetsAt).toEqual(new Date(seconds * 1000));
    expect(info.windows.seven_day!.resetsAt).toEqual(new Date(seconds * 1000));
    expect(info.windows.five_hour!.resetsAt).toBeUndefined();
  });
});
