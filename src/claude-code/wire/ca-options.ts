/** The runtime interceptor's CA: named, one day (a runtime's CA dies with it), constrained to the hosts it signs for. */
export const interceptorCaOptions = (hosts: readonly string[]) => ({ name: "ktx-claude-code runtime interceptor", hosts, validityMs: 24 * 3600_000 });
