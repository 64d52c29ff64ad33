/**
 * Where the upstream cache (`cache.ts`) keeps its answers: this process's memory (a bounded LRU,
 * below) or Redis (`src/redis/upstream-cache-store.ts`, with REDIS_URL), behind one interface.
 *
 * Invalidation is by generation: each resource tag (`resourceTag` in `operations.ts`) has a generation
 * number, folded into the key of every entry that reads it. A change bumps the numbers of its
 * tags, which makes every entry of those resources unreachable at once, for every caller (and,
 * in Redis, for every replica), without finding them; the LRU (or Redis's expiry) drops them
 * later. A call that started before the bump stores its answer under the old numbers, where
 * nobody looks any more.
 */
import type CachePolicy from 'http-cache-semantics';

/** One kept answer: its caching policy (http-cache-semantics, serialised) and its body as received. */
export type StoredAnswer = {
  policy: CachePolicy.CachePolicyObject;
  /** the body's text, decoded by its Content-Type (the policy's headers) each time it is served */
  text: string;
};

/** A store of upstream answers. */
export interface UpstreamCacheStore {
  /** true: shared by replicas (Redis), where a `private` answer must never go */
  readonly shared: boolean;
  /**
   * the current generation of each tag, in order (0 for a tag never bumped; a store may add
   * numbers of its own); undefined when the store cannot be read now (the cache is bypassed)
   */
  generations(tags: readonly string[]): Promise<readonly number[] | undefined>;
  /** makes every entry of `tags` unreachable; in memory, before it returns */
  bump(tags: readonly string[]): Promise<void>;
  /** the first of `keys` that holds an answer */
  get(keys: readonly string[]): Promise<StoredAnswer | undefined>;
  /** keeps `answer` under `key` for `keepMs` at most */
  set(key: string, answer: StoredAnswer, keepMs: number): Promise<void>;
}

/** The bounds of the in-memory store (UPSTREAM_CACHE_MAX_ENTRIES, UPSTREAM_CACHE_MAX_BYTES). */
export type MemoryStoreLimits = { maxEntries: number; maxBytes: number };

type MemoryEntry = { answer: StoredAnswer; bytes: number; expiresAt: number };

/**
 * The store of one process: least recently used entries go first once either bound is reached;
 * an entry past its keeping time is dropped when it is next asked for.
 */
export class MemoryCacheStore implements UpstreamCacheStore {
  readonly shared = false;
  // A Map keeps insertion order: re-inserting an entry on each read makes the first the least recently used.
  readonly #entries = new Map<string, MemoryEntry>();
  readonly #generations = new Map<string, number>();
  #bytes = 0;

  constructor(private readonly limits: MemoryStoreLimits) {}

  /** entries and bytes held, for tests and the docs' sizing advice */
  get size(): { entries: number; bytes: number } {
    return { entries: this.#entries.size, bytes: this.#bytes };
  }

  generations(tags: readonly string[]): Promise<readonly number[] | undefined> {
    return Promise.resolve(tags.map((tag) => this.#generations.get(tag) ?? 0));
  }

  bump(tags: readonly string[]): Promise<void> {
    for (const tag of tags) this.#generations.set(tag, (this.#generations.get(tag) ?? 0) + 1);
    return Promise.resolve();
  }

  get(keys: readonly string[]): Promise<StoredAnswer | undefined> {
    const now = Date.now();
    for (const key of keys) {
      const entry = this.#entries.get(key);
      if (entry === undefined) continue;
      this.#drop(key, entry);
      if (entry.expiresAt <= now) continue;
      this.#entries.set(key, entry);
      this.#bytes += entry.bytes;
      return Promise.resolve(entry.answer);
    }
    return Promise.resolve(undefined);
  }

  set(key: string, answer: StoredAnswer, keepMs: number): Promise<void> {
    const old = this.#entries.get(key);
    if (old !== undefined) this.#drop(key, old);
    // Strings are two bytes a character in V8's worst case; the policy is counted as its JSON.
    const bytes = 2 * (key.length + answer.text.length + JSON.stringify(answer.policy).length);
    if (bytes > this.limits.maxBytes || this.limits.maxEntries === 0) return Promise.resolve();
    this.#entries.set(key, { answer, bytes, expiresAt: Date.now() + keepMs });
    this.#bytes += bytes;
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size <= this.limits.maxEntries && this.#bytes <= this.limits.maxBytes) break;
      this.#drop(oldest, entry);
    }
    return Promise.resolve();
  }

  #drop(key: string, entry: MemoryEntry): void {
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }
}
