/** The `telemetry` option's schema (telemetry.ts has the option and its mapping to the environment). */
import { z } from "zod";

export const telemetryOptionsSchema = z.strictObject({
  endpoint: z.url(),
  protocol: z.enum(["http/json", "http/protobuf", "grpc"]).optional(),
  metrics: z.boolean().optional(),
  logs: z.boolean().optional(),
  metricExportIntervalMs: z.number().int().positive().optional(),
  logsExportIntervalMs: z.number().int().positive().optional(),
  logUserPrompts: z.boolean().optional(),
  logToolDetails: z.boolean().optional(),
  headers: z.record(z.string().regex(/^[^=,\s]+$/, "no '=', ',' or spaces in a header name"), z.string()).optional(),
  resourceAttributes: z.record(z.string().regex(/^[^=,\s]+$/, "no '=', ',' or spaces in an attribute name"), z.string()).optional(),
});
