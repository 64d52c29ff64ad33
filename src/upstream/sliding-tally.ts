/**
 * Counts over a sliding window of time, for the circuit (calls and failures) and the retry
 * budget (calls and retries). The window is ten slots that each cover a tenth of it, and each
 * slot knows the time it covers, so that under sparse traffic counts from long ago no longer
 * count. (cockatiel's own `SamplingBreaker` moves its window one slot per call.) Times are
 * epoch milliseconds (`Date.now()`), the clock cockatiel reads.
 */

/** Slots of the window: it moves a tenth of its length at a time. */
const SLOTS = 10;

/** Counts by name over the last `windowMs` milliseconds. */
export class SlidingTally<Name extends string> {
  private readonly slotMs: number;
  /** per slot: the slot's number (time / slotMs) and its counts */
  private readonly slots: { at: number; counts: Record<Name, number> }[];

  constructor(
    private readonly names: readonly Name[],
    readonly windowMs: number,
  ) {
    this.slotMs = Math.max(1, Math.round(windowMs / SLOTS));
    this.slots = Array.from({ length: SLOTS }, () => ({ at: -1, counts: this.zero() }));
  }

  /** Adds one to `name`'s count now. */
  add(name: Name): void {
    const at = Math.floor(Date.now() / this.slotMs);
    const slot = this.slots[at % SLOTS];
    if (slot === undefined) return;
    if (slot.at !== at) {
      slot.at = at;
      slot.counts = this.zero();
    }
    slot.counts[name] += 1;
  }

  /** Each name's count over the window. */
  totals(): Record<Name, number> {
    const totals = this.zero();
    const oldest = Math.floor(Date.now() / this.slotMs) - SLOTS + 1;
    for (const slot of this.slots) {
      if (slot.at < oldest) continue;
      for (const name of this.names) totals[name] += slot.counts[name];
    }
    return totals;
  }

  /** Forgets every count. */
  clear(): void {
    for (const slot of this.slots) slot.at = -1;
  }

  private zero(): Record<Name, number> {
    const counts = {} as Record<Name, number>;
    for (const name of this.names) counts[name] = 0;
    return counts;
  }
}

/**
 * The keys seen over a sliding window (callers, by credential fingerprint), each with the time
 * it was last seen, oldest first, at most `max` of them: past that, "many" is all anyone asks.
 */
export class RecentKeys {
  /** key → when it was last seen, oldest first */
  private readonly seen = new Map<string, number>();
  /** the key noted last, which is the map's last entry while it is in it */
  private last: string | undefined;

  constructor(
    private readonly windowMs: number,
    private readonly max: number,
  ) {}

  /** `key` was seen now. */
  note(key: string): void {
    const now = Date.now();
    // The key seen last is already last: only its time changes (most calls are of the caller before).
    if (key === this.last) return void this.seen.set(key, now);
    // Re-inserted, so that the map stays in the order keys were last seen.
    this.seen.delete(key);
    this.seen.set(key, now);
    this.last = key;
    if (this.seen.size > this.max) this.forgetBefore(now - this.windowMs);
  }

  /** The keys seen within the window. */
  keys(): ReadonlySet<string> {
    this.forgetBefore(Date.now() - this.windowMs);
    return new Set(this.seen.keys());
  }

  /** How many keys were seen within the window. */
  get size(): number {
    this.forgetBefore(Date.now() - this.windowMs);
    return this.seen.size;
  }

  has(key: string): boolean {
    this.forgetBefore(Date.now() - this.windowMs);
    return this.seen.has(key);
  }

  clear(): void {
    this.seen.clear();
    this.last = undefined;
  }

  private forgetBefore(time: number): void {
    for (const [key, at] of this.seen) {
      if (at >= time && this.seen.size <= this.max) break;
      this.seen.delete(key);
    }
  }
}
