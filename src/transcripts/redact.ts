/**
 * Redaction applied to everything a transcript holds (args, both directions, stderr) before it is
 * written: the values of credentials the env scrub knows, plus API-key, bearer and OAuth token shapes.
 */
import { KEPT_CREDENTIALS, isScrubbedEnvName, type Env, type ApiEndpoint, endpointCredential } from "../transport/env.js";

export const REDACTED = "[REDACTED]";

const PATTERNS: readonly RegExp[] = [
  /sk-ant-[A-Za-z0-9_-]{8,}/g,
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi,
  /("(?:x-api-key|authorization|api[_-]?key|apiKey|access[_-]?token|accessToken|refresh[_-]?token|refreshToken|oauth[_-]?token|client[_-]?secret)"\s*:\s*")((?:[^"\\]|\\.)+)(")/gi,
];

/** Credential-bearing names beyond the scrub's own (a KTX user's service tokens). */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL/i;

/** Shortest secret value worth matching literally; shorter values ("1", "us-east-1") would shred the text. */
const MIN_SECRET_LENGTH = 8;

/** Values of credential-bearing variables in `env`, and the explicit endpoint's key. */
export function secretValues(env: Env, apiEndpoint?: ApiEndpoint): string[] {
  const values = Object.entries(env)
    .filter(([name]) => isScrubbedEnvName(name) || KEPT_CREDENTIALS.includes(name) || SECRET_NAME.test(name))
    .map(([, value]) => value ?? "");
  if (apiEndpoint) values.push(endpointCredential(apiEndpoint));
  return [...new Set(values.filter((value) => value.length >= MIN_SECRET_LENGTH))].sort((a, b) => b.length - a.length);
}

export class Redactor {
  constructor(private readonly secrets: readonly string[]) {}

  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
      const escaped = JSON.stringify(secret).slice(1, -1);
      if (escaped !== secret && out.includes(escaped)) out = out.split(escaped).join(REDACTED);
    }
    for (const pattern of PATTERNS) {
      out = out.replace(pattern, (...groups: string[]) => {
        // Keep the key/prefix groups, replace only the secret part.
        if (groups.length >= 6 && groups[3] !== undefined && typeof groups[3] === "string" && groups[1]?.startsWith('"')) {
          return `${groups[1]}${REDACTED}${groups[3]}`;
        }
        if (groups[1] && /^Bearer\s+$/i.test(groups[1])) return `${groups[1]}${REDACTED}`;
        return REDACTED;
      });
    }
    return out;
  }
}
