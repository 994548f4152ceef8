/**
 * What a version's shape admits only for some calls (issue 45, "Real accounts"): the additions the
 * recorder saw on other models (`modelVariants`, by model id), on `[1m]` ids (`contextSuffix`), and in a
 * project dir that is a linked git worktree (`worktree`). Each is an optional key of the shape file
 * (shape-file.ts; files recorded before have none, so nothing is admitted for them), and check.ts
 * applies a call's additions only when the call's role model or project dir is that case: the check of
 * every other call is the base shape's, unchanged.
 */
import type { WireShape } from "./shape-file.js";

/** What the requests of one variant carried beyond the base shape, as the recorder saw it. */
export interface ShapeAdditionsFile {
  headers: string[];
  betas: string[];
  bodyFields: string[];
  /** Reminder texts (tagged in user turns or untagged in system turns), whole, by kind. */
  reminders: Array<{ kind: string; template: string }>;
  /** Keys a turn may carry besides role and content (2.1.330's per-turn effort: `output_config`); their values are words only (check.ts). */
  turnKeys: string[];
  /** Tools the CLI adds to a request with tools (2.1.330: `DeferredToolPlaceholder`), each whole as recorded. */
  tools: Array<Record<string, unknown>>;
}

/** The shape file's optional keys of this module. */
export interface ShapeVariantsFile {
  /** Model ids recorded with their own calls and what their requests added; admitted only for a role whose model is one of `models`. */
  modelVariants?: Array<{ models: string[]; why: string } & ShapeAdditionsFile>;
  /**
   * A context suffix of a model id (`[1m]`): the CLI strips it from the body's `model` and may add `betas`
   * (recorded for `models`; admitted for any role model with the suffix, with the variant of the id without it).
   */
  contextSuffix?: { suffix: string; models: string[]; betas: string[] };
  /** A project dir in a linked git worktree: the reminders that replace the environment reminder (whole, with the lines the CLI adds there). */
  worktree?: { reminders: Array<{ kind: string; template: string }> };
}

export const VARIANT_KEYS: ReadonlyArray<keyof ShapeVariantsFile> = ["modelVariants", "contextSuffix", "worktree"];

/** The additions as the check applies them. */
export interface ShapeAdditions {
  headers: readonly string[];
  betas: readonly string[];
  bodyFields: readonly string[];
  reminders: ReadonlyArray<{ kind: string; pattern: RegExp; template: string }>;
  turnKeys: readonly string[];
  tools: ReadonlyArray<Record<string, unknown>>;
}

/** The loaded variants of a shape (`WireShape.variants`). */
export interface ShapeVariants {
  models: ReadonlyMap<string, ShapeAdditions>;
  contextSuffix?: { suffix: string; betas: readonly string[] };
  worktree?: ShapeAdditions;
  /**
   * The worktree's lines as an insertion into the environment reminder (the recorded worktree template
   * less the base one it extends): put into the environment reminders a model variant adds too (a newer
   * model's system turn), so a worktree on such a model gets the same lines at the same place.
   */
  worktreeInsert?: { anchor: string; text: string };
  /** A template's whole-text regex (shape-file.ts). */
  regex: (template: string, where: string) => RegExp;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === "string");

/** Problems of the optional keys (the first), or undefined: shape-file.ts raises it as the file's. */
export function variantsProblem(data: Record<string, unknown>): string | undefined {
  const exact = (value: unknown, keys: readonly string[], where: string): string | undefined => {
    if (!isObject(value)) return `${where} is not an object`;
    const extra = Object.keys(value).filter((key) => !keys.includes(key));
    const missing = keys.filter((key) => !Object.hasOwn(value, key));
    return extra.length + missing.length > 0 ? `${where}: ${[...missing.map((key) => `missing "${key}"`), ...extra.map((key) => `unknown key "${key}"`)].join(", ")}` : undefined;
  };
  const reminders = (value: unknown, where: string): string | undefined => {
    if (!Array.isArray(value)) return `${where} is not a list`;
    for (const [index, item] of value.entries()) {
      const problem = exact(item, ["kind", "template"], `${where}[${index}]`);
      if (problem) return problem;
      const reminder = item as Record<string, unknown>;
      if (typeof reminder.kind !== "string" || typeof reminder.template !== "string") return `${where}[${index}] needs a kind and a template`;
    }
    return undefined;
  };
  if (data.modelVariants !== undefined) {
    if (!Array.isArray(data.modelVariants)) return "modelVariants is not a list";
    const seen = new Set<string>();
    for (const [index, item] of (data.modelVariants as unknown[]).entries()) {
      const where = `modelVariants[${index}]`;
      const problem = exact(item, ["models", "why", "headers", "betas", "bodyFields", "reminders", "turnKeys", "tools"], where);
      if (problem) return problem;
      const variant = item as Record<string, unknown>;
      if (!isStrings(variant.models) || variant.models.length === 0 || !variant.models.every((model: string) => /^claude-[a-z0-9.-]+$/.test(model))) return `${where}.models is not a list of model ids`;
      for (const model of variant.models) {
        if (seen.has(model)) return `${where}: the model ${model} is in two variants`;
        seen.add(model);
      }
      if (typeof variant.why !== "string") return `${where}.why is not a string`;
      for (const key of ["headers", "betas", "bodyFields", "turnKeys"]) if (!isStrings(variant[key])) return `${where}.${key} is not a list of strings`;
      if ((variant.turnKeys as string[]).some((key) => ["role", "content"].includes(key))) return `${where}.turnKeys may not name role or content`;
      if (!Array.isArray(variant.tools) || !variant.tools.every((tool) => isObject(tool) && typeof tool.name === "string")) return `${where}.tools is not a list of tools with names`;
      const reminderProblem = reminders(variant.reminders, `${where}.reminders`);
      if (reminderProblem) return reminderProblem;
    }
  }
  if (data.contextSuffix !== undefined) {
    const problem = exact(data.contextSuffix, ["suffix", "models", "betas"], "contextSuffix");
    if (problem) return problem;
    const suffix = data.contextSuffix as Record<string, unknown>;
    if (suffix.suffix !== "[1m]") return `contextSuffix.suffix is ${JSON.stringify(suffix.suffix)}; the check knows only "[1m]"`;
    if (!isStrings(suffix.models) || !isStrings(suffix.betas)) return "contextSuffix needs lists of models and betas";
  }
  if (data.worktree !== undefined) {
    const problem = exact(data.worktree, ["reminders"], "worktree");
    if (problem) return problem;
    return reminders((data.worktree as Record<string, unknown>).reminders, "worktree.reminders");
  }
  return undefined;
}

/** The loaded variants of a validated file; `regex` makes a template's regex (shape-file.ts). */
export function loadVariants(file: ShapeVariantsFile, regex: (template: string, where: string) => RegExp, baseReminders: ReadonlyArray<{ kind: string; template: string }> = []): ShapeVariants {
  const additions = (entry: Partial<ShapeAdditionsFile>, where: string): ShapeAdditions => ({
    headers: entry.headers ?? [],
    betas: entry.betas ?? [],
    bodyFields: entry.bodyFields ?? [],
    reminders: (entry.reminders ?? []).map((reminder, index) => ({ kind: reminder.kind, pattern: regex(reminder.template, `${where}.reminders[${index}] (${reminder.kind})`), template: reminder.template })),
    turnKeys: entry.turnKeys ?? [],
    tools: entry.tools ?? [],
  });
  const models = new Map<string, ShapeAdditions>();
  for (const [index, variant] of (file.modelVariants ?? []).entries()) {
    const loaded = additions(variant, `modelVariants[${index}]`);
    for (const model of variant.models) models.set(model, loaded);
  }
  return {
    models,
    ...(file.contextSuffix ? { contextSuffix: { suffix: file.contextSuffix.suffix, betas: file.contextSuffix.betas } } : {}),
    ...(file.worktree ? { worktree: additions(file.worktree, "worktree") } : {}),
    ...worktreeInsertOf(file.worktree?.reminders ?? [], baseReminders),
    regex,
  };
}

/** Where the worktree's lines go: the first worktree template that is a base environment template with text inserted after its working directory line. */
function worktreeInsertOf(worktree: ReadonlyArray<{ template: string }>, base: ReadonlyArray<{ kind: string; template: string }>): { worktreeInsert?: { anchor: string; text: string } } {
  for (const { template } of worktree) {
    for (const { kind, template: plain } of base) {
      const at = plain.indexOf(WORKTREE_ANCHOR);
      if (kind !== "environment" || at < 0) continue;
      const cut = at + WORKTREE_ANCHOR.length;
      const head = plain.slice(0, cut);
      const tail = plain.slice(cut);
      if (template.length > plain.length && template.startsWith(head) && template.endsWith(tail)) return { worktreeInsert: { anchor: WORKTREE_ANCHOR, text: template.slice(cut, template.length - tail.length) } };
    }
  }
  return {};
}

/** The line the CLI puts a worktree's lines after (2.1.330's environment section: `Primary working directory: …`, then `isWorktree`'s lines). */
const WORKTREE_ANCHOR = " - Primary working directory: {cwd}\n - ";

/** What a call's role model and project dir make of the request's model and shape. */
export interface CallCase {
  /** The model id the body must name: the role's, without a context suffix the CLI strips. */
  bodyModel: string;
  /** The shape the request is checked against: the base one, with the additions of this call's cases. */
  shape: WireShape;
}

const cases = new WeakMap<WireShape, Map<string, WireShape>>();

/**
 * The shape of a call: the base shape plus what the recorder saw for the role's model (its id without
 * a `[1m]` suffix), for a `[1m]` id, and for a project dir in a git worktree — only those. A model no
 * variant names gets the base shape itself.
 */
export function shapeForCall(shape: WireShape, model: string, worktree = false): CallCase {
  const variants = shape.variants;
  const suffix = variants?.contextSuffix?.suffix;
  const suffixed = suffix !== undefined && model.endsWith(suffix);
  const bodyModel = suffixed ? model.slice(0, -suffix.length) : model;
  const parts: ShapeAdditions[] = [];
  const byModel = variants?.models.get(bodyModel);
  if (byModel) parts.push(byModel);
  if (suffixed) parts.push({ headers: [], betas: variants!.contextSuffix!.betas, bodyFields: [], reminders: [], turnKeys: [], tools: [] });
  if (worktree && variants?.worktree) {
    parts.push(variants.worktree);
    // A model variant's own environment reminders, with the worktree's lines where the recorded one has them.
    const insert = variants.worktreeInsert;
    const environments = insert ? parts.flatMap((part) => part.reminders).filter((reminder) => reminder.kind === "environment" && reminder.template.includes(insert.anchor) && !reminder.template.includes(insert.text)) : [];
    const reminders = environments.map((reminder) => {
      const template = reminder.template.replace(insert!.anchor, () => `${insert!.anchor}${insert!.text}`);
      return { kind: "environment", template, pattern: variants.regex(template, "worktree (inserted)") };
    });
    if (reminders.length > 0) parts.push({ headers: [], betas: [], bodyFields: [], reminders, turnKeys: [], tools: [] });
  }
  if (parts.length === 0) return { bodyModel, shape };
  const key = `${bodyModel}\0${suffixed}\0${worktree}`;
  let made = cases.get(shape);
  if (!made) cases.set(shape, (made = new Map()));
  let merged = made.get(key);
  if (!merged) {
    merged = {
      ...shape,
      headers: new Set([...shape.headers, ...parts.flatMap((part) => part.headers)]),
      betas: new Set([...shape.betas, ...parts.flatMap((part) => part.betas)]),
      bodyFields: new Set([...shape.bodyFields, ...parts.flatMap((part) => part.bodyFields)]),
      reminders: [...shape.reminders, ...parts.flatMap((part) => part.reminders)],
      turnKeys: new Set(parts.flatMap((part) => part.turnKeys)),
      addedTools: new Map(parts.flatMap((part) => part.tools.map((tool): [string, Record<string, unknown>] => [tool.name as string, tool]))),
    };
    made.set(key, merged);
  }
  return { bodyModel, shape: merged };
}
