/**
 * Callers' budgets of upstream calls (RATE_LIMIT_COST_PER_MINUTE) in Redis: one leaky bucket per
 * caller, charged and refunded by one Lua script that reads the bucket's level and time, refills
 * it and changes it atomically, so every replica charges the same bucket. Our own script rather
 * than rate-limiter-flexible (which the request limit uses): its Redis limiter counts requests in
 * fixed windows and has no bucket that fills evenly and takes a refund.
 *
 * The bucket expires once it would be full again. When Redis cannot be asked within
 * REDIS_TIMEOUT_MS, operations go through uncharged (fail open), or with RATE_LIMIT_FAIL_CLOSED
 * are refused with 503 `RATE_LIMIT_UNAVAILABLE`.
 */
import { waitFor, type CostBudgetStore, type CostCharge } from '../security/cost-budget.js';
import type { SharedRedis } from './connection.js';

/**
 * KEYS[1]: the bucket. ARGV: its size, its refill per millisecond, now (ms), the calls to take
 * (negative: to give back). Returns whether they were taken and the level after, as a string (Lua
 * numbers come back as integers).
 */
const SCRIPT = `
local size = tonumber(ARGV[1])
local perMs = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], 'available', 'at')
local available = tonumber(state[1]) or size
local at = tonumber(state[2]) or now
if now > at then
  available = math.min(size, available + (now - at) * perMs)
  at = now
end
local taken = 0
if cost <= available then
  available = math.min(size, available - cost)
  taken = 1
end
redis.call('HSET', KEYS[1], 'available', tostring(available), 'at', tostring(at))
redis.call('PEXPIRE', KEYS[1], math.ceil((size - available) / perMs) + 1000)
return { taken, tostring(available) }
`;

const UNAVAILABLE: CostCharge = { allowed: false, available: 0, retryAfterMs: 1000, unavailable: true };

/** The store over the gateway's Redis connection. */
export function redisCostBudgetStore(redis: SharedRedis, options: { failClosed: boolean }): CostBudgetStore {
  const run = async (key: string, cost: number, perMinute: number, now: number) =>
    redis.attempt(
      'cost-budget',
      async (client) => {
        const [taken, available] = (await client.eval(
          SCRIPT,
          1,
          `${redis.keyPrefix}cost-budget:${key}`,
          perMinute,
          perMinute / 60_000,
          now,
          cost,
        )) as [number, string];
        return { taken: taken === 1, available: Number(available) };
      },
      undefined,
    );
  return {
    async charge(key, cost, rule, now) {
      const outcome = await run(key, cost, rule.perMinute, now);
      if (outcome === undefined)
        return options.failClosed ? UNAVAILABLE : { allowed: true, available: rule.perMinute, retryAfterMs: 0 };
      const { taken, available } = outcome;
      return taken
        ? { allowed: true, available, retryAfterMs: 0 }
        : { allowed: false, available, retryAfterMs: waitFor(cost, available, rule) };
    },
    async refund(key, amount, rule, now) {
      return (await run(key, -amount, rule.perMinute, now))?.available ?? rule.perMinute;
    },
  };
}
