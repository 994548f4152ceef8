import { describe, expect, it } from "vitest";
import { REDACTED, Redactor, secretValues } from "../../src/transcripts/redact.js";

describe("transcript redaction", () => {
  const env = {
    ANTHROPIC_API_KEY: "sk-ant-api03-PLANTED-KEY-1234567890",
    AWS_SECRET_ACCESS_KEY: "planted/aws+secret=value",
    CLAUDE_CODE_OAUTH_TOKEN: "planted-oauth-token-abcdef",
    MY_SERVICE_TOKEN: "planted-service-token-xyz",
    HOME: "/home/user",
    AWS_REGION: "us-east-1",
  };
  const redactor = new Redactor(secretValues(env, { baseUrl: "http://127.0.0.1:1", apiKey: "sk-test-endpoint-key" }));

  it("collects the values of every scrubbed and credential-named variable, not ordinary ones", () => {
    const secrets = secretValues(env);
    expect(secrets).toEqual(expect.arrayContaining([env.ANTHROPIC_API_KEY, env.CLAUDE_CODE_OAUTH_TOKEN, env.MY_SERVICE_TOKEN, env.AWS_REGION]));
    expect(secrets).not.toContain("/home/user");
  });

  it("removes planted secrets from args, protocol lines and stderr", () => {
    const samples = [
      `--settings={"apiKeyHelper":"echo ${env.ANTHROPIC_API_KEY}"}`,
      JSON.stringify({ type: "user", message: { content: [{ type: "text", text: `my key is ${env.AWS_SECRET_ACCESS_KEY}` }] } }),
      `Error: token ${env.CLAUDE_CODE_OAUTH_TOKEN} expired`,
      `request failed: x-api-key sk-test-endpoint-key rejected`,
      JSON.stringify({ note: `svc ${env.MY_SERVICE_TOKEN}` }),
    ];
    for (const sample of samples) {
      const out = redactor.redact(sample);
      for (const secret of [env.ANTHROPIC_API_KEY, env.AWS_SECRET_ACCESS_KEY, env.CLAUDE_CODE_OAUTH_TOKEN, env.MY_SERVICE_TOKEN, "sk-test-endpoint-key"]) {
        expect(out).not.toContain(secret);
      }
      expect(out).toContain(REDACTED);
    }
  });

  it("removes key and token shapes it was not told about", () => {
    const out = new Redactor([]).redact(
      `Authorization: Bearer abcdefghijklmnop.qrstuv and sk-ant-oat01-unknownTOKEN123 and {"accessToken":"zzz-unknown-zzz","x-api-key":"k-unknown-1"}`,
    );
    expect(out).not.toMatch(/abcdefghijklmnop|unknownTOKEN123|zzz-unknown-zzz|k-unknown-1/);
    expect(out).toContain('"accessToken":"[REDACTED]"');
    expect(out).toContain("Bearer [REDACTED]");
  });

  it("finds a secret that was JSON-escaped inside a line", () => {
    const tricky = 'pa"ss\\word-secret-value';
    const out = new Redactor([tricky]).redact(JSON.stringify({ text: `x ${tricky} y` }));
    expect(out).not.toContain(JSON.stringify(tricky).slice(1, -1));
  });

  it("leaves ordinary protocol lines untouched", () => {
    const line = '{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"hello"}]}}';
    expect(redactor.redact(line)).toBe(line);
  });
});
