/**
 * How a CLI process is sent through its runtime's interceptor: a session name and a proxy password made
 * from a per-runtime secret (so the interceptor's process needs no list of sessions and nothing else on
 * the machine can use the proxy), and the caller's extra CA file the child's CA file starts with.
 * Kept apart from the interceptor itself: the runtime's process loads this, never the TLS and X.509 code.
 */
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Env } from "../../transport/env.js";

/** A new per-runtime secret for the sessions' proxy passwords. */
export const newWireSecret = (): string => randomBytes(18).toString("base64url");

/** A session's proxy password, from the runtime's secret and the session's name. */
export const sessionPassword = (secret: string, name: string): string => createHmac("sha256", secret).update(name).digest("base64url");

/** A new session's name and the variables that send a CLI through the interceptor at `port` trusting `caFile`. */
export function sessionEnv(secret: string, port: number, caFile: string): { name: string; env: Record<string, string> } {
  const name = randomUUID().slice(0, 8);
  const url = `http://${name}:${sessionPassword(secret, name)}@127.0.0.1:${port}`;
  return { name, env: { HTTPS_PROXY: url, https_proxy: url, HTTP_PROXY: url, http_proxy: url, NODE_EXTRA_CA_CERTS: caFile } };
}

/** The caller's extra CA file (`NODE_EXTRA_CA_CERTS`), read once; unreadable counts as none, as in node. */
export function callerCaPem(env: Env): string {
  const file = env.NODE_EXTRA_CA_CERTS;
  if (!file) return "";
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

/** A new private directory for a CA file. */
export const newCaDir = (): string => mkdtempSync(join(tmpdir(), "ktx-wire-"));

/** The CLI's one CA file, in a directory of its own: the user's own extra CAs and ours, private to this runtime. */
export function writeCaFile(certPem: string, env: Env, dir = newCaDir()): string {
  const caFile = join(dir, "ca.pem");
  const extra = callerCaPem(env);
  writeFileSync(caFile, `${extra}${extra && !extra.endsWith("\n") ? "\n" : ""}${certPem}`, { mode: 0o600 });
  return caFile;
}
