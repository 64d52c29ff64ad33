/**
 * The errors the protections answer with. Each has a stable `extensions.code` and, when it
 * refuses a whole request, the HTTP status it is sent with (yoga reads `extensions.http` and
 * leaves it out of the body).
 */
import { GraphQLError } from 'graphql';

/** Stable codes of refused requests and operations (`extensions.code`). */
export type SecurityErrorCode =
  /** the request body is larger than REQUEST_MAX_BYTES (413) */
  | 'REQUEST_ENTITY_TOO_LARGE'
  /** the request cannot be read: not UTF-8, a bad Content-Length, variables that are not JSON (400) */
  | 'BAD_REQUEST'
  /** a POST whose content type carries no GraphQL request (415) */
  | 'UNSUPPORTED_MEDIA_TYPE'
  /** the client sent more requests than its rate limit allows (429, with Retry-After) */
  | 'RATE_LIMITED'
  /** a browser-style request without a CSRF prevention header (403) */
  | 'CSRF_HEADER_REQUIRED'
  /** the operation nests fields deeper than QUERY_MAX_DEPTH (400) */
  | 'QUERY_TOO_DEEP'
  /** the operation has more aliases than QUERY_MAX_ALIASES (400) */
  | 'TOO_MANY_ALIASES'
  /** the document has more tokens than QUERY_MAX_TOKENS (400) */
  | 'TOO_MANY_TOKENS'
  /** the operation has more directives than QUERY_MAX_DIRECTIVES (400) */
  | 'TOO_MANY_DIRECTIVES'
  /** the operation's estimated cost is over QUERY_MAX_COST (400) */
  | 'QUERY_TOO_COSTLY'
  /** `__schema`, `__type` or `_service` while INTROSPECTION is off (400) */
  | 'INTROSPECTION_DISABLED'
  /** the operation needed more upstream calls than UPSTREAM_MAX_CALLS_PER_OPERATION (a field error) */
  | 'UPSTREAM_FANOUT_LIMIT'
  /** TRUSTED_DOCUMENTS is set and the request sent a document text or no hash (400) */
  | 'TRUSTED_DOCUMENT_REQUIRED'
  /** TRUSTED_DOCUMENTS is set and the hash is not in the manifest (400) */
  | 'TRUSTED_DOCUMENT_NOT_FOUND';

/** A request refused as a whole: the body carries `{ errors: [...] }` and the response has `status`. */
export function refused(code: SecurityErrorCode, message: string, status: number, headers?: Record<string, string>): GraphQLError {
  return new GraphQLError(message, { extensions: { code, http: { status, ...(headers ? { headers } : {}) } } });
}
