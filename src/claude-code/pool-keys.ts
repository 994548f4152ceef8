/**
 * The pool's keys (process-pool.ts): the launch key is everything fixed at spawn (binary, argv without the
 * model where it can be switched, cwd, environment); the shape key adds what the first call's `initialize`
 * fixes (system prompt, schema) and the tool definitions.
 */
import type { PreparedTool } from "../mcp/tools.js";
import type { CliProcessOptions } from "../transport/process.js";

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
