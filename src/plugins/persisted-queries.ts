/**
 * Automatic persisted queries (Apollo's APQ protocol), on by default. A client sends
 * `extensions.persistedQuery { version: 1, sha256Hash }` without the document; an unknown hash
 * is answered `PERSISTED_QUERY_NOT_FOUND`, and the client sends the document with its hash once,
 * which is checked and kept; from then on the hash alone runs it. Yoga's APQ plugin speaks the
 * protocol; this module chooses its store and what a gateway with APQ off answers.
 *
 * Trusted documents (TRUSTED_DOCUMENTS) replace APQ: then only the manifest's documents run,
 * and nothing a client sends is kept (src/security/trusted-documents.ts).
 */
import { createInMemoryAPQStore, useAPQ, type APQStore } from '@graphql-yoga/plugin-apq';
import type { Plugin } from 'graphql-yoga';
import { codedError } from '../errors.js';

/** How long a registered document is kept (a client whose hash is forgotten sends the document again). */
const DOCUMENT_TTL_MS = 24 * 60 * 60 * 1000;

/** What the configuration says of persisted queries. */
export type PersistedQueryOptions = {
  /** APQ on; off answers every request that names a hash with PERSISTED_QUERY_NOT_SUPPORTED */
  enabled: boolean;
  /** most documents kept by the in-memory store (the oldest go first) */
  maxDocuments: number;
  /** with REDIS_URL: a store in Redis in front of which this process's own store is put */
  shared?: ((local: APQStore, ttlMs: number) => APQStore) | undefined;
};

/** With APQ off: a hash is refused the way Apollo's clients understand (they then send documents). */
function useNoPersistedQueries(): Plugin {
  return {
    onParams({ params }) {
      if (params.extensions?.['persistedQuery'] === undefined) return;
      throw codedError('PERSISTED_QUERY_NOT_SUPPORTED', 'PersistedQueryNotSupported', { status: 400 });
    },
  };
}

/** The persisted-query plugin for the configuration. */
export function usePersistedQueries(options: PersistedQueryOptions): Plugin {
  if (!options.enabled) return useNoPersistedQueries();
  const local = createInMemoryAPQStore({ max: options.maxDocuments, ttl: DOCUMENT_TTL_MS });
  return useAPQ({ store: options.shared ? options.shared(local, DOCUMENT_TTL_MS) : local });
}
