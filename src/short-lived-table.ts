/**
 * A long-lived table of short-lived entries: the answers being written, the upstream calls in
 * flight, the cluster messages awaiting a reply. Entries come and go with every request.
 *
 * Not a `Map` or a `Set`. On Node 20 (V8 11), a Map or Set that has lived long enough to sit in
 * the old generation keeps every table it outgrows, and each of those tables keeps the entries it
 * held, reachable through the next one until a full collection. With an entry added and removed
 * per request, everything an entry reached (the request, its response, its context, its upstream
 * answers) then outlived the request: a third of a cheap request's CPU went to copying and
 * promoting that garbage, and the heap grew by a megabyte every few milliseconds between full
 * collections (bench/PROFILE.md, "Garbage kept alive"). An object in dictionary mode drops its
 * outgrown tables, and the entries with them.
 */
export class ShortLivedTable<V> {
  /** Keys are prefixed, so that none is an array index or a name objects give meaning to. */
  #entries: Record<string, V> = Object.create(null) as Record<string, V>;
  #size = 0;

  /** How many entries there are. */
  get size(): number {
    return this.#size;
  }

  get(key: string): V | undefined {
    return this.#entries[`:${key}`];
  }

  set(key: string, value: V): void {
    const slot = `:${key}`;
    if (!(slot in this.#entries)) this.#size += 1;
    this.#entries[slot] = value;
  }

  /** Removes `key`'s entry; true when there was one. */
  delete(key: string): boolean {
    const slot = `:${key}`;
    if (!(slot in this.#entries)) return false;
    delete this.#entries[slot];
    this.#size -= 1;
    return true;
  }

  /** Every entry's value, in the order they were added. */
  values(): V[] {
    return Object.values(this.#entries);
  }

  /** Every entry, with its key, in the order they were added. */
  entries(): [string, V][] {
    return Object.entries(this.#entries).map(([slot, value]) => [slot.slice(1), value]);
  }
}
