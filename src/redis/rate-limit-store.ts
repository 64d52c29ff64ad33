/**
 * Rate-limit counters in Redis, exact across every process and replica: rate-limiter-flexible's
 * Redis limiter, one atomic script per request (a counter per client and minute window, created
 * with its expiry). A window starts at a client's first request and lasts a minute; the bucket
 * kept in memory without Redis refills evenly instead. Either way at most the limit is let
 * through in any one window.
 *
 * When Redis cannot be asked within REDIS_TIMEOUT_MS, requests go through unlimited (fail open),
 * or with RATE_LIMIT_FAIL_CLOSED are refused with 503 `RATE_LIMIT_UNAVAILABLE`.
 */
import type { Redis } from 'ioredis';
import type { RateLimiterRedis } from 'rate-limiter-flexible';
import type { RateLimitStore, Take } from '../security/rate-limit-store.js';
import type { SharedRedis } from './connection.js';

const ALLOWED: Take = { allowed: true, retryAfterMs: 0 };
const UNAVAILABLE: Take = { allowed: false, retryAfterMs: 1000, unavailable: true };

export function redisRateLimitStore(redis: SharedRedis, options: { failClosed: boolean }): RateLimitStore {
  // Loaded with Redis, not with the gateway; once loaded, used without waiting.
  let flexible: typeof import('rate-limiter-flexible') | undefined;
  const loading = import('rate-limiter-flexible').then(
    // CommonJS: bundled, its exports are the module's default export.
    (module) => (flexible = 'RateLimiterRedis' in module ? module : (module as { default: typeof module }).default),
  );
  // One limiter per limit (the client and the address limits differ), each with its own keys.
  const limiters = new Map<number, RateLimiterRedis>();
  const limiterFor = (library: typeof import('rate-limiter-flexible'), perMinute: number, client: Redis) => {
    let limiter = limiters.get(perMinute);
    if (limiter === undefined) {
      limiter = new library.RateLimiterRedis({
        storeClient: client,
        keyPrefix: `${redis.keyPrefix}rate-limit:${perMinute}`,
        points: perMinute,
        duration: 60,
        rejectIfRedisNotReady: true,
      });
      limiters.set(perMinute, limiter);
    }
    return limiter;
  };
  return {
    remote: true,
    async take(key, rule) {
      const take = await redis.attempt(
        'rate-limit',
        async (client) => {
          const library = flexible ?? (await loading);
          try {
            await limiterFor(library, rule.perMinute, client).consume(key);
            return ALLOWED;
          } catch (rejection) {
            // A refusal comes as a RateLimiterRes; anything else is Redis failing.
            if (rejection instanceof library.RateLimiterRes)
              return { allowed: false, retryAfterMs: rejection.msBeforeNext };
            throw rejection;
          }
        },
        undefined,
      );
      return take ?? (options.failClosed ? UNAVAILABLE : ALLOWED);
    },
  };
}
