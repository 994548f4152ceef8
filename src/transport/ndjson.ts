/**
 * Streaming NDJSON framing. Hand-written rather than `split2`/`ndjson`: those re-split the whole
 * accumulated string on every chunk, which is quadratic for one 64 MiB line arriving in 64 KiB chunks;
 * here each byte is scanned once and a long line is joined once, when its newline arrives.
 */

export const DEFAULT_MAX_LINE_BYTES = 256 * 1024 * 1024;

export interface NdjsonHandlers {
  /** One complete line, without its `\n` (and without a trailing `\r`). Empty lines are skipped. */
  line(text: string): void;
  /** A line longer than the limit; its bytes were discarded, framing resumes after its newline. */
  oversized(bytes: number, limit: number): void;
}

const NEWLINE = 0x0a;
const CR = 0x0d;

export class NdjsonFramer {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private discarding = false;
  private discardedBytes = 0;

  constructor(
    private readonly handlers: NdjsonHandlers,
    private readonly maxLineBytes = DEFAULT_MAX_LINE_BYTES,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(NEWLINE, start);
      if (newline === -1) {
        // A chunk that ends with its last newline (the usual case) leaves nothing to keep.
        if (start < chunk.length) this.keep(start === 0 ? chunk : chunk.subarray(start));
        return;
      }
      if (this.pendingBytes === 0 && !this.discarding) {
        // The whole line is in this chunk (the usual case): decoded from it, with no copy or view made first.
        this.lineOf(chunk, start, newline);
      } else {
        this.keep(chunk.subarray(start, newline));
        this.flushLine();
      }
      start = newline + 1;
    }
  }

  /** Ends the stream: a last line without a newline is still delivered (the CLI may exit mid-write). */
  end(): { truncatedBytes: number } {
    const truncatedBytes = this.pendingBytes;
    if (this.pendingBytes > 0 || this.discarding) this.flushLine();
    return { truncatedBytes };
  }

  private keep(part: Buffer): void {
    if (part.length === 0) return;
    if (this.discarding) {
      this.discardedBytes += part.length;
      return;
    }
    if (this.pendingBytes + part.length > this.maxLineBytes) {
      this.discarding = true;
      this.discardedBytes = this.pendingBytes + part.length;
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    this.pending.push(part);
    this.pendingBytes += part.length;
  }

  /** A line that lies whole in `chunk`, from `start` to its newline at `end`: what `keep` then `flushLine` would deliver. */
  private lineOf(chunk: Buffer, start: number, end: number): void {
    const bytes = end - start;
    if (bytes > this.maxLineBytes) {
      this.handlers.oversized(bytes, this.maxLineBytes);
      return;
    }
    const stop = bytes > 0 && chunk[end - 1] === CR ? end - 1 : end;
    if (stop > start) this.handlers.line(chunk.toString("utf8", start, stop));
  }

  private flushLine(): void {
    if (this.discarding) {
      const bytes = this.discardedBytes;
      this.discarding = false;
      this.discardedBytes = 0;
      this.handlers.oversized(bytes, this.maxLineBytes);
      return;
    }
    const parts = this.pending;
    const total = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    if (total === 0) return;
    const buffer = parts.length === 1 ? parts[0]! : Buffer.concat(parts, total);
    const end = buffer[total - 1] === CR ? total - 1 : total;
    if (end === 0) return;
    this.handlers.line(buffer.toString("utf8", 0, end));
  }
}
