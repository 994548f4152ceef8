/**
 * The interceptor's way out: a checked request goes to its real host over the user's own proxy and
 * CA settings (the proxy and CA variables of the runtime's `env`), through undici's
 * `EnvHttpProxyAgent` (a maintained client: proxy tunnels and TLS are not written here).
 */
import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import { EnvHttpProxyAgent, ProxyAgent, type Dispatcher } from "undici";
import type { Env } from "../../transport/env.js";

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

/** An explicit way out (tests): every checked request goes through this proxy, trusting this CA. Never taken from the environment. */
export interface WireUpstream {
  proxy: string;
  ca: string;
}

/** Every proxy name is read from the runtime's `env` only: an empty value means "none" to undici, so process.env is never consulted. */
export function upstreamDispatcher(env: Env, upstream?: WireUpstream): Dispatcher {
  if (upstream) return new ProxyAgent({ uri: upstream.proxy, requestTls: { ca: upstream.ca }, proxyTls: { ca: upstream.ca } });
  const extra = callerCaPem(env);
  const ca = extra ? [...rootCertificates, extra] : [...rootCertificates];
  return new EnvHttpProxyAgent({
    httpsProxy: env.HTTPS_PROXY ?? env.https_proxy ?? env.ALL_PROXY ?? env.all_proxy ?? "",
    httpProxy: env.HTTP_PROXY ?? env.http_proxy ?? env.ALL_PROXY ?? env.all_proxy ?? "",
    noProxy: env.NO_PROXY ?? env.no_proxy ?? "",
    connect: { ca },
    requestTls: { ca },
    proxyTls: { ca },
  });
}
