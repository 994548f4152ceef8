/**
 * `capabilities.telemetry` (issue 43): the CLI's own OpenTelemetry export for the calls that opt in, with prompt
 * text and tool details off unless set. The variables are the runtime option's (src/transport/telemetry.ts): only
 * those reach the child, every OTEL_* of the caller's environment is dropped as before.
 *
 * Egress, measured on 2.1.330 behind the interceptor (test/e2e/capabilities-telemetry.test.ts): the CLI's OTLP/HTTP
 * exporter does not take HTTP(S)_PROXY, so its exports go straight to the endpoint's host and the interceptor never
 * sees them (nothing was refused, and every Messages request still went through it). The endpoint is therefore
 * the one host the capability adds, and what reaches it is the caller's choice.
 */
import { telemetryOptionsSchema } from "../../transport/telemetry-schema.js";

export const telemetryCapabilitySchema = telemetryOptionsSchema.pick({ endpoint: true, protocol: true, headers: true, logUserPrompts: true, logToolDetails: true });
