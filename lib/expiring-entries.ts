interface Entry<V> {
  value: V;
  expiresAt: number;
}

/**
 * A map whose entries expire, dropped from the oldest set as it is used: never a scan of the whole table, whatever
 * its size. Entries set with one lifetime expire in the order they were set, so every expired one goes at once; one
 * set with a longer lifetime holds back those set after it until it expires.
 */
export class ExpiringEntries<V> {
  private readonly entries = new Map<string, Entry<V>>();
  /** Every entry set, oldest first, from `head` on. */
  private order: { key: string; entry: Entry<V> }[] = [];
  private head = 0;

  get size(): number {
    return this.entries.size;
  }

  /** The live value of `key`; an expired one is dropped. */
  get(key: string, now: number): Entry<V> | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.expiresAt > now) return entry;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: V, expiresAt: number): Entry<V> {
    const entry = { value, expiresAt };
    this.entries.set(key, entry);
    this.order.push({ key, entry });
    return entry;
  }

  /** Drops the expired entries at the front; amortized constant time per entry set. */
  dropExpired(now: number): void {
    while (this.head < this.order.length) {
      const { key, entry } = this.order[this.head];
      if (entry.expiresAt > now) break;
      if (this.entries.get(key) === entry) this.entries.delete(key);
      this.head += 1;
    }
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
  }
}
