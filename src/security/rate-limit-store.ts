/**
 * Where rate-limit buckets live: the interface, and the in-memory store (a token bucket per
 * key). A module of its own so that a cluster primary, which holds the buckets of its workers,
 * loads nothing else of the limiter.
 */

/** A bucket's size and refill: `capacity` tokens, refilled evenly over a minute. */
export type BucketRule = {
  /** requests per minute, which is also the largest burst */
  perMinute: number;
};

/** The outcome of taking a token. */
export type Take = {
  allowed: boolean;
  /** when refused: milliseconds until a token is there again */
  retryAfterMs: number;
  /** refused because a shared store could not be asked (RATE_LIMIT_FAIL_CLOSED), not because the bucket is empty */
  unavailable?: boolean;
};

/**
 * Where the buckets live. `take` removes one token from the bucket `key` (creating it full) if
 * there is one. It may be asynchronous, for a store shared by several processes.
 */
export type RateLimitStore = {
  take(key: string, rule: BucketRule, now: number): Take | Promise<Take>;
  /**
   * a store across the network (Redis): a request's takes are made at once, one round trip for
   * all, rather than one after the other (the address bucket is then also charged when the
   * client's refuses)
   */
  remote?: boolean;
};

type Bucket = { tokens: number; updatedAt: number };

/**
 * The in-memory store: a token bucket per key. Its memory is bounded: when it holds `maxKeys`
 * buckets, the ones that have refilled (and so mean nothing) are dropped, then the oldest.
 */
/** A store in this process: it answers at once. */
export type MemoryRateLimitStore = Omit<RateLimitStore, 'take'> & {
  take(key: string, rule: BucketRule, now: number): Take;
};

export function createMemoryRateLimitStore(options: { maxKeys?: number } = {}): MemoryRateLimitStore {
  const maxKeys = options.maxKeys ?? 100_000;
  const buckets = new Map<string, Bucket & { perMinute: number }>();

  const refill = (bucket: Bucket & { perMinute: number }, now: number) =>
    Math.min(bucket.perMinute, bucket.tokens + ((now - bucket.updatedAt) * bucket.perMinute) / 60_000);

  function makeRoom(now: number) {
    for (const [key, bucket] of buckets) if (refill(bucket, now) >= bucket.perMinute) buckets.delete(key);
    // Still full of active clients: drop the least recently created (Map keeps insertion order).
    for (const key of buckets.keys()) {
      if (buckets.size < maxKeys) break;
      buckets.delete(key);
    }
  }

  return {
    take(key, rule, now) {
      let bucket = buckets.get(key);
      if (!bucket) {
        if (buckets.size >= maxKeys) makeRoom(now);
        bucket = { tokens: rule.perMinute, updatedAt: now, perMinute: rule.perMinute };
        buckets.set(key, bucket);
      }
      bucket.tokens = refill(bucket, now);
      bucket.updatedAt = now;
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return { allowed: true, retryAfterMs: 0 };
      }
      return { allowed: false, retryAfterMs: Math.ceil(((1 - bucket.tokens) * 60_000) / rule.perMinute) };
    },
  };
}
