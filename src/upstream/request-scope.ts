/**
 * The request an upstream call is made for, as observability records it: the request, its
 * operations and the upstream calls they made. The request scope goes down to the upstream
 * client as an argument of each call (`UpstreamRequest.scope`) and comes back to observability
 * through the client's observer hook, so its types live here, in the lowest layer that carries
 * it; `src/observability/request-context.ts` keeps how a request finds its records.
 */
import type { Context, Span } from '@opentelemetry/api';
import type { UpstreamFailure, UpstreamService } from './failure.js';

/** One upstream call of a request, as the request log shows it. */
export type UpstreamCallRecord = {
  service: UpstreamService;
  operation: string;
  method: string;
  /** the answer's HTTP status, when there was one */
  status?: number;
  /** why it failed (as `UpstreamCallOutcome.failure` in http.ts says); undefined when it succeeded */
  failure?: UpstreamFailure | 'aborted';
  /** undefined while the call is in flight */
  durationMs?: number;
  retries?: number;
  /** true: it joined an identical call already in flight instead of sending one (UPSTREAM_DEDUPE) */
  shared?: boolean;
  /** its path's template (`/pet/{petId}`): no value of the caller's, so an answer may show it (EXPLAIN) */
  template: string;
  /** true: a request's DataLoader made it for the keys of one tick, rather than a resolver for its parent */
  batched?: boolean;
  /** the upstream cache answered it without a call (UPSTREAM_CACHE): with a fresh answer, or a stale one and why */
  cached?: 'fresh' | 'stale-while-revalidate' | 'stale-if-error';
  /** the age of the cached answer, in seconds, when `cached` */
  ageSeconds?: number;
  /** the operation it was made for, when known: a batched request's answers each show their own calls */
  for?: OperationRecord;
};

/** One GraphQL operation of a request (a batched request has several). */
export type OperationRecord = {
  /** the operation's name; undefined for an anonymous one */
  name?: string;
  /** query, mutation or subscription; undefined when the document did not parse */
  type?: string;
  /** `performance.now()` at its start */
  started: number;
  /** `performance.now()` once its result was ready */
  ended?: number;
  /** counted and its span ended */
  finished?: boolean;
  /** `extensions.code` of each error of its result */
  errorCodes: string[];
  /** its variables, kept only for a debug-level log (and redacted there) */
  variables?: unknown;
  /** a span is due (tracing is on and it was begun as an operation, not recorded after a refusal) */
  traced?: boolean;
  /** its span, once it executes or finishes, when tracing is on */
  span?: Span;
};

/** One HTTP request to the gateway. */
export type RequestRecord = {
  /** from the caller's `x-request-id` when it sent a usable one, else generated */
  id: string;
  started: number;
  method: string;
  path: string;
  operations: OperationRecord[];
  /** every upstream call, in the order they started */
  upstream: UpstreamCallRecord[];
  /** values no log line may show: the request's credentials and the passwords it sent */
  secrets: string[];
  /** the request's headers, kept only for a debug-level log (credentials redacted there) */
  headers?: Record<string, string | string[] | undefined>;
  /** the caller's trace context (its `traceparent`), parent of the operation spans */
  traceParent?: Context;
};

/** The request, and the operation of it, that code runs for. */
export type RequestScope = { readonly request: RequestRecord; readonly operation?: OperationRecord };
