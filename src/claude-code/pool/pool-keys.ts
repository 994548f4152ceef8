/**
 * The process pool's vocabulary (process-pool.ts): its options, its counters, an entry and where a
 * call's process came from, and the two keys that decide which process may serve which call.
 *
 * Keys: the launch key is everything fixed at spawn (binary, argv without the model where it can be
 * switched, cwd, environment); a spare matches on it alone, because system prompt, schema and MCP
 * server travel in the first call's `initialize`. The shape key adds those and the tool definitions:
 * a process that served a call serves only calls of its shape.
 */
import { type PreparedTool, inputJsonSchemaText } from "../../mcp/tools.js";
import type { PooledProcess } from "../../session/pooled-process.js";
import type { CliProcessOptions } from "../../transport/process.js";
import type { ToolSwitch } from "./tool-switch.js";

export interface ReuseOptions {
  /** Idle processes kept in all, spares included (default 2; each holds 150–350 MiB). */
  maxIdle?: number;
  /** Resident memory the idle processes may hold in all (default 640 MiB; Linux only). */
  maxIdleMiB?: number;
  /** An idle process unused this long is ended (default 60 s). */
  idleMs?: number;
  /** Calls one process serves before it is retired (default 1000). */
  maxCalls?: number;
  /** A process whose resident memory exceeds this after a call is retired (default 450 MiB; Linux only). */
  maxRssMiB?: number;
  /** How long a rewind, model switch or an interrupted call's result may take before the process is retired (default 10 s). */
  controlTimeoutMs?: number;
}

export interface WarmOptions {
  /** Idle spares (started ahead of need, served nothing yet) at most, within the pool's idle budget (default 1). */
  size?: number;
  /** A spare unused this long is ended (default 30 s). */
  idleMs?: number;
}

export interface PoolStats {
  /** Processes that served a first call (cold or warm). */
  started: number;
  /** Calls served by a process that had served one before. */
  reusedCalls: number;
  /** First calls served by a spare (started ahead of need); the rest of `started` were cold. */
  spareCalls: number;
  /** Processes that served a call and were retired, by reason. */
  retired: Record<string, number>;
  /** Calls run again after a usage-limit reset on the process their rejected attempt ran on (counted in `reusedCalls` too). */
  heldRetries: number;
}
/** @deprecated the pool's stats; kept under its old name. */
export type SessionPoolStats = PoolStats;

export interface PoolEntry {
  readonly launchKey: string;
  /** Undefined while the process is a spare (it has served nothing). */
  shapeKey: string | undefined;
  readonly proc: PooledProcess;
  /** The MCP side, made at the process's first call (its tool definitions are fixed from then on). */
  tools: ToolSwitch | undefined;
  /** Transcript of the process's first call (its launch and initialize), referenced by later calls'. */
  launchTranscript?: string;
}

/** `held`: the process the call's previous attempt ran on, kept through a usage-limit wait for its retry. */
export type Source = "reused" | "warm" | "cold" | "held";

/** The launch: with `modelFree` (the CLI switches models without a request) `--model` is left out, so every role shares it. */
export function launchKey(spec: CliProcessOptions, modelFree = false): string {
  const env = Object.entries(spec.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const args = modelFree ? spec.args.filter((arg) => !arg.startsWith("--model=")) : spec.args;
  return JSON.stringify([spec.path, args, spec.cwd, env]);
}

export interface ShapeParts {
  system: string;
  jsonSchema?: Record<string, unknown>;
  tools: readonly PreparedTool[];
  toolTimeoutMs?: number;
}

/** Everything fixed in a process after its first call: launch, system prompt, schema, tool definitions. */
export function shapeKey(launch: CliProcessOptions, modelFree: boolean, shape: ShapeParts): string {
  return shapeKeyOf(launchKey(launch, modelFree), shape);
}

/**
 * The shape key on a launch key already made: `launch`, a newline, then the JSON of
 * `[system, jsonSchema, [[name, description, inputJsonSchema], …], toolTimeoutMs]`, the tools' schemas taken
 * from the text prepareToolSet keeps (not serialised again per call).
 */
export function shapeKeyOf(launch: string, shape: ShapeParts): string {
  let tools = "";
  for (let i = 0; i < shape.tools.length; i += 1) {
    const tool = shape.tools[i]!;
    tools += `${i === 0 ? "" : ","}[${JSON.stringify(tool.name)},${JSON.stringify(tool.description)},${inputJsonSchemaText(tool.inputJsonSchema)}]`;
  }
  const schema = shape.jsonSchema === undefined ? "null" : JSON.stringify(shape.jsonSchema);
  // The launch key is JSON already, and no JSON holds a raw newline: it is joined as it is, not escaped again.
  return `${launch}\n[${JSON.stringify(shape.system)},${schema},[${tools}],${shape.toolTimeoutMs ?? null}]`;
}

/** A shape as last seen: its parts (the tools' as they were then) and its key. */
interface SeenShape {
  launch: string;
  system: string;
  jsonSchema: Record<string, unknown> | undefined;
  tools: Array<{ name: string; description: string; inputJsonSchema: object }>;
  toolTimeoutMs: number | undefined;
  key: string;
}

/**
 * Shape keys of recent calls. The key holds the system prompt (often kilobytes) and every tool definition;
 * a call whose parts are the same strings and schema objects as a recent one's gets that one's key instead
 * of building it again (tool schemas from prepareToolSet are shared per zod schema, so they compare by identity).
 */
export class ShapeKeys {
  private readonly seen = new RecentKeys<SeenShape>(8);

  get(launch: string, shape: ShapeParts): string {
    return this.seen.get(
      (each) => sameShape(each, launch, shape),
      () => {
        const tools = shape.tools.map((tool) => ({ name: tool.name, description: tool.description, inputJsonSchema: tool.inputJsonSchema }));
        return { launch, system: shape.system, jsonSchema: shape.jsonSchema, tools, toolTimeoutMs: shape.toolTimeoutMs, key: shapeKeyOf(launch, shape) };
      },
    );
  }
}

/** The last few keys made, most recent first: a call repeating the last one finds it at once. */
class RecentKeys<T extends { key: string }> {
  private readonly items: T[] = [];

  constructor(private readonly size: number) {}

  /** The key of the item `match` accepts (moved to the front), else of a new one `make` gives (the oldest beyond the size forgotten). */
  get(match: (item: T) => boolean, make: () => T): string {
    const index = this.items.findIndex(match);
    if (index >= 0) {
      const item = this.items[index]!;
      if (index > 0) this.items.splice(index, 1), this.items.unshift(item);
      return item.key;
    }
    const item = make();
    this.items.unshift(item);
    if (this.items.length > this.size) this.items.pop();
    return item.key;
  }
}

function sameShape(seen: SeenShape, launch: string, shape: ShapeParts): boolean {
  // A schema object is compared by identity: one changed in place since would not be noticed otherwise.
  if (seen.launch !== launch || seen.system !== shape.system || seen.toolTimeoutMs !== shape.toolTimeoutMs || seen.tools.length !== shape.tools.length) return false;
  if (seen.jsonSchema !== shape.jsonSchema || (seen.jsonSchema !== undefined && !Object.isFrozen(seen.jsonSchema))) return false;
  for (let i = 0; i < seen.tools.length; i += 1) {
    const a = seen.tools[i]!;
    const b = shape.tools[i]!;
    if (a.name !== b.name || a.description !== b.description || a.inputJsonSchema !== b.inputJsonSchema || !Object.isFrozen(b.inputJsonSchema)) return false;
  }
  return true;
}

/** A launch as last seen: its parts (copies, so a caller changing its objects later cannot make it match) and its key. */
interface SeenLaunch {
  path: string;
  cwd: string;
  modelFree: boolean;
  args: readonly string[];
  env: Record<string, string>;
  envSize: number;
  key: string;
}

/**
 * Launch keys of recent launches. A call builds its launch afresh (argv, environment), and sorting and
 * stringifying the environment for its key on every call was a measurable share of a reused loop's host
 * CPU (docs/performance.md): a launch equal to a recent one, field by field, gets that one's key.
 */
export class LaunchKeys {
  private readonly seen: RecentKeys<SeenLaunch>;

  constructor(size = 8) {
    this.seen = new RecentKeys(size);
  }

  get(spec: CliProcessOptions, modelFree: boolean): string {
    return this.seen.get(
      (each) => sameLaunch(each, spec, modelFree),
      () => {
        const env: Record<string, string> = Object.create(null) as Record<string, string>;
        let envSize = 0;
        for (const name of Object.keys(spec.env)) (env[name] = spec.env[name]!), (envSize += 1);
        return { path: spec.path, cwd: spec.cwd, modelFree, args: [...spec.args], env, envSize, key: launchKey(spec, modelFree) };
      },
    );
  }
}

function sameLaunch(seen: SeenLaunch, spec: CliProcessOptions, modelFree: boolean): boolean {
  if (seen.path !== spec.path || seen.cwd !== spec.cwd || seen.modelFree !== modelFree || seen.args.length !== spec.args.length) return false;
  for (let i = 0; i < seen.args.length; i += 1) if (seen.args[i] !== spec.args[i]) return false;
  let size = 0;
  for (const name of Object.keys(spec.env)) {
    if (!(name in seen.env) || seen.env[name] !== spec.env[name]) return false;
    size += 1;
  }
  return size === seen.envSize;
}
