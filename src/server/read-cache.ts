/**
 * Answers kept for as long as the store's data has not changed: the store's `readVersion()` changes with every
 * committed write, this process's or another's, and a new version empties the cache. So a kept answer is never
 * older than the last acknowledged write. Bounded by a total size, the least recently used going first.
 */
export class VersionedCache<V> {
  private version: string | null = null;
  private readonly entries = new Map<string, { value: V; size: number }>();
  private size = 0;

  constructor(
    /** The most the kept values may add up to, in the units of `sizeOf`. */
    private readonly capacity: number,
    private readonly sizeOf: (value: V) => number = () => 1,
  ) {}

  /** The value kept under key at this version, if any. Read the version before reading the data it stands for. */
  get(version: string, key: string): V | undefined {
    if (version !== this.version) {
      this.entries.clear();
      this.size = 0;
      this.version = version;
      return undefined;
    }
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /**
   * Keeps a value read at `version`. A value read at an older version than the newest seen is dropped: a write
   * may have committed between the version and the read.
   */
  set(version: string, key: string, value: V): void {
    if (version !== this.version) return;
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
    this.entries.set(key, { value, size });
    this.size += size;
  }
}
