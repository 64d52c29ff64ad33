/**
 * Settings of the two caches: the upstream cache (REST answers, per resource and credential) and the
 * response cache (GraphQL answers).
 */
import { integer, type Setting, ttlPerType, upstreamCache } from './parse.js';

/** The upstream cache and the response cache. */
export const CACHE_SETTINGS = [
  {
    key: 'upstreamCache',
    env: 'UPSTREAM_CACHE',
    default: 'off',
    description:
      'the upstream cache of pet store GETs, per REST resource and credential, as HTTP caching headers allow: ' +
      'off, on, or per-operation freshness for answers without caching headers ' +
      '(getPetById:30s,getInventory:5s, or a file of them)',
    details:
      'cache of pet store `GET` answers per credential, as their HTTP headers allow: `off`, `on`, or ' +
      '`operation:duration,…` (`getPetById:30s`) for answers without headers; needs `REDIS_URL` with ' +
      'several workers. See [Upstream cache](upstream-cache.md)',
    parse: upstreamCache,
  },
  {
    key: 'upstreamCacheMaxEntries',
    env: 'UPSTREAM_CACHE_MAX_ENTRIES',
    default: '10000',
    description:
      'most answers the upstream cache keeps in this process (without REDIS_URL); least recently used go first',
    details:
      'most answers the upstream cache keeps in one process, least recently used first out (in Redis with ' +
      '`REDIS_URL`)',
    parse: integer(1, 10_000_000),
  },
  {
    key: 'upstreamCacheMaxBytes',
    env: 'UPSTREAM_CACHE_MAX_BYTES',
    default: '67108864',
    description: 'most memory the upstream cache keeps in this process, in bytes (without REDIS_URL)',
    details:
      "most memory one process's upstream cache uses for its answers, in bytes (their text counted twice, as " +
      'V8 may hold it); least recently used go first',
    parse: integer(1024, 17_179_869_184),
  },
  {
    key: 'responseCacheTtlMs',
    env: 'RESPONSE_CACHE_TTL_MS',
    default: '0',
    description:
      'serve repeated identical queries of one caller from memory for this long, in milliseconds; 0: no response cache',
    details:
      "keep a query's answer this long for the same document, variables and credentials; `0`: off. See " +
      '[Response cache](performance.md#response-cache)',
    parse: integer(0, 86_400_000),
  },
  {
    key: 'responseCacheTtlPerType',
    env: 'RESPONSE_CACHE_TTL_PER_TYPE',
    default: undefined,
    description:
      'cache lifetime of answers holding a type or field, in milliseconds: Type=ms,Type.field=ms (e.g. Inventory=1000)',
    details:
      'other lifetimes for answers holding a type or field, `Type=ms,Type.field=ms` (`Inventory=0`: never ' +
      'kept), checked against the schema at start; unset: every answer gets `RESPONSE_CACHE_TTL_MS`',
    parse: ttlPerType,
  },
] as const satisfies readonly Setting[];
