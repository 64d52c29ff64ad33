/**
 * Explain (EXPLAIN): a request that sends `x-gateway-explain: 1` gets, in its answer's
 * `extensions.upstream`, every upstream call it made, in the order they started: the REST
 * operation, its method and path template, its status and duration, and whether a DataLoader
 * batched it, it joined an identical call in flight (`shared`), or a cache answered it.
 *
 * The calls are the ones the request log already records (src/observability/), found by the
 * request; nothing is recorded for explain alone. Without the header the hook reads one header
 * and returns; with EXPLAIN off the plugin is not installed at all. An entry holds the path's
 * template only (`/pet/{petId}`): never a query string, a body, a header or a credential.
 *
 * One `onResultProcess` hook, which the HTTP front calls itself (its table:
 * src/http/plugin-table.ts), so both of the gateway's HTTP paths add the same extension with the
 * same code.
 */
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import {
  withCallsOf,
  type RequestRecord,
  type RequestScopes,
  type UpstreamCallRecord,
} from '../observability/request-context.js';

/** The request header that asks for `extensions.upstream`, with the value `1`. */
const EXPLAIN_HEADER = 'x-gateway-explain';

/** One upstream call as `extensions.upstream` shows it. */
type ExplainedCall = {
  service: string;
  /** the REST operation (its operationId) */
  operation: string;
  method: string;
  /** the path's template below the area's base URL, e.g. `/pet/{petId}` */
  path: string;
  /** the answer's HTTP status; null when there was none (a connection failure, a timeout) */
  status: number | null;
  /** from its start to its end, in milliseconds (0.1 ms steps); null when it was still in flight at the answer */
  durationMs: number | null;
  /** made by a request's DataLoader for the keys one tick gathered (each distinct key once) */
  batched: boolean;
  /** joined an identical call already in flight (this request's or another's): nothing was sent for it */
  shared: boolean;
  /** answered by the upstream cache (UPSTREAM_CACHE) without reaching the upstream, fresh or stale */
  cached: boolean;
  /** why it failed, when it did */
  failure?: string;
  /** retries it took, when it took any */
  retries?: number;
};

const round = (ms: number) => Math.round(ms * 10) / 10;

/** One call as `extensions.upstream` shows it: the path's template only, no value of the caller's. */
function explainedCall(call: UpstreamCallRecord): ExplainedCall {
  return {
    service: call.service,
    operation: call.operation,
    method: call.method,
    path: call.template,
    status: call.status ?? null,
    durationMs: call.durationMs === undefined ? null : round(call.durationMs),
    batched: call.batched === true,
    shared: call.shared === true,
    // The upstream cache marks the calls it answers (src/upstream/cache.ts); a revalidation (a 304) reached the upstream.
    cached: call.cached !== undefined,
    ...(call.failure !== undefined ? { failure: call.failure } : {}),
    ...(call.retries ? { retries: call.retries } : {}),
  };
}

/** `result` with `extensions.upstream`: `calls`, as they are explained. */
function withUpstream(result: ExecutionResult, calls: readonly UpstreamCallRecord[]): ExecutionResult {
  return { ...result, extensions: { ...result.extensions, upstream: calls.map(explainedCall) } };
}

/**
 * The result, or each result of a batched request, with the calls it made. A stream (an
 * incremental delivery) is left as it is: its calls go on after its first part.
 */
function explained(result: unknown, request: RequestRecord): unknown {
  return withCallsOf(result, request, withUpstream);
}

/**
 * The explain plugin: after the gateway's other result hooks (the response cache stored the
 * result before them, so a kept answer never carries one request's calls to another), before
 * the observer's. `scopes` finds each request's record (the observability's).
 */
export function useExplain(scopes: RequestScopes): Plugin {
  return {
    onResultProcess(payload) {
      // The only cost for a request that does not ask: one header read.
      if (payload.request.headers.get(EXPLAIN_HEADER) !== '1') return;
      const record = scopes.requestOf(payload.request);
      if (record !== undefined) payload.setResult(explained(payload.result, record) as typeof payload.result);
    },
  };
}
