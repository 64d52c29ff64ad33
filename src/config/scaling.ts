/**
 * Settings of scaling out: worker processes on every core, and the Redis that workers and replicas
 * share (rate limits, caches, APQ documents, the change feed, circuits).
 */
import { flag, integer, redisUrl, type Setting, text, workers } from './parse.js';

/** Worker processes and the Redis they and other replicas share. */
export const SCALING_SETTINGS = [
  {
    key: 'workers',
    env: 'WORKERS',
    default: '1',
    productionDefault: 'auto',
    description:
      'processes serving requests: a number, or auto for the cores the process may use (its CPU quota included)',
    details:
      'processes serving requests: a number, or `auto` for the cores this process may use (its CPU quota ' +
      'included). See [Workers](deploy.md#workers-every-core)',
    parse: workers,
  },
  {
    key: 'redisUrl',
    env: 'REDIS_URL',
    default: undefined,
    description:
      'redis:// or rediss:// URL (password and database index allowed) of the Redis that every process and ' +
      'replica shares: rate-limit counters, response cache, APQ documents',
    details:
      '`redis://` or `rediss://` URL of the Redis every worker and replica shares state in; unset: each ' +
      'process keeps its own. See [Scaling out](deploy.md#scaling-out)',
    parse: redisUrl,
  },
  {
    key: 'redisKeyPrefix',
    env: 'REDIS_KEY_PREFIX',
    default: 'rest-graphql-gateway:',
    description: 'prefix of every key the gateway writes to Redis, so that several deployments can share one',
    details: 'prefix of every key the gateway writes to Redis',
    parse: text,
  },
  {
    key: 'redisTimeoutMs',
    env: 'REDIS_TIMEOUT_MS',
    default: '100',
    description: 'longest wait for one Redis command, in milliseconds; then the request goes on without it',
    details: 'longest wait for Redis in a request; then the request goes on without it',
    parse: integer(1, 60_000),
  },
  {
    key: 'redisRequired',
    env: 'REDIS_REQUIRED',
    default: 'false',
    description: '/readiness answers 503 while Redis is unreachable (otherwise it is reported as degraded, 200)',
    details: '`/readiness` answers 503 while Redis is unreachable (otherwise 200, `degraded`)',
    parse: flag,
  },
  {
    key: 'rateLimitFailClosed',
    env: 'RATE_LIMIT_FAIL_CLOSED',
    default: 'false',
    description: 'while Redis is unreachable, refuse requests with 503 instead of letting them through unlimited',
    details:
      'while Redis is unreachable, refuse requests with 503 `RATE_LIMIT_UNAVAILABLE` instead of letting them ' +
      'through unlimited',
    parse: flag,
  },
] as const satisfies readonly Setting[];
