/**
 * The Redis connection of one gateway process (REDIS_URL), which its shared stores use: rate
 * limits (`rate-limit-store.ts`), the response cache (`response-cache.ts`) and APQ documents
 * (`apq-store.ts`). Redis is never in a request's way:
 *
 * - no command waits longer than REDIS_TIMEOUT_MS;
 * - while the connection is down nothing is queued: commands fail at once;
 * - a failed command gives its store's fallback (a cache miss, a request let through) and is
 *   counted in `redis_errors_total`; it is never thrown at a request;
 * - the client reconnects by itself, backing off up to 2 s between attempts; an outage is logged
 *   once when it starts and once when it ends, not per request.
 *
 * The Redis client is loaded when REDIS_URL is set, not with the gateway: a process without
 * Redis never reads it.
 */
import type { Redis } from 'ioredis';
import { redactUrl } from '../config.js';

/** Where the connection stands. */
export type RedisStatus = 'connecting' | 'ready' | 'unreachable';

/** What the gateway learns from the connection: errors to count, outages to log. */
export type RedisObserver = {
  /** a command failed or could not be sent (`operation`: which store's, e.g. `cache.get`) */
  error(operation: string): void;
  /** the connection was lost (`lost`, once per outage, with why) or is back */
  outage(lost: boolean, reason: string): void;
};

/** The settings the connection reads. */
export type RedisOptions = {
  url: string;
  /** REDIS_KEY_PREFIX: every store's keys start with it */
  keyPrefix: string;
  /** REDIS_TIMEOUT_MS */
  timeoutMs: number;
};

/** A gateway process's connection to Redis. */
export type SharedRedis = {
  /** REDIS_KEY_PREFIX, for the stores' keys */
  readonly keyPrefix: string;
  status(): RedisStatus;
  /**
   * Runs one store command: its result, or `fallback` when Redis is not ready, the command fails
   * or it takes longer than REDIS_TIMEOUT_MS (then counted as an error of `operation`).
   */
  attempt<T>(operation: string, command: (client: Redis) => Promise<T>, fallback: T): Promise<T>;
  /** calls `listener` each time the connection is back after an outage */
  onReconnect(listener: () => void): void;
  /** waits until the first connection attempt has ended (or `ms` have passed): for the start-up lines */
  settled(ms: number): Promise<RedisStatus>;
  /** for /readiness: a PING within REDIS_TIMEOUT_MS */
  ping(): Promise<{ ready: true; latencyMs: number } | { ready: false; reason: string }>;
  /** the URL without its password, for the start-up lines */
  readonly shownUrl: string;
  close(): Promise<void>;
};

/** Connects (in the background: this returns at once) and keeps reconnecting. */
export function connectRedis(options: RedisOptions, observer: RedisObserver): SharedRedis {
  let client: Redis | undefined;
  let status: RedisStatus = 'connecting';
  let closing = false;
  const settledWaiters = new Set<() => void>();
  const reconnectListeners: (() => void)[] = [];
  const settle = () => {
    for (const waiter of settledWaiters) waiter();
    settledWaiters.clear();
  };
  const lost = (reason: string) => {
    if (closing || status === 'unreachable') return;
    status = 'unreachable';
    observer.outage(true, reason);
    settle();
  };

  const loaded = import('ioredis').then((ioredis) => {
    if (closing) return;
    // ioredis is CommonJS: bundled, its class is the module's default export.
    const Redis = ioredis.Redis ?? ioredis.default;
    client = new Redis(options.url, {
      // A command answers within the timeout or fails; none waits for a connection to come back.
      commandTimeout: options.timeoutMs,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      // Commands of concurrent requests issued in the same tick go out in one write.
      enableAutoPipelining: true,
      connectTimeout: Math.max(1000, options.timeoutMs),
      retryStrategy: (attempt) => Math.min(100 * 2 ** Math.min(attempt, 5), 2000),
    });
    client.on('ready', () => {
      const back = status === 'unreachable';
      status = 'ready';
      settle();
      if (!back) return;
      observer.outage(false, 'connected');
      for (const listener of reconnectListeners) listener();
    });
    // Without a listener an 'error' event would end the process; the reconnect loop handles it.
    client.on('error', (error: Error) => lost(reasonOf(error)));
    client.on('close', () => lost('connection closed'));
  });

  async function attempt<T>(operation: string, command: (client: Redis) => Promise<T>, fallback: T): Promise<T> {
    if (status !== 'ready' || client === undefined) {
      observer.error(operation);
      return fallback;
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      // commandTimeout bounds each command; this bounds a pipeline or script as a whole too.
      return await Promise.race([
        command(client),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('timed out')), options.timeoutMs);
        }),
      ]);
    } catch {
      observer.error(operation);
      return fallback;
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    keyPrefix: options.keyPrefix,
    shownUrl: redactUrl(options.url),
    status: () => status,
    attempt,
    onReconnect: (listener) => void reconnectListeners.push(listener),
    settled: (ms) =>
      status !== 'connecting'
        ? Promise.resolve(status)
        : new Promise((resolve) => {
            const timer = setTimeout(done, ms);
            function done() {
              clearTimeout(timer);
              settledWaiters.delete(done);
              resolve(status);
            }
            settledWaiters.add(done);
          }),
    async ping() {
      if (status !== 'ready') return { ready: false, reason: 'unreachable' };
      const started = performance.now();
      const answer = await attempt('ping', (redis) => redis.ping(), undefined);
      return answer === 'PONG'
        ? { ready: true, latencyMs: Math.round(performance.now() - started) }
        : { ready: false, reason: `no answer within ${options.timeoutMs} ms` };
    },
    async close() {
      closing = true;
      settle();
      await loaded;
      try {
        await client?.quit();
      } catch {
        client?.disconnect();
      }
    },
  };
}

/** A connection failure's name (ECONNREFUSED, ETIMEDOUT, NOAUTH …), never the address or password. */
function reasonOf(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code) return code;
  const word = /^[A-Z]+\b/.exec(error.message);
  return word ? word[0] : 'connection error';
}
