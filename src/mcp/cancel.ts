/**
 * Cancellation of one control request of the CLI (a `tools/call`, a permission question). A real
 * AbortSignal per request, with a listener added and removed per tool call, was a measurable share of
 * a reused loop's host CPU (docs/performance.md, "Host CPU of a reused loop"): `RequestCancel` makes
 * one only for a handler that asks for it, and the direct `tools/call` path listens without one.
 */

/** What can be cancelled: the requests in flight, as the process holds them. */
export interface Abortable {
  abort(reason?: unknown): void;
}

export class RequestCancel implements Abortable {
  /** The CLI's request id (a control request's cancellation); undefined for a handler's own. */
  constructor(readonly requestId?: string) {}

  private controller: AbortController | undefined;
  /** The one listener a request usually has; more go to `others` (an array per request was a measurable allocation). */
  private listener: (() => void) | undefined;
  private others: Array<() => void> | undefined;
  private state: { reason: unknown } | undefined;

  get aborted(): boolean {
    return this.state !== undefined;
  }

  get reason(): unknown {
    return this.state?.reason;
  }

  /** A real signal, made on first use; aborted already (with the same reason) when the request is. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.state) this.controller.abort(this.state.reason);
    }
    return this.controller.signal;
  }

  /** As `AbortController.abort`: once, and without a reason a DOMException named AbortError. */
  abort(reason?: unknown): void {
    if (this.state) return;
    this.state = { reason: reason === undefined ? new DOMException("This operation was aborted", "AbortError") : reason };
    this.controller?.abort(this.state.reason);
    const { listener, others } = this;
    this.listener = undefined;
    this.others = undefined;
    // In the order they were added: the first listener is always the single slot's, or the slot was freed.
    listener?.();
    if (others) for (const other of others) other();
  }

  /** Calls `listener` once the request is cancelled; the returned function forgets it. */
  onAbort(listener: () => void): () => void {
    if (this.listener === undefined && this.others === undefined) this.listener = listener;
    else (this.others ??= []).push(listener);
    return () => this.offAbort(listener);
  }

  /** Forgets a listener given to `onAbort`. */
  offAbort(listener: () => void): void {
    if (this.listener === listener) {
      this.listener = undefined;
      return;
    }
    const index = this.others?.indexOf(listener) ?? -1;
    if (index >= 0) this.others!.splice(index, 1);
  }
}

/** A request's cancellation: ours, or a caller's AbortSignal (the MCP SDK's `Server`, tests). */
export type Cancellation = AbortSignal | RequestCancel;

/** Calls `listener` when `cancel` aborts; the returned function stops listening. */
export function onCancel(cancel: Cancellation, listener: () => void): () => void {
  if (cancel instanceof RequestCancel) return cancel.onAbort(listener);
  cancel.addEventListener("abort", listener, { once: true });
  return () => cancel.removeEventListener("abort", listener);
}

/** A real AbortSignal for code that needs one (the SDK's transport, permission handlers). */
export function signalOf(cancel: Cancellation | undefined): AbortSignal | undefined {
  return cancel instanceof RequestCancel ? cancel.signal : cancel;
}
