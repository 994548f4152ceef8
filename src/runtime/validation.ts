/**
 * Validation messages for options and call inputs: each problem names the field, the value given and
 * what is allowed, e.g. `timeoutMs is "1000"; allowed: a positive integer of milliseconds, or Infinity`.
 * zod finds the problems; its own text ("Invalid input") says neither the value nor what would do.
 * "What is allowed" comes from the schema's `.describe()` where one is set, else from the zod issue.
 */
import { z } from "zod";
import { InvalidInputError } from "../errors/index.js";

/** Field names whose values are never echoed in a message (keys, tokens, headers); `budgetTokens` is not one. */
const SECRET_NAME = /(api_?key|token|secret|password|headers?|authorization)$/i;

type Issue = z.core.$ZodIssue;

/** A timeout: a positive integer of milliseconds, or `Infinity` for none (runtime options and call inputs). */
export const timeoutMsSchema = z.number().int().positive().or(z.literal(Number.POSITIVE_INFINITY)).describe("a positive integer of milliseconds, or Infinity for none");

/** Throws `InvalidInputError` for `input` unless it fits `schema`; returns nothing (the input is used as given). */
export function checkInput(subject: string, schema: z.ZodType, input: unknown): void {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw invalidInputError(subject, schema, parsed.error, input);
}

export function invalidInputError(subject: string, schema: z.ZodType, error: z.ZodError, input: unknown): InvalidInputError {
  const problems = error.issues.flatMap((issue) => describeIssue(issue, schema, input));
  const invalid = new InvalidInputError(`Invalid ${subject}: ${problems.map((problem) => problem.text).join("; ")}.`);
  invalid.field = problems[0]?.field;
  return invalid;
}

interface Problem {
  field: string;
  text: string;
}

function describeIssue(issue: Issue, root: z.ZodType, input: unknown): Problem[] {
  if (issue.code === "invalid_union") {
    // A branch whose problems all lie inside the value took its type (an object given where false or an object is allowed): report those.
    const matched = issue.errors.find((branch) => branch.length > 0 && branch.every((inner) => inner.path.length > 0));
    if (matched) return matched.flatMap((inner) => describeIssue({ ...inner, path: [...issue.path, ...inner.path] } as Issue, root, input));
  }
  if (issue.code === "unrecognized_keys") {
    const known = objectKeys(schemaAt(root, issue.path));
    return issue.keys.map((key) => {
      const field = fieldName([...issue.path, key]);
      const near = known.find((name) => loose(name) === loose(key));
      const given = shownValue(key, valueAt(input, [...issue.path, key]));
      return { field, text: `${field} is not a known key${near ? ` (did you mean ${fieldName([...issue.path, near])}?)` : ""}, given ${given}; allowed keys: ${known.join(", ")}` };
    });
  }
  const field = fieldName(issue.path);
  const value = valueAt(input, issue.path);
  return [{ field, text: `${field || "the value"} is ${shownValue(issue.path.at(-1), value)}; allowed: ${allowedBy(issue, schemaAt(root, issue.path))}` }];
}

/** The value as shown, unless its field's name says it holds a secret. */
function shownValue(name: PropertyKey | undefined, value: unknown): string {
  return SECRET_NAME.test(String(name ?? "")) && value !== undefined ? "(a value, not shown)" : preview(value);
}

/** Case and separators aside, so `maxturns` and `max_turns` point to `maxTurns`. */
const loose = (name: string) => name.toLowerCase().replace(/[-_]/g, "");

const fieldName = (path: ReadonlyArray<PropertyKey>) => path.map(String).join(".");

function valueAt(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let cursor = root;
  for (const segment of path) cursor = typeof cursor === "object" && cursor !== null ? (cursor as Record<PropertyKey, unknown>)[segment] : undefined;
  return cursor;
}

/** The value as the message shows it: primitives as written, objects by their keys only (they may hold secrets, e.g. env). */
function preview(value: unknown): string {
  if (value === undefined) return "missing";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint" || value === null) return String(value);
  if (typeof value === "function") return "a function";
  if (Array.isArray(value)) return `an array of ${value.length}`;
  const keys = Object.keys(value as object);
  if (keys.length === 0) return "an empty object";
  return `an object with ${keys.slice(0, 6).join(", ")}${keys.length > 6 ? ", …" : ""}`;
}

/** What the schema at the issue's path takes: its description, else what the issue says was expected. */
function allowedBy(issue: Issue, schema: z.ZodType | undefined): string {
  const described = schema && (descriptionOf(schema) ?? numberRange(schema));
  if (described) return described;
  switch (issue.code) {
    case "invalid_type":
      return expectedType(issue.expected);
    case "too_small":
      return `${issue.origin === "number" ? "a number" : `a ${issue.origin}`} ${bound(issue.origin, issue.inclusive ? ">=" : ">", issue.minimum)}`;
    case "too_big":
      return `${issue.origin === "number" ? "a number" : `a ${issue.origin}`} ${bound(issue.origin, issue.inclusive ? "<=" : "<", issue.maximum)}`;
    case "invalid_value":
      return issue.values.length === 1 ? JSON.stringify(issue.values[0]) : `one of ${issue.values.map((value) => JSON.stringify(value)).join(", ")}`;
    case "invalid_format":
      return `a valid ${issue.format}`;
    case "invalid_union": {
      // Each branch's own top-level expectation ("a number" or "Infinity", …).
      const branches = issue.errors.map((branch) => branch.filter((inner) => inner.path.length === 0).map((inner) => allowedBy(inner, undefined)).join(" and "));
      return [...new Set(branches.filter(Boolean))].join(", or ");
    }
    default:
      return issue.message.replace(/^Invalid input: /, "");
  }
}

/** A number schema's whole range ("an integer > 0"), where zod's issue names only the first check that failed. */
function numberRange(schema: z.ZodType): string | undefined {
  const inner = unwrapped(schema);
  if (!(inner instanceof z.ZodNumber)) return undefined;
  const json = z.toJSONSchema(inner) as { type?: string; minimum?: number; exclusiveMinimum?: number; maximum?: number; exclusiveMaximum?: number };
  const limits = [
    json.exclusiveMinimum !== undefined ? `> ${json.exclusiveMinimum}` : json.minimum !== undefined ? `>= ${json.minimum}` : "",
    json.exclusiveMaximum !== undefined ? `< ${json.exclusiveMaximum}` : json.maximum !== undefined && json.maximum < Number.MAX_SAFE_INTEGER ? `<= ${json.maximum}` : "",
  ].filter(Boolean);
  return `${json.type === "integer" ? "an integer" : "a number"}${limits.length > 0 ? ` ${limits.join(" and ")}` : ""}`;
}

function bound(origin: string, relation: string, limit: number | bigint): string {
  if (origin === "string") return `of ${relation} ${limit} characters`;
  if (origin === "array") return `of ${relation} ${limit} items`;
  return `${relation} ${limit}`;
}

function expectedType(expected: string): string {
  if (expected === "int") return "an integer";
  if (expected === "object" || expected === "array") return `an ${expected}`;
  return `a ${expected}`;
}

/** The schema under `path`, through optional, default and union wrappers (the object branches of a union). */
function schemaAt(root: z.ZodType, path: ReadonlyArray<PropertyKey>): z.ZodType | undefined {
  let cursor: z.ZodType | undefined = root;
  for (const segment of path) {
    if (!cursor) return undefined;
    const inner = unwrapped(cursor);
    cursor = inner instanceof z.ZodRecord ? (inner.valueType as z.ZodType) : shapeOf(cursor)?.[String(segment)];
  }
  return cursor;
}

function unwrapped(schema: z.ZodType): z.ZodType {
  let cursor = schema;
  while (cursor instanceof z.ZodOptional || cursor instanceof z.ZodDefault || cursor instanceof z.ZodNullable) cursor = cursor.unwrap() as z.ZodType;
  return cursor;
}

/** The keys an object schema takes; for a union, those of all its object branches together. */
function shapeOf(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  const inner = unwrapped(schema);
  if (inner instanceof z.ZodObject) return inner.shape as Record<string, z.ZodType>;
  if (!(inner instanceof z.ZodUnion)) return undefined;
  const shapes = (inner.options as z.ZodType[]).map(shapeOf).filter((shape) => shape !== undefined);
  return shapes.length > 0 ? Object.assign({}, ...shapes) : undefined;
}

function objectKeys(schema: z.ZodType | undefined): string[] {
  return Object.keys((schema && shapeOf(schema)) ?? {});
}

function descriptionOf(schema: z.ZodType): string | undefined {
  let cursor: z.ZodType = schema;
  for (;;) {
    if (cursor.description) return cursor.description;
    if (!(cursor instanceof z.ZodOptional || cursor instanceof z.ZodDefault || cursor instanceof z.ZodNullable)) return undefined;
    cursor = cursor.unwrap() as z.ZodType;
  }
}

/** Every key path an options schema takes (`reuse.maxIdle`, …), nested objects included: what docs/options.md must cover. */
export function schemaKeyPaths(schema: z.ZodType, prefix = ""): string[] {
  return Object.entries(shapeOf(schema) ?? {}).flatMap(([key, child]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    return [path, ...schemaKeyPaths(child as z.ZodType, path)];
  });
}
