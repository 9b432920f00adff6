/**
 * Answers kept for as long as the data they were read from has not changed: each value is kept with the version it was
 * read at (the store's `readVersion()`, or `dataVersion()` of its organization), and given only to a request of that
 * same version. A version changes with every committed write that may change what it covers, this process's or
 * another's, and never comes back, so a kept answer is never older than the last acknowledged write. Bounded by a
 * total size, the least recently used going first (values of past versions among them): by second chance, as a clock
 * does, so that a hit only marks its entry instead of moving it to the end of the map (a delete and an insert, which
 * every kept answer given would pay); an entry marked since it was last passed over is moved then, and kept.
 */
export class VersionedCache<V> {
  private readonly entries = new Map<string, { version: string; value: V; size: number; used: boolean }>();
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
    if (entry.version !== version) {
      this.entries.delete(key);
      this.size -= entry.size;
      return undefined;
    }
    entry.used = true;
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
      const [oldest, entry] = this.entries.entries().next().value as [string, { size: number; used: boolean }];
      this.entries.delete(oldest);
      if (entry.used) {
        // Used since it was kept or last passed over: its second chance, at the end, as a recent one.
        entry.used = false;
        this.entries.set(oldest, entry as { version: string; value: V; size: number; used: boolean });
        continue;
      }
      this.size -= entry.size;
    }
    this.entries.set(key, { version, value, size, used: false });
    this.size += size;
  }
}
