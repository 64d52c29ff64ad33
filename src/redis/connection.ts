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
import type { Redis, RedisOptions as RedisClientOptions } from 'ioredis';
import { redactUrl } from '../config/index.js';

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
  /**
   * Listens to a pub/sub `channel` (under REDIS_KEY_PREFIX) on a second connection of its own (a
   * subscribed connection can send nothing else), which reconnects as the first does. `ready`
   * is called each time the subscription is (again) in place: what was published while it was
   * not is lost, so the listener reads what it needs then.
   */
  subscribe(channel: string, listener: (message: string) => void, ready: () => void): void;
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
  return new RedisConnection(options, observer);
}

/**
 * The Lua commands a library defines on the client (rate-limiter-flexible's counter), which must
 * not join an automatic pipeline: ioredis gives a pipeline the commands the client had when the
 * pipeline was made, so one defined in the same tick as a command already pipelined (a cache read
 * of another request) is missing from it, and ioredis then throws outside any promise and ends the
 * process (ioredis issue 1931, "AutoPipelining: results[i] is not iterable", met in the bench).
 */
export const UNPIPELINED_COMMANDS = ['rlflxIncr'] as const;

/** The client's options: the connection's rules above, in ioredis's terms. */
export function clientOptions(options: RedisOptions): RedisClientOptions {
  return {
    // A command answers within the timeout or fails; none waits for a connection to come back.
    commandTimeout: options.timeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // Commands of concurrent requests issued in the same tick go out in one write.
    enableAutoPipelining: true,
    autoPipeliningIgnoredCommands: [...UNPIPELINED_COMMANDS],
    connectTimeout: Math.max(1000, options.timeoutMs),
    retryStrategy: (attempt) => Math.min(100 * 2 ** Math.min(attempt, 5), 2000),
  };
}

/** The connection: its client (once ioredis has loaded), where it stands, and who waits for it. */
class RedisConnection implements SharedRedis {
  readonly keyPrefix: string;
  readonly shownUrl: string;
  #client: Redis | undefined;
  readonly #subscribers: Redis[] = [];
  #status: RedisStatus = 'connecting';
  #closing = false;
  readonly #settledWaiters = new Set<() => void>();
  readonly #reconnectListeners: (() => void)[] = [];
  readonly #loaded: Promise<void>;

  constructor(
    private readonly options: RedisOptions,
    private readonly observer: RedisObserver,
  ) {
    this.keyPrefix = options.keyPrefix;
    this.shownUrl = redactUrl(options.url);
    this.#loaded = import('ioredis').then((ioredis) => {
      if (this.#closing) return;
      // ioredis is CommonJS: bundled, its class is the module's default export.
      const Redis = ioredis.Redis ?? ioredis.default;
      this.#client = new Redis(options.url, clientOptions(options));
      this.#client.on('ready', () => this.#ready());
      // Without a listener an 'error' event would end the process; the reconnect loop handles it.
      this.#client.on('error', (error: Error) => this.#lost(reasonOf(error)));
      this.#client.on('close', () => this.#lost('connection closed'));
    });
  }

  status(): RedisStatus {
    return this.#status;
  }

  #settle(): void {
    for (const waiter of this.#settledWaiters) waiter();
    this.#settledWaiters.clear();
  }

  #ready(): void {
    const back = this.#status === 'unreachable';
    this.#status = 'ready';
    this.#settle();
    if (!back) return;
    this.observer.outage(false, 'connected');
    for (const listener of this.#reconnectListeners) listener();
  }

  #lost(reason: string): void {
    if (this.#closing || this.#status === 'unreachable') return;
    this.#status = 'unreachable';
    this.observer.outage(true, reason);
    this.#settle();
  }

  // An arrow: the stores hand it around.
  readonly attempt = async <T>(operation: string, command: (client: Redis) => Promise<T>, fallback: T): Promise<T> => {
    const client = this.#client;
    if (this.#status !== 'ready' || client === undefined) {
      this.observer.error(operation);
      return fallback;
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      // commandTimeout bounds each command; this bounds a pipeline or script as a whole too.
      return await Promise.race([
        command(client),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('timed out')), this.options.timeoutMs);
        }),
      ]);
    } catch {
      this.observer.error(operation);
      return fallback;
    } finally {
      clearTimeout(timer);
    }
  };

  onReconnect(listener: () => void): void {
    this.#reconnectListeners.push(listener);
  }

  subscribe(channel: string, listener: (message: string) => void, ready: () => void): void {
    const name = `${this.keyPrefix}${channel}`;
    void this.#loaded.then(() => {
      const client = this.#client;
      if (this.#closing || client === undefined) return;
      const subscriber = client.duplicate();
      this.#subscribers.push(subscriber);
      // Its failures are the first connection's too, and logged there; here they only must not end the process.
      subscriber.on('error', () => undefined);
      subscriber.on('message', (from: string, message: string) => {
        if (from === name) listener(message);
      });
      subscriber.on('ready', () => {
        subscriber.subscribe(name).then(ready, () => this.observer.error('subscribe'));
      });
    });
  }

  settled(ms: number): Promise<RedisStatus> {
    if (this.#status !== 'connecting') return Promise.resolve(this.#status);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#settledWaiters.delete(done);
        resolve(this.#status);
      };
      const timer = setTimeout(done, ms);
      this.#settledWaiters.add(done);
    });
  }

  async ping(): Promise<{ ready: true; latencyMs: number } | { ready: false; reason: string }> {
    if (this.#status !== 'ready') return { ready: false, reason: 'unreachable' };
    const started = performance.now();
    const answer = await this.attempt('ping', (redis) => redis.ping(), undefined);
    return answer === 'PONG'
      ? { ready: true, latencyMs: Math.round(performance.now() - started) }
      : { ready: false, reason: `no answer within ${this.options.timeoutMs} ms` };
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.#settle();
    await this.#loaded;
    for (const subscriber of this.#subscribers) subscriber.disconnect();
    try {
      await this.#client?.quit();
    } catch {
      this.#client?.disconnect();
    }
  }
}

/** A connection failure's name (ECONNREFUSED, ETIMEDOUT, NOAUTH …), never the address or password. */
function reasonOf(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code) return code;
  const word = /^[A-Z]+\b/.exec(error.message);
  return word ? word[0] : 'connection error';
}

/**
 * The fields of a JSON object another replica published, or undefined when the text is not one
 * (a message from another deployment, or a hostile writer, is dropped, never thrown on).
 */
export function publishedObject(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
