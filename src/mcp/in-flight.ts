/**
 * Requests, handlers and deadlines in flight: a few at a time, each added and removed once per tool call.
 * An array rather than a Map or Set: those allocate a new table each time they become empty, which a
 * reused loop did several times per tool call (docs/performance.md, "Host CPU of a reused loop").
 */
export class InFlight<T> {
  private readonly list: T[] = [];

  get size(): number {
    return this.list.length;
  }

  add(item: T): void {
    this.list.push(item);
  }

  /** Removes `item` (order is not kept); false when it was not there. */
  delete(item: T): boolean {
    const index = this.list.indexOf(item);
    if (index < 0) return false;
    const last = this.list.pop()!;
    if (index < this.list.length) this.list[index] = last;
    return true;
  }

  /** The first item `match` accepts. */
  find(match: (item: T) => boolean): T | undefined {
    return this.list.find(match);
  }

  /** A copy, to act on while items are removed (an abort settles and removes its own request). */
  snapshot(): T[] {
    return this.list.slice();
  }
}
