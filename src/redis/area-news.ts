/**
 * Upstream circuits and 429 holds shared by the replicas (`src/upstream/circuit.ts`):
 * - when one replica opens an area's circuit, it writes `upstream-hold:<service>:circuit` (under
 *   REDIS_KEY_PREFIX) with the cool-down as its expiry, and publishes the news on
 *   `upstream-holds`; the others hold the area back as long, without calling it. A replica that
 *   (re)connects reads the keys still alive, which is what it missed.
 * - when the area answers a caller 429 with Retry-After, the news (with the caller's credential
 *   fingerprint, never the credential) is published only: the others hold that caller back as
 *   long. A replica that was not listening calls once more for it, and is told 429 itself.
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
/** A caller as the news names it: a credential fingerprint (SHA-256, base64url) or `anonymous`. */
const CALLER = /^[A-Za-z0-9_-]{1,64}$/;
/** Longer news is not believed: another deployment's bug, or a hostile writer, must not stop an area for good. */
const MAX_NEWS_MS = 3_600_000;

/** The news a message carries, if it is well formed (anything else is dropped). */
function readNews(text: string): { news: AreaNews; from: string } | undefined {
  const value = publishedObject(text);
  if (value === undefined) return undefined;
  const { service, hold, ms, from, caller } = value;
  if (!SERVICES.includes(service as UpstreamService)) return undefined;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0 || typeof from !== 'string') return undefined;
  const common = { service: service as UpstreamService, ms: Math.min(ms, MAX_NEWS_MS) };
  if (hold === 'circuit') return { news: { ...common, hold }, from };
  if (hold === 429 && typeof caller === 'string' && CALLER.test(caller))
    return { news: { ...common, hold, caller }, from };
  return undefined;
}

/** The channel of one gateway process over its Redis connection. */
export function redisAreaNews(redis: SharedRedis): AreaNewsChannel {
  // A replica's own news comes back to it on the channel: it is recognised by this id and ignored.
  const self = randomUUID();
  const key = (service: UpstreamService) => `${redis.keyPrefix}upstream-hold:${service}:circuit`;
  const listeners: ((news: AreaNews) => void)[] = [];
  const tell = (news: AreaNews) => {
    for (const listener of listeners) listener(news);
  };

  /** The circuits still held open in Redis: what a replica missed while it was not listening. */
  async function catchUp(): Promise<void> {
    const found = await redis.attempt(
      'upstream-hold.read',
      (client) =>
        Promise.all(SERVICES.map((service) => Promise.all([client.get(key(service)), client.pttl(key(service))]))),
      [],
    );
    found.forEach(([writer, ms], index) => {
      const service = SERVICES[index];
      // Each key holds the id of the replica that wrote it; this replica's own holds it keeps already.
      if (service !== undefined && writer !== null && writer !== self && ms > 0)
        tell({ service, hold: 'circuit', ms: Math.min(ms, MAX_NEWS_MS) });
    });
  }

  let subscribed = false;
  return {
    publish(news) {
      const message = JSON.stringify({ ...news, from: self });
      const channel = `${redis.keyPrefix}${CHANNEL}`;
      void redis.attempt(
        'upstream-hold.write',
        (client) =>
          news.hold === 'circuit'
            ? client
                .multi()
                .set(key(news.service), self, 'PX', Math.max(1, Math.round(news.ms)))
                .publish(channel, message)
                .exec()
            : client.publish(channel, message).then(() => null),
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
          const read = readNews(text);
          if (read !== undefined && read.from !== self) tell(read.news);
        },
        () => void catchUp(),
      );
    },
  };
}
