/**
 * The optional response cache (yoga's plugin), off unless `RESPONSE_CACHE_TTL_MS` or
 * `RESPONSE_CACHE_TTL_PER_TYPE` is set (alone, the latter keeps only answers holding its types).
 *
 * An answer is kept per operation, variables and caller: the key holds a hash of the caller's
 * credentials (the only part of a request that changes what the upstream answers), so one
 * caller is never served what was fetched with another's credential. Answers with errors are
 * not kept. A mutation purges every kept answer that holds a type its operation's row says it
 * changes (`placeOrder`: `Order` and `Inventory`; src/upstream/operations.ts, the one home of
 * that fact): a whole type, not one id, since adding or changing a pet can move it in or out of
 * a list that never held it.
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
import { typesChangedBy, typesReadBy } from '../upstream/operations.js';
import { STREAMED } from '../live/plugin.js';

/** What the cache is told by the configuration. */
export type ResponseCacheOptions = {
  /** lifetime of a kept answer, in milliseconds; 0: only answers holding a type of `ttlPerType` are kept */
  ttlMs: number;
  /** `Type=ms` or `Type.field=ms` entries: the lifetime of answers holding that type or field */
  ttlPerType?: readonly string[] | undefined;
  /** the store: Redis with REDIS_URL (src/redis/response-cache.ts). @default an in-memory LRU of 1000 answers */
  cache?: Cache | undefined;
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

/**
 * The types each kept answer is filed under, beyond the entities with an id that yoga's plugin
 * files it under itself: the types its root fields' operations answer with (`Query.inventory`:
 * `Inventory`, which has no id, so the plugin would not file it). Told by the request, taken by
 * the cache when it keeps the answer.
 */
class ReadTypes {
  /** the cache key of each request under way, as `buildResponseCacheKey` made it */
  readonly keyOf = new WeakMap<object, string>();
  /** cache key → the types its answer holds, until the answer is kept (or not: the oldest are dropped) */
  private readonly pending = new Map<string, readonly string[]>();

  tell(key: string, types: readonly string[]): void {
    if (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value ?? '');
    this.pending.set(key, types);
  }

  take(key: string): readonly string[] {
    const types = this.pending.get(key) ?? [];
    this.pending.delete(key);
    return types;
  }
}
/** Answers told of and not yet kept, at most: answers with errors are never kept. */
const MAX_PENDING = 1000;

/** `cache`, with each answer it keeps also filed under the types {@link ReadTypes} says it holds. */
function filedByReadTypes(cache: Cache, readTypes: ReadTypes): Cache {
  return {
    get: (key) => cache.get(key),
    invalidate: (entities) => cache.invalidate(entities),
    set(key, result, entities, ttl) {
      const types = readTypes.take(key).map((typename) => ({ typename }));
      return cache.set(key, result, types.length === 0 ? entities : [...entities, ...types], ttl);
    },
  };
}

/**
 * Files each query's answer under the types its root fields read, purges after each mutation the
 * kept answers holding a type it changes, and takes out of every answer the plugin's own fields
 * that it leaves behind (`__responseCacheId: null` for an entity whose id is null).
 */
function useInvalidation(cache: Cache, readTypes: ReadTypes): Plugin {
  return {
    onExecute({ args }) {
      // yoga types a plugin's execution arguments loosely; they are graphql-js's.
      const document = args.document as DocumentNode;
      const operation = getOperationAST(document, args.operationName as string | undefined);
      if (operation === null || operation === undefined) return undefined;
      const fields = rootFields(document, operation.selectionSet);
      if (operation.operation === OperationTypeNode.QUERY) {
        const key = readTypes.keyOf.get(args.contextValue);
        const types = [...new Set(fields.flatMap((name) => typesReadBy(`Query.${name}`)))];
        if (key !== undefined && types.length > 0) readTypes.tell(key, types);
        return { onExecuteDone: ({ result }) => withoutCacheFields(result) };
      }
      const types = new Set(fields.flatMap((name) => typesChangedBy(`Mutation.${name}`)));
      return {
        onExecuteDone: ({ result }) => {
          withoutCacheFields(result);
          // Also after a failure: the change may have been made although its answer was lost.
          if (types.size > 0) return cache.invalidate([...types].map((typename) => ({ typename })));
        },
      };
    },
  };
}

/** The fields yoga's plugin adds to the selection, left behind in `result` (its own removal skips a null id). */
function withoutCacheFields(result: unknown): void {
  if (typeof result !== 'object' || result === null || !('data' in result)) return;
  const pending: unknown[] = [result.data];
  for (let index = 0; index < pending.length; index += 1) {
    const value = pending[index];
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      pending.push(...(value as unknown[]));
      continue;
    }
    const record = value as Record<string, unknown>;
    if ('__responseCacheId' in record) delete record['__responseCacheId'];
    if ('__responseCacheTypeName' in record) delete record['__responseCacheTypeName'];
    for (const key in record) pending.push(record[key]);
  }
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
  const readTypes = new ReadTypes();
  const cache = filedByReadTypes(options.cache ?? createInMemoryCache(), readTypes);
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
    buildResponseCacheKey: ({ documentString, operationName, variableValues, sessionId, context }) => {
      const key = createHash('sha256')
        .update(`${documentString}|${operationName ?? ''}|${sortedJson(variableValues ?? {})}|${sessionId ?? ''}`)
        .digest('hex');
      if (typeof context === 'object' && context !== null) readTypes.keyOf.set(context, key);
      return key;
    },
    // The answer says nothing about the cache: whether it was a hit is not the caller's business.
    includeExtensionMetadata: false,
    // An operation over the WebSocket runs no yoga request hook, which makes the key: it is not cached.
    enabled: (_request, context) => !(STREAMED in context),
  });
  return [plugin, useInvalidation(cache, readTypes)];
}
