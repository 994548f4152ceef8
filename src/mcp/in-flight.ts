/**
 * Requests, handlers and deadlines in flight: a few at a time, each added and removed once per tool call.
 * An array rather than a Map or Set: those allocate a new table each time they become empty, which a
 * reused loop did several times per tool call (docs/performance.md, "Host CPU of a reused loop").
 */
export class InFlight<T> {
  /** Slots beyond `count` hold undefined; the array never shrinks, so adding after emptying allocates nothing. */
  private readonly list: Array<T | undefined> = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(item: T): void {
    this.list[this.count] = item;
    this.count += 1;
  }

  /** Removes `item` (order is not kept); false when it was not there. */
  delete(item: T): boolean {
    const index = this.indexOf(item);
    if (index < 0) return false;
    this.count -= 1;
    this.list[index] = this.list[this.count];
    this.list[this.count] = undefined;
    return true;
  }

  /** The first item `match` accepts. */
  find(match: (item: T) => boolean): T | undefined {
    for (let i = 0; i < this.count; i += 1) if (match(this.list[i]!)) return this.list[i];
    return undefined;
  }

  /** A copy, to act on while items are removed (an abort settles and removes its own request). */
  snapshot(): T[] {
    return this.list.slice(0, this.count) as T[];
  }

  private indexOf(item: T): number {
    for (let i = 0; i < this.count; i += 1) if (this.list[i] === item) return i;
    return -1;
  }
}
