/**
 * Step boundary: one step is one top-level model response. The CLI writes one `assistant` line per
 * content block, all sharing `message.id`, so steps are counted by distinct ids of lines with
 * `parent_tool_use_id === null`; synthetic API-error lines are not model responses. A step finishes
 * when the next response starts or the result arrives, i.e. after that turn's tool results.
 *
 * A line without `message.id` (the CLI always writes one; KTX's own fixtures and hand-made streams
 * have none) is a whole response, as an Agent SDK message is: each such line is a step of its own.
 */
import type { AssistantMessage } from "../../protocol/messages.js";

export class StepTracker {
  /** A response is open (its id may be undefined: see the header). */
  private current = false;
  private currentId: string | undefined;
  private finished = 0;
  /** Each response's message id, in order (undefined for a line without one): the interceptor matches them. */
  readonly ids: Array<string | undefined> = [];

  constructor(private readonly onStepFinish: (stepIndex: number) => void) {}

  get steps(): number {
    return this.finished;
  }

  assistant(message: AssistantMessage): void {
    if (message.parent_tool_use_id != null || isSyntheticError(message)) return;
    const id = message.message.id;
    if (id !== undefined && id === this.currentId) return;
    this.finishCurrent();
    this.current = true;
    this.currentId = id;
    this.ids.push(id);
  }

  /** The run ended: the last response (and its tool results) is complete. */
  end(): void {
    this.finishCurrent();
  }

  private finishCurrent(): void {
    if (!this.current) return;
    this.current = false;
    this.currentId = undefined;
    this.finished += 1;
    this.onStepFinish(this.finished);
  }
}

export function isSyntheticError(message: AssistantMessage): boolean {
  return message.is_api_error_message === true || message.error !== undefined || message.message.model === "<synthetic>";
}
