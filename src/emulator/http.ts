/**
 * The small contract between the emulator's router and its handlers:
 * handlers receive a fully read request and return a reply value, which keeps
 * them free of socket handling and lets the router own recording and errors.
 */
import type { Store } from './store.js';

/** A request as handlers see it: body already read, path parameters percent-decoded. */
export type RequestContext = {
  method: string;
  params: Record<string, string>;
  query: URLSearchParams;
  /** Lower-cased header names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  store: Store;
};

/** What a handler answers; the router writes it to the socket. */
export type Reply = {
  status: number;
  headers?: Record<string, string>;
  body?: string;
};

/** Answers one operation; throws HttpError for an expected failure, anything else becomes a 500. */
type Handler = (context: RequestContext) => Reply;

/**
 * One operation: the function that answers it. The credential it needs and the parameters and
 * body it takes are its OpenAPI document's (see contract.ts), checked before it is called.
 */
export type Operation = { handle: Handler };

/** A path template such as `/pet/{petId}` and the operations it offers per method. */
export type Route = { path: string; operations: Partial<Record<string, Operation>> };

/**
 * Thrown by handlers (and the codecs they call) to answer with a specific
 * status and JSON body instead of the generic 500.
 */
export class HttpError extends Error {
  readonly status: number;
  readonly payload: Record<string, string | number>;
  readonly headers: Record<string, string>;

  constructor(status: number, payload: Record<string, string | number>, headers: Record<string, string> = {}) {
    super(typeof payload.message === 'string' ? payload.message : `HTTP ${status}`);
    this.status = status;
    this.payload = payload;
    this.headers = headers;
  }
}

/**
 * Builds the pet store's error record `{"code":<status>,"message":<text>}`.
 * The plant area uses its own record and builds HttpError directly.
 */
export function apiError(status: number, message: string, headers?: Record<string, string>): HttpError {
  return new HttpError(status, { code: status, message }, headers);
}

/** A JSON reply from already serialised text. */
export function jsonReply(body: string, status = 200): Reply {
  return { status, headers: { 'content-type': 'application/json' }, body };
}

/** An XML reply from already serialised text. */
export function xmlReply(body: string, status = 200): Reply {
  return { status, headers: { 'content-type': 'application/xml' }, body };
}

/** A plain-text reply, used where the upstream answers with a bare sentence. */
export function textReply(body: string, status = 200): Reply {
  return { status, headers: { 'content-type': 'text/plain; charset=utf-8' }, body };
}

/** A reply without a body, for operations whose description declares none. */
export function emptyReply(status = 200): Reply {
  return { status };
}

/**
 * The media type of a Content-Type or Accept entry without parameters,
 * lower-cased, so `application/json; charset=UTF-8` compares as `application/json`.
 */
export function mediaTypeOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const essence = (value.split(';', 1)[0] ?? '').trim().toLowerCase();
  return essence === '' ? undefined : essence;
}

/**
 * Whether the client asked for XML. Like the upstream, only a first Accept
 * value of exactly `application/xml` selects XML; anything else gets JSON.
 */
export function wantsXml(headers: Record<string, string>): boolean {
  const accept = headers['accept'];
  if (accept === undefined) return false;
  return (accept.split(',', 1)[0] ?? '').trim() === 'application/xml';
}
