/**
 * What is known about the request being served: its id, its operations and the upstream calls
 * they made, and how code that runs for a request finds it.
 *
 * The gateway's own lane (src/http/) passes it explicitly: each operation's upstream clients
 * carry its {@link RequestScope}, and its log lines are written {@link duringRequest}. Requests
 * that yoga serves find it through an AsyncLocalStorage instead, because yoga's own code logs
 * without knowing the request. That storage is turned off whenever no such request is in
 * flight: on Node 20 an enabled AsyncLocalStorage runs a hook for every promise the process
 * makes, which was a fifth of the CPU of a lane request. Only `src/observability/` and the log
 * read this module.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Context, Span } from '@opentelemetry/api';
import type { UpstreamCallOutcome } from '../upstream/http.js';
import type { UpstreamService } from '../upstream/failure.js';

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

/** The request, and the operation of it, that code runs for. */
export type RequestScope = { readonly request: RequestRecord; readonly operation?: OperationRecord };

const storage = new AsyncLocalStorage<RequestScope>();
/** Requests yoga is serving: the storage is on while there is one. */
let ambientRequests = 0;
/** The request whose log lines are being written, synchronously (see {@link duringRequest}). */
let writing: RequestRecord | undefined;

/**
 * Runs `serve` (yoga's handling of one request) with `request` as the ambient request: code that
 * runs for it, yoga's included, finds it with {@link currentRequest}.
 */
export async function runInRequest(request: RequestRecord, serve: () => Promise<void> | void): Promise<void> {
  ambientRequests += 1;
  try {
    await storage.run({ request }, serve);
  } finally {
    ambientRequests -= 1;
    // No request needs it any more: off, so that the lane's promises run without its hook.
    if (ambientRequests === 0) storage.disable();
  }
}

/** Runs `execute` (one operation of an ambient request) with `operation` as its current operation. */
export function runInOperation<T>(request: RequestRecord, operation: OperationRecord, execute: () => T): T {
  return storage.run({ request, operation }, execute);
}

/**
 * Runs `write`, which writes log lines synchronously, as lines of `request`: they carry its id
 * and have its secrets redacted. Without a request, the ambient one (if any) is theirs.
 */
export function duringRequest(request: RequestRecord | undefined, write: () => void): void {
  if (request === undefined) return write();
  const outer = writing;
  writing = request;
  try {
    write();
  } finally {
    writing = outer;
  }
}

/** The request yoga is serving, and the operation being executed, where code runs for one. */
export function ambientScope(): RequestScope | undefined {
  return storage.getStore();
}

/** The request a log line being written belongs to: the one written for, or the ambient one. */
export function currentRequest(): RequestRecord | undefined {
  return writing ?? storage.getStore()?.request;
}

/**
 * The caller's request id when it is one a log can safely hold (up to 128 letters, digits and
 * `-_.:/+=@`: a UUID, a ULID, a load balancer's `Root=1-…`), else a new UUID. Anything else
 * (spaces, quotes, line breaks) is replaced, so that no caller can forge log lines through it.
 */
export function requestIdFrom(header: string | null): string {
  return header !== null && /^[\w.:/+=@-]{1,128}$/.test(header) ? header : randomUUID();
}
