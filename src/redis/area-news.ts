/**
 * Upstream circuits and Retry-After holds shared by the replicas (`src/upstream/circuit.ts`):
 * when one replica opens an area's circuit, or the area answers it 429/503 with Retry-After, it
 * writes `upstream-hold:<service>:<hold>` (under REDIS_KEY_PREFIX; `<hold>` is `circuit`, `429`
 * or `503`) with the time as its expiry, and publishes the same news on `upstream-holds`. The
 * others hold the area back as long, without calling it. A replica that (re)connects reads the
 * keys still alive, which is what it missed.
 *
 * The news carries a duration, not a time of day, so that replicas whose clocks differ agree.
 * Redis is never in a call's way: publishing is not awaited, and without Redis each replica
 * keeps its own circuits (fail open).
 */
import { randomUUID } from 'node:crypto';
import type { AreaNews, AreaNewsChannel } from '../upstream/circuit.js';
import type { UpstreamService } from '../upstream/failure.js';
import { publishedObject, type SharedRedis } from './connection.js';

const CHANNEL = 'upstream-holds';
const SERVICES: readonly UpstreamService[] = ['petstore', 'plants'];
const HOLDS: readonly AreaNews['hold'][] = ['circuit', 429, 503];
/** Longer news is not believed: another deployment's bug, or a hostile writer, must not stop an area for good. */
const MAX_NEWS_MS = 3_600_000;

/** The news a message carries, if it is well formed (anything else is dropped). */
function readNews(text: string): (AreaNews & { from: string }) | undefined {
  const value = publishedObject(text);
  if (value === undefined) return undefined;
  const { service, hold, ms, from } = value;
  if (!SERVICES.includes(service as UpstreamService) || !HOLDS.includes(hold as AreaNews['hold'])) return undefined;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0 || typeof from !== 'string') return undefined;
  return { service: service as UpstreamService, hold: hold as AreaNews['hold'], ms: Math.min(ms, MAX_NEWS_MS), from };
}

/** The channel of one gateway process over its Redis connection. */
export function redisAreaNews(redis: SharedRedis): AreaNewsChannel {
  // A replica's own news comes back to it on the channel: it is recognised by this id and ignored.
  const self = randomUUID();
  const key = (service: UpstreamService, hold: AreaNews['hold']) =>
    `${redis.keyPrefix}upstream-hold:${service}:${String(hold)}`;
  const listeners: ((news: AreaNews) => void)[] = [];
  const tell = (news: AreaNews) => {
    for (const listener of listeners) listener(news);
  };

  /** The holds still alive in Redis: what a replica missed while it was not listening. */
  async function catchUp(): Promise<void> {
    const pairs = SERVICES.flatMap((service) => HOLDS.map((hold) => ({ service, hold })));
    const found = await redis.attempt(
      'upstream-hold.read',
      (client) =>
        Promise.all(
          pairs.map(({ service, hold }) =>
            Promise.all([client.get(key(service, hold)), client.pttl(key(service, hold))]),
          ),
        ),
      [],
    );
    found.forEach(([writer, ms], index) => {
      const pair = pairs[index];
      // Each key holds the id of the replica that wrote it; this replica's own holds it keeps already.
      if (pair !== undefined && writer !== null && writer !== self && ms > 0)
        tell({ ...pair, ms: Math.min(ms, MAX_NEWS_MS) });
    });
  }

  let subscribed = false;
  return {
    publish(news) {
      const message = JSON.stringify({ ...news, from: self });
      void redis.attempt(
        'upstream-hold.write',
        (client) =>
          client
            .multi()
            .set(key(news.service, news.hold), self, 'PX', Math.max(1, Math.round(news.ms)))
            .publish(`${redis.keyPrefix}${CHANNEL}`, message)
            .exec(),
        undefined,
      );
    },
    subscribe(listener) {
      listeners.push(listener);
      if (subscribed) return;
      subscribed = true;
      redis.subscribe(
        CHANNEL,
        (text) => {
          const news = readNews(text);
          if (news !== undefined && news.from !== self) tell({ service: news.service, hold: news.hold, ms: news.ms });
        },
        () => void catchUp(),
      );
    },
  };
}
