/**
 * The recorded first-party shape of a CLI version as data (`fixtures/transcripts/<version>/wire-shape.json`,
 * written by `ktx-claude-code fixtures record-wire`, src/testing/wire-recorder.ts) and its loader, which
 * turns the file into the `WireShape` check.ts applies. Texts the CLI varies per machine, call or day
 * (the project dir, platform, shell, OS version, date, model name and id, the account's email…) are
 * named placeholders in the file, `{date}`, which the loader turns into regexes; every other character
 * is literal (`{{` and `}}` stand for braces). A file that is not exactly this format is refused.
 */

import { loadVariants, type ShapeVariants, type ShapeVariantsFile, VARIANT_KEYS, variantsProblem } from "./shape-variants.js";

/** The format's name and revision, the file's first key. */
export const WIRE_SHAPE_FORMAT = "ktx-claude-code/wire-shape@1";

/** The only Messages request there is (check.ts requires it); a file naming another is refused. */
export const MESSAGES_REQUEST = "POST api.anthropic.com/v1/messages?beta=true";

/** What a placeholder stands for: one regex fragment each (no capture groups), and what it is. */
export const PLACEHOLDERS: Readonly<Record<string, { pattern: string; what: string }>> = {
  // Bound to the call's project dir when checked (check.ts); this pattern only reads recordings.
  cwd: { pattern: "/[^\\n]*", what: "the project dir (the CLI's working directory)" },
  bool: { pattern: "(?:true|false)", what: "true or false (e.g. whether the project dir is a git repository)" },
  // Bound to the machine's own value when checked (check.ts: the interceptor runs beside the CLI).
  platform: { pattern: "[a-z0-9]{1,16}", what: "the platform (linux, darwin, win32)" },
  // What the CLI derives from $SHELL: a name (bash, zsh, unknown) or the path itself, once with the login shell's name; no spaces in either.
  shell: { pattern: "(?:[\\w.+-]{1,32}|/[\\w./+-]{1,255})(?: \\(login shell: (?:[\\w.+-]{1,32}|/[\\w./+-]{1,255})\\))?", what: "the user's shell (a name or a path, no spaces)" },
  // Bound to the machine's own `os.type() os.release()` when checked.
  osVersion: { pattern: "[\\w.+()-]{1,40}(?: [\\w.+()#-]{1,64}){0,2}", what: "the OS name and version" },
  date: { pattern: "\\d{4}-\\d{2}-\\d{2}", what: "today's date" },
  // A family and a number (Sonnet 4.6, Claude Opus 4, Claude 3.7 Sonnet, Opus 4.6 (1M context)): no room for a sentence.
  modelName: { pattern: "(?:(?:Claude )?[A-Z][a-z]+(?: [A-Z][a-z]+)? \\d+(?:\\.\\d+)?|Claude \\d+(?:\\.\\d+)? [A-Z][a-z]+)(?: \\(1M context\\))?", what: "the model's display name (Sonnet 4.6)" },
  modelId: { pattern: "[a-z0-9.-]+(?:\\[1m\\])?", what: "the model id the request names" },
  monthYear: { pattern: "[A-Z][a-z]+ \\d{4}", what: "a month and year (a knowledge cutoff)" },
  email: { pattern: "[^\\s]+", what: "the account's email address" },
  hex: { pattern: "[0-9a-f]+", what: "hexadecimal digits (the build suffix of cc_version)" },
  count: { pattern: "\\d+", what: "a number" },
  // Bound to the call's own agents when checked (check-subagents.ts); this pattern only reads recordings.
  agents: { pattern: "- [a-z][a-z0-9-]*: [^\\n]*(?:\\n- [a-z][a-z0-9-]*: [^\\n]*)*", what: "the call's agents as the CLI lists them (capabilities.subagents)" },
};

/** The file, as written and reviewed. */
export interface WireShapeFile extends ShapeVariantsFile {
  format: typeof WIRE_SHAPE_FORMAT;
  version: string;
  /** How and when it was recorded: the call kinds, each with the requests it made (for people; not checked). */
  recorded: { date: string; by: string; calls: string[] };
  hosts: string[];
  messagesRequest: typeof MESSAGES_REQUEST;
  /** Header names (lower case) a Messages request may carry. */
  headers: string[];
  /** `anthropic-beta` values it may carry. */
  betas: string[];
  /** Top-level body fields it may carry. */
  bodyFields: string[];
  /** The first system block: a template, then ` name=value;` pairs of these names. */
  billingLine: { template: string; fields: string[] };
  /** The system block between the billing line and the caller's system prompt. */
  preamble: string;
  /** `<system-reminder>` texts it adds to user turns, whole, by kind (a kind may have several templates). */
  reminders: Array<{ kind: string; template: string }>;
  /** The "context" reminder: its head, its tail, and the sections it may hold, each whole. */
  context: { head: string; tail: string; sections: Array<{ name: string; template: string }> };
  /** Texts the CLI itself adds as a later user turn (the structured-output nudge). */
  syntheticUserTexts: string[];
  /** Non-Messages requests it makes, each needed for a call. */
  otherRequests: Array<{ method: string; host: string; path: string; why: string }>;
  /** The CLI's own tools it lists (`StructuredOutput`), each with its description, whole; files recorded before it lack the key. */
  cliTools?: Array<{ name: string; description: string }>;
  /**
   * The definitions of the CLI's built-in file tools as it sends them when `capabilities.builtinTools` opts
   * into them (recorded from the "built-in tools" call kind); absent: the capability cannot be checked on this version.
   */
  builtinTools?: Array<{ name: string; description: string; inputSchema: unknown }>;
  /**
   * How the CLI writes the project's instruction files (`capabilities.projectInstructions`), recorded from the
   * "project instructions" call kind: the reminder's head, one file (`{path}`, `{text}`), the separator; absent:
   * the capability cannot be checked on this version.
   */
  projectInstructions?: { head: string; file: string; separator: string };
  /**
   * The CLI's own web search request (`capabilities.webSearch`, check-web-search.ts), recorded from the "web
   * search" call kind: its system text, server tools and tool choice whole, its body fields, and the text before
   * the model's query in its one user message. Absent: the capability is refused behind the interceptor.
   */
  webSearch?: WebSearchShape;
  /**
   * A subagent's own request (`capabilities.subagents`, check-subagents.ts), recorded from the "subagent" call kind:
   * the text the CLI puts after the agent's prompt in its system block. Absent: subagents are refused behind the interceptor.
   */
  subagents?: { systemSuffix: string };
  /** A session's compaction as the version does it (recorded from the "session, compaction" call kind); absent: refused behind the interceptor. */
  compaction?: CompactionShape;
}

export interface WebSearchShape {
  system: string;
  tools: unknown[];
  toolChoice: unknown;
  bodyFields: string[];
  promptPrefix: string;
}

/**
 * What a compaction adds to a conversation's requests (wire/compaction.ts): the summary request's last user
 * turn (the instructions, whole, each wording) and the header names only it carries; after it, the header names and billing-line
 * fields every request adds, and the continuation text around the tools used and the summary
 * (`beforeTools` + tools + `afterTools` + summary + one of `afterSummary`).
 */
export interface CompactionShape {
  /** The instructions as the version words them (one per wording recorded: 2.1.330 adds a rule after a tool call). */
  prompts: string[];
  requestHeaders: string[];
  compactedHeaders: string[];
  billingFields: string[];
  /** `afterSummary`: each ending recorded (2.1.330 leaves out its note on the messages kept after the summary when it keeps none). */
  continuation: { beforeTools: string; afterTools: string; afterSummary: string[] };
}

/** What check.ts applies: the file with its templates made regexes. */
export interface WireShape {
  version: string;
  /** Header names (lower case) a Messages request may carry. */
  headers: ReadonlySet<string>;
  /** `anthropic-beta` values it may carry (a retry after a 400 sends fewer). */
  betas: ReadonlySet<string>;
  /** Top-level body fields it may carry. */
  bodyFields: ReadonlySet<string>;
  /** The system block between the billing line and the caller's system prompt. */
  preamble: string;
  /** The first system block. */
  billingLine: RegExp;
  /** `<system-reminder>` kinds it adds to user turns: each reminder's whole text must match one (`template`: bound per call, check.ts). */
  reminders: ReadonlyArray<{ kind: string; pattern: RegExp; template: string }>;
  /** The "context" reminder's fixed head and tail. */
  context: { head: string; tail: string };
  /** Sections the "context" reminder may hold, each with its whole text. */
  contextSections: ReadonlyArray<{ name: string; pattern: RegExp; template: string }>;
  /** Texts the CLI itself adds as a later user turn (the structured-output nudge). */
  syntheticUserTexts: readonly string[];
  /** Non-Messages requests it makes (method, host, path), each needed for the call. */
  otherRequests: ReadonlyArray<{ method: string; host: string; path: string; why: string }>;
  /** Hosts it connects to. */
  hosts: readonly string[];
  /** The descriptions of the CLI's own tools, by name (empty for a file recorded before they were). */
  cliTools: ReadonlyMap<string, string>;
  /** The built-in file tools' definitions, by name (empty: none recorded, `capabilities.builtinTools` is refused behind the interceptor). */
  builtinTools: ReadonlyMap<string, { description: string; inputSchema: unknown }>;
  /** The instructions reminder's format (undefined: not recorded, `capabilities.projectInstructions` is refused behind the interceptor). */
  projectInstructions?: { head: string; file: string; separator: string };
  /** What the shape admits only for some models, `[1m]` ids and worktrees (shape-variants.ts); absent: none. */
  variants?: ShapeVariants;
  /** A call's case only (shape-variants.ts `shapeForCall`): keys its turns may carry besides role and content. */
  turnKeys?: ReadonlySet<string>;
  /** A call's case only: tools the CLI adds, by name, each whole. */
  addedTools?: ReadonlyMap<string, Record<string, unknown>>;
  /** The CLI's own web search request, when recorded. */
  webSearch?: WebSearchShape;
  /** A subagent's request, when recorded. */
  subagents?: { systemSuffix: string };
  /** A session's compaction (undefined: none recorded, a summary request is refused). */
  compaction?: CompactionShape;
}

/** A shape file that is not the format: names the file and what is wrong. */
export class WireShapeFileError extends Error {
  override readonly name = "WireShapeFileError";
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** `{name}`, `{{`, `}}` and literal text of a template, in order; throws on anything else. */
export function templateParts(template: string): Array<{ literal: string } | { placeholder: string }> {
  const parts: Array<{ literal: string } | { placeholder: string }> = [];
  let literal = "";
  for (let index = 0; index < template.length; ) {
    const char = template[index]!;
    if (char === "{" && template[index + 1] === "{") {
      literal += "{";
      index += 2;
    } else if (char === "}" && template[index + 1] === "}") {
      literal += "}";
      index += 2;
    } else if (char === "{") {
      const end = template.indexOf("}", index);
      const name = end < 0 ? "" : template.slice(index + 1, end);
      if (!/^[A-Za-z]+$/.test(name)) throw new WireShapeFileError(`a lone "{" at ${index} of ${JSON.stringify(template.slice(Math.max(0, index - 20), index + 20))} (write "{{" for a brace)`);
      if (!Object.hasOwn(PLACEHOLDERS, name)) throw new WireShapeFileError(`unknown placeholder {${name}} (known: ${Object.keys(PLACEHOLDERS).map((known) => `{${known}}`).join(", ")})`);
      if (literal) parts.push({ literal });
      literal = "";
      parts.push({ placeholder: name });
      index = end + 1;
    } else if (char === "}") {
      throw new WireShapeFileError(`a lone "}" at ${index} of ${JSON.stringify(template.slice(Math.max(0, index - 20), index + 20))} (write "}}" for a brace)`);
    } else {
      literal += char;
      index += 1;
    }
  }
  if (literal) parts.push({ literal });
  return parts;
}

/** The regex source of a template, unanchored; `bound` gives some placeholders their only admitted values (literal texts). */
export function templateSource(template: string, bound: Readonly<Record<string, readonly string[]>> = {}): string {
  return templateParts(template)
    .map((part) => {
      if ("literal" in part) return escapeRegExp(part.literal);
      const values = Object.hasOwn(bound, part.placeholder) ? bound[part.placeholder]! : undefined;
      // A bound slot with no value matches nothing (a call without agents admits no agent list).
      return values ? (values.length === 0 ? "(?!)" : `(?:${values.map(escapeRegExp).join("|")})`) : PLACEHOLDERS[part.placeholder]!.pattern;
    })
    .join("");
}

/** Placeholders the check binds to the call or the machine (check.ts), not to their patterns. */
export const BOUND_PLACEHOLDERS: readonly string[] = ["cwd", "platform", "osVersion", "agents"];

/** A whole-text regex of a template. */
export function templateRegExp(template: string): RegExp {
  return new RegExp(`^${templateSource(template)}$`);
}

/** Literal text as a template: braces doubled. */
export const literalTemplate = (text: string): string => text.replace(/[{}]/g, (brace) => brace + brace);

/** The billing line's regex: the template, then any number of ` name=value;` pairs of the recorded names. */
export function billingRegExp(billing: { template: string; fields: readonly string[] }): RegExp {
  const fields = billing.fields.length > 0 ? `(?: (?:${billing.fields.map(escapeRegExp).join("|")})=[A-Za-z0-9_.-]+;)*` : "";
  return new RegExp(`^${templateSource(billing.template)}${fields}$`);
}

const KEYS: ReadonlyArray<keyof WireShapeFile> = ["format", "version", "recorded", "hosts", "messagesRequest", "headers", "betas", "bodyFields", "billingLine", "preamble", "reminders", "context", "syntheticUserTexts", "otherRequests"];

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === "string");

function need(condition: boolean, what: string): asserts condition {
  if (!condition) throw new WireShapeFileError(what);
}

function exactKeys(value: unknown, keys: readonly string[], where: string, optional: readonly string[] = []): asserts value is Record<string, unknown> {
  need(isObject(value), `${where} is not an object`);
  const extra = Object.keys(value).filter((key) => !keys.includes(key) && !optional.includes(key));
  const missing = keys.filter((key) => !Object.hasOwn(value, key));
  need(extra.length === 0 && missing.length === 0, `${where}: ${[...missing.map((key) => `missing "${key}"`), ...extra.map((key) => `unknown key "${key}"`)].join(", ")}`);
}

/** Checks a parsed file against the format; throws `WireShapeFileError` naming the first problem. */
export function validateWireShapeFile(data: unknown, expectedVersion?: string): WireShapeFile {
  exactKeys(data, KEYS, "the shape", ["cliTools", "builtinTools", "projectInstructions", "webSearch", "subagents", "compaction", ...VARIANT_KEYS]);
  need(data.format === WIRE_SHAPE_FORMAT, `format is ${JSON.stringify(data.format)}, not ${JSON.stringify(WIRE_SHAPE_FORMAT)}`);
  need(typeof data.version === "string" && /^\d+\.\d+\.\d+$/.test(data.version), `version ${JSON.stringify(data.version)} is not X.Y.Z`);
  need(expectedVersion === undefined || data.version === expectedVersion, `the file is for ${String(data.version)}, not ${expectedVersion}`);
  exactKeys(data.recorded, ["date", "by", "calls"], "recorded");
  need(isStrings(data.recorded.calls), "recorded.calls is not a list of strings");
  need(data.messagesRequest === MESSAGES_REQUEST, `messagesRequest is ${JSON.stringify(data.messagesRequest)}; the check knows only ${JSON.stringify(MESSAGES_REQUEST)}`);
  for (const key of ["hosts", "headers", "betas", "bodyFields", "syntheticUserTexts"] as const) need(isStrings(data[key]), `${key} is not a list of strings`);
  need((data.hosts as string[]).every((host) => /^[a-z0-9.-]+$/.test(host)), "hosts holds something that is not a host name");
  need((data.headers as string[]).every((name) => name === name.toLowerCase()), "headers must be lower case");
  need(typeof data.preamble === "string", "preamble is not a string");
  exactKeys(data.billingLine, ["template", "fields"], "billingLine");
  need(typeof data.billingLine.template === "string" && isStrings(data.billingLine.fields), "billingLine needs a template and a list of field names");
  need(Array.isArray(data.reminders), "reminders is not a list");
  for (const [index, reminder] of (data.reminders as unknown[]).entries()) {
    exactKeys(reminder, ["kind", "template"], `reminders[${index}]`);
    need(typeof reminder.kind === "string" && typeof reminder.template === "string", `reminders[${index}] needs a kind and a template`);
  }
  exactKeys(data.context, ["head", "tail", "sections"], "context");
  need(typeof data.context.head === "string" && typeof data.context.tail === "string" && Array.isArray(data.context.sections), "context needs a head, a tail and a list of sections");
  for (const [index, section] of (data.context.sections as unknown[]).entries()) {
    exactKeys(section, ["name", "template"], `context.sections[${index}]`);
    need(typeof section.name === "string" && typeof section.template === "string", `context.sections[${index}] needs a name and a template`);
  }
  need(Array.isArray(data.otherRequests), "otherRequests is not a list");
  for (const [index, request] of (data.otherRequests as unknown[]).entries()) {
    exactKeys(request, ["method", "host", "path", "why"], `otherRequests[${index}]`);
    need(["method", "host", "path", "why"].every((key) => typeof request[key] === "string"), `otherRequests[${index}] needs strings`);
    need((data.hosts as string[]).includes(request.host as string), `otherRequests[${index}] goes to ${String(request.host)}, which hosts does not list`);
  }
  if (data.cliTools !== undefined) {
    need(Array.isArray(data.cliTools), "cliTools is not a list");
    for (const [index, tool] of (data.cliTools as unknown[]).entries()) {
      exactKeys(tool, ["name", "description"], `cliTools[${index}]`);
      need(typeof tool.name === "string" && typeof tool.description === "string", `cliTools[${index}] needs a name and a description`);
    }
  }
  if (data.builtinTools !== undefined) {
    need(Array.isArray(data.builtinTools), "builtinTools is not a list");
    for (const [index, tool] of (data.builtinTools as unknown[]).entries()) {
      exactKeys(tool, ["name", "description", "inputSchema"], `builtinTools[${index}]`);
      need(typeof tool.name === "string" && typeof tool.description === "string" && isObject(tool.inputSchema), `builtinTools[${index}] needs a name, a description and an input schema object`);
    }
  }
  if (data.projectInstructions !== undefined) {
    exactKeys(data.projectInstructions, ["head", "file", "separator"], "projectInstructions");
    const { head, file, separator } = data.projectInstructions;
    need(typeof head === "string" && typeof file === "string" && typeof separator === "string", "projectInstructions needs a head, a file template and a separator");
    // The file template holds {path} and {text} once each, and no other brace: the loader fills them literally.
    need(file.split("{path}").length === 2 && file.split("{text}").length === 2 && !/[{}]/.test(file.replace("{path}", "").replace("{text}", "")), "projectInstructions.file must hold {path} and {text} once each and no other brace");
  }
  const variants = variantsProblem(data);
  need(variants === undefined, variants ?? "");
  if (data.webSearch !== undefined) {
    exactKeys(data.webSearch, ["system", "tools", "toolChoice", "bodyFields", "promptPrefix"], "webSearch");
    const search = data.webSearch as Record<string, unknown>;
    need(typeof search.system === "string" && typeof search.promptPrefix === "string" && search.promptPrefix !== "", "webSearch needs a system text and a prompt prefix");
    need(Array.isArray(search.tools) && search.tools.length > 0 && search.tools.every(isObject), "webSearch.tools is not a list of tool objects");
    need(isStrings(search.bodyFields), "webSearch.bodyFields is not a list of strings");
  }
  if (data.subagents !== undefined) {
    exactKeys(data.subagents, ["systemSuffix"], "subagents");
    need(typeof (data.subagents as Record<string, unknown>).systemSuffix === "string", "subagents.systemSuffix is not a string");
  }
  if (data.compaction !== undefined) {
    const compaction = data.compaction;
    exactKeys(compaction, ["prompts", "requestHeaders", "compactedHeaders", "billingFields", "continuation"], "compaction");
    need(isStrings(compaction.prompts) && compaction.prompts.length > 0 && compaction.prompts.every((prompt) => prompt !== ""), "compaction.prompts is not a list of texts");
    for (const key of ["requestHeaders", "compactedHeaders", "billingFields"] as const) need(isStrings(compaction[key]), `compaction.${key} is not a list of strings`);
    need((compaction.requestHeaders as string[]).every((name) => name === name.toLowerCase()) && (compaction.compactedHeaders as string[]).every((name) => name === name.toLowerCase()), "compaction headers must be lower case");
    need((compaction.billingFields as string[]).every((name) => /^[A-Za-z0-9_]+$/.test(name)), "compaction.billingFields holds something that is not a field name");
    exactKeys(compaction.continuation, ["beforeTools", "afterTools", "afterSummary"], "compaction.continuation");
    const continuation = compaction.continuation as Record<string, unknown>;
    need(typeof continuation.beforeTools === "string" && continuation.beforeTools !== "" && typeof continuation.afterTools === "string" && continuation.afterTools !== "", "compaction.continuation needs the texts before and after the tools");
    need(isStrings(continuation.afterSummary) && continuation.afterSummary.length > 0 && continuation.afterSummary.every((text) => text !== ""), "compaction.continuation.afterSummary is not a list of texts");
  }
  return data as unknown as WireShapeFile;
}

/** The check's shape of a file (already parsed); throws `WireShapeFileError` for a malformed one. */
export function loadWireShape(data: unknown, expectedVersion?: string): WireShape {
  const file = validateWireShapeFile(data, expectedVersion);
  const regex = (template: string, where: string) => {
    try {
      return templateRegExp(template);
    } catch (error) {
      throw new WireShapeFileError(`${where}: ${(error as Error).message}`);
    }
  };
  let billingLine: RegExp;
  try {
    billingLine = billingRegExp(file.billingLine);
  } catch (error) {
    throw new WireShapeFileError(`billingLine: ${(error as Error).message}`);
  }
  return {
    version: file.version,
    headers: new Set(file.headers),
    betas: new Set(file.betas),
    bodyFields: new Set(file.bodyFields),
    preamble: file.preamble,
    billingLine,
    reminders: file.reminders.map((reminder, index) => ({ kind: reminder.kind, pattern: regex(reminder.template, `reminders[${index}] (${reminder.kind})`), template: reminder.template })),
    context: { head: file.context.head, tail: file.context.tail },
    contextSections: file.context.sections.map((section, index) => ({ name: section.name, pattern: regex(section.template, `context.sections[${index}] (${section.name})`), template: section.template })),
    syntheticUserTexts: file.syntheticUserTexts,
    otherRequests: file.otherRequests,
    hosts: file.hosts,
    cliTools: new Map((file.cliTools ?? []).map((tool) => [tool.name, tool.description])),
    builtinTools: new Map((file.builtinTools ?? []).map((tool) => [tool.name, { description: tool.description, inputSchema: tool.inputSchema }])),
    ...(file.projectInstructions ? { projectInstructions: file.projectInstructions } : {}),
    ...(VARIANT_KEYS.some((key) => file[key] !== undefined) ? { variants: loadVariants(file, regex, file.reminders) } : {}),
    ...(file.webSearch ? { webSearch: file.webSearch } : {}),
    ...(file.subagents ? { subagents: file.subagents } : {}),
    ...(file.compaction ? { compaction: file.compaction } : {}),
  };
}
