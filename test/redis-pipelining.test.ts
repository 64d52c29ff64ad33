/**
 * Commands sent in one tick share one write (ioredis's automatic pipelining), except a command a
 * library defines on the client (rate-limiter-flexible's counter, UNPIPELINED_COMMANDS): defined
 * in the same tick as a pipelined read, it was missing from that pipeline, and ioredis threw
 * outside any promise, which ended the gateway's process (met in the bench, with the response
 * cache and rate limits in Redis).
 */
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { afterEach, describe, expect, it } from 'vitest';
import { clientOptions, UNPIPELINED_COMMANDS } from '../src/redis/connection.js';
import { useRedis } from './helpers/redis.js';

const redis = useRedis();
const clients: Redis[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.quit()));
});

async function readyClient(): Promise<Redis> {
  const client = new Redis(redis.url, clientOptions({ url: redis.url, keyPrefix: 'test:', timeoutMs: 2000 }));
  clients.push(client);
  await new Promise<void>((resolve) => client.once('ready', () => resolve()));
  return client;
}

describe('automatic pipelining', () => {
  it('counts a rate limit whose command is defined in the tick of a pipelined read, and answers both', async () => {
    const client = await readyClient();
    await client.set('test:cached', 'an answer');

    // One tick: a read joins a new pipeline, then the limiter defines its command and counts.
    const read = client.get('test:cached');
    const limiter = new RateLimiterRedis({ storeClient: client, keyPrefix: 'test:limit', points: 5, duration: 60 });
    const counted = limiter.consume('caller');

    await expect(read).resolves.toBe('an answer');
    await expect(counted).resolves.toMatchObject({ consumedPoints: 1, remainingPoints: 4 });
    expect(await client.keys('test:limit*')).toEqual(['test:limit:caller']);
  });

  it('leaves every other command pipelined', () => {
    const options = clientOptions({ url: redis.url, keyPrefix: 'test:', timeoutMs: 2000 });
    expect(options.enableAutoPipelining).toBe(true);
    expect(options.autoPipeliningIgnoredCommands).toEqual([...UNPIPELINED_COMMANDS]);
  });
});
