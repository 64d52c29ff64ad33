/**
 * What is known about the request being served: its id, its operations and the upstream calls
 * they made, and how code that runs for a request finds it.
 *
 * One way, on both HTTP paths: the request's record is kept by its Fetch `Request` (or the
 * front's stand-in), and each operation's by its GraphQL context object, which yoga's envelop
 * extends in place from the first hook to the last (`RequestScopes`, one per gateway, held by
 * the observer). The context factory hands each operation's scope to its upstream clients, so
 * their calls are logged, counted and traced for it; log lines find their request through the
 * {@link LogScope} a line is written in. Nothing here is module state, and there is no
 * AsyncLocalStorage (on Node 20 it put a hook on every promise of the process).
 */
import { randomUUID } from 'node:crypto';
import type { HeaderSource } from '../credentials.js';
import type { RequestRecord, RequestScope, UpstreamCallRecord } from '../upstream/request-scope.js';

// The records themselves are the upstream layer's types, which the request scope goes down to.
export type { OperationRecord, RequestRecord, RequestScope, UpstreamCallRecord } from '../upstream/request-scope.js';

/**
 * The records of the requests and operations being served, kept on their Request and their context
 * object, under keys of this instance's own (one per gateway): fields, rather than WeakMaps, whose
 * entries cost a hash and work for the garbage collector on every request.
 */
export class RequestScopes {
  readonly #request = Symbol('request record');
  readonly #operation = Symbol('operation scope');

  /** `request` (a Fetch Request, or the front's stand-in) is served as `record`. */
  bindRequest(request: object, record: RequestRecord): void {
    (request as Keyed<RequestRecord>)[this.#request] = record;
  }

  /** The record of a request being served. */
  requestOf(request: object): RequestRecord | undefined {
    return (request as Keyed<RequestRecord>)[this.#request];
  }

  /** The operation whose GraphQL context is `context` is `scope.operation` of `scope.request`. */
  bindOperation(context: object, scope: RequestScope): void {
    (context as Keyed<RequestScope>)[this.#operation] = scope;
  }

  /** The request and operation a GraphQL context (or yoga's initial context, the same object) belongs to. */
  scopeOf(context: object): RequestScope | undefined {
    return (context as Keyed<RequestScope>)[this.#operation];
  }
}

/** An object carrying a value under a symbol of {@link RequestScopes}. */
type Keyed<T> = { [key: symbol]: T | undefined };

/**
 * The request whose log lines are being written, synchronously: one per log, so that each line
 * carries its request's id and has its secrets redacted (src/observability/logger.ts).
 */
export class LogScope {
  /** the request of the line being written; undefined between requests */
  request: RequestRecord | undefined;

  /** Runs `write`, which writes log lines synchronously, as lines of `request` (none: as they are). */
  readonly during = (request: RequestRecord | undefined, write: () => void): void => {
    if (request === undefined) return write();
    const outer = this.request;
    this.request = request;
    try {
      write();
    } finally {
      this.request = outer;
    }
  };
}

/** The header a request's id comes in, goes upstream with each call in, and is answered with. */
const REQUEST_ID_HEADER = 'x-request-id';

/**
 * The caller's request id (`x-request-id`) when it is one a log can safely hold (up to 128
 * letters, digits and `-_.:/+=@`: a UUID, a ULID, a load balancer's `Root=1-…`), else a new UUID.
 * Anything else (spaces, quotes, line breaks) is replaced, so that no caller can forge log lines
 * through it.
 */
export function requestIdFrom(headers: HeaderSource): string {
  const header = headers.get(REQUEST_ID_HEADER);
  return header !== null && /^[\w.:/+=@-]{1,128}$/.test(header) ? header : randomUUID();
}

/** Headers being sent: a Fetch `Headers` (yoga's answers), or a record as node:http and undici take them. */
type OutgoingHeaders = Pick<Headers, 'set'> | Record<string, string>;

/**
 * Sets the request id on the headers of an answer, whichever path writes it, or of an upstream
 * call: the one place `x-request-id` is set.
 */
export function setRequestId(headers: OutgoingHeaders, id: string): void {
  if (isFetchHeaders(headers)) headers.set(REQUEST_ID_HEADER, id);
  else headers[REQUEST_ID_HEADER] = id;
}

function isFetchHeaders(headers: OutgoingHeaders): headers is Pick<Headers, 'set'> {
  return typeof headers.set === 'function';
}

/**
 * `change` applied to a result with the upstream calls its request made, or to each result of a
 * batched request with its own operation's calls (the n-th result is the n-th operation's, as the
 * observer pairs them); a stream (an incremental delivery) is left as it is: its calls go on after
 * its first part.
 */
export function withCallsOf<R extends object>(
  result: unknown,
  request: RequestRecord,
  change: (one: R, calls: readonly UpstreamCallRecord[]) => R,
): unknown {
  if (Array.isArray(result))
    return result.map((one: R, index) => {
      const operation = request.operations[index];
      return change(
        one,
        request.upstream.filter((call) => call.for === operation),
      );
    });
  if (typeof result !== 'object' || result === null || Symbol.asyncIterator in result) return result;
  return change(result as R, request.upstream);
}
