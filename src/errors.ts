/**
 * Every error the gateway answers with, in one place: the `ErrorCode` union (each code, what it
 * means, and the HTTP status of a request refused with it), the one way to build a coded error
 * (`codedError`) and to rebuild an error with another message or extensions (`rebuilt`), and the
 * mapping of failures to them: upstream failures get a stable `extensions.code` and
 * `extensions.upstream { service, operation, status }` with the upstream's own message; anything
 * unexpected is masked (no message, no stack trace).
 */
import { GraphQLError, type ASTNode } from 'graphql';
import { maskError as yogaMaskError } from 'graphql-yoga';
import { UNAVAILABLE_STATUSES, UpstreamError, type UpstreamService } from './upstream/failure.js';

/**
 * Stable error codes of the gateway (`extensions.code`). Each code's comment is its one description: when it is
 * sent (with the HTTP status of a request refused with it), then `What to do:`. `npm run docs` writes
 * docs/error-codes.md from them.
 */
export type ErrorCode =
  // What an upstream answered, or failed to (a field error at the field that needed it).
  /**
   * the upstream has no such thing (404)
   *
   * What to do: check the id of the thing to change (a lookup answers null instead of this error)
   */
  | 'NOT_FOUND'
  /**
   * the upstream needs a credential that was not sent or not accepted (401)
   *
   * What to do: send the credential the operation declares: `Authorization: Bearer <token>` or `api_key` (the
   * operations table of docs/connect-upstreams.md says which); in GraphiQL, check the headers tab
   */
  | 'UNAUTHENTICATED'
  /**
   * the upstream refused the credential (403)
   *
   * What to do: the upstream knows the credential but refuses it for this operation: ask its owner
   */
  | 'FORBIDDEN'
  /**
   * the upstream answered with another failure, or with something the graph cannot use
   *
   * What to do: the message is the gateway's own (`petstore answered getPetById with status 500`); what the
   * upstream said is in the log line under the request's `x-request-id`. A redirect is never followed: a base URL
   * with `http` where `https` is expected is the usual cause
   */
  | 'UPSTREAM_ERROR'
  /**
   * the upstream did not answer in time
   *
   * What to do: the message names the limit that ran out; compare the upstream's latency
   * (`upstream_request_duration_seconds`) with `UPSTREAM_TIMEOUT_MS` and the per-phase and per-area timeouts
   */
  | 'UPSTREAM_TIMEOUT'
  /**
   * the upstream could not be reached, or answered 502, 503 or 504 (a 503's Retry-After as `extensions.retryAfter`);
   * or it was not called: its circuit is open (`extensions.retryAfter`, in seconds)
   *
   * What to do: `GET /readiness` says which upstream and why; check `PETSTORE_URL`, `PLANTS_URL` and the network.
   * `circuit open` in the message: the area is not called until `extensions.retryAfter` seconds have passed
   */
  | 'UPSTREAM_UNAVAILABLE'
  /**
   * the field's REST area is not served by this deployment (its upstream URL is not set): nothing was called; the
   * schema is the same whatever a deployment serves
   *
   * What to do: ask a deployment that serves the area, or set its URL (`PETSTORE_URL`, `PLANTS_URL`) in this one
   */
  | 'UPSTREAM_NOT_SERVED'
  /**
   * the upstream answered 429, or was not called because it answered these credentials 429 with a Retry-After that
   * has not passed (`extensions.retryAfter`, in seconds)
   *
   * What to do: the upstream limits this caller (its credential), not the gateway: with `extensions.retryAfter`,
   * this caller's calls to that area fail at once for that many seconds while other callers are still called;
   * slow down, or ask the upstream for a higher limit
   */
  | 'UPSTREAM_RATE_LIMITED'
  // The caller's input.
  /**
   * a bad argument, variable or upload part: found by the gateway, or an upstream 400/409/422
   *
   * What to do: the message names the argument: an id that is not an int64, an empty user name, a `DateTime` without
   * a time zone, more list items than `LIST_ARGUMENT_MAX_ITEMS`, a variable of the wrong type; an upstream
   * 400/409/422 passes its own message on
   */
  | 'BAD_USER_INPUT'
  /**
   * an uploaded file over UPLOAD_MAX_BYTES, more files than UPLOAD_MAX_FILES, or a body over REQUEST_MAX_BYTES (413)
   *
   * What to do: send smaller files or fewer, or raise `UPLOAD_MAX_BYTES`, `UPLOAD_MAX_FILES` or `REQUEST_MAX_BYTES`
   */
  | 'PAYLOAD_TOO_LARGE'
  // Requests refused as a whole, before anything ran (src/security/).
  /**
   * the request cannot be read: not JSON, not UTF-8, a bad Content-Length, variables that are not JSON (400)
   *
   * What to do: send `content-type: application/json` and a body `{"query": "..."}`; a JSON array (a batch) needs
   * `BATCH_MAX_OPERATIONS`
   */
  | 'BAD_REQUEST'
  /**
   * a POST whose content type carries no GraphQL request (415)
   *
   * What to do: send `content-type: application/json`
   */
  | 'UNSUPPORTED_MEDIA_TYPE'
  /**
   * the client sent more requests than its rate limit allows (429, with Retry-After)
   *
   * What to do: wait `Retry-After` seconds; behind a proxy, set `TRUST_PROXY_HOPS`, or every client shares the
   * proxy's budget
   */
  | 'RATE_LIMITED'
  /**
   * rate limits kept in Redis cannot be checked and RATE_LIMIT_FAIL_CLOSED is set (503, with Retry-After)
   *
   * What to do: Redis is unreachable: see `/readiness` and the log line `Redis unreachable`, or unset
   * `RATE_LIMIT_FAIL_CLOSED` to let requests through meanwhile
   */
  | 'RATE_LIMIT_UNAVAILABLE'
  /**
   * a browser-style request without a CSRF prevention header (403)
   *
   * What to do: add `x-graphql-csrf: 1` (or another CSRF header) to GET, form and multipart requests
   */
  | 'CSRF_HEADER_REQUIRED'
  /**
   * the operation nests fields deeper than QUERY_MAX_DEPTH (400)
   *
   * What to do: split the operation, or raise `QUERY_MAX_DEPTH`
   */
  | 'QUERY_TOO_DEEP'
  /**
   * the operation has more aliases than QUERY_MAX_ALIASES (400)
   *
   * What to do: split the operation, or raise `QUERY_MAX_ALIASES`
   */
  | 'TOO_MANY_ALIASES'
  /**
   * the document has more tokens than QUERY_MAX_TOKENS (400)
   *
   * What to do: split the operation, or raise `QUERY_MAX_TOKENS`
   */
  | 'TOO_MANY_TOKENS'
  /**
   * variables or extensions that nest arrays and objects, a document that nests brackets, or fragments that spread
   * one another, deeper than INPUT_MAX_DEPTH (400, whatever the Accept header)
   *
   * What to do: flatten the input; no operation of this graph comes near the limit
   */
  | 'INPUT_TOO_DEEP'
  /**
   * the operation has more directives than QUERY_MAX_DIRECTIVES (400)
   *
   * What to do: split the operation, or raise `QUERY_MAX_DIRECTIVES`
   */
  | 'TOO_MANY_DIRECTIVES'
  /**
   * the operation's estimated cost is over QUERY_MAX_COST (400)
   *
   * What to do: ask for fewer entities per operation, or raise `QUERY_MAX_COST`
   */
  | 'QUERY_TOO_COSTLY'
  /**
   * the operation may make more upstream calls than UPSTREAM_MAX_CALLS_PER_OPERATION, or than the client's
   * RATE_LIMIT_COST_PER_MINUTE ever holds, by the gateway's estimate (400, `extensions.cost { estimated, max }`)
   *
   * What to do: ask for fewer items per operation (fewer ids, statuses or tags), split it, or raise the limit
   */
  | 'COST_ESTIMATED_TOO_EXPENSIVE'
  /**
   * the client's budget of upstream calls (RATE_LIMIT_COST_PER_MINUTE) does not hold the operation's estimate now
   * (429, with Retry-After)
   *
   * What to do: wait `Retry-After` seconds; ask `x-gateway-cost: 1` to see what each operation costs
   */
  | 'COST_RATE_LIMITED'
  /**
   * a browser opened the GraphQL endpoint while GRAPHIQL is off (404): the message says how to send a query
   *
   * What to do: send queries by POST, or set `GRAPHIQL=true` where a GraphiQL is wanted
   */
  | 'GRAPHIQL_DISABLED'
  /**
   * `__schema`, `__type` or `_service` while INTROSPECTION is off (400)
   *
   * What to do: set `INTROSPECTION=true` where tools need the schema, or use the committed `schema/printed/`
   */
  | 'INTROSPECTION_DISABLED'
  /**
   * APQ: no document is kept for this hash yet; send it with its hash once (404)
   *
   * What to do: send the document once with its hash, as Apollo Client's persisted queries link does by itself
   */
  | 'PERSISTED_QUERY_NOT_FOUND'
  /**
   * APQ: the document sent does not have the sha256 hash sent with it (400)
   *
   * What to do: hash the exact text sent (SHA-256, hex)
   */
  | 'PERSISTED_QUERY_MISMATCH'
  /**
   * APQ is off (APQ=false) and the request named a document by hash (400)
   *
   * What to do: send the document's text with each request, or set `APQ=true`
   */
  | 'PERSISTED_QUERY_NOT_SUPPORTED'
  /**
   * TRUSTED_DOCUMENTS is set and the request sent a document text or no hash (400)
   *
   * What to do: send the document's key, not its text (docs/trusted-documents.md)
   */
  | 'TRUSTED_DOCUMENT_REQUIRED'
  /**
   * TRUSTED_DOCUMENTS is set and the hash is not in the manifest (400)
   *
   * What to do: deploy the manifest of every app release in use with the gateway (docs/trusted-documents.md)
   */
  | 'TRUSTED_DOCUMENT_NOT_FOUND'
  /**
   * the operation uses @defer or @stream and the Accept header allows neither multipart/mixed nor
   * text/event-stream, the media types of an answer in parts (406, before anything runs)
   *
   * What to do: accept `multipart/mixed` or `text/event-stream`, or drop the directives
   */
  | 'INCREMENTAL_DELIVERY_NOT_ACCEPTED'
  /**
   * the operation needed more upstream calls than UPSTREAM_MAX_CALLS_PER_OPERATION (a field error)
   *
   * What to do: ask for fewer entities per operation, or raise `UPSTREAM_MAX_CALLS_PER_OPERATION`
   */
  | 'UPSTREAM_FANOUT_LIMIT'
  /**
   * a `@live` query refused: LIVE_QUERIES_MAX live queries are open, or LIVE_QUERIES_PER_CLIENT_MAX of this client's
   * (the stream's only answer, with no data)
   *
   * What to do: close live queries the client no longer shows, or raise the limit; see `live_queries_open` and
   * `live_query_refusals_total`
   */
  | 'LIVE_QUERY_LIMIT'
  // The gateway's own failure.
  /**
   * the gateway failed outside GraphQL execution (a module that did not load, a plugin or the handler that threw,
   * an answer that could not be written): 500, message `Unexpected error.`, the detail in the server log only
   *
   * What to do: a bug: the log has an `error` line with the stack under the same `requestId`
   */
  | 'INTERNAL_SERVER_ERROR'
  /**
   * the document does not parse: GraphQL's own code, sent by yoga (400; 200 under `Accept: application/json` alone)
   *
   * What to do: GraphiQL underlines the syntax error
   */
  | 'GRAPHQL_PARSE_FAILED'
  /**
   * the document does not validate against the schema (an unknown field, a wrong enum value, a
   * fragment cycle): GraphQL's own code, sent by yoga (400; 200 under `Accept: application/json` alone)
   *
   * What to do: check the field against the schema (`npm run schema:print`); a `subscription` is refused this way:
   * send a `@live` query instead
   */
  | 'GRAPHQL_VALIDATION_FAILED'
  /**
   * the document holds several operations and `operationName` names none of them: the executor's
   * code (200 under `Accept: application/json`, 400 under `application/graphql-response+json`)
   *
   * What to do: send the name of the operation to run as `operationName`
   */
  | 'OPERATION_RESOLUTION_FAILURE';

/** Where an error points, and how a request refused with it is answered. */
export type CodedErrorOptions = {
  /** the HTTP status of a request refused as a whole (yoga reads `extensions.http` and leaves it out of the body) */
  status?: number;
  /** response headers of such a refusal, e.g. `Retry-After` */
  headers?: Record<string, string>;
  /**
   * false: the status holds whatever the Accept header, for a refusal made while validating
   * (yoga gives a validation error the GraphQL-over-HTTP spec's status otherwise: 200 for
   * `application/json`)
   */
  spec?: false;
  /** the part of the document the error is about */
  nodes?: ASTNode | readonly ASTNode[];
};

/** The one way to build an error with a code. */
export function codedError(code: ErrorCode, message: string, options: CodedErrorOptions = {}): GraphQLError {
  const { status, headers, spec, nodes } = options;
  const http =
    status === undefined ? undefined : { status, ...(headers ? { headers } : {}), ...(spec === false ? { spec } : {}) };
  return new GraphQLError(message, { ...(nodes ? { nodes } : {}), extensions: { code, ...(http ? { http } : {}) } });
}

/**
 * The same error (its place in the document and in the result) with another message or other
 * extensions: errors are immutable once built, and redaction, masking and coding rebuild them.
 */
export function rebuilt(
  error: GraphQLError,
  change: { message?: string; extensions?: GraphQLError['extensions'] },
): GraphQLError {
  return new GraphQLError(change.message ?? error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions: change.extensions ?? error.extensions,
  });
}

/** An error in the caller's input, found before any upstream call. */
export function badUserInput(message: string): GraphQLError {
  return codedError('BAD_USER_INPUT', message);
}

/** The code of an upstream failure. */
function upstreamErrorCode(error: UpstreamError): ErrorCode {
  switch (error.failure) {
    case 'timeout':
      return 'UPSTREAM_TIMEOUT';
    case 'unavailable':
    case 'circuit-open':
      return 'UPSTREAM_UNAVAILABLE';
    case 'rate-limited':
      return 'UPSTREAM_RATE_LIMITED';
    case 'invalid-response':
      return 'UPSTREAM_ERROR';
    case 'not-served':
      return 'UPSTREAM_NOT_SERVED';
    case 'status':
      return statusCode(error.status ?? 500);
  }
}

function statusCode(status: number): ErrorCode {
  if (status === 401) return 'UNAUTHENTICATED';
  if (status === 403) return 'FORBIDDEN';
  if (status === 404) return 'NOT_FOUND';
  if (status === 429) return 'UPSTREAM_RATE_LIMITED';
  if (status === 400 || status === 409 || status === 422) return 'BAD_USER_INPUT';
  if (UNAVAILABLE_STATUSES.has(status)) return 'UPSTREAM_UNAVAILABLE';
  return 'UPSTREAM_ERROR';
}

/** An upstream answer without a field the graph guarantees (for example a pet without an id). */
export function incompleteAnswer(service: UpstreamService, field: string): never {
  throw new UpstreamError({
    service,
    operation: field,
    failure: 'invalid-response',
    message: `${service} sent no ${field}`,
  });
}

/** True when an upstream said the thing asked for does not exist. */
export function isNotFound(error: unknown): boolean {
  return error instanceof UpstreamError && error.failure === 'status' && error.status === 404;
}

/** The `extensions.upstream` of an upstream failure: which call, and what it answered. */
function upstreamExtension(error: UpstreamError): Record<string, unknown> {
  return {
    service: error.service,
    operation: error.operation,
    ...(error.status !== undefined ? { status: error.status } : {}),
    ...(error.upstreamCode !== undefined ? { error: error.upstreamCode } : {}),
  };
}

/**
 * The errors {@link maskError} replaced, by their replacements, and the replaced ones: the
 * observer logs each original once, with the request its answer goes to
 * (src/observability/request-observer.ts), and yoga's own log of it is skipped.
 */
const replaced = new WeakMap<GraphQLError, unknown>();
const originals = new WeakSet<object>();

/**
 * yoga's `maskedErrors.maskError`: upstream failures become coded errors at the place (path,
 * locations) where they happened; GraphQL's own errors pass; everything else is masked, and
 * never with the original error attached, whatever NODE_ENV says. Each error it replaces is
 * remembered for the log ({@link replacedBy}).
 */
export function maskError(error: unknown, message: string): GraphQLError {
  const replacement = masked(error, message);
  if (replacement !== error) {
    replaced.set(replacement, error);
    if (typeof error === 'object' && error !== null) originals.add(error);
  }
  return replacement;
}

/** The error `error` replaced when {@link maskError} made it; undefined for any other error. */
export function replacedBy(error: GraphQLError): unknown {
  return replaced.get(error);
}

/** True for an error {@link maskError} replaced: its replacement is what the answer and the log show. */
export function wasReplaced(error: unknown): boolean {
  return typeof error === 'object' && error !== null && originals.has(error);
}

/** What {@link maskError} makes of an error. */
function masked(error: unknown, message: string): GraphQLError {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (original instanceof UpstreamError) {
    const extensions = {
      code: upstreamErrorCode(original),
      upstream: upstreamExtension(original),
      // Whole seconds, as in a Retry-After header; rounded up so that a caller who waits that long is not early.
      ...(original.retryAfterMs !== undefined
        ? { retryAfter: Math.max(1, Math.ceil(original.retryAfterMs / 1000)) }
        : {}),
    };
    return error instanceof GraphQLError
      ? rebuilt(error, { message: original.message, extensions })
      : new GraphQLError(original.message, { extensions });
  }
  if (error instanceof GraphQLError && error.extensions['originalError'] !== undefined) {
    // yoga attaches the parser's own message (which quotes the request body) to the errors of a
    // request it could not parse; the code and message say enough. Without that attachment
    // yoga would take the error for a well-formed request's and answer 200 under
    // `Accept: application/json`; the GraphQL-over-HTTP spec wants 400 for a request that could
    // not be parsed, so its `http.spec` mark goes too and its status (400) is kept.
    const { originalError: _dropped, http, ...extensions } = error.extensions;
    return rebuilt(error, {
      extensions: { ...extensions, ...(http?.status !== undefined ? { http: { status: http.status } } : {}) },
    });
  }
  return yogaMaskError(error, message, false) as GraphQLError;
}

/**
 * True for failures that are part of normal operation (an upstream said no, a caller sent bad input), which need no
 * stack trace in the log.
 */
export function isExpectedError(error: unknown): boolean {
  const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
  return (
    original instanceof UpstreamError || (original instanceof GraphQLError && original.originalError === undefined)
  );
}
