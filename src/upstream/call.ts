/**
 * One upstream call as its callers describe it, without HTTP plumbing, and its answer: what the
 * area modules build, the upstream cache (`cache.ts`) files and the client (`http.ts`) sends;
 * and how a 2xx body is read as its payload shape. A module of its own below both, so that
 * neither imports the other's types back.
 */
import type { Readable } from 'node:stream';
import { DecodeError, normalize, type Payload, type Shape } from './codec.js';
import { UpstreamError, type UpstreamService } from './failure.js';
import type { RequestScope } from './request-scope.js';
import type { Resource } from './operations.js';

type QueryValue = string | readonly string[] | undefined;

/** One call, described without HTTP plumbing. */
export type UpstreamRequest = {
  /** the REST operation's name (its operationId), used in errors and metrics */
  operation: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** path below the base URL, already encoded; `callOf` (operations.ts) builds it from its operation's row */
  path: string;
  /**
   * the path's template, as the OpenAPI document writes it (`/pet/{petId}`), for what the caller
   * may be shown (`extensions.upstream`); `callOf` gives it. @default path (a path without parameters)
   */
  template?: string;
  /**
   * What the call reads (a GET) or may change (a write), from its operation's row: the upstream
   * cache files a read under them, and a write keeps later reads of the same kinds from joining
   * a read in flight. @default none
   */
  resources?: readonly Resource[];
  /**
   * Made by a request's DataLoader, for the keys it gathered in one tick (each distinct key once),
   * rather than by a resolver for its own parent: `extensions.upstream` says so. @default false
   */
  batched?: boolean;
  /** query parameters; an array value is sent as repeated parameters */
  query?: Readonly<Record<string, QueryValue>>;
  /** extra headers (credentials, accept) */
  headers?: Readonly<Record<string, string>>;
  body?: { contentType: string; data: string | Readable };
  /**
   * The answer's body carries nothing the caller reads (a DELETE's `Pet deleted`, which the
   * reference server sends as bare text under `application/json`): it is not decoded.
   * @default false
   */
  ignoreBody?: boolean;
  /**
   * Secrets the call carries besides its credential headers (a user's password in the body): an
   * upstream message that echoes one gets `[redacted]` in its place, like a credential.
   */
  secrets?: readonly string[];
  /**
   * The request and operation the call is made for, as observability tracks them: its log
   * lines, metrics and spans are theirs. Without it, the observer looks for an ambient request.
   */
  scope?: RequestScope;
};

/** A successful (2xx) answer, its body decoded by its own Content-Type. */
export type UpstreamResponse = {
  status: number;
  /** JSON or XML content as plain values, text as a string, an empty body as undefined */
  body: unknown;
};

/**
 * Reads a successful answer's body as the payload `shape` describes; a body that does not fit
 * becomes an `invalid-response` error naming the offending field (never a crash).
 */
export function decodePayload<S extends Shape>(
  client: { readonly service: UpstreamService },
  operation: string,
  shape: S,
  response: UpstreamResponse,
): Payload<S> {
  try {
    return normalize(shape, response.body);
  } catch (error) {
    const reason = error instanceof DecodeError ? error.message : 'unreadable body';
    const message = `${client.service} answered ${operation} with an unexpected body (${reason})`;
    throw new UpstreamError({
      service: client.service,
      operation,
      failure: 'invalid-response',
      message,
      status: response.status,
    });
  }
}
