/**
 * A failed result's `errors`, sorted into what caused the end and what is noise: the CLI lists its
 * non-fatal errors there with stack traces, and an interrupted run's own cause ("Request was aborted.",
 * an AbortError) may come with a stack trace too. Shared by the runtime's error messages and the
 * transcript readers, so both name the same cause first.
 */

/** A stack trace: non-fatal noise, unless it is the interrupt's own cause. */
const isStackTrace = (text: string) => /\n\s+at /.test(text);

const firstLine = (text: string) => text.split("\n")[0]!;

/** An error whose first line names an abort: the interrupt's own cause. */
const isAbort = (text: string) => /\babort/i.test(firstLine(text));

export interface ResultCauses {
  /** The causes, the interrupt's own first (a stack-traced one by its first line, without `Error: `). */
  causes: string[];
  /** Stack traces of non-fatal errors, whole. */
  traces: string[];
}

export function resultCauses(errors: readonly string[]): ResultCauses {
  const aborts = errors.filter(isAbort).map((error) => (isStackTrace(error) ? firstLine(error).replace(/^Error: /, "") : error));
  return {
    causes: [...aborts, ...errors.filter((error) => !isStackTrace(error) && !isAbort(error))],
    traces: errors.filter((error) => isStackTrace(error) && !isAbort(error)),
  };
}
