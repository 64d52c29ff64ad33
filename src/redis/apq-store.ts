/**
 * APQ documents in Redis, so that a hash registered through one replica runs on every other.
 * This process keeps the documents it has seen in memory too (the bounded store it would use
 * without Redis), so a hash it knows costs no Redis call and keeps working while Redis is away.
 * Documents expire from Redis as from memory, 24 hours after they were registered.
 */
import type { APQStore } from '@graphql-yoga/plugin-apq';
import type { SharedRedis } from './connection.js';

/** A SHA-256 in hex: the only hashes ever kept, so anything else is not looked up. */
const SHA256_HEX = /^[0-9a-f]{64}$/;

export function redisApqStore(redis: SharedRedis, local: APQStore, ttlMs: number): APQStore {
  const key = (hash: string) => `${redis.keyPrefix}apq:${hash}`;
  return {
    async get(hash) {
      const known = await local.get(hash);
      if (known != null || !SHA256_HEX.test(hash)) return known;
      const shared = await redis.attempt('apq.get', (client) => client.get(key(hash)), null);
      if (shared !== null) await local.set(hash, shared);
      return shared;
    },
    async set(hash, document) {
      await local.set(hash, document);
      await redis.attempt('apq.set', (client) => client.set(key(hash), document, 'PX', ttlMs), undefined);
    },
  };
}
