/**
 * The response cache in Redis: an answer cached through one replica is served by every other,
 * and a mutation through any of them purges the answers it makes stale everywhere.
 *
 * Keys, under REDIS_KEY_PREFIX: `cache:answer:<id>` holds an answer (its id is yoga's hash of
 * the document, variables and the caller's credential fingerprint: never a credential) with its
 * lifetime; `cache:index:<Type>` and `cache:index:<Type>:<id>` are sorted sets of the answers
 * holding that type or entity, scored by when each expires, trimmed as they are written, so the
 * index never outgrows the live answers. No command scans the keyspace.
 *
 * @envelop/response-cache-redis does the same job but indexes entities in sets that never
 * expire, finds entity sets with `KEYS` (which blocks Redis while it walks every key) and cannot
 * prefix its keys, which several deployments sharing one Redis need.
 *
 * Every command goes through the connection's `attempt`: with Redis away the cache is bypassed
 * (a miss; nothing kept). A purge that could not be made while Redis was away is made when it is
 * back, as a purge of every cached answer, so that no answer made stale meanwhile is served.
 */
import type { Cache } from '@graphql-yoga/plugin-response-cache';
import type { ExecutionResult } from 'graphql';
import type { SharedRedis } from './connection.js';

export function redisResponseCache(redis: SharedRedis): Cache {
  const answerKey = (id: string) => `${redis.keyPrefix}cache:answer:${id}`;
  const indexKey = (typename: string, id?: string | number) =>
    `${redis.keyPrefix}cache:index:${typename}${id === undefined ? '' : `:${String(id)}`}`;
  let purgeMissed = false;

  /** Deletes every key of the cache (SCAN, a page at a time): after a purge was missed. */
  async function purgeAll(): Promise<void> {
    const done = await redis.attempt(
      'cache.purge',
      async (client) => {
        let cursor = '0';
        do {
          const [next, keys] = await client.scan(cursor, 'MATCH', `${redis.keyPrefix}cache:*`, 'COUNT', 500);
          if (keys.length > 0) await client.unlink(...keys);
          cursor = next;
        } while (cursor !== '0');
        return true;
      },
      false,
    );
    if (done) purgeMissed = false;
  }
  redis.onReconnect(() => {
    if (purgeMissed) void purgeAll();
  });

  return {
    async get(id) {
      const text = await redis.attempt('cache.get', (client) => client.get(answerKey(id)), null);
      return text === null ? undefined : (JSON.parse(text) as ExecutionResult);
    },
    async set(id, data, entities, ttl) {
      const now = Date.now();
      const expiresAt = Number.isFinite(ttl) ? now + ttl : Number.MAX_SAFE_INTEGER;
      const indexes = new Set<string>();
      for (const { typename, id: entityId } of entities) {
        indexes.add(indexKey(typename));
        if (entityId !== undefined && entityId !== null) indexes.add(indexKey(typename, entityId));
      }
      await redis.attempt(
        'cache.set',
        (client) => {
          const batch = client.multi();
          if (Number.isFinite(ttl)) batch.set(answerKey(id), JSON.stringify(data), 'PX', ttl);
          else batch.set(answerKey(id), JSON.stringify(data));
          for (const index of indexes) {
            batch.zremrangebyscore(index, '-inf', now);
            batch.zadd(index, expiresAt, id);
          }
          return batch.exec();
        },
        undefined,
      );
    },
    async invalidate(entities) {
      const indexes = [...entities].map(({ typename, id }) => indexKey(typename, id ?? undefined));
      if (indexes.length === 0) return;
      const done = await redis.attempt(
        'cache.invalidate',
        async (client) => {
          const ids = new Set((await Promise.all(indexes.map((index) => client.zrange(index, 0, -1)))).flat());
          await client.unlink(...indexes, ...[...ids].map(answerKey));
          return true;
        },
        false,
      );
      if (!done) purgeMissed = true;
    },
  };
}
