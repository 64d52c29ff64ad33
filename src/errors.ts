/**
 * The one mapping from failures to GraphQL errors. Upstream failures get a stable
 * `extensions.code` and `extensions.upstream { service, operation, status }` with the
 * upstream's own message; anything unexpected is masked (no message, no stack trace).
 */
import { GraphQLError } from 'graphql';
import { maskError as yogaMaskError } from 'graphql-yoga';
import { UpstreamError, type UpstreamService } from './upstream/http.js';

/** Stable error codes of the gateway (`extensions.code`). */
export type ErrorCode =
  | 'NOT_FOUND'
  | 'BAD_USER_INPUT'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'UPSTREAM_ERROR'
  | 'UPSTREAM_TIMEOUT'
  | 'UPSTREAM_UNAVAILABLE';

/** An error in the caller's input, found before any upstream call. */
export function badUserInput(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });
}

/** The code of an upstream failure. */
export function upstreamErrorCode(error: UpstreamError): ErrorCode {
  switch (error.failure) {
    case 'timeout':
      return 'UPSTREAM_TIMEOUT';
    case 'unavailable':
      return 'UPSTREAM_UNAVAILABLE';
    case 'invalid-response':
      return 'UPSTREAM_ERROR';
    case 'status':
      return statusCode(error.status ?? 500);
  }
}

function statusCode(status: number): ErrorCode {
  if (status === 401) return 'UNAUTHENTICATED';
  if (status === 403) return 'FORBIDDEN';
  if (status === 404) return 'NOT_FOUND';
  if (status === 400 || status === 409 || status === 422) return 'BAD_USER_INPUT';
  if (status === 502 || status === 503 || status === 504) return 'UPSTREAM_UNAVAILABLE';
  return 'UPSTREAM_ERROR';
}

/** An upstream answer without a field the graph guarantees (for example a pet without an id). */
export function incompleteAnswer(service: UpstreamService, field: string): never {
  throw new UpstreamError(service, field, 'invalid-response', `${service} sent no ${field}`);
}

/** True when an upstream said the thing asked for does not exist. */
export function isNotFound(error: unknown): boolean {
  return error instanceof UpstreamError && error.failure === 'status' && error.status === 404;
}

/**
 * yoga's `maskedErrors.maskError`: upstream failures become coded errors at the place (path,
 * locations) where they happened; GraphQL's own errors pass; everything else is masked, and
 * never with the original error attached, whatever NODE_ENV says.
 */
export function maskError(error: unknown, message: string): Error {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (original instanceof UpstreamError) {
    const located = error instanceof GraphQLError ? error : undefined;
    return new GraphQLError(original.message, {
      ...(located ? { nodes: located.nodes, source: located.source, positions: located.positions, path: located.path } : {}),
      extensions: {
        code: upstreamErrorCode(original),
        upstream: {
          service: original.service,
          operation: original.operation,
          ...(original.status !== undefined ? { status: original.status } : {}),
          ...(original.upstreamCode !== undefined ? { error: original.upstreamCode } : {}),
        },
      },
    });
  }
  if (error instanceof GraphQLError && error.extensions['originalError'] !== undefined) {
    // yoga attaches the parser's own message (which quotes the request body) to some request
    // errors; the code and message say enough.
    const { originalError: _dropped, ...extensions } = error.extensions;
    return new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, path: error.path, extensions });
  }
  return yogaMaskError(error, message, false);
}

/** True for failures that are part of normal operation (an upstream said no, a caller sent bad input), which need no stack trace in the log. */
export function isExpectedError(error: unknown): boolean {
  const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
  return original instanceof UpstreamError || (original instanceof GraphQLError && original.originalError === undefined);
}
