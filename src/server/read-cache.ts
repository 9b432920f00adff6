/**
 * Answers kept for as long as the data they were read from has not changed: each value is kept with the version it was
 * read at (the store's `readVersion()`, or `dataVersion()` of its organization), and given only to a request of that
 * same version. A version changes with every committed write that may change what it covers, this process's or
 * another's, and never comes back, so a kept answer is never older than the last acknowledged write. Bounded by a
 * total size, the least recently used going first (values of past versions among them).
 */
export class VersionedCache<V> {
  private readonly entries = new Map<string, { version: string; value: V; size: number }>();
  private size = 0;

  constructor(
    /** The most the kept values may add up to, in the units of `sizeOf`. */
    private readonly capacity: number,
    private readonly sizeOf: (value: V) => number = () => 1,
  ) {}

  /** The value kept under key at this version, if any. Read the version before reading the data it stands for. */
  get(version: string, key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    if (entry.version !== version) {
      this.size -= entry.size;
      return undefined;
    }
    this.entries.set(key, entry);
    return entry.value;
  }

  /**
   * Keeps a value read at `version`. One read at an older version than a request's is never given to it: a write
   * may have committed between the version and the read.
   */
  set(version: string, key: string, value: V): void {
    const size = this.sizeOf(value);
    if (size > this.capacity / 4) return;
    const previous = this.entries.get(key);
    if (previous) {
      this.entries.delete(key);
      this.size -= previous.size;
    }
    while (this.size + size > this.capacity) {
      const [oldest, entry] = this.entries.entries().next().value as [string, { size: number }];
      this.entries.delete(oldest);
      this.size -= entry.size;
    }
    this.entries.set(key, { version, value, size });
    this.size += size;
  }
}
