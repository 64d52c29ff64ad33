/**
 * What is known about the request being served, wherever the code runs in it: its id, its
 * operations and the upstream calls they made. The upstream client is shared by all requests,
 * so an upstream call finds its request here (AsyncLocalStorage) rather than through every
 * function's arguments. Only `src/observability/` and the log read it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Context, Span } from '@opentelemetry/api';
import type { UpstreamCallOutcome, UpstreamService } from '../upstream/http.js';

/** One upstream call of a request, as the request log shows it. */
export type UpstreamCallRecord = {
  service: UpstreamService;
  operation: string;
  method: string;
  /** the answer's HTTP status, when there was one */
  status?: number;
  failure?: UpstreamCallOutcome['failure'];
  /** undefined while the call is in flight */
  durationMs?: number;
  retries?: number;
  /** true: it joined an identical call already in flight instead of sending one (UPSTREAM_DEDUPE) */
  shared?: boolean;
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
  /** its span, when tracing is on */
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

type Scope = { request: RequestRecord; operation?: OperationRecord };

const storage = new AsyncLocalStorage<Scope>();

/** Runs `fn` (the handling of one request) with `request` as the current request. */
export function runInRequest<T>(request: RequestRecord, fn: () => T): T {
  return storage.run({ request }, fn);
}

/** Runs `fn` (one operation of the current request) with `operation` as the current operation. */
export function runInOperation<T>(request: RequestRecord, operation: OperationRecord, fn: () => T): T {
  return storage.run({ request, operation }, fn);
}

/** The request being served, if any. */
export function currentRequest(): RequestRecord | undefined {
  return storage.getStore()?.request;
}

/** The operation being executed, if any. */
export function currentOperation(): OperationRecord | undefined {
  return storage.getStore()?.operation;
}

/**
 * The caller's request id when it is one a log can safely hold (up to 128 letters, digits and
 * `-_.:/+=@`: a UUID, a ULID, a load balancer's `Root=1-…`), else a new UUID. Anything else
 * (spaces, quotes, line breaks) is replaced, so that no caller can forge log lines through it.
 */
export function requestIdFrom(header: string | null): string {
  return header !== null && /^[\w.:/+=@-]{1,128}$/.test(header) ? header : randomUUID();
}
