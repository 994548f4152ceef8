/**
 * The `telemetry` option: the CLI's OpenTelemetry export, set explicitly by the caller and never
 * taken from the parent environment (every OTEL_* and CLAUDE_CODE_ENABLE_TELEMETRY there is dropped).
 * Prompt text and tool details are logged only when asked for. docs/environment.md has the mapping.
 * The option's schema is in telemetry-schema.ts: this module, which every transcript reader loads
 * through env.ts, imports no zod.
 */
export interface TelemetryOptions {
  /** OTLP collector base URL, e.g. `http://127.0.0.1:4318` (signals go to `/v1/metrics`, `/v1/logs`). */
  endpoint: string;
  /** Wire protocol. Default `http/protobuf`. */
  protocol?: "http/json" | "http/protobuf" | "grpc";
  /** Token, cost and session metrics. Default true. */
  metrics?: boolean;
  /** Events (API requests, tool results, prompts without their text). Default true. */
  logs?: boolean;
  /** Metric export interval (CLI default 60 s). */
  metricExportIntervalMs?: number;
  /** Log export interval (CLI default 5 s). */
  logsExportIntervalMs?: number;
  /** Put the prompt text into `user_prompt` events. Default false: only its length is sent. */
  logUserPrompts?: boolean;
  /** Put tool names' details (MCP server/tool names, arguments) into tool events. Default false. */
  logToolDetails?: boolean;
  /** Sent with every export request (`OTEL_EXPORTER_OTLP_HEADERS`), e.g. a collector token. */
  headers?: Record<string, string>;
  /** Extra resource attributes (`OTEL_RESOURCE_ATTRIBUTES`), e.g. `{ "ktx.project": "docs" }`. */
  resourceAttributes?: Record<string, string>;
}

/** `key=value` pairs as OTel reads them: the value percent-encoded, so `,` and `=` survive. */
const pairs = (record: Record<string, string>) =>
  Object.entries(record)
    .map(([key, value]) => `${key}=${encodeURIComponent(value)}`)
    .join(",");

/** How long the CLI may spend flushing on exit, so an unreachable collector never holds a call up. */
const SHUTDOWN_TIMEOUT_MS = "2000";

/** The child environment for `options`. Content logging (prompts, tool details) only when asked for. */
export function telemetryEnv(options: TelemetryOptions): Record<string, string> {
  const env: Record<string, string> = {
    CLAUDE_CODE_ENABLE_TELEMETRY: "1",
    OTEL_METRICS_EXPORTER: options.metrics === false ? "none" : "otlp",
    OTEL_LOGS_EXPORTER: options.logs === false ? "none" : "otlp",
    OTEL_TRACES_EXPORTER: "none",
    OTEL_EXPORTER_OTLP_PROTOCOL: options.protocol ?? "http/protobuf",
    OTEL_EXPORTER_OTLP_ENDPOINT: options.endpoint,
    CLAUDE_CODE_OTEL_SHUTDOWN_TIMEOUT_MS: SHUTDOWN_TIMEOUT_MS,
    CLAUDE_CODE_OTEL_FLUSH_TIMEOUT_MS: SHUTDOWN_TIMEOUT_MS,
  };
  if (options.metricExportIntervalMs !== undefined) env.OTEL_METRIC_EXPORT_INTERVAL = String(options.metricExportIntervalMs);
  if (options.logsExportIntervalMs !== undefined) env.OTEL_LOGS_EXPORT_INTERVAL = String(options.logsExportIntervalMs);
  if (options.logUserPrompts) env.OTEL_LOG_USER_PROMPTS = "1";
  if (options.logToolDetails) env.OTEL_LOG_TOOL_DETAILS = "1";
  if (options.headers && Object.keys(options.headers).length > 0) env.OTEL_EXPORTER_OTLP_HEADERS = pairs(options.headers);
  if (options.resourceAttributes && Object.keys(options.resourceAttributes).length > 0) env.OTEL_RESOURCE_ATTRIBUTES = pairs(options.resourceAttributes);
  return env;
}
