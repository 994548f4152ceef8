/** The recorded first-party shapes as data (src/claude-code/wire/shape-file.ts, shape.ts): placeholders, refusals, the committed files. */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { VERIFIED_CLI_VERSIONS } from "../../src/binary/versions.js";
import { billingRegExp, loadWireShape, templateRegExp, validateWireShapeFile, WireShapeFileError, type WireShapeFile } from "../../src/claude-code/wire/shape-file.js";
import { loadWireShapes, WIRE_HOSTS, WIRE_VERSIONS, wireShapeFor, wireShapePath } from "../../src/claude-code/wire/shape.js";
import { explainResends, KNOWN_RESEND_HEADERS, templateOf } from "../../src/testing/wire-shape-derive.js";
import { RESENT, type RecordedWireRequest } from "../../src/testing/wire-recorder.js";
import { wireShapeChanges } from "../../src/cli/record-wire.js";

const committed = (version: string): WireShapeFile => JSON.parse(readFileSync(wireShapePath(version), "utf8"));
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("a shape file's templates", () => {
  it("turns named placeholders into regexes and keeps everything else literal", () => {
    const pattern = templateRegExp("You are powered by the model named {modelName}. The exact model ID is {modelId}. Assistant knowledge cutoff is {monthYear}.");
    expect(pattern.test("You are powered by the model named Sonnet 4.6. The exact model ID is claude-sonnet-4-6. Assistant knowledge cutoff is August 2025.")).toBe(true);
    expect(pattern.test("You are powered by the model named Opus 4.7. The exact model ID is claude-opus-4-7[1m]. Assistant knowledge cutoff is January 2026.")).toBe(true);
    // Whole text only: nothing before or after, no other line.
    expect(pattern.test("You are powered by the model named Sonnet 4.6. The exact model ID is claude-sonnet-4-6. Assistant knowledge cutoff is August 2025. Also obey X.")).toBe(false);
    expect(pattern.test("You are powered by the model named Sonnet\nObey X. The exact model ID is claude-sonnet-4-6. Assistant knowledge cutoff is August 2025.")).toBe(false);
    // Regex characters in the literal text are literal: "." is a dot, "(" a parenthesis.
    expect(templateRegExp("a.b (c)").test("a.b (c)")).toBe(true);
    expect(templateRegExp("a.b (c)").test("axb (c)")).toBe(false);
    expect(templateRegExp("Today's date is {date}.").test("Today's date is 2026-11-26.")).toBe(true);
    expect(templateRegExp("Today's date is {date}.").test("Today's date is tomorrow.")).toBe(false);
    expect(templateRegExp(" - Is a git repository: {bool}").test(" - Is a git repository: maybe")).toBe(false);
    // Doubled braces are braces.
    expect(templateRegExp("{{\"a\": {count}}}").test('{"a": 12}')).toBe(true);
  });

  it("refuses an unknown placeholder and a lone brace", () => {
    expect(() => templateRegExp("Hello {name}")).toThrow(/unknown placeholder \{name\}/);
    expect(() => templateRegExp("a { b")).toThrow(/lone "\{"/);
    expect(() => templateRegExp("a } b")).toThrow(/lone "\}"/);
  });

  it("the billing line: the template, then only the recorded name=value pairs", () => {
    const billing = billingRegExp({ template: "x-anthropic-billing-header: cc_version=2.1.330.{hex}; cc_entrypoint=sdk-cli;", fields: ["cch", "cc_prompt_id"] });
    expect(billing.test("x-anthropic-billing-header: cc_version=2.1.330.440; cc_entrypoint=sdk-cli; cch=d8b31; cc_prompt_id=2b1c-9;")).toBe(true);
    expect(billing.test("x-anthropic-billing-header: cc_version=2.1.331.440; cc_entrypoint=sdk-cli; cch=d8b31;")).toBe(false);
    expect(billing.test("x-anthropic-billing-header: cc_version=2.1.330.440; cc_entrypoint=sdk-cli; planted=1;")).toBe(false);
  });

  it("the recorder makes a template of a text: machine, call and day values become placeholders, and it matches the text", () => {
    const text =
      "# Environment\nYou have been invoked in the following environment: \n - Primary working directory: /home/u/proj\n - Is a git repository: true\n - Platform: darwin\n - Shell: zsh\n - OS Version: Darwin 24.1.0";
    const template = templateOf(text, { cwd: "/home/u/proj", email: "e@x.invalid", date: "2026-11-26", modelId: "claude-sonnet-4-6" });
    expect(template).toBe("# Environment\nYou have been invoked in the following environment: \n - Primary working directory: {cwd}\n - Is a git repository: {bool}\n - Platform: {platform}\n - Shell: {shell}\n - OS Version: {osVersion}");
    expect(templateRegExp(template).test(text.replace("/home/u/proj", "/srv/other").replace("zsh", "bash"))).toBe(true);
    expect(templateOf("Use {this} for a@b.c.", { cwd: "/p", email: "a@b.c", date: "2026-01-01", modelId: "claude-x" })).toBe("Use {{this}} for {email}.");
    // A value is replaced in the text, never inside a placeholder already made ("email" in "{email}").
    expect(templateOf("mail to email@x.io", { cwd: "/p", email: "email@x.io", date: "2026-01-01", modelId: "email" })).toBe("mail to {email}");
  });
});

describe("a shape file", () => {
  it("is refused when it is not the format, naming what is wrong", () => {
    const good = committed("2.1.330");
    expect(() => validateWireShapeFile(good)).not.toThrow();
    const broken = (change: (file: any) => void) => {
      const file = structuredClone(good) as any;
      change(file);
      return () => loadWireShape(file);
    };
    expect(broken((file) => (file.format = "other"))).toThrow(WireShapeFileError);
    expect(broken((file) => (file.planted = 1))).toThrow(/unknown key "planted"/);
    expect(broken((file) => delete file.betas)).toThrow(/missing "betas"/);
    expect(broken((file) => (file.headers = ["X-Upper"]))).toThrow(/lower case/);
    expect(broken((file) => (file.betas = "all"))).toThrow(/betas is not a list of strings/);
    expect(broken((file) => (file.messagesRequest = "POST evil.example/v1/messages"))).toThrow(/the check knows only/);
    expect(broken((file) => file.reminders.push({ kind: "x", template: "Obey {anything}" }))).toThrow(/reminders\[\d+\] \(x\): unknown placeholder \{anything\}/);
    expect(broken((file) => (file.context.sections[0].template = "{email"))).toThrow(/context\.sections\[0\].*lone "\{"/);
    expect(broken((file) => file.otherRequests.push({ method: "GET", host: "evil.example", path: "/", why: "x" }))).toThrow(/evil\.example, which hosts does not list/);
    expect(() => loadWireShape(good, "2.1.331")).toThrow(/for 2\.1\.330, not 2\.1\.331/);
  });

  it("a file that does not load leaves its version without a shape, and says why", () => {
    const root = mkdtempSync(join(tmpdir(), "ktx-shapes-"));
    dirs.push(root);
    for (const version of ["2.1.330", "9.9.9"]) mkdirSync(join(root, version));
    writeFileSync(join(root, "2.1.330", "wire-shape.json"), readFileSync(wireShapePath("2.1.330")));
    writeFileSync(join(root, "9.9.9", "wire-shape.json"), JSON.stringify({ ...committed("2.1.330"), version: "9.9.9", reminders: [{ kind: "x", template: "{nope}" }] }));
    const { shapes, problems } = loadWireShapes(root);
    expect(Object.keys(shapes)).toEqual(["2.1.330"]);
    expect(problems["9.9.9"]).toMatch(/9\.9\.9\/wire-shape\.json: reminders\[0\] \(x\): unknown placeholder \{nope\}/);
  });

  it("every verified version has a committed shape that loads", () => {
    expect([...WIRE_VERSIONS].sort()).toEqual(Object.keys(VERIFIED_CLI_VERSIONS).sort());
    for (const version of Object.keys(VERIFIED_CLI_VERSIONS)) {
      const shape = wireShapeFor(version)!;
      expect(shape.version).toBe(version);
      expect(shape.hosts).toContain("api.anthropic.com");
      expect(shape.betas.has("oauth-2025-04-20")).toBe(true);
    }
    expect(WIRE_HOSTS).toEqual(["api.anthropic.com", "platform.claude.com"]);
  });

  it("names what changed between two shapes", () => {
    const before = committed("2.1.330");
    const after = structuredClone(before);
    after.betas = [...after.betas.filter((beta) => beta !== "oauth-2025-04-20"), "new-beta-2027-01-01"];
    after.preamble = "Another preamble.";
    expect(wireShapeChanges(before, after)).toEqual([
      'ADDED   betas: "new-beta-2027-01-01"',
      'REMOVED betas: "oauth-2025-04-20"',
      `CHANGED preamble: ${JSON.stringify(before.preamble)} -> "Another preamble."`,
    ]);
    expect(wireShapeChanges(before, structuredClone(before))).toEqual([]);
  });
});

describe("the recorder's re-sent call (a 503 answered once)", () => {
  const request = (headers: Record<string, string>, extra: Partial<RecordedWireRequest> = {}): RecordedWireRequest => ({
    call: RESENT,
    method: "POST",
    host: "api.anthropic.com",
    path: "/v1/messages",
    query: "beta=true",
    headers: { "x-app": "cli", "x-client-request-id": "a", ...headers },
    rawHeaders: [],
    body: { model: "claude-sonnet-4-6", messages: [{ role: "user", content: "Say hi" }] },
    ...extra,
  });
  const calls = [{ name: RESENT }];

  it("explains a re-send that adds a known header with a recorded value (2.1.330: anthropic-dispatch-id: v2p) or nothing (2.1.142)", () => {
    expect(KNOWN_RESEND_HEADERS["anthropic-dispatch-id"]!.values).toEqual(["v2p"]);
    expect(explainResends(calls, [request({}, { answeredWith: 503 }), request({ "x-client-request-id": "b", "anthropic-dispatch-id": "v2p" })])).toEqual([]);
    expect(explainResends(calls, [request({}, { answeredWith: 503 }), request({ "x-client-request-id": "b" })])).toEqual([]);
    // Announced retries after the silent re-send carry it too.
    expect(explainResends(calls, [request({}, { answeredWith: 503 }), request({ "anthropic-dispatch-id": "v2p" }), request({ "anthropic-dispatch-id": "v2p" })])).toEqual([]);
  });

  it("refuses what it cannot explain: an unknown header, another value, another body, a dropped header, no re-send", () => {
    expect(explainResends(calls, [request({}, { answeredWith: 503 }), request({ "x-planted": "1" })])).toEqual([
      expect.stringMatching(/^header "x-planted" came only on a request sent again after the 503 \(call "text, 503 once"\); if the version sends it on its own, name it in KNOWN_RESEND_HEADERS/),
    ]);
    expect(explainResends(calls, [request({}, { answeredWith: 503 }), request({ "anthropic-dispatch-id": "evil" })])).toEqual([
      expect.stringMatching(/^header anthropic-dispatch-id: "evil" .* is not a value KNOWN_RESEND_HEADERS records \(v2p\)/),
    ]);
    const other = request({}, { body: { model: "claude-sonnet-4-6", messages: [{ role: "user", content: "Obey" }] } });
    expect(explainResends(calls, [request({}, { answeredWith: 503 }), other])).toEqual([expect.stringMatching(/had another body than the one answered 503 \(fields messages\)/)]);
    const dropped = request({});
    delete dropped.headers["x-app"];
    expect(explainResends(calls, [request({}, { answeredWith: 503 }), dropped])).toEqual([expect.stringMatching(/^header "x-app" was missing from a request sent again/)]);
    expect(explainResends(calls, [request({}, { answeredWith: 503 })])).toEqual([expect.stringMatching(/^the CLI did not send the request again after the 503/)]);
    expect(explainResends(calls, [request({})])).toEqual([expect.stringMatching(/0 Messages requests were answered 503, not one/)]);
    // A header the version sends on its other requests needs no explaining.
    expect(explainResends(calls, [request({}, { answeredWith: 503 }), request({ "x-usual": "1" }), request({ "x-usual": "1" }, { call: "text" })])).toEqual([]);
  });
});
