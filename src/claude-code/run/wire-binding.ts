/**
 * A call's side of the runtime's interceptor (src/claude-code/wire/): each process started behind it
 * with a session of its own, what the call must send, and the count that no response went around it.
 */
import { readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { IsolationError } from "../../errors/index.js";
import { ktxToolId } from "../../mcp/tools.js";
import type { PooledProcess } from "../../session/pooled-process.js";
import { interceptedEnv } from "../../transport/env.js";
import type { CliProcessOptions } from "../../transport/process.js";
import type { CallExpectation } from "../wire/check.js";
import { capabilityTools } from "../capability-tools.js";
import type { HostWireSession, InterceptorProcess } from "../wire/interceptor-process.js";
import type { RunSpec } from "./run.js";
import { projectInstructionFiles } from "../capabilities/project.js";
import { mcpServerNames, remoteServerHosts } from "../capabilities/mcp-servers.js";

const sessions = new WeakMap<PooledProcess, HostWireSession>();

/**
 * What the library built for the call: the interceptor forwards only requests made of exactly this.
 * `continues`: the call is a later turn of a conversation on the process it held before (its request
 * carries the earlier turns, which the interceptor saw).
 */
export function expectationOf(spec: Pick<RunSpec, "model" | "system" | "prompt" | "tools" | "jsonSchema" | "projectDir" | "builtinTools" | "projectInstructions" | "mcpServers" | "bash" | "webSearch" | "subagents" | "compaction">, continues = false): CallExpectation {
  const builtinTools = capabilityTools(spec);
  return {
    model: spec.model,
    system: spec.system,
    prompt: spec.prompt,
    tools: spec.tools.map((tool) => ({ name: ktxToolId(tool.name), description: tool.description, inputSchema: tool.inputJsonSchema })),
    ...(spec.jsonSchema !== undefined ? { jsonSchema: spec.jsonSchema } : {}),
    cwd: projectDirs(spec.projectDir),
    ...(continues ? { continues: true } : {}),
    ...(builtinTools && builtinTools.length > 0 ? { builtinTools } : {}),
    ...(spec.webSearch ? { webSearch: true } : {}),
    ...(spec.subagents ? { subagents: spec.subagents } : {}),
    // The instruction files as they are now: a file changed since the process started no longer fits, and the request is refused.
    ...(spec.projectInstructions ? { projectInstructions: projectInstructionFiles(spec.projectDir) } : {}),
    ...(spec.mcpServers && Object.keys(spec.mcpServers).length > 0 ? { mcpServers: mcpServerNames(spec.mcpServers) } : {}),
    ...(isGitWorktree(spec.projectDir) ? { worktree: true } : {}),
    ...(spec.compaction ? { compaction: true } : {}),
  };
}

/**
 * Whether a dir is in a linked git worktree: the nearest `.git` above it is a file naming a gitdir under
 * a repository's `worktrees/` (what `git worktree add` writes). The CLI then puts the worktree's lines in
 * its environment reminder (recorded: the shape's `worktree`), which the check admits only for such a dir.
 */
export function isGitWorktree(dir: string): boolean {
  let at = resolve(dir);
  try {
    at = realpathSync(at);
  } catch {
    return false;
  }
  for (;;) {
    const dotGit = join(at, ".git");
    try {
      const stat = statSync(dotGit);
      if (stat.isDirectory()) return false;
      const gitdir = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, "utf8"))?.[1]?.trim().replace(/[/\\]+$/, "");
      return gitdir !== undefined && /[/\\]worktrees[/\\][^/\\]+$/.test(gitdir);
    } catch {
      // No .git here: look in the parent.
    }
    const parent = dirname(at);
    if (parent === at) return false;
    at = parent;
  }
}

/** The project dir as the CLI's working directory may read it: absolute (a relative one is the host's), and with symlinks resolved. */
function projectDirs(projectDir: string): string[] {
  const dirs = new Set([resolve(projectDir)]);
  try {
    dirs.add(realpathSync(projectDir));
  } catch {
    // A project dir that does not resolve: the CLI cannot start there either.
  }
  return [...dirs];
}

/**
 * Hands the interceptor the texts of a `tools/call` answer of the call's MCP server under the CLI's tool
 * use id (`_meta["claudecode/toolUseId"]`), results and errors alike, before the answer goes back to the
 * CLI; returns the answer unchanged. A JSON-RPC error (a tool input refinement that threw) reaches the
 * model as its message alone (measured on 2.1.330).
 */
export async function recordToolOutput<T>(session: Pick<HostWireSession, "toolOutput">, message: unknown, answer: T): Promise<T> {
  const request = message as { method?: unknown; params?: { _meta?: Record<string, unknown> } } | null;
  const id = request?.method === "tools/call" ? request.params?._meta?.["claudecode/toolUseId"] : undefined;
  const answered = answer as { result?: { content?: unknown }; error?: { message?: unknown } } | undefined;
  const content = answered?.result?.content;
  const texts = Array.isArray(content)
    ? (content as Array<{ type?: unknown; text?: unknown }>).filter((part) => part.type === "text" && typeof part.text === "string").map((part) => part.text as string)
    : typeof answered?.error?.message === "string"
      ? [answered.error.message]
      : undefined;
  if (typeof id === "string" && texts) await session.toolOutput(id, texts);
  return answer;
}

/**
 * Hands the interceptor the message of a permission denial (permissions.ts) under the tool use id it
 * answers: the CLI gives it to the model as that tool's result (`is_error`, the message as its text).
 */
export async function recordDenial(session: Pick<HostWireSession, "toolOutput">, request: Record<string, unknown>, reply: Record<string, unknown>): Promise<Record<string, unknown>> {
  if (reply.behavior === "deny" && typeof reply.message === "string" && typeof request.tool_use_id === "string") await session.toolOutput(request.tool_use_id, [reply.message]);
  return reply;
}

/**
 * A call whose model responses did not all pass the interceptor ran partly unchecked: it fails. Each
 * top-level model response the CLI's stream carried (a step: a distinct assistant message id, synthetic
 * error lines aside) must be one whose message id the interceptor saw in an answer it forwarded; a
 * count would not do (a wrapper can send the checked request, drop its answer, and feed the CLI the
 * answer to a changed copy sent around the interceptor).
 */
export function uncheckedTurns(responseIds: ReadonlyArray<string | undefined>, records: ReadonlyArray<{ messageId?: string }>): IsolationError | undefined {
  const passed = new Set(records.map((record) => record.messageId).filter((id): id is string => id !== undefined));
  const unchecked = responseIds.filter((id) => id === undefined || !passed.has(id));
  if (unchecked.length === 0) return undefined;
  // Never a way out: a stand-in cannot declare itself (a wrapper at cliPath could claim anything; only the
  // testing helpers' own record in the host turns the interceptor off, billing.ts). The message tells the
  // author of a test script that makes no request at all what to do.
  const standIn =
    records.length === 0
      ? " If this is a stand-in CLI that answers without any request (a test script at cliPath), run it with `wire: false`: a CLI that sends no request cannot pass the interceptor (createScriptedCli and createReplayCli are recognised and run without it)."
      : "";
  const names = unchecked.map((id) => (id === undefined ? "(no message id)" : JSON.stringify(id))).join(", ");
  const what =
    records.length < responseIds.length
      ? `the call got ${responseIds.length} model response(s) but only ${records.length} Messages request(s) passed the runtime's interceptor, so some went another way (not through it: ${names})`
      : `the call got ${responseIds.length} model response(s), and ${unchecked.length} of them (${names}) did not come through the runtime's interceptor, whose ${records.length} Messages request(s) were answered with other messages: the CLI read answers to requests sent another way`;
  return new IsolationError(
    [`wire: ${what}`],
    `Something routed the CLI's requests around the interceptor (a proxy setting, a socket, a wrapper); the process was retired.${standIn}`,
  );
}

/**
 * Starts a process behind the interceptor when there is one. The session is the process's own (its name
 * is in its proxy URL) and is not part of the launch key, so spares still match.
 */
export function spawnBehind(wire: InterceptorProcess | undefined, launch: CliProcessOptions, make: (launch: CliProcessOptions) => PooledProcess): PooledProcess {
  const session = wire?.newSession();
  const proc = make(session ? { ...launch, env: withServerHosts(interceptedEnv(launch.env, session.env), launch.args) } : launch);
  if (session) {
    sessions.set(proc, session);
    // An idle process whose session broke (its interceptor is gone) must not serve another call.
    session.onIdleBreak = () => void proc.retire("wire check");
    void proc.proc.exited.then(() => wire!.dropSession(session));
  }
  return proc;
}

/**
 * `capabilities.mcpServers`: the hosts of the http and sse servers in the launch's `--mcp-config` go around the
 * interceptor (`NO_PROXY`), which would refuse them (measured on 2.1.330: the CLI's MCP client takes HTTP(S)_PROXY,
 * and the refusal made the server "needs-auth"). Their traffic is the user's choice; the API's hosts are never
 * among them (mcp-servers.ts refuses those).
 */
function withServerHosts(env: Record<string, string>, args: readonly string[]): Record<string, string> {
  const hosts = remoteServerHosts(args);
  if (hosts.length === 0) return env;
  const result = { ...env };
  for (const name of ["NO_PROXY", "no_proxy"]) result[name] = [result[name], ...hosts].filter(Boolean).join(",");
  return result;
}

export function wireSessionOf(proc: PooledProcess): HostWireSession | undefined {
  return sessions.get(proc);
}
