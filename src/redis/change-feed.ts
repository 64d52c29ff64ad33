/**
 * The change feed shared by the replicas (with REDIS_URL; src/upstream/changes.ts): what a write
 * through one replica changed upstream is told to this replica's listeners at once, and
 * published on `upstream-changes` (under REDIS_KEY_PREFIX) for the others, which tell theirs. A
 * message carries the id of the replica that sent it, which ignores it when it comes back.
 *
 * A write waits for the PUBLISH to be acknowledged, so that its answer leaves after every
 * replica's cache has been told, but never long: at most REDIS_TIMEOUT_MS, and not at all while
 * Redis is unreachable (the write goes on, this replica's listeners told, and a warning logged).
 * Changes published while a replica was not subscribed are lost to it; the upstream cache's
 * Redis store keeps its invalidation in Redis (src/redis/upstream-cache-store.ts), so its
 * entries do not depend on hearing every message.
 */
import { randomUUID } from 'node:crypto';
import { LocalChangeFeed, type ChangeFeed, type ChangeListener, type UpstreamChange } from '../upstream/changes.js';
import { publishedObject, type SharedRedis } from './connection.js';

const CHANNEL = 'upstream-changes';
/** More changes in one message are not believed: no write changes that much. */
const MAX_CHANGES = 1000;

/** One change, if well formed (anything else is dropped). */
function readChange(value: unknown): UpstreamChange | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { resource, id, username } = value as Record<string, unknown>;
  if ((resource === 'pet' || resource === 'order') && typeof id === 'string') return { resource, id };
  if (resource === 'inventory') return { resource };
  if (resource === 'user' && typeof username === 'string') return { resource, username };
  return undefined;
}

/** The changes a message carries and who sent it, if it is well formed. */
function readMessage(text: string): { from: string; changes: UpstreamChange[] } | undefined {
  const value = publishedObject(text);
  if (value === undefined) return undefined;
  const { from, changes } = value;
  if (typeof from !== 'string' || !Array.isArray(changes) || changes.length > MAX_CHANGES) return undefined;
  const read = changes.map(readChange);
  return read.every((change) => change !== undefined) ? { from, changes: read } : undefined;
}

/** A change feed over one gateway process's Redis connection. */
export class RedisChangeFeed implements ChangeFeed {
  readonly #self = randomUUID();
  readonly #channel: string;
  /** a warning is logged once per stretch of writes that could not be shared */
  #warned = false;

  /**
   * @param local this process's feed, whose listeners hear every change, made here or elsewhere
   * @param warn logs a warning line
   */
  constructor(
    private readonly redis: SharedRedis,
    private readonly local: LocalChangeFeed,
    private readonly warn: (message: string) => void,
  ) {
    this.#channel = `${redis.keyPrefix}${CHANNEL}`;
    redis.subscribe(
      CHANNEL,
      (text) => {
        const message = readMessage(text);
        if (message !== undefined && message.from !== this.#self) this.local.tell(message.changes);
      },
      () => undefined,
    );
  }

  async changed(changes: readonly UpstreamChange[]): Promise<void> {
    // This replica's listeners first: the upstream cache's Redis store sends its INCRs now, ahead of the PUBLISH.
    this.local.tell(changes);
    if (changes.length === 0) return;
    const message = JSON.stringify({ from: this.#self, changes });
    const sent = await this.redis.attempt(
      'changes.publish',
      (client) => client.publish(this.#channel, message),
      undefined,
    );
    if (sent !== undefined) {
      this.#warned = false;
      return;
    }
    if (this.#warned) return;
    this.#warned = true;
    this.warn(
      'upstream changes not shared with the other replicas (Redis unreachable): their caches may lag until it is back',
    );
  }

  listen(listener: ChangeListener): () => void {
    return this.local.listen(listener);
  }
}
