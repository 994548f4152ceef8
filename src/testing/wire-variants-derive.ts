/**
 * The variant keys of a shape file (shape-variants.ts) made from the recorder's variant call kinds
 * (wire-recorder.ts: other models, `[1m]` ids, a project dir in a git worktree): the base shape is made
 * of the other calls alone, and each variant keeps only what its requests carried beyond it. Anything
 * else a variant changes (the preamble, the billing line, other requests…) the format cannot hold per
 * variant, and is refused, as is a variant request its own variant does not admit.
 */
import { isDeepStrictEqual } from "node:util";
import { FILE_TOOLS } from "../claude-code/capabilities.js";
import type { WireShapeFile } from "../claude-code/wire/shape-file.js";
import type { ShapeAdditionsFile, ShapeVariantsFile } from "../claude-code/wire/shape-variants.js";
import { deriveBaseWireShape, describeRequests, ownRequestProblems, WireRecordingError } from "./wire-shape-derive.js";
import { CHATTY, isVariantCall, MODEL_VARIANT, ONE_M_CALL, type WireRecording, WORKTREE_CALL } from "./wire-recorder.js";

const isMessages = (request: { method: string; path: string }) => request.method === "POST" && request.path === "/v1/messages";

/** A recording of the base calls and `extra` ones only. */
function subRecording(recording: WireRecording, keep: (name: string) => boolean): WireRecording {
  return { ...recording, calls: recording.calls.filter((call) => keep(call.name)), requests: recording.requests.filter((request) => keep(request.call)), refused: recording.refused.filter((refused) => keep(refused.call)) };
}

/** What a variant's requests carry that no base shape key can hold, taken off their bodies: turn keys besides role and content, tools the CLI adds. */
interface TakenOff {
  turnKeys: Set<string>;
  tools: Array<Record<string, unknown>>;
}

/**
 * The recording with these additions taken off the bodies of `calls`' requests (so the base derivation,
 * which refuses them, can make the rest of the variant's shape), and what was taken. A tool the CLI
 * adds is one that is neither the call's (`mcp__…`), nor StructuredOutput, nor a built-in file tool.
 */
function takeOff(recording: WireRecording, calls: (name: string) => boolean, problems: string[]): { recording: WireRecording; taken: TakenOff } {
  const taken: TakenOff = { turnKeys: new Set(), tools: [] };
  const requests = recording.requests.map((request) => {
    if (!calls(request.call) || !isMessages(request) || typeof request.body !== "object" || request.body === null) return request;
    const body = request.body as Record<string, unknown>;
    const messages = Array.isArray(body.messages)
      ? body.messages.map((message: Record<string, unknown>) => {
          const { role, content, ...rest } = message;
          for (const key of Object.keys(rest)) taken.turnKeys.add(key);
          return { role, content };
        })
      : body.messages;
    const tools = Array.isArray(body.tools)
      ? body.tools.filter((tool: Record<string, unknown>) => {
          const name = String(tool?.name);
          if (name.startsWith("mcp__") || name === "StructuredOutput" || Object.hasOwn(FILE_TOOLS, name)) return true;
          const same = taken.tools.find((known) => known.name === name);
          if (same && !isDeepStrictEqual(same, tool)) problems.push(`the CLI's added tool ${name} had two definitions (call "${request.call}")`);
          if (!same) taken.tools.push(tool);
          return false;
        })
      : body.tools;
    return { ...request, body: { ...body, messages, ...(body.tools !== undefined ? { tools } : {}) } };
  });
  return { recording: { ...recording, requests }, taken };
}

/** What `full` holds beyond `base` (with what was taken off its requests); names anything else that differs. */
function additionsOf(base: WireShapeFile, full: WireShapeFile, taken: TakenOff, what: string, problems: string[]): ShapeAdditionsFile {
  const beyond = (a: readonly string[], b: readonly string[]) => b.filter((item) => !a.includes(item));
  const same = (name: string, a: unknown, b: unknown) => {
    if (JSON.stringify(a) !== JSON.stringify(b)) problems.push(`${what} changed ${name}, which a variant cannot hold (only headers, betas, body fields and reminders): ${JSON.stringify(a).slice(0, 200)} -> ${JSON.stringify(b).slice(0, 200)}`);
  };
  same("the preamble", base.preamble, full.preamble);
  same("the billing line", base.billingLine, full.billingLine);
  same("the context reminder", base.context, full.context);
  same("the synthetic user texts", base.syntheticUserTexts, full.syntheticUserTexts);
  same("the other requests", base.otherRequests, full.otherRequests);
  same("the hosts", base.hosts, full.hosts);
  same("the CLI's tools", base.cliTools, full.cliTools);
  const templates = base.reminders.map((reminder) => reminder.template);
  return {
    headers: beyond(base.headers, full.headers),
    betas: beyond(base.betas, full.betas),
    bodyFields: beyond(base.bodyFields, full.bodyFields),
    reminders: full.reminders.filter((reminder) => !templates.includes(reminder.template)),
    turnKeys: [...taken.turnKeys].sort(),
    tools: taken.tools.sort((a, b) => String(a.name).localeCompare(String(b.name))),
  };
}

/** The model id of a variant call kind (`model variant, <id>, …`). */
const variantModel = (name: string) => (name.startsWith(`${MODEL_VARIANT}, `) ? name.slice(MODEL_VARIANT.length + 2).split(", ")[0] : undefined);

/** The shape file of a recording with variant calls: the base shape and its variant keys. */
export function deriveWithVariants(recording: WireRecording, now = new Date()): WireShapeFile {
  const isBase = (name: string) => !isVariantCall(name);
  const base = deriveBaseWireShape(subRecording(recording, isBase), now);
  const problems: string[] = [];
  /** The base calls and `keep`'s derived together (what no base key holds taken off first), and what was taken off. */
  const withCalls = (keep: (name: string) => boolean): [WireShapeFile, TakenOff] => {
    const { recording: stripped, taken } = takeOff(subRecording(recording, (name) => isBase(name) || keep(name)), keep, problems);
    return [deriveBaseWireShape(stripped, now), taken];
  };

  // Other models: each id's calls on their own, then ids with the same additions grouped.
  const models = [...new Set(recording.calls.map((call) => variantModel(call.name)).filter((model): model is string => model !== undefined))];
  const groups = new Map<string, { models: string[]; additions: ShapeAdditionsFile }>();
  for (const model of models) {
    const additions = additionsOf(base, ...withCalls((name) => variantModel(name) === model), `the model ${model}`, problems);
    const key = JSON.stringify(additions);
    const group = groups.get(key) ?? { models: [], additions };
    group.models.push(model);
    groups.set(key, group);
  }
  // Ids that add nothing get the base shape (no entry).
  const adds = (additions: ShapeAdditionsFile) => Object.values(additions).some((list) => list.length > 0);
  const modelVariants: NonNullable<ShapeVariantsFile["modelVariants"]> = [...groups.values()].filter((group) => adds(group.additions)).map((group) => ({
    models: group.models.sort(),
    why: `recorded: ${recording.calls.filter((call) => group.models.includes(variantModel(call.name) ?? "")).length} calls on these models (${[...new Set(recording.calls.filter((call) => variantModel(call.name) && group.models.includes(variantModel(call.name)!)).map((call) => call.name.split(", ").slice(2).join(", ")))].join("; ")})`,
    ...group.additions,
  }));

  // [1m] ids: the body names the id without the suffix; the additions must be betas alone.
  let contextSuffix: ShapeVariantsFile["contextSuffix"];
  const oneM = recording.calls.filter((call) => call.name.startsWith(`${ONE_M_CALL}, `));
  if (oneM.length > 0) {
    const additions = additionsOf(base, ...withCalls((name) => name.startsWith(`${ONE_M_CALL}, `)), "a [1m] model id", problems);
    if (additions.headers.length + additions.bodyFields.length + additions.reminders.length + additions.turnKeys.length + additions.tools.length > 0) problems.push(`a [1m] model id added more than betas: ${JSON.stringify(additions)}`);
    for (const call of oneM) {
      if (!call.model.endsWith("[1m]")) problems.push(`call "${call.name}" is not on a [1m] id`);
      for (const request of recording.requests.filter((request) => request.call === call.name && isMessages(request))) {
        const sent = (request.body as { model?: unknown } | undefined)?.model;
        if (sent !== call.model.slice(0, -"[1m]".length)) problems.push(`call "${call.name}" sent the model ${JSON.stringify(sent)}, not ${call.model} without its suffix`);
      }
    }
    contextSuffix = { suffix: "[1m]", models: oneM.map((call) => call.model).sort(), betas: additions.betas };
  }

  // A worktree: only reminders (the environment reminder with the worktree's lines).
  let worktree: ShapeVariantsFile["worktree"];
  if (recording.calls.some((call) => call.name === WORKTREE_CALL)) {
    const additions = additionsOf(base, ...withCalls((name) => name === WORKTREE_CALL), "a project dir in a git worktree", problems);
    if (additions.headers.length + additions.betas.length + additions.bodyFields.length + additions.turnKeys.length + additions.tools.length > 0) problems.push(`a project dir in a git worktree added more than reminders: ${JSON.stringify(additions)}`);
    worktree = { reminders: additions.reminders };
  }

  const file: WireShapeFile = {
    ...base,
    recorded: {
      ...base.recorded,
      calls: recording.calls.map((call) => `${call.name}: ${describeRequests(recording.requests.filter((request) => request.call === call.name), call.name === CHATTY)}${call.ok ? "" : ` (the call failed: ${call.error})`}`),
    },
    ...(modelVariants.length > 0 ? { modelVariants } : {}),
    ...(contextSuffix ? { contextSuffix } : {}),
    ...(worktree ? { worktree } : {}),
  };
  // Each variant request passes its own case of the file (its role model, its worktree).
  const callOf = new Map(recording.calls.map((call) => [call.name, call]));
  const variantRequests = recording.requests.filter((request) => isMessages(request) && isVariantCall(request.call));
  problems.push(...ownRequestProblems(file, recording, variantRequests, (call, body) => ({ model: call.name === WORKTREE_CALL ? String(body.model) : callOf.get(call.name)!.model, worktree: call.name === WORKTREE_CALL })));
  if (problems.length > 0) throw new WireRecordingError(`the variants of the recording of ${recording.version} cannot become a shape:\n- ${[...new Set(problems)].join("\n- ")}`);
  return file;
}
