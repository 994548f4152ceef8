/**
 * The interceptor's certificates when its runtime made them (ca.ts `issueLeaves`): a TLS context per
 * host from PEMs, with no X.509 code loaded, so the interceptor's process starts as a bare Node does.
 */
import { createSecureContext, type SecureContext } from "node:tls";
import type { IssuedLeaves, MemoryCa } from "./ca.js";

export function issuedCa(issued: IssuedLeaves): MemoryCa {
  const contexts = new Map<string, SecureContext>();
  const hosts = Object.keys(issued.leaves);
  return {
    certPem: issued.certPem,
    hosts,
    contextFor(host: string) {
      const leaf = Object.hasOwn(issued.leaves, host) ? issued.leaves[host] : undefined;
      if (!leaf) return Promise.reject(new Error(`this CA does not sign for ${host}`));
      let context = contexts.get(host);
      if (!context) {
        context = createSecureContext({ key: leaf.key, cert: leaf.cert });
        contexts.set(host, context);
      }
      return Promise.resolve(context);
    },
  };
}
