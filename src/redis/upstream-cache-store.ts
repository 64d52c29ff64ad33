/**
 * The upstream cache's store in Redis (with REDIS_URL; src/upstream/cache-store.ts): an answer
 * kept through one replica is served by every other, and a change through any of them makes the
 * answers it touched unreachable for all of them at once.
 *
 * Keys, under REDIS_KEY_PREFIX: `upstream-cache:answer:<sha256>` holds one answer (its policy
 * and text, as JSON) with its keeping time as its expiry; the hash is of the entry's key (area,
 * path and query, the credential fingerprint when it is not public, the generations), so no key
 * shows a path or a fingerprint. `upstream-cache:gen:<tag>` is the generation of one resource
 * (`pet:1`, `pet-lists`, …), INCR'd by a change; `upstream-cache:gen:*` is folded into every
 * key, and bumped by the first read that reaches Redis after a bump could not be made, so that no answer made
 * stale meanwhile is served. Generation keys do not expire: one per resource ever written, a few
 * bytes each.
 *
 * Every command goes through the connection's `attempt`: with Redis away the cache is bypassed
 * (every GET is sent, nothing kept). The store is shared: `private` answers never reach it.
 */
import { createHash } from 'node:crypto';
import type { StoredAnswer, UpstreamCacheStore } from '../upstream/cache-store.js';
import type { SharedRedis } from './connection.js';

/** What a stored value must look like to be served (another deployment's, or a damaged one, is not). */
function readAnswer(text: string | null): StoredAnswer | undefined {
  if (text === null) return undefined;
  try {
    const value = JSON.parse(text) as Partial<StoredAnswer> | null;
    if (typeof value?.text !== 'string' || typeof value.policy !== 'object' || value.policy?.v !== 1) return undefined;
    return value as StoredAnswer;
  } catch {
    return undefined;
  }
}

/** The store over one gateway process's Redis connection. */
export function redisUpstreamCacheStore(redis: SharedRedis): UpstreamCacheStore {
  const generation = (tag: string) => `${redis.keyPrefix}upstream-cache:gen:${tag}`;
  const answer = (key: string) =>
    `${redis.keyPrefix}upstream-cache:answer:${createHash('sha256').update(key).digest('base64url')}`;
  const EPOCH = '*';
  // A bump that could not be made (Redis away, or too slow) is made up for by the next read
  // that reaches Redis, before it reads: the epoch every key carries moves on, and everything
  // kept before is unreachable. Until then, reads find nothing (the cache is bypassed).
  let bumpMissed = false;

  return {
    shared: true,
    async generations(tags) {
      const found = await redis.attempt(
        'upstream-cache.get',
        async (client) => {
          if (bumpMissed) {
            await client.incr(generation(EPOCH));
            bumpMissed = false;
          }
          return client.mget(generation(EPOCH), ...tags.map(generation));
        },
        undefined,
      );
      return found?.map((value) => Number(value ?? 0));
    },
    async bump(tags) {
      if (tags.length === 0) return;
      // Sent at once (before the change feed's PUBLISH on the same connection, which follows it).
      const done = await redis.attempt(
        'upstream-cache.bump',
        (client) => Promise.all(tags.map((tag) => client.incr(generation(tag)))),
        undefined,
      );
      if (done === undefined) bumpMissed = true;
    },
    async get(keys) {
      const found = await redis.attempt('upstream-cache.get', (client) => client.mget(...keys.map(answer)), []);
      for (const text of found) {
        const stored = readAnswer(text);
        if (stored !== undefined) return stored;
      }
      return undefined;
    },
    async set(key, stored, keepMs) {
      await redis.attempt(
        'upstream-cache.set',
        (client) => client.set(answer(key), JSON.stringify(stored), 'PX', Math.max(1, Math.round(keepMs))),
        undefined,
      );
    },
  };
}
