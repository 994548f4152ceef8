/**
 * Named opt-in capabilities (issue 43): each relaxes KTX's isolation by exactly its own flags, and is checked.
 * Here: `builtinTools`, the CLI's own file tools, scoped to the project dir; `bash`, `webSearch` and `subagents`
 * live in capabilities-bash.ts, capabilities-web-search.ts and capabilities-subagents.ts. Everything is off by default,
 * and a run without capabilities builds the same launch as before (docs/options.md, "Capabilities").
 */
import { isAbsolute, relative, resolve, sep } from "node:path";
import { realpathSync } from "node:fs";
import { z } from "zod";
import type { CliVersionFacts } from "../binary/versions.js";
import { InvalidInputError } from "../errors/index.js";
import { mcpServersSchema } from "./capabilities/mcp-servers.js";
import { telemetryCapabilitySchema } from "./capabilities/telemetry.js";
import { bashCapabilitySchema } from "./capabilities-bash.js";
import { webSearchCapabilitySchema } from "./capabilities-web-search.js";
import { subagentsCapabilitySchema } from "./capabilities-subagents.js";

/**
 * The built-in tools a capability may name, each with the input field that holds its path (undefined: the
 * tool's path field is optional and defaults to the project dir). Only tools that act on files are offered:
 * they can be scoped to the project dir; Bash, web and agent tools need capabilities of their own.
 */
export const FILE_TOOLS: Readonly<Record<string, { pathField: string; required: boolean; writes: boolean }>> = {
  Read: { pathField: "file_path", required: true, writes: false },
  Glob: { pathField: "path", required: false, writes: false },
  Grep: { pathField: "path", required: false, writes: false },
  LS: { pathField: "path", required: true, writes: false },
  Edit: { pathField: "file_path", required: true, writes: true },
  MultiEdit: { pathField: "file_path", required: true, writes: true },
  Write: { pathField: "file_path", required: true, writes: true },
  NotebookEdit: { pathField: "notebook_path", required: true, writes: true },
};

/** The named sets: `readonly` reads and searches, `edit` adds changing files. A version gets the members it has. */
export const TOOL_SETS = {
  readonly: ["Read", "Glob", "Grep", "LS"],
  edit: ["Read", "Glob", "Grep", "LS", "Edit", "MultiEdit", "Write", "NotebookEdit"],
} as const;

export const capabilitiesSchema = z
  .object({
    /** The CLI's own tools: names (`["Read"]`) or a set (`"readonly"`, `"edit"`); none by default. */
    builtinTools: z.union([z.enum(["readonly", "edit"]), z.array(z.string()).readonly()]).optional(),
    /** The project's CLAUDE.md, .claude/CLAUDE.md and .claude/rules/ reach the model; anything else the project source loads is refused (capabilities/project.ts). */
    projectInstructions: z.boolean().optional(),
    /** MCP servers the CLI runs (stdio, http, sse), by name (capabilities/mcp-servers.ts). */
    mcpServers: mcpServersSchema.optional(),
    /** The CLI's OpenTelemetry export for these calls (prompts and tool details off unless set); its collector's host is the only egress added (capabilities/telemetry.ts). */
    telemetry: telemetryCapabilitySchema.optional(),
    /** The CLI's Bash tool, sandboxed unless `sandbox: false` (capabilities-bash.ts). */
    bash: bashCapabilitySchema.optional(),
    /** The CLI's WebSearch tool: the API's server-side web search (capabilities-web-search.ts). */
    webSearch: webSearchCapabilitySchema.optional(),
    /** Named agent definitions the model may hand tasks to with the Agent tool (capabilities-subagents.ts). */
    subagents: subagentsCapabilitySchema.optional(),
  })
  .strict();

export type Capabilities = z.infer<typeof capabilitiesSchema>;

/** Parses `capabilities` (strict: an unknown key is refused); throws `InvalidInputError` naming the field. */
export function parseCapabilities(value: unknown): Capabilities | undefined {
  if (value === undefined) return undefined;
  const parsed = capabilitiesSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = ["capabilities", ...issue.path.map(String)].join(".");
    const unknown = issue.code === "unrecognized_keys" ? ` (unknown key ${issue.keys.map((key) => JSON.stringify(key)).join(", ")}; known: ${Object.keys(capabilitiesSchema.shape).join(", ")})` : "";
    const error = new InvalidInputError(`Invalid ${field}: ${issue.message}${unknown}. docs/options.md, "Capabilities".`);
    error.field = field;
    throw error;
  }
  const tools = parsed.data.builtinTools;
  if (Array.isArray(tools)) {
    const unknown = tools.filter((name) => !Object.hasOwn(FILE_TOOLS, name));
    if (unknown.length > 0) {
      const error = new InvalidInputError(
        `Invalid capabilities.builtinTools: ${unknown.map((name) => JSON.stringify(name)).join(", ")} cannot be opted into; the file tools can (${Object.keys(FILE_TOOLS).join(", ")}, or the sets "readonly" and "edit"). Bash, WebSearch and Agent are capabilities of their own (capabilities.bash, webSearch, subagents); other tools are not offered. docs/options.md, "Capabilities".`,
      );
      error.field = "capabilities.builtinTools";
      throw error;
    }
  }
  return parsed.data;
}

/**
 * The built-in tools a run gets on this CLI version, sorted and without repeats: a set's members the version
 * has; a named tool it lacks is refused (`InvalidInputError`), before any process starts.
 */
export function builtinToolsFor(capabilities: Capabilities | undefined, facts: CliVersionFacts): string[] {
  const asked = capabilities?.builtinTools;
  if (asked === undefined) return [];
  const has = new Set(facts.builtinTools);
  if (typeof asked === "string") return TOOL_SETS[asked].filter((name) => has.has(name) && versionHasTool(facts, name)).sort();
  const missing = asked.filter((name) => !versionHasTool(facts, name));
  if (missing.length > 0) {
    const error = new InvalidInputError(`capabilities.builtinTools: Claude Code ${facts.version} has no ${missing.map((name) => JSON.stringify(name)).join(", ")} tool; it has ${Object.keys(FILE_TOOLS).filter((name) => versionHasTool(facts, name)).join(", ")}.`);
    error.field = "capabilities.builtinTools";
    throw error;
  }
  return [...new Set(asked)].sort();
}

/**
 * Tools `facts.builtinTools` names although no verified version offers them (the list names old tools too,
 * harmlessly, for `--disallowedTools`): `init.tools` with `--tools=` of every file tool lists neither LS nor
 * MultiEdit on 2.1.142, 2.1.200, 2.1.286, 2.1.330, 2.1.331 and 2.1.332 (Glob and Grep took LS's place, Edit
 * MultiEdit's). A version that offers them again gets an entry without them here.
 */
const ABSENT_BY_DEFAULT: readonly string[] = ["LS", "MultiEdit"];
const ABSENT: Readonly<Record<string, readonly string[]>> = {};

function versionHasTool(facts: CliVersionFacts, name: string): boolean {
  return facts.builtinTools.includes(name) && Object.hasOwn(FILE_TOOLS, name) && !(ABSENT[facts.version] ?? ABSENT_BY_DEFAULT).includes(name);
}

/** `--allowedTools` rules for the opted-in tools: each file tool only under the project dir (`./**` is relative to the CLI's cwd). */
export function builtinAllowRules(builtinTools: readonly string[]): string[] {
  return builtinTools.map((name) => `${name}(./**)`);
}

function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    // A file to be written need not exist yet: its directory is resolved instead.
    const parent = resolve(path, "..");
    return parent === path ? path : resolve(canonical(parent), relative(parent, path));
  }
}

/** Whether `path` (absolute, or relative to `cwd`) names `cwd` or something under it, symlinks resolved. */
export function isInside(cwd: string, path: string): boolean {
  const root = canonical(cwd);
  const target = canonical(isAbsolute(path) ? path : resolve(cwd, path));
  const rel = relative(root, target);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/**
 * The answer to a permission request for an opted-in built-in tool: allowed when its path is under the
 * project dir; undefined when the tool is not one of `builtinTools` (the caller's deny-by-default answers).
 */
export function builtinPermission(request: Record<string, unknown>, builtinTools: readonly string[], cwd: string): Record<string, unknown> | undefined {
  const name = String(request.tool_name);
  if (!builtinTools.includes(name)) return undefined;
  const spec = FILE_TOOLS[name]!;
  const input = (request.input ?? {}) as Record<string, unknown>;
  const path = input[spec.pathField];
  if (path === undefined && !spec.required) return { behavior: "allow", updatedInput: input };
  if (typeof path === "string" && path !== "" && isInside(cwd, path)) return { behavior: "allow", updatedInput: input };
  return { behavior: "deny", message: `${name} may only use paths under the project directory ${cwd}; ${JSON.stringify(path ?? null)} is outside it.` };
}
