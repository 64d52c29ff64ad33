/**
 * Each caller's budget of upstream calls (RATE_LIMIT_COST_PER_MINUTE): a leaky bucket per caller
 * that holds at most a minute's worth of calls and fills again evenly over the minute. An
 * operation is charged its estimate before it runs and refunded, after, what it did not make, as
 * Shopify's GraphQL API charges its cost; one whose estimate the bucket does not hold now is
 * refused with 429 and the seconds until it would.
 *
 * The buckets live behind {@link CostBudgetStore}: in this process, or in Redis with REDIS_URL
 * (src/redis/cost-budget-store.ts), where every replica charges the same bucket.
 */

/** A bucket's size and refill: `perMinute` calls, which is also the most it holds. */
export type CostBucketRule = { perMinute: number };

/** The outcome of a charge. */
export type CostCharge = {
  allowed: boolean;
  /** the calls left in the bucket after it (or, refused, as it is) */
  available: number;
  /** when refused: milliseconds until the bucket holds the charge */
  retryAfterMs: number;
  /** refused because a shared store could not be asked (RATE_LIMIT_FAIL_CLOSED), not because the bucket is low */
  unavailable?: boolean;
};

/** Where the buckets live. May be asynchronous, for a store that several processes share. */
export type CostBudgetStore = {
  /** takes `cost` calls from the bucket `key` (created full) when it holds them */
  charge(key: string, cost: number, rule: CostBucketRule, now: number): CostCharge | Promise<CostCharge>;
  /** gives `amount` calls back to the bucket `key` (never above its size); the calls available after */
  refund(key: string, amount: number, rule: CostBucketRule, now: number): number | Promise<number>;
};

/** A store in this process: it answers at once. */
export type MemoryCostBudgetStore = {
  charge(key: string, cost: number, rule: CostBucketRule, now: number): CostCharge;
  refund(key: string, amount: number, rule: CostBucketRule, now: number): number;
};

type Bucket = { available: number; updatedAt: number };

/** The bucket's level at `now`: what it held, plus what a minute's even refill has added since. */
function refilled(bucket: Bucket, rule: CostBucketRule, now: number): number {
  const elapsed = Math.max(0, now - bucket.updatedAt);
  return Math.min(rule.perMinute, bucket.available + (elapsed * rule.perMinute) / 60_000);
}

/** Milliseconds until a bucket that holds `available` calls holds `cost`. */
export function waitFor(cost: number, available: number, rule: CostBucketRule): number {
  return Math.ceil(((cost - available) * 60_000) / rule.perMinute);
}

/**
 * The store in this process: a bucket per caller. Its memory is bounded: with `maxKeys` buckets,
 * the full ones (which mean nothing) are dropped, then the oldest.
 */
export function createMemoryCostBudgetStore(options: { maxKeys?: number } = {}): MemoryCostBudgetStore {
  const maxKeys = options.maxKeys ?? 100_000;
  const buckets = new Map<string, Bucket & CostBucketRule>();
  const makeRoom = (now: number) => {
    for (const [key, bucket] of buckets) if (refilled(bucket, bucket, now) >= bucket.perMinute) buckets.delete(key);
    for (const key of buckets.keys()) {
      if (buckets.size < maxKeys) break;
      buckets.delete(key);
    }
  };
  const bucketOf = (key: string, rule: CostBucketRule, now: number) => {
    let bucket = buckets.get(key);
    if (bucket === undefined) {
      if (buckets.size >= maxKeys) makeRoom(now);
      bucket = { available: rule.perMinute, updatedAt: now, perMinute: rule.perMinute };
      buckets.set(key, bucket);
    }
    bucket.available = refilled(bucket, rule, now);
    bucket.updatedAt = Math.max(bucket.updatedAt, now);
    return bucket;
  };
  return {
    charge(key, cost, rule, now) {
      const bucket = bucketOf(key, rule, now);
      if (bucket.available < cost)
        return { allowed: false, available: bucket.available, retryAfterMs: waitFor(cost, bucket.available, rule) };
      bucket.available -= cost;
      return { allowed: true, available: bucket.available, retryAfterMs: 0 };
    },
    refund(key, amount, rule, now) {
      const bucket = bucketOf(key, rule, now);
      bucket.available = Math.min(rule.perMinute, bucket.available + amount);
      return bucket.available;
    },
  };
}
