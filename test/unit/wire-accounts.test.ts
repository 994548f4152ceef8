/** What real accounts send beyond the recorded shape (src/claude-code/wire/account-variants.ts): admitted, or refused as a variant. */
import { describe, expect, it } from "vitest";
import { ACCOUNT_REQUESTS, isAccountRequest, wireRefusal } from "../../src/claude-code/wire/account-variants.js";
import { WIRE_ADVICE, checkMessagesRequest, type CallExpectation } from "../../src/claude-code/wire/check.js";
import { wireShapeFor } from "../../src/claude-code/wire/shape.js";
import { IsolationError } from "../../src/errors/index.js";

const shape = wireShapeFor("2.1.330")!;
const expected: CallExpectation = { model: "claude-sonnet-4-6", system: "", prompt: "Say hi", tools: [], cwd: ["/tmp/project"] };

/** The headers 2.1.330 sent with a Console login (recorded against the scripted API's first-party front), and a minimal body. */
function request(headers: Record<string, string>) {
  const body = {
    model: "claude-sonnet-4-6",
    system: [
      { type: "text", text: "x-anthropic-billing-header: cc_version=2.1.330.d01; cc_entrypoint=sdk-cli; cch=f3593; cc_prompt_id=3b2443ee-3b5e-4442-b4be-f40e0ea81778; cc_turn_origin=sdk; cc_prompt_index=0; cc_turn_index=1;" },
      { type: "text", text: shape.preamble },
    ],
    tools: [],
    messages: [{ role: "user", content: [{ type: "text", text: "Say hi" }] }],
    max_tokens: 32000,
    stream: true,
  };
  return { method: "POST", host: "api.anthropic.com", path: "/v1/messages", query: "beta=true", headers: { host: "api.anthropic.com", "content-type": "application/json", "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14", ...headers }, body };
}

describe("a Console (API-key) login", () => {
  it("sends x-api-key in place of authorization: admitted", () => {
    expect(checkMessagesRequest(request({ "x-api-key": "sk-ant-api03-k" }), expected, shape)).toEqual([]);
    expect(checkMessagesRequest(request({ authorization: "Bearer t" }), expected, shape)).toEqual([]);
  });

  it("never both credentials at once, and no other key-like header", () => {
    expect(checkMessagesRequest(request({ authorization: "Bearer t", "x-api-key": "sk-ant-api03-k" }), expected, shape)).toEqual([expect.stringMatching(/both "authorization" and "x-api-key"/)]);
    expect(checkMessagesRequest(request({ "x-api-key": "k", "x-planted-key": "k" }), expected, shape)).toEqual([expect.stringMatching(/header "x-planted-key" is not one the CLI version sends/)]);
  });

  it("fetches the organisation's policy limits and settings: both pass the egress allowlist, nothing else of theirs", () => {
    expect(ACCOUNT_REQUESTS.map((request) => `${request.method} ${request.host}${request.path}`)).toEqual(["GET api.anthropic.com/api/claude_code/policy_limits", "GET api.anthropic.com/api/claude_code/settings"]);
    expect(isAccountRequest("GET", "api.anthropic.com", "/api/claude_code/policy_limits")).toBe(true);
    expect(isAccountRequest("GET", "api.anthropic.com", "/api/claude_code/settings")).toBe(true);
    expect(isAccountRequest("POST", "api.anthropic.com", "/api/claude_code/settings")).toBe(false);
    expect(isAccountRequest("GET", "evil.example", "/api/claude_code/settings")).toBe(false);
    expect(isAccountRequest("GET", "api.anthropic.com", "/api/claude_code/metrics")).toBe(false);
  });
});

describe("a refused request's error", () => {
  it("calls a known variant a CLI variant for the account or model, not text the call did not give, and names wire: false", () => {
    const beta = checkMessagesRequest(request({ "x-api-key": "k", "anthropic-beta": "claude-code-20250219,per-turn-control-2026-07-01" }), expected, shape);
    expect(beta).toEqual([expect.stringMatching(/beta "per-turn-control-2026-07-01"/)]);
    const error = wireRefusal(beta.map((difference) => `wire: ${difference}`), WIRE_ADVICE);
    expect(error).toBeInstanceOf(IsolationError);
    expect(error.message).toMatch(/\(a CLI variant for your account or model: the beta newer models \(claude-\*-5-5 and others\) add to every request\)/);
    expect(error.message).toMatch(/which no recorded shape of this CLI version admits yet.*`wire: false` runs such calls without the check/);
    expect(error.message).not.toMatch(/Text the call did not give/);
    // Made again by the host from the differences it is told: marked once.
    expect(wireRefusal(error.differences, WIRE_ADVICE).message).toBe(error.message);
  });

  it("calls anything else text the call did not give, with wire: false; both kinds in one request say both", () => {
    const planted = wireRefusal(["wire: header \"x-planted\" is not one the CLI version sends"], WIRE_ADVICE);
    expect(planted.message).toMatch(/Text the call did not give: The CLI sent something the library did not build.*`wire: false` turns the check off/);
    expect(planted.message).not.toMatch(/CLI variant/);
    const both = wireRefusal(["wire: beta \"context-1m-2025-08-07\" is not one the CLI version sends", "wire: header \"x-planted\" is not one the CLI version sends"], WIRE_ADVICE);
    expect(both.message).toMatch(/the beta a \[1m\] model id adds.*Text the call did not give/);
    // Reminders read from 2.1.330's bundle, by the text the check quotes.
    const date = wireRefusal(["wire: a <system-reminder> of no kind recorded for this CLI version: \"The date has changed. Today's date is now 2026-11-30.\""], WIRE_ADVICE);
    expect(date.message).toMatch(/a CLI variant for your account or model: the date-change reminder/);
    const silent = wireRefusal(["wire: a <system-reminder> of no kind recorded for this CLI version: \"The user hasn't heard from you in a while.\""], WIRE_ADVICE);
    expect(silent.message).toMatch(/a CLI variant for your account or model: the reminder newer models get/);
  });
});
