/**
 * What replicas share through Redis when REDIS_URL is set: rate-limit counters, callers' budgets
 * of upstream calls, the response cache, APQ documents, upstream circuits, the upstream cache and
 * the change feed, over one connection per process. Without REDIS_URL each process keeps its own (and a cluster's primary
 * keeps its workers' rate limits).
 */
import type { APQStore } from '@graphql-yoga/plugin-apq';
import type { Cache } from '@graphql-yoga/plugin-response-cache';
import type { CostBudgetStore } from '../security/cost-budget.js';
import type { RateLimitStore } from '../security/rate-limit-store.js';
import type { UpstreamCacheStore } from '../upstream/cache-store.js';
import type { LocalChangeFeed } from '../upstream/changes.js';
import type { AreaNewsChannel } from '../upstream/circuit.js';
import { RedisChangeFeed } from './change-feed.js';
import { redisApqStore } from './apq-store.js';
import { redisCostBudgetStore } from './cost-budget-store.js';
import { redisAreaNews } from './area-news.js';
import { connectRedis, type RedisObserver, type SharedRedis } from './connection.js';
import { redisRateLimitStore } from './rate-limit-store.js';
import { redisResponseCache } from './response-cache.js';
import { redisUpstreamCacheStore } from './upstream-cache-store.js';

export type { RedisObserver, SharedRedis } from './connection.js';

/** The shared stores of one gateway process. */
export type SharedState = {
  redis: SharedRedis;
  rateLimitStore: RateLimitStore;
  /** callers' budgets of upstream calls (RATE_LIMIT_COST_PER_MINUTE) */
  costBudgetStore: CostBudgetStore;
  responseCache: Cache;
  /** APQ documents in Redis, with `local` (this process's store) in front */
  apqStore: (local: APQStore, ttlMs: number) => APQStore;
  /** upstream circuits and Retry-After holds, told to the other replicas */
  areaNews: AreaNewsChannel;
  /** the upstream cache's answers and generations (UPSTREAM_CACHE) */
  upstreamCacheStore: () => UpstreamCacheStore;
  /** what writes changed, told to every replica; `local` is this process's feed, `warn` logs */
  changeFeed: (local: LocalChangeFeed, warn: (message: string) => void) => RedisChangeFeed;
};

/** Connects to REDIS_URL (in the background) and builds the stores over it. */
export function createSharedState(
  options: { url: string; keyPrefix: string; timeoutMs: number; rateLimitFailClosed: boolean },
  observer: RedisObserver,
): SharedState {
  const redis = connectRedis(options, observer);
  return {
    redis,
    rateLimitStore: redisRateLimitStore(redis, { failClosed: options.rateLimitFailClosed }),
    costBudgetStore: redisCostBudgetStore(redis, { failClosed: options.rateLimitFailClosed }),
    responseCache: redisResponseCache(redis),
    apqStore: (local, ttlMs) => redisApqStore(redis, local, ttlMs),
    areaNews: redisAreaNews(redis),
    upstreamCacheStore: () => redisUpstreamCacheStore(redis),
    changeFeed: (local, warn) => new RedisChangeFeed(redis, local, warn),
  };
}
