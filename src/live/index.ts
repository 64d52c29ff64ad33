/**
 * Live queries (LIVE_QUERIES): `query @live { … }` over server-sent events, multipart or the
 * graphql-ws WebSocket keeps its client up to date. See docs/live-queries.md.
 *
 * - Writes through any replica invalidate at once: the gateway's change feed (src/upstream/
 *   changes.ts, shared across replicas when it is) is mapped to the store's identifiers.
 * - Changes made behind the gateway's back are found by polling what live queries read (poller.ts).
 * - LIVE_QUERIES_MAX and LIVE_QUERIES_PER_CLIENT_MAX bound how many are open (plugin.ts).
 */
import type { Server } from 'node:http';
import { GraphQLLiveDirective } from '@envelop/live-query';
import { InMemoryLiveQueryStore } from '@n1ru4l/in-memory-live-query-store';
import type { Plugin } from '@envelop/core';
import { GraphQLSchema } from 'graphql';
import type { LiveEvent } from '../observability/metrics.js';
import type { ChangeFeed } from '../upstream/changes.js';
import { identifiersOfChange, INDEXED_ROOT_FIELDS } from './identifiers.js';
import { useLiveQueries, type LivePluginOptions } from './plugin.js';
import { LivePoller, type LivePollerOptions } from './poller.js';
import { serveWebSocket, type WebSocketOptions, type WebSocketTransport } from './websocket.js';

export { LivePoller } from './poller.js';

/** The schema with the `@live` directive, so that documents using it validate. */
export function withLiveDirective(schema: GraphQLSchema): GraphQLSchema {
  const config = schema.toConfig();
  return new GraphQLSchema({ ...config, directives: [...config.directives, GraphQLLiveDirective] });
}

/** What live queries are built with. */
export type LiveQueriesOptions = Pick<LivePluginOptions, 'maxTotal' | 'maxPerClient' | 'trustProxyHops' | 'renew'> & {
  /** the change feed writes through any replica tell */
  changes: ChangeFeed;
  /** LIVE_POLL_INTERVAL_MS, LIVE_POLL_MAX_PER_SECOND, and each area's URL and longest wait for a poll */
  poll: Pick<LivePollerOptions, 'intervalMs' | 'maxPerSecond' | 'baseUrls' | 'timeoutMs' | 'held'>;
  /** /metrics, when METRICS is on */
  observe?: (event: LiveEvent) => void;
};

/** Live queries of one gateway: its plugin, its poller, its WebSocket transport once served. */
export class LiveQueries {
  readonly plugin: Plugin;
  readonly poller: LivePoller;
  readonly #store: InMemoryLiveQueryStore;
  readonly #open: ReturnType<typeof useLiveQueries>['open'];
  readonly #stopListening: () => void;
  readonly #transports = new Set<WebSocketTransport>();

  constructor(options: LiveQueriesOptions) {
    const { observe } = options;
    // No identifiers in results (the store adds them in development), one index: users by username.
    this.#store = new InMemoryLiveQueryStore({
      includeIdentifierExtension: false,
      indexBy: INDEXED_ROOT_FIELDS.map(({ field, args }) => ({ field, args: [...args] })),
    });
    this.poller = new LivePoller({
      ...options.poll,
      onChanged: (identifiers) => this.#invalidate(identifiers, 'poll'),
      onPoll: (service, outcome) => observe?.({ kind: 'poll', service, outcome }),
    });
    const { plugin, open } = useLiveQueries({
      ...options,
      store: this.#store,
      poller: this.poller,
      directive: GraphQLLiveDirective,
      onOpen: (count) => observe?.({ kind: 'open', open: count }),
      onRefused: (limit) => observe?.({ kind: 'refusal', limit }),
    });
    this.plugin = plugin;
    this.#open = open;
    this.#observe = observe;
    this.#stopListening = options.changes.listen((changes) =>
      this.#invalidate(
        changes.flatMap((change) => identifiersOfChange(change)),
        'change',
      ),
    );
  }

  readonly #observe: LiveQueriesOptions['observe'];

  /** How many live queries are open. */
  get open(): number {
    return this.#open.size;
  }

  /** Serves the WebSocket transport on `server` (until {@link stop}). */
  attach(server: Server, options: WebSocketOptions): void {
    this.#transports.add(serveWebSocket(server, options));
  }

  /**
   * A stop has begun: every live query ends (its server-sent event stream completes) and every
   * WebSocket is closed (1001), so that none holds the stop until its grace period is over.
   */
  async stop(): Promise<void> {
    this.#open.endAll();
    const transports = [...this.#transports];
    this.#transports.clear();
    await Promise.all(transports.map((transport) => transport.close()));
  }

  /** Ends everything, polling included. */
  async close(): Promise<void> {
    this.#stopListening();
    await this.stop();
    await this.poller.close();
  }

  #invalidate(identifiers: readonly string[], source: 'change' | 'poll'): void {
    this.#observe?.({ kind: 'invalidation', source });
    void this.#store.invalidate([...identifiers]);
  }
}
