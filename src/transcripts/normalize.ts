/**
 * Normalisation for comparing a replayed run against its recording: ids, timestamps, session ids,
 * ports and durations differ between runs without meaning anything.
 */

const VOLATILE_KEYS = new Set([
  "session_id",
  "uuid",
  "timestamp",
  "duration_ms",
  "duration_api_ms",
  "ttft_ms",
  "ttft_stream_ms",
  "time_to_request_ms",
  "first_content_frame_ms",
  "durationMs",
]);

/** Our request ids: `ktx_<pid>_<n>` (one-shot sessions) and `ktx_<pid>_r<n>` (reusable processes). */
const HOST_REQUEST_ID = /^ktx_\d+_r?\d+$/;
const LOOPBACK_PORT = /(127\.0\.0\.1|localhost):\d+/g;

function normalizeValue(value: unknown, key?: string): unknown {
  if (key !== undefined && VOLATILE_KEYS.has(key)) return `<${key}>`;
  if (typeof value === "string") {
    if (HOST_REQUEST_ID.test(value)) return "<host-request-id>";
    return value.replace(LOOPBACK_PORT, "$1:<port>");
  }
  if (Array.isArray(value)) return value.map((item) => normalizeValue(item));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const name of Object.keys(value).sort()) out[name] = normalizeValue((value as Record<string, unknown>)[name], name);
    return out;
  }
  return value;
}

/** Canonical text of a protocol line (sorted keys, volatile values masked); non-JSON text is kept. */
export function normalizeLine(text: string): string {
  try {
    return JSON.stringify(normalizeValue(JSON.parse(text)));
  } catch {
    return text.replace(LOOPBACK_PORT, "$1:<port>");
  }
}

/** Arguments compared the same way (the model and flags matter; ports and ids do not). */
export function normalizeArgs(args: readonly string[]): string[] {
  return args.map((arg) => arg.replace(LOOPBACK_PORT, "$1:<port>"));
}
