/**
 * Hand-written checks for the message types a loop is made of (messages.ts). zod's parse of every
 * line, copying each loose object key by key, was a measurable share of a reused loop's host CPU
 * (docs/performance.md); these checks walk the same fields and copy nothing.
 *
 * Each check is the schema of the same name in messages.ts, written out: it accepts a value only if
 * that schema does, and the value then passes as it is (those schemas transform nothing, so zod's
 * output would be an equal copy). A value a check turns down goes to zod, which gives the verdict and
 * the error text: a check may only be stricter than its schema, never looser
 * (test/unit/protocol-fast-checks.test.ts holds them to that).
 */

type Check = (value: Record<string, unknown>) => boolean;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === "string";
const isNumber = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);
const optional = (value: unknown, is: (value: unknown) => boolean): boolean => value === undefined || is(value);
const nullish = (value: unknown, is: (value: unknown) => boolean): boolean => value === undefined || value === null || is(value);
const isBoolean = (value: unknown): value is boolean => typeof value === "boolean";

function every(value: unknown, is: (item: unknown) => boolean): boolean {
  if (!Array.isArray(value)) return false;
  // Indexed: a for-of makes an iterator object per array, and this runs for every array of every line.
  for (let i = 0; i < value.length; i += 1) if (!is(value[i])) return false;
  return true;
}

/** `contentBlockSchema`: an object with a string `type`. */
const isContentBlock = (value: unknown): boolean => isObject(value) && isString(value.type);

/** `usageSchema`. */
const isUsage = (value: unknown): boolean =>
  isObject(value) &&
  optional(value.input_tokens, isNumber) &&
  optional(value.output_tokens, isNumber) &&
  nullish(value.cache_creation_input_tokens, isNumber) &&
  nullish(value.cache_read_input_tokens, isNumber);

/** `assistantMessageSchema`. */
const assistant: Check = (value) => {
  const message = value.message;
  return (
    isObject(message) &&
    optional(message.id, isString) &&
    optional(message.model, isString) &&
    every(message.content, isContentBlock) &&
    nullish(message.stop_reason, isString) &&
    nullish(message.usage, isUsage) &&
    nullish(value.parent_tool_use_id, isString) &&
    optional(value.session_id, isString) &&
    optional(value.error, isString) &&
    optional(value.is_api_error_message, isBoolean) &&
    nullish(value.api_error_status, isNumber)
  );
};

/** `userMessageSchema`. */
const user: Check = (value) => {
  const message = value.message;
  return (
    isObject(message) &&
    optional(message.role, isString) &&
    (isString(message.content) || every(message.content, isContentBlock)) &&
    nullish(value.parent_tool_use_id, isString) &&
    optional(value.isSynthetic, isBoolean)
  );
};

/** `resultMessageSchema`. */
const result: Check = (value) =>
  isString(value.subtype) &&
  optional(value.is_error, isBoolean) &&
  optional(value.num_turns, isNumber) &&
  optional(value.session_id, isString) &&
  optional(value.result, isString) &&
  optional(value.errors, Array.isArray) &&
  nullish(value.stop_reason, isString) &&
  nullish(value.terminal_reason, isString) &&
  nullish(value.total_cost_usd, isNumber) &&
  nullish(value.usage, isUsage) &&
  nullish(value.modelUsage, isPlainRecord) &&
  optional(value.permission_denials, Array.isArray) &&
  nullish(value.api_error_status, isNumber) &&
  optional(value.duration_ms, isNumber);

/** `z.record(z.string(), z.unknown())`: a plain object (what JSON.parse makes of `{…}`). */
function isPlainRecord(value: unknown): boolean {
  if (!isObject(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** `controlRequestSchema`. */
const controlRequest: Check = (value) => isString(value.request_id) && isObject(value.request) && isString(value.request.subtype);

/** `controlResponseSchema`. */
const controlResponse: Check = (value) => {
  const response = value.response;
  return isObject(response) && (response.subtype === "success" || response.subtype === "error") && isString(response.request_id);
};

/** `controlCancelRequestSchema`. */
const controlCancelRequest: Check = (value) => isString(value.request_id);

/** `keepAliveSchema` and `informationalSchema`: the type alone, which routed the line. */
const typeOnly: Check = () => true;

/** `streamEventSchema`: `event` is `z.unknown()`, which zod still requires to be present. */
const streamEvent: Check = (value) => "event" in value;

const isMcpServerStatus = (value: unknown): boolean => isObject(value) && isString(value.name) && optional(value.status, isString) && optional(value.source, isString);
const isPlugin = (value: unknown): boolean => isObject(value) && isString(value.name) && optional(value.path, isString) && optional(value.source, isString);

/** `systemInitSchema`. */
const systemInit: Check = (value) =>
  value.subtype === "init" &&
  isString(value.session_id) &&
  optional(value.cwd, isString) &&
  every(value.tools, isString) &&
  every(value.mcp_servers, isMcpServerStatus) &&
  isString(value.model) &&
  optional(value.permissionMode, isString) &&
  optional(value.apiKeySource, isString) &&
  optional(value.claude_code_version, isString) &&
  (value.slash_commands === undefined || every(value.slash_commands, isString)) &&
  optional(value.skills, Array.isArray) &&
  optional(value.agents, Array.isArray) &&
  (value.plugins === undefined || every(value.plugins, isPlugin));

/** `systemOtherSchema`: the string subtype, which is how the message was routed to it. */
const systemOther: Check = (value) => isString(value.subtype);

/** By the kind `parseCliMessage` routes a line to; kinds without a check here always go to zod. */
export const FAST_CHECKS: Partial<Record<string, Check>> = {
  assistant,
  user,
  result,
  control_request: controlRequest,
  control_response: controlResponse,
  control_cancel_request: controlCancelRequest,
  stream_event: streamEvent,
  keep_alive: typeOnly,
  informational: typeOnly,
  system_init: systemInit,
  system: systemOther,
};
