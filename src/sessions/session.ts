/**
 * `ClaudeCodeSession`: a multi-turn conversation, an adapter on a `ClaudeCodeHost`. Its turns run on one
 * process of the host's pool, pinned to the session and never rewound between turns, so the CLI keeps the
 * history (tool results included) itself; `close()` rewinds the process to before the first turn and gives
 * it back to the pool. Each `send` is a turn: an async iterable of events and a `result` promise.
 */
import { AbortError, ClaudeCodeError, InvalidInputError } from "../errors/index.js";
import type { KtxProgressEvent } from "../limits/events.js";
import type { CallLimits } from "../limits/index.js";
import { type KtxRuntimeToolSet, normalizeToolOutput, type PreparedTool, prepareToolSet } from "../mcp/tools.js";
import type { RunUsage, ToolCallRecord } from "../runtime/types.js";
import { type Logger } from "../session/logger.js";
import type { ClaudeCodeHost } from "../claude-code/host.js";
import { resolveModelValue } from "../claude-code/models.js";
import { type Capabilities, parseCapabilities } from "../claude-code/capabilities.js";
import type { Conversation } from "../claude-code/run/run.js";
import { runUsage } from "../claude-code/run/call-output.js";
import { type CallPermissions, type PermissionMode, type PermissionsOption, PERMISSION_MODES, checkModeAgainst, cliPermissionMode, parsePermissions } from "../claude-code/permissions.js";
import { type RunLoopStopReason, mapStopReason } from "../claude-code/run/stop-reason.js";
import type { SessionTranscript, TurnEnd } from "../transcripts/recorder.js";
import { checkTranscriptName } from "../transcripts/recorder.js";
import { type ObjectSchemaPlan, planObjectSchema, validateObject } from "../runtime/object-schema.js";
import type { z } from "zod";

export interface SessionOptions<T = unknown> {
  /** An alias (`sonnet`, `opus`, `haiku`) or a `claude-*` id, for every turn. */
  model: string;
  system?: string;
  /** Tools the model may call in every turn (KTX-style descriptors or AI SDK tools via `fromAiSdkTools`). */
  tools?: KtxRuntimeToolSet;
  /** Model responses allowed per turn; default 10 with tools (or built-in tools), 1 without. */
  maxTurns?: number;
  /** Stream the model's text as `text_delta` events; default true. */
  includePartialMessages?: boolean;
  /** Who decides a tool use that reaches a permission prompt (docs/guides/sessions.md, "Permissions"); default mode "deny". */
  permissions?: PermissionsOption;
  logger?: Logger;
  /** Opt-in capabilities, all off by default (docs/options.md, "Capabilities"); fixed for the session. */
  capabilities?: Capabilities;
  /** The session's one transcript (docs/guides/sessions.md, "Transcript"): `false` for none; default the host's `transcript.dir`. */
  transcript?: { dir: string; name?: string } | false;
  /**
   * The CLI's own compaction near the context limit (docs/guides/sessions.md, "Compaction"): `"auto"` (the
   * default), `"off"`, or `{ windowTokens }` to compact once a response's usage nears that many tokens.
   */
  compaction?: "auto" | "off" | { windowTokens: number };
  /**
   * Every turn answers with an object of this schema (as `generateObject`): the CLI's StructuredOutput tool,
   * its schema fixed for the session's process; each turn's `result.object` is validated with it.
   */
  schema?: z.ZodType<T>;
}

/** What a turn reports while it runs. */
export type SessionEvent =
  | { type: "text_delta"; text: string }
  | { type: "tool_call"; toolUseId: string; name: string; input: unknown }
  | { type: "tool_result"; toolUseId: string; name: string; ok: boolean; durationMs: number; error?: string }
  | { type: "step"; stepIndex: number }
  /** The CLI compacted the conversation: its summary stands for the turns before from now on. */
  | { type: "compact"; trigger: "auto" | "manual"; preTokens?: number; postTokens?: number }
  /** Anything else the limits say about the turn: governor waits, retries (docs/guides/rate-limits.md). */
  | { type: "progress"; event: KtxProgressEvent };

/** A finished turn, backend-neutral. */
export interface TurnResult<T = unknown> {
  text: string;
  /** The turn's object, validated with the session's `schema` (only a session with one). */
  object?: T;
  toolCalls: ToolCallRecord[];
  usage: RunUsage;
  costUsd: number;
  model: string;
  durationMs: number;
  /** `natural`, or `budget` when the turn used its `maxTurns`. */
  stopReason: RunLoopStopReason;
  sessionId: string;
  /**
   * How the earlier turns reached the model: `"native"`, the CLI's own conversation (exact); `"replayed"`, the
   * first turn after the session's process ended — the earlier turns went to a new process written out as text
   * before this input (no verified CLI can be handed a conversation exactly without a session file under the
   * user's `~/.claude`), so the model saw them, but not as its own earlier messages.
   */
  history: "native" | "replayed";
  /** The session's transcript (one file for all its turns), when recorded. */
  transcriptPath?: string;
}

/** One turn: iterate it for its events (the iteration ends with the turn); `result` settles with it. */
export interface SessionTurn<T = unknown> extends AsyncIterable<SessionEvent> {
  readonly result: Promise<TurnResult<T>>;
}

/** A turn of `history`: its input and how it ended. */
export interface SessionTurnRecord<T = unknown> {
  input: string;
  result?: TurnResult<T>;
  /** Set when the turn failed; an interrupted turn's is an `AbortError` (and the conversation goes on without it). */
  error?: ClaudeCodeError;
}

/** `send` while a turn runs: a session has one turn at a time. */
export class SessionBusyError extends ClaudeCodeError {
  override readonly code = "session_busy";
  constructor() {
    super("This session is running a turn; wait for its result (or interrupt() it) before sending the next.");
  }
}

/** `send` or `setModel` after `close()`. */
export class SessionClosedError extends ClaudeCodeError {
  override readonly code = "session_closed";
  constructor() {
    super("This session is closed; create another with host.createSession().");
  }
}

export class ClaudeCodeSession<T = unknown> {
  private model: string;
  private readonly tools: PreparedTool[];
  private readonly maxTurns: number;
  private readonly capabilities: Capabilities | undefined;
  private readonly compaction: { windowTokens?: number } | undefined;
  private readonly limits: CallLimits;
  /** The mode the session's process is launched for (fixed) and the one its turns run in (`setPermissionMode`). */
  private readonly launchMode: PermissionMode;
  private permissionMode: PermissionMode;
  private conversation: Conversation = {};
  private readonly turns: SessionTurnRecord<T>[] = [];
  /** The session's schema as the CLI takes it (`schema`), fixed for its process. */
  private readonly objectPlan: ObjectSchemaPlan | undefined;
  private running: { controller: AbortController; queue: EventQueue; done: Promise<unknown>; permissions: CallPermissions } | undefined;
  private closed = false;
  /** The failure that ended the session's process while it held the conversation; the next turn replays it. */
  private lost: ClaudeCodeError | undefined;
  /** What each tool call returned, as the model saw it, by tool use id (for a replay). */
  private readonly toolOutputs = new Map<string, string>();
  /** The session's transcript, opened with its first turn (undefined without a dir; retried after a failed open). */
  private transcript: Promise<SessionTranscript | undefined> | undefined;
  private transcriptFile: SessionTranscript | undefined;

  constructor(
    private readonly host: ClaudeCodeHost,
    private readonly options: SessionOptions<T>,
  ) {
    const model = typeof options?.model === "string" ? resolveModelValue(options.model) : undefined;
    if (!model) throw new InvalidInputError(`Invalid session options: model ${JSON.stringify(options?.model)} is neither an alias (sonnet, opus, haiku) nor a claude-* id.`);
    this.capabilities = parseCapabilities(options.capabilities);
    this.compaction = parseCompaction(options.compaction);
    this.model = model.id;
    parsePermissions(options.permissions, "session");
    this.launchMode = this.permissionMode = options.permissions?.mode ?? "deny";
    this.tools = (options.tools ? prepareToolSet(options.tools) : []).map((tool) => this.recorded(tool));
    this.objectPlan = options.schema !== undefined ? planObjectSchema(options.schema) : undefined;
    const capabilities = this.capabilities;
    const withTools = this.tools.length > 0 || capabilities?.builtinTools !== undefined || capabilities?.mcpServers !== undefined || capabilities?.bash !== undefined || capabilities?.webSearch === true || capabilities?.subagents !== undefined;
    // With a schema, as generateObject: the answer plus the CLI's 5 schema retries and its one prose nudge.
    this.maxTurns = options.maxTurns ?? (this.objectPlan ? (withTools ? 16 : 8) : withTools ? 10 : 1);
    this.limits = host.limitsFor((event) => this.running?.queue.push(toSessionEvent(event)), options.logger ?? host.logger);
    if (options.transcript && options.transcript.name !== undefined) checkTranscriptName(options.transcript.name);
  }

  /** The session's transcript file, once its first turn opened it (one file for every turn; docs/transcript-format.md, "Sessions"). */
  get transcriptPath(): string | undefined {
    return this.transcriptFile?.path;
  }

  /** Opens the session's transcript at its first turn; a failed open fails that turn and is tried again at the next. */
  private recording(): Promise<SessionTranscript | undefined> {
    this.transcript ??= this.host.openSessionTranscript(this.options.transcript).then(
      (file) => (this.transcriptFile = file),
      (error: unknown) => {
        this.transcript = undefined;
        throw error;
      },
    );
    return this.transcript;
  }

  /**
   * Runs the turns after this call on `model` (an alias or a `claude-*` id), on the same process and in
   * the same conversation: the CLI switches at the next turn's start, with a control request and no API
   * request of its own (a CLI version without a verified switch fails that turn with ProtocolError). A
   * running turn keeps its model. Throws `InvalidInputError` for a model that is neither, `SessionClosedError`
   * after `close()`.
   */
  setModel(model: string): void {
    if (this.closed) throw new SessionClosedError();
    const resolved = typeof model === "string" ? resolveModelValue(model) : undefined;
    if (!resolved) throw new InvalidInputError(`Invalid model ${JSON.stringify(model)}: neither an alias (sonnet, opus, haiku) nor a claude-* id.`);
    this.model = resolved.id;
  }

  /** The turns so far, oldest first. */
  get history(): readonly SessionTurnRecord<T>[] {
    return this.turns;
  }

  /**
   * Sends `input` as the next turn; throws `SessionBusyError` while a turn runs, `SessionClosedError` after
   * `close()`. After the session's process ended (a crash, a kill), the turn runs on another process with
   * the earlier turns written out before `input` (its result's `history` is `"replayed"`).
   */
  send(input: string): SessionTurn<T> {
    if (this.closed) throw new SessionClosedError();
    if (this.running) throw new SessionBusyError();
    if (typeof input !== "string" || input.trim() === "") throw new InvalidInputError("A session turn needs a non-empty input string.");
    const replay = this.lost ? this.replayOf(this.turns) : undefined;
    if (this.lost) {
      this.lost = undefined;
      this.conversation = {};
    }
    const controller = new AbortController();
    const queue = new EventQueue();
    const record: SessionTurnRecord<T> = { input };
    this.turns.push(record);
    const detach = this.host.attach(() => controller.abort(new Error("the host was closed")));
    const started = performance.now();
    const number = this.turns.length;
    // One object for the turn: a mid-turn setPermissionMode changes its mode, which the permission answers read per request.
    const permissions: CallPermissions = { mode: this.permissionMode, launch: this.launchMode, canUseTool: this.options.permissions?.canUseTool };
    let file: SessionTranscript | undefined;
    const result = this.recording()
      .then((opened) => {
        file = opened;
        file?.beginTurn(number, input, replay ? "replayed" : "native");
        return this.host.run(
        {
          model: this.model,
          system: this.options.system ?? "",
          prompt: replay ? `${replay}${input}` : input,
          maxTurns: this.maxTurns,
          tools: this.tools,
          includePartialMessages: this.options.includePartialMessages ?? true,
          signal: controller.signal,
          logger: this.options.logger,
          conversation: this.conversation,
          permissions,
          capabilities: this.capabilities,
          compaction: this.compaction,
          ...(this.objectPlan ? { jsonSchema: this.objectPlan.jsonSchema } : {}),
          ...(file ? { recordInto: { path: file.path, observer: file.observerFor(number) } } : {}),
        },
        this.limits,
      );
      })
      .then((output): TurnResult<T> => ({
        text: output.result.result ?? output.lastText,
        // A turn whose answer fails the schema fails (StructuredOutputError); the conversation goes on.
        ...(this.objectPlan ? { object: validateObject(this.options.schema!, this.objectPlan, output.result.structured_output, output.result.result ?? output.lastText) } : {}),
        toolCalls: output.toolCalls,
        usage: runUsage(output.result),
        costUsd: output.result.total_cost_usd ?? 0,
        model: output.init.model,
        durationMs: Math.round(performance.now() - started),
        stopReason: mapStopReason(output.result),
        sessionId: output.result.session_id ?? output.init.session_id,
        history: replay ? "replayed" : "native",
        ...(file ? { transcriptPath: file.path } : {}),
      }))
      // The turn's end is in the transcript before its result settles.
      .then(
        (value) => (file?.endTurn(number, turnEnd(value)), value),
        (error: unknown) => {
          file?.endTurn(number, failedTurnEnd(error, controller.signal.aborted, Math.round(performance.now() - started)));
          if (ClaudeCodeError.isInstance(error) && file) error.transcriptPath ??= file.path;
          throw error;
        },
      );
    // Registered before the caller can await `result`, so the session is free again when the caller's code after it runs.
    const settle = () => {
      detach();
      queue.end();
      this.running = undefined;
    };
    const done = result.then(
      (value) => void ((record.result = value), settle()),
      (error: unknown) => {
        record.error = ClaudeCodeError.isInstance(error) ? error : new AbortError(error);
        // The process is gone and with it the turns so far: the next turn replays them on another process.
        if (!this.conversation.entry && this.conversation.firstUuid !== undefined) this.lost = record.error;
        settle();
      },
    );
    this.running = { controller, queue, done, permissions };
    // Iterating alone must not leave the failure unhandled; awaiting `result` still sees it.
    result.catch(() => {});
    return { result, [Symbol.asyncIterator]: () => queue.iterator() };
  }

  /** The permission mode the next turn runs in. */
  get mode(): PermissionMode {
    return this.permissionMode;
  }

  /**
   * Switches the permission mode, between turns or during one. Between turns it applies from the next turn (the
   * CLI's `set_permission_mode`, sent as that turn starts). During a turn it applies at once: the permission
   * answers follow the new mode from now on, and the CLI is sent `set_permission_mode` while the turn runs, so a
   * tool use it decides after its answer (the returned promise) follows the new mode; a tool use already being
   * decided keeps the old one. A session created with "deny" or "acceptAll" pre-approves its tools at launch and
   * can switch only between those two.
   */
  setPermissionMode(mode: PermissionMode): Promise<void> {
    if (this.closed) throw new SessionClosedError();
    if (!PERMISSION_MODES.includes(mode)) {
      const error = new InvalidInputError(`Invalid permission mode ${JSON.stringify(mode)}; use one of ${PERMISSION_MODES.join(", ")}.`);
      error.field = "mode";
      throw error;
    }
    checkModeAgainst(mode, this.launchMode, this.options.permissions?.canUseTool !== undefined, "session");
    this.permissionMode = mode;
    if (!this.running) return Promise.resolve();
    this.running.permissions.mode = mode;
    const proc = this.conversation.running;
    const switched = proc ? proc.switchPermissionMode(cliPermissionMode(mode, this.launchMode)).then(() => undefined) : Promise.resolve();
    // A caller that does not await it must not see an unhandled rejection (a CLI that refuses or does not answer the switch rejects it).
    switched.catch(() => {});
    return switched;
  }

  /** A session tool whose outputs are kept (as the model saw them) for a replay. */
  private recorded(tool: PreparedTool): PreparedTool {
    return {
      ...tool,
      execute: async (input: unknown, context) => {
        const output = await tool.execute(input, context);
        if (context.toolUseId !== undefined) this.toolOutputs.set(context.toolUseId, normalizeToolOutput(output).markdown);
        return output;
      },
    };
  }

  /**
   * The turns that completed, written out for a new process: each input, the tool calls with their inputs and
   * outputs, and the answer. Failed and interrupted turns are left out, as the CLI leaves them out of its own
   * conversation. Undefined when no turn completed.
   */
  private replayOf(turns: readonly SessionTurnRecord<T>[]): string | undefined {
    const done = turns.filter((turn) => turn.result);
    if (done.length === 0) return undefined;
    const lines = done.flatMap((turn) => [
      `User: ${turn.input}`,
      ...turn.result!.toolCalls.map((call) => `Assistant called tool ${call.name} with ${JSON.stringify(call.input)}; ${call.ok ? `it returned: ${this.toolOutputs.get(call.toolUseId) ?? "(output not kept)"}` : `it failed: ${call.error ?? "error"}`}`),
      `Assistant: ${turn.result!.text}`,
    ]);
    return `<earlier_conversation>\nThe conversation so far (the process that held it ended; it is replayed here as text):\n\n${lines.join("\n\n")}\n</earlier_conversation>\n\n`;
  }

  /** Ends the running turn (its result rejects with `AbortError`); the conversation goes on without it. */
  interrupt(): void {
    if (!this.running || this.running.controller.signal.aborted) return;
    this.transcriptFile?.interrupt(this.turns.length);
    this.running.controller.abort(new Error("interrupted"));
  }

  /** Interrupts a running turn, then gives the process back to the host's pool, rewound to before the first turn. */
  async close(): Promise<void> {
    this.closed = true;
    const running = this.running;
    if (running) {
      running.controller.abort(new Error("the session was closed"));
      await running.done;
    }
    await this.host.endConversation(this.conversation);
    const file = await this.transcript?.catch(() => undefined);
    await file?.close(this.turns.length);
  }
}

/** A finished turn as its transcript's `turn_end` says it. */
function turnEnd(result: TurnResult): TurnEnd {
  return {
    outcome: "ok",
    durationMs: result.durationMs,
    stopReason: result.stopReason,
    usage: result.usage,
    costUsd: result.costUsd,
    model: result.model,
    toolCalls: result.toolCalls.map((call) => ({ name: call.name, ok: call.ok })),
  };
}

/** A failed or interrupted turn as its transcript's `turn_end` says it. */
function failedTurnEnd(error: unknown, aborted: boolean, durationMs: number): TurnEnd {
  const failure = ClaudeCodeError.isInstance(error) ? error : new AbortError(error);
  return { outcome: aborted && failure instanceof AbortError ? "interrupted" : "failed", durationMs, error: { name: failure.name, code: failure.code, message: failure.message } };
}

function toSessionEvent(event: KtxProgressEvent): SessionEvent {
  switch (event.type) {
    case "text_delta":
      return { type: "text_delta", text: event.text };
    case "tool_call_started":
      return { type: "tool_call", toolUseId: event.toolUseId, name: event.name, input: event.input };
    case "tool_call_finished":
      return { type: "tool_result", toolUseId: event.toolUseId, name: event.name, ok: event.ok, durationMs: event.durationMs, ...(event.error !== undefined ? { error: event.error } : {}) };
    case "step_finished":
      return { type: "step", stepIndex: event.stepIndex };
    case "compacted":
      return { type: "compact", trigger: event.trigger, ...(event.preTokens !== undefined ? { preTokens: event.preTokens } : {}), ...(event.postTokens !== undefined ? { postTokens: event.postTokens } : {}) };
    default:
      return { type: "progress", event };
  }
}

/** The session's `compaction` as the launch takes it: undefined for off. */
function parseCompaction(value: SessionOptions["compaction"]): { windowTokens?: number } | undefined {
  if (value === undefined || value === "auto") return {};
  if (value === "off") return undefined;
  const windowTokens = (value as { windowTokens?: unknown } | null)?.windowTokens;
  if (typeof windowTokens === "number" && Number.isInteger(windowTokens) && windowTokens >= 1_000) return { windowTokens };
  const error = new InvalidInputError(`Invalid session option compaction ${JSON.stringify(value)}: use "auto", "off" or { windowTokens: <an integer of at least 1000> }.`);
  error.field = "compaction";
  throw error;
}

/** A turn's events for one reader: pushed as they come, read in order, ended with the turn. */
class EventQueue {
  private readonly items: SessionEvent[] = [];
  private waiting: ((result: IteratorResult<SessionEvent>) => void) | undefined;
  private ended = false;

  push(event: SessionEvent): void {
    if (this.ended) return;
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) waiting({ value: event, done: false });
    else this.items.push(event);
  }

  end(): void {
    this.ended = true;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.({ value: undefined, done: true });
  }

  iterator(): AsyncIterator<SessionEvent> {
    return {
      next: () => {
        if (this.items.length > 0) return Promise.resolve({ value: this.items.shift()!, done: false });
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.waiting = resolve));
      },
      return: async () => {
        this.ended = true;
        this.items.length = 0;
        return { value: undefined, done: true };
      },
    };
  }
}
