/**
 * The configuration as the parts of the gateway take it: each view gathers, in this one place,
 * the settings one part needs under the names that part gives them, so that the assembly
 * (`src/gateway.ts`) passes a view on instead of copying settings field by field.
 */
import type { UpstreamService } from '../upstream/failure.js';
import type { UpstreamClientOptions } from '../upstream/http.js';
import type { Config } from './settings.js';

/** The settings an upstream client reads (its base URL is given apart: an area without one is not served). */
type UpstreamClientSource = Pick<
  Config,
  | 'upstreamConnections'
  | 'upstreamTimeouts'
  | 'upstreamMaxResponseBytes'
  | 'upstreamRetries'
  | 'upstreamRetryBackoffMs'
  | 'upstreamRetryBackoffMaxMs'
  | 'upstreamRetryBudgetPercent'
  | 'upstreamCircuitFailureRate'
  | 'upstreamCircuitMinCalls'
  | 'upstreamCircuitWindowMs'
  | 'upstreamCircuitCooldownMs'
  | 'upstreamRetryAfterMaxMs'
  | 'upstreamDedupe'
>;

/**
 * The options of one area's upstream client that its configuration gives: its URL and its own
 * timeouts, the shared pool size, cap, retry policy, circuit breaker and call sharing. Tests that
 * build a client alone take theirs from here, so that the defaults stay those of the settings.
 */
export function upstreamClientSettings(
  config: UpstreamClientSource,
  service: UpstreamService,
  baseUrl: string,
): UpstreamClientOptions {
  return {
    baseUrl,
    connections: config.upstreamConnections,
    timeouts: config.upstreamTimeouts[service],
    maxResponseBytes: config.upstreamMaxResponseBytes,
    retries: config.upstreamRetries,
    retryBackoffMs: config.upstreamRetryBackoffMs,
    retryBackoffMaxMs: config.upstreamRetryBackoffMaxMs,
    retryBudgetPercent: config.upstreamRetryBudgetPercent,
    circuit: {
      failureRate: config.upstreamCircuitFailureRate,
      minCalls: config.upstreamCircuitMinCalls,
      windowMs: config.upstreamCircuitWindowMs,
      cooldownMs: config.upstreamCircuitCooldownMs,
    },
    retryAfterMaxMs: config.upstreamRetryAfterMaxMs,
    // Identical GETs in flight at the same time, from any requests, share one call (UPSTREAM_DEDUPE).
    dedupe: config.upstreamDedupe,
  };
}

/** The Redis that workers and replicas share, as `src/redis/` connects to it. */
type RedisSettings = Readonly<{ url: string; keyPrefix: string; timeoutMs: number; rateLimitFailClosed: boolean }>;

/**
 * The shared Redis's settings (REDIS_URL, REDIS_KEY_PREFIX, REDIS_TIMEOUT_MS, RATE_LIMIT_FAIL_CLOSED);
 * undefined without REDIS_URL.
 */
export function redisSettings(
  config: Pick<Config, 'redisUrl' | 'redisKeyPrefix' | 'redisTimeoutMs' | 'rateLimitFailClosed'>,
): RedisSettings | undefined {
  if (config.redisUrl === undefined) return undefined;
  return {
    url: config.redisUrl,
    keyPrefix: config.redisKeyPrefix,
    timeoutMs: config.redisTimeoutMs,
    rateLimitFailClosed: config.rateLimitFailClosed,
  };
}
