/**
 * What session reuse changes in what the CLI sends (bench/usage.mjs): the requests of N calls on fresh
 * processes against those of N calls on one reused process (same HOME, same project, same call), call by
 * call and request by request. Ids that are new on every call or request either way (prompt ids, request
 * ids, message and tool-use ids, the billing line's `cch` hash) are masked; the session id is counted.
 */

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const mask = (text) =>
  text
    .replace(UUID, "<uuid>")
    .replace(/cch=[0-9a-f]+/g, "cch=<cch>")
    .replace(/\b(msg|toolu|req)_[A-Za-z0-9_]+/g, "<$1>");

/** Leaf paths of a JSON value with their (masked) values; strings that hold JSON (`metadata.user_id`) are opened. */
function leaves(value, path = "", out = new Map()) {
  if (typeof value === "string" && /^[[{]/.test(value)) {
    try {
      return leaves(JSON.parse(value), `${path}(json)`, out);
    } catch {
      // not JSON after all
    }
  }
  if (value && typeof value === "object") {
    for (const [key, child] of Object.entries(value)) leaves(child, path ? `${path}.${key}` : key, out);
    if (Object.keys(value).length === 0) out.set(path, Array.isArray(value) ? "[]" : "{}");
  } else {
    out.set(path, typeof value === "string" ? mask(value) : JSON.stringify(value));
  }
  return out;
}

/** The billing line's fields (`x-anthropic-billing-header: k=v; …` in system[0]). */
function billingFields(body) {
  const line = (Array.isArray(body?.system) ? body.system : []).map((b) => b.text ?? "").find((t) => t.startsWith("x-anthropic-billing-header:"));
  if (!line) return {};
  return Object.fromEntries(
    line
      .slice("x-anthropic-billing-header:".length)
      .split(";")
      .map((part) => part.trim())
      .filter(Boolean)
      .map((part) => [part.slice(0, part.indexOf("=")), part.slice(part.indexOf("=") + 1)]),
  );
}

const sessionOf = (request) => {
  try {
    return JSON.parse(request.body.metadata.user_id).session_id;
  } catch {
    return undefined;
  }
};
const messages = (requests) => requests.filter((r) => r.method === "POST" && r.path === "/v1/messages");
const distinct = (values) => new Set(values.filter((v) => v !== undefined)).size;
const IGNORED_HEADERS = new Set(["x-client-request-id", "content-length", "host", "connection"]);

/**
 * @param {object[][]} fresh   per call, every request the front received (fresh processes)
 * @param {object[][]} reused  the same for the calls on one reused process
 */
export function compareReuse(fresh, reused) {
  const freshMessages = fresh.map(messages);
  const reusedMessages = reused.map(messages);
  const bodyDifferences = new Map();
  const headerDifferences = new Map();
  let bodyBytesEqual = true;
  let requestsCompared = 0;
  for (let call = 0; call < Math.min(fresh.length, reused.length); call += 1) {
    const a = freshMessages[call];
    const b = reusedMessages[call];
    if (a.length !== b.length) bodyBytesEqual = false;
    for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
      requestsCompared += 1;
      if (Buffer.byteLength(a[i].rawBody) !== Buffer.byteLength(b[i].rawBody)) bodyBytesEqual = false;
      const la = leaves(a[i].body);
      const lb = leaves(b[i].body);
      for (const path of new Set([...la.keys(), ...lb.keys()])) {
        if (la.get(path) !== lb.get(path) && !bodyDifferences.has(path)) bodyDifferences.set(path, { fresh: la.get(path)?.slice(0, 120), reused: lb.get(path)?.slice(0, 120) });
      }
      for (const name of new Set([...Object.keys(a[i].headers), ...Object.keys(b[i].headers)])) {
        if (IGNORED_HEADERS.has(name)) continue;
        const va = a[i].headers[name] === undefined ? undefined : mask(String(a[i].headers[name]));
        const vb = b[i].headers[name] === undefined ? undefined : mask(String(b[i].headers[name]));
        if (va === vb) continue;
        const entry = headerDifferences.get(name) ?? { fresh: [], reused: [], at: [] };
        headerDifferences.set(name, entry);
        // Every distinct pair, with the first call/request it was seen at.
        if (!entry.fresh.some((v, k) => v === va && entry.reused[k] === vb)) {
          entry.fresh.push(va);
          entry.reused.push(vb);
          entry.at.push(`call ${call + 1} request ${i + 1}`);
        }
      }
    }
  }
  const allFresh = freshMessages.flat();
  const allReused = reusedMessages.flat();
  const fieldValues = (list) => {
    const fields = {};
    for (const r of list) for (const [k, v] of Object.entries(billingFields(r.body))) (fields[k] ??= new Set()).add(v);
    return fields;
  };
  const billFresh = fieldValues(allFresh);
  const billReused = fieldValues(allReused);
  const billing = {};
  for (const key of new Set([...Object.keys(billFresh), ...Object.keys(billReused)])) {
    const f = [...(billFresh[key] ?? [])];
    const r = [...(billReused[key] ?? [])];
    // Per-call values (ids, hashes) are shown by count; fixed ones by value.
    const shown = (values, n) => (values.length === n && n > 1 ? `${values.length} distinct (one per request)` : values.length > 2 ? `${values.length} distinct` : values.join(", "));
    billing[key] = { fresh: shown(f, allFresh.length), reused: shown(r, allReused.length) };
  }
  const headerSessions = (list) => distinct(list.map((r) => r.headers["x-claude-code-session-id"]));
  return {
    calls: { fresh: fresh.length, reused: reused.length },
    messagesRequests: { fresh: allFresh.length, reused: allReused.length },
    requestsCompared,
    // Distinct metadata.user_id.session_id values over the calls (and the header that repeats it).
    sessionIds: { fresh: distinct(allFresh.map(sessionOf)), reused: distinct(allReused.map(sessionOf)), freshHeader: headerSessions(allFresh), reusedHeader: headerSessions(allReused) },
    deviceIds: { fresh: distinct(allFresh.map((r) => JSON.parse(r.body.metadata.user_id).device_id)), reused: distinct(allReused.map((r) => JSON.parse(r.body.metadata.user_id).device_id)) },
    profileRequests: { fresh: fresh.flat().filter((r) => r.path === "/api/oauth/profile").length, reused: reused.flat().filter((r) => r.path === "/api/oauth/profile").length },
    otherRequests: { fresh: fresh.flat().filter((r) => r.path !== "/api/oauth/profile" && r.path !== "/v1/messages").length, reused: reused.flat().filter((r) => r.path !== "/api/oauth/profile" && r.path !== "/v1/messages").length },
    bodyBytes: { fresh: freshMessages.map((list) => list.map((r) => Buffer.byteLength(r.rawBody))), reused: reusedMessages.map((list) => list.map((r) => Buffer.byteLength(r.rawBody))) },
    bodyBytesEqual,
    betasEqual: distinct([...allFresh, ...allReused].map((r) => r.headers["anthropic-beta"])) === 1,
    betas: allFresh[0]?.headers["anthropic-beta"],
    billing,
    // Body leaves (with per-call ids masked) and headers whose values differ between a fresh call and the reused one in the same position.
    bodyDifferences: [...bodyDifferences].map(([path, values]) => ({ path, ...values })),
    headerDifferences: [...headerDifferences].map(([name, values]) => ({ name, ...values })),
    // The headers as the reused calls sent them, per call (first request of each), for those that differ.
    reusedHeaderByCall: Object.fromEntries([...headerDifferences.keys()].map((name) => [name, reusedMessages.map((list) => list.map((r) => r.headers[name]))])),
    freshHeaderByCall: Object.fromEntries([...headerDifferences.keys()].map((name) => [name, freshMessages.map((list) => list.map((r) => r.headers[name]))])),
  };
}
