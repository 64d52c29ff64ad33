/**
 * Says in an answer when the upstream cache (UPSTREAM_CACHE, src/upstream/cache.ts) served part
 * of it stale: `extensions.upstreamCache` lists each such call, its REST operation, its path's
 * template, how it was served (`stale-while-revalidate`: the upstream allowed a stale answer
 * while it is refreshed; `stale-if-error`: the upstream failed, and allowed the last good answer
 * then) and the answer's age. A caller can tell the data may be behind; an answer made only of
 * fresh data carries nothing.
 *
 * The calls are the ones the request log already records (src/observability/), as explain reads
 * them (src/plugins/explain.ts): one `onResultProcess` hook, which the HTTP front calls itself
 * (its table: src/http/plugin-table.ts), so both of the gateway's HTTP paths add the same extension.
 */
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import {
  withCallsOf,
  type RequestRecord,
  type RequestScopes,
  type UpstreamCallRecord,
} from '../observability/request-context.js';

/** One stale answer as `extensions.upstreamCache` shows it. */
type StaleNotice = {
  /** the REST operation (its operationId) */
  operation: string;
  /** the path's template below the area's base URL, e.g. `/pet/{petId}`: no value of the caller's */
  path: string;
  served: 'stale-while-revalidate' | 'stale-if-error';
  /** the answer's age when served, in whole seconds */
  ageSeconds: number;
};

/** The stale answers among `calls`. */
function notices(calls: readonly UpstreamCallRecord[]): StaleNotice[] {
  return calls.flatMap((call) =>
    call.cached === 'stale-while-revalidate' || call.cached === 'stale-if-error'
      ? [{ operation: call.operation, path: call.template, served: call.cached, ageSeconds: call.ageSeconds ?? 0 }]
      : [],
  );
}

/** `result` with `extensions.upstreamCache` when some of `calls` were served stale; else as it is. */
function noticed(result: ExecutionResult, calls: readonly UpstreamCallRecord[]): ExecutionResult {
  const stale = notices(calls);
  return stale.length === 0 ? result : { ...result, extensions: { ...result.extensions, upstreamCache: stale } };
}

/**
 * The result, or each result of a batched request (with its own operation's calls), noticed. A
 * stream (an incremental delivery) is left as it is.
 */
function withStaleNotices(result: unknown, request: RequestRecord): unknown {
  if (!request.upstream.some((call) => call.cached !== undefined && call.cached !== 'fresh')) return result;
  return withCallsOf(result, request, noticed);
}

/**
 * The plugin, installed when UPSTREAM_CACHE is on: after the response cache (which then never
 * keeps a result with one request's notice for another), before the observer. `scopes` finds
 * each request's record.
 */
export function useUpstreamCacheNotice(scopes: RequestScopes): Plugin {
  return {
    onResultProcess(payload) {
      const record = scopes.requestOf(payload.request);
      if (record === undefined) return;
      const next = withStaleNotices(payload.result, record);
      if (next !== payload.result) payload.setResult(next as typeof payload.result);
    },
  };
}
