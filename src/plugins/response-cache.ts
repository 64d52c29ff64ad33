/**
 * The optional response cache (yoga's plugin), off unless `RESPONSE_CACHE_TTL_MS` or
 * `RESPONSE_CACHE_TTL_PER_TYPE` is set (alone, the latter keeps only answers holding its types).
 *
 * An answer is kept per operation, variables and caller: the key holds a hash of the caller's
 * credentials (the only part of a request that changes what the upstream answers), so one
 * caller is never served what was fetched with another's credential. Answers with errors are
 * not kept. A mutation purges every kept answer that holds an entity of the type it changes
 * (a whole type, not one id: adding or changing a pet can move it in or out of a list that
 * never held it).
 */
import { createHash } from 'node:crypto';
import { createInMemoryCache, useResponseCache, type Cache } from '@graphql-yoga/plugin-response-cache';
import {
  getOperationAST,
  isInterfaceType,
  isObjectType,
  Kind,
  OperationTypeNode,
  type DocumentNode,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import { closestName, ConfigError } from '../config/index.js';
import type { Plugin } from 'graphql-yoga';
import type { HeaderSource } from '../credentials.js';
import { credentialFingerprint } from '../secrets.js';

/** What the cache is told by the configuration. */
export type ResponseCacheOptions = {
  /** lifetime of a kept answer, in milliseconds; 0: only answers holding a type of `ttlPerType` are kept */
  ttlMs: number;
  /** `Type=ms` or `Type.field=ms` entries: the lifetime of answers holding that type or field */
  ttlPerType?: readonly string[] | undefined;
  /** the store: Redis with REDIS_URL (src/redis/response-cache.ts). @default an in-memory LRU of 1000 answers */
  cache?: Cache | undefined;
};

/** The types whose cached answers each mutation makes stale. */
const CHANGED_TYPE: Readonly<Record<string, string>> = {
  addPet: 'Pet',
  updatePet: 'Pet',
  updatePetWithForm: 'Pet',
  deletePet: 'Pet',
  uploadPetImage: 'Pet',
  placeOrder: 'Order',
  deleteOrder: 'Order',
  createUser: 'User',
  createUsers: 'User',
  updateUser: 'User',
  deleteUser: 'User',
};

/**
 * The session part of the cache key: a hash of the caller's credentials, or null for a caller
 * without any (all such callers see the same upstream answers). Never the credential itself.
 */
export function credentialSession(request: { headers: HeaderSource }): string | null {
  return credentialFingerprint(request.headers) ?? null;
}

/** The root field names of a selection set, through inline fragments and fragment spreads. */
function rootFields(document: DocumentNode, selectionSet: SelectionSetNode, seen = new Set<string>()): string[] {
  return selectionSet.selections.flatMap((selection) => {
    if (selection.kind === Kind.FIELD) return [selection.name.value];
    if (selection.kind === Kind.INLINE_FRAGMENT) return rootFields(document, selection.selectionSet, seen);
    if (seen.has(selection.name.value)) return [];
    seen.add(selection.name.value);
    const fragment = document.definitions.find(
      (definition) => definition.kind === Kind.FRAGMENT_DEFINITION && definition.name.value === selection.name.value,
    );
    return fragment?.kind === Kind.FRAGMENT_DEFINITION ? rootFields(document, fragment.selectionSet, seen) : [];
  });
}

/** Purges, after each mutation, the kept answers holding a type it changes. */
function useMutationInvalidation(cache: Cache): Plugin {
  return {
    onExecute({ args }) {
      // yoga types a plugin's execution arguments loosely; they are graphql-js's.
      const document = args.document as DocumentNode;
      const operation = getOperationAST(document, args.operationName as string | undefined);
      if (operation?.operation !== OperationTypeNode.MUTATION) return undefined;
      const types = new Set(rootFields(document, operation.selectionSet).flatMap((name) => CHANGED_TYPE[name] ?? []));
      if (types.size === 0) return undefined;
      return {
        // Also after a failure: the change may have been made although its answer was lost.
        onExecuteDone: () => cache.invalidate([...types].map((typename) => ({ typename }))),
      };
    },
  };
}

/** JSON with every object's keys sorted: the same variables make the same key in any order. */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${sortedJson(item)}`).join(',')}}`;
}

/**
 * Whether the cache is on: RESPONSE_CACHE_TTL_MS, or lifetimes per type alone (then only answers
 * holding one of those types are kept).
 */
function responseCacheOn(options: Pick<ResponseCacheOptions, 'ttlMs' | 'ttlPerType'>): boolean {
  return options.ttlMs > 0 || (options.ttlPerType ?? []).some((entry) => !entry.endsWith('=0'));
}

/**
 * Refuses lifetimes per type that name no type or field of the schema.
 * @throws ConfigError naming the entry, and the name meant when it is misspelt
 */
export function checkTtlPerType(entries: readonly string[] | undefined, schema: GraphQLSchema): void {
  for (const entry of entries ?? []) {
    const [typeName = '', fieldName] = (entry.split('=')[0] ?? '').split('.');
    const type = schema.getType(typeName);
    const typeNames = Object.keys(schema.getTypeMap()).filter((name) => !name.startsWith('__'));
    if (type === undefined || type === null) {
      const meant = closestName(typeName, typeNames);
      throw new ConfigError(
        `RESPONSE_CACHE_TTL_PER_TYPE: the schema has no type ${typeName}` + (meant ? ` (did you mean ${meant}?)` : ''),
      );
    }
    if (fieldName === undefined) continue;
    const fields = isObjectType(type) || isInterfaceType(type) ? Object.keys(type.getFields()) : [];
    if (!fields.includes(fieldName)) {
      const meant = closestName(fieldName, fields);
      throw new ConfigError(
        `RESPONSE_CACHE_TTL_PER_TYPE: ${typeName} has no field ${fieldName}` +
          (meant ? ` (did you mean ${typeName}.${meant}?)` : ''),
      );
    }
  }
}

/** The response cache's plugins, or none when it is off. */
export function responseCachePlugins(options: ResponseCacheOptions): Plugin[] {
  if (!responseCacheOn(options)) return [];
  const cache = options.cache ?? createInMemoryCache();
  const ttlPerSchemaCoordinate = Object.fromEntries(
    (options.ttlPerType ?? []).map((entry) => {
      const [coordinate = '', ms = '0'] = entry.split('=');
      return [coordinate, Number(ms)];
    }),
  );
  // yoga's plugin: the lane calls its lookup (onParams) itself; on a miss, the envelop plugin it
  // adds keeps the answer, on both paths. A revalidation (If-None-Match) is yoga's to answer.
  const plugin = useResponseCache({
    cache,
    ttl: options.ttlMs,
    ttlPerSchemaCoordinate,
    session: (request) => credentialSession(request),
    // The plugin's own key hashes with WebCrypto, one asynchronous job per request (6% of a cached
    // answer's CPU); node:crypto hashes the same parts at once.
    buildResponseCacheKey: ({ documentString, operationName, variableValues, sessionId }) =>
      createHash('sha256')
        .update(`${documentString}|${operationName ?? ''}|${sortedJson(variableValues ?? {})}|${sessionId ?? ''}`)
        .digest('hex'),
    // The answer says nothing about the cache: whether it was a hit is not the caller's business.
    includeExtensionMetadata: false,
  });
  return [plugin, useMutationInvalidation(cache)];
}
