/**
 * The process pool's vocabulary (process-pool.ts): its options, its counters, an entry and where a
 * call's process came from, and the two keys that decide which process may serve which call.
 *
 * Keys: the launch key is everything fixed at spawn (binary, argv without the model where it can be
 * switched, cwd, environment); a spare matches on it alone, because system prompt, schema and MCP
 * server travel in the first call's `initialize`. The shape key adds those and the tool definitions:
 * a process that served a call serves only calls of its shape.
 */
import type { PreparedTool } from "../mcp/tools.js";
import type { PooledProcess } from "../session/pooled-process.js";
import type { CliProcessOptions } from "../transport/process.js";
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

/** The shape key on a launch key already made. */
export function shapeKeyOf(launch: string, shape: ShapeParts): string {
  const tools = shape.tools.map((tool) => [tool.name, tool.description, tool.inputJsonSchema]);
  // The launch key is JSON already, and no JSON holds a raw newline: it is joined as it is, not escaped again.
  return `${launch}\n${JSON.stringify([shape.system, shape.jsonSchema ?? null, tools, shape.toolTimeoutMs ?? null])}`;
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
  private readonly seen: SeenLaunch[] = [];

  constructor(private readonly size = 8) {}

  get(spec: CliProcessOptions, modelFree: boolean): string {
    const index = this.seen.findIndex((seen) => sameLaunch(seen, spec, modelFree));
    if (index >= 0) {
      const seen = this.seen[index]!;
      // Most recent first: a call repeating the last launch is found at once.
      if (index > 0) this.seen.splice(index, 1), this.seen.unshift(seen);
      return seen.key;
    }
    const env: Record<string, string> = Object.create(null) as Record<string, string>;
    let envSize = 0;
    for (const name of Object.keys(spec.env)) (env[name] = spec.env[name]!), (envSize += 1);
    this.seen.unshift({ path: spec.path, cwd: spec.cwd, modelFree, args: [...spec.args], env, envSize, key: launchKey(spec, modelFree) });
    if (this.seen.length > this.size) this.seen.pop();
    return this.seen[0]!.key;
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
