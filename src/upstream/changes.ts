/**
 * What a write through the gateway changed upstream, told to everything that keeps or watches
 * upstream data (the upstream cache, live queries) before the write's answer is sent: in this
 * process, and, when a shared feed is given (REDIS_URL, src/redis/), in every replica.
 *
 * The pet store's write operations (src/upstream/petstore.ts) say what they changed, as REST
 * resources, once the upstream has accepted the write, as their rows in `operations.ts` say
 * (`changesOf`); a failed write changes nothing.
 */

/** A REST resource of the pet store a write changed. */
export type UpstreamChange =
  /** `GET /pet/{petId}`, and the lists the pet may be in (`findByStatus`, `findByTags`) */
  | { resource: 'pet'; id: string }
  /** `GET /store/order/{orderId}` */
  | { resource: 'order'; id: string }
  /** `GET /store/inventory`: pets counted by status, which pet and order writes change */
  | { resource: 'inventory' }
  /** `GET /user/{username}` */
  | { resource: 'user'; username: string };

/** Hears the changes made through the gateway. */
export type ChangeListener = (changes: readonly UpstreamChange[]) => void;

/** Where writes tell what they changed, and where caches and live queries hear it. */
export interface ChangeFeed {
  /**
   * Tells every listener of this process at once and, when the feed is shared, every replica;
   * resolves once the change is on its way to them (a shared feed's message is sent).
   */
  changed(changes: readonly UpstreamChange[]): Promise<void>;
  /** `listener` hears every change made through this process (and, when shared, through any replica); the returned function stops it. */
  listen(listener: ChangeListener): () => void;
}

/**
 * The feed of one process: listeners are told synchronously, in the order they started
 * listening. A listener that throws does not keep the others from hearing the change.
 */
export class LocalChangeFeed implements ChangeFeed {
  readonly #listeners = new Set<ChangeListener>();

  constructor(private readonly onListenerError: (error: unknown) => void = () => undefined) {}

  changed(changes: readonly UpstreamChange[]): Promise<void> {
    this.tell(changes);
    return Promise.resolve();
  }

  /** Tells this process's listeners (a shared feed calls it for the changes other replicas made). */
  tell(changes: readonly UpstreamChange[]): void {
    if (changes.length === 0) return;
    for (const listener of this.#listeners) {
      try {
        listener(changes);
      } catch (error) {
        this.onListenerError(error);
      }
    }
  }

  listen(listener: ChangeListener): () => void {
    // A listener added twice hears each change twice: each call gets its own entry.
    const entry: ChangeListener = (changes) => listener(changes);
    this.#listeners.add(entry);
    return () => void this.#listeners.delete(entry);
  }
}
