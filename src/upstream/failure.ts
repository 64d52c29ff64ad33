/**
 * How an upstream call fails: the typed {@link UpstreamError} every failure becomes, and the
 * classification of what went wrong (a status, a timeout of which phase, a lost connection)
 * into whether trying again may help. `http.ts` sends; this module says what a failure was.
 */
import { BodyTimeout } from './body.js';
import { decodeByContentType } from './codec.js';

/** The upstream areas, named as they appear in errors (`extensions.upstream.service`). */
export type UpstreamService = 'petstore' | 'plants';

/** Why an upstream call failed. */
export type UpstreamFailure =
  /** the upstream answered with a non-2xx status */
  | 'status'
  /** no answer within the configured time */
  | 'timeout'
  /** the connection could not be made or was lost */
  | 'unavailable'
  /** a 2xx answer whose body could not be read as its content type, or was too large */
  | 'invalid-response'
  /** not sent: the area's circuit is open (`circuit.ts`) */
  | 'circuit-open'
  /** not sent: the area answered the caller's credentials 429 with a Retry-After that has not passed yet (`back-pressure.ts`) */
  | 'rate-limited'
  /** not sent: this deployment serves no such area (its URL is not set; `unserved.ts`) */
  | 'not-served';

/** What an {@link UpstreamError} is built from. */
export type UpstreamErrorOptions = {
  service: UpstreamService;
  operation: string;
  failure: UpstreamFailure;
  message: string;
  /** the upstream's HTTP status, when it answered */
  status?: number | undefined;
  /** the plant area's numeric `error` field, when its Error record was sent */
  upstreamCode?: number | undefined;
  /** how many times the call was retried before it failed for good (for metrics). @default 0 */
  retries?: number;
  /**
   * how long the area asked not to be called (a 429's or 503's Retry-After, capped), or how long
   * its circuit stays open, in milliseconds; the caller is told it as `extensions.retryAfter`
   */
  retryAfterMs?: number | undefined;
  /**
   * What the upstream said of a failure the caller is told of in the gateway's own words (a 5xx,
   * an unreadable answer): its message or an excerpt of its body, for the log line only, with
   * the call's secrets taken out.
   */
  upstreamSaid?: string | undefined;
};

/**
 * A failed upstream call. It names the service and operation, never the URL (which may carry
 * secrets in a user's configuration) and never a credential. `message` is the upstream's own
 * message for a 4xx (meant for the caller); for a 5xx or an unreadable answer it is the
 * gateway's own, and what the upstream said is `upstreamSaid`, which only the log shows.
 */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  readonly service: UpstreamService;
  readonly operation: string;
  readonly failure: UpstreamFailure;
  /** the upstream's HTTP status, when it answered */
  readonly status: number | undefined;
  /** the plant area's numeric `error` field, when its Error record was sent */
  readonly upstreamCode: number | undefined;
  /** how many times the call was retried before it failed for good (for metrics) */
  readonly retries: number;
  /** see {@link UpstreamErrorOptions.retryAfterMs} */
  readonly retryAfterMs: number | undefined;
  /** see {@link UpstreamErrorOptions.upstreamSaid} */
  readonly upstreamSaid: string | undefined;

  constructor(options: UpstreamErrorOptions) {
    super(options.message);
    this.service = options.service;
    this.operation = options.operation;
    this.failure = options.failure;
    this.status = options.status;
    this.upstreamCode = options.upstreamCode;
    this.retries = options.retries ?? 0;
    this.retryAfterMs = options.retryAfterMs;
    this.upstreamSaid = options.upstreamSaid;
  }
}

/**
 * The statuses with which an upstream (or a proxy before it) says it is unavailable rather than
 * that the request is wrong: a GET is retried after one, errors say UPSTREAM_UNAVAILABLE, and
 * readiness counts the upstream as down.
 */
export const UNAVAILABLE_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

/** Connection failures after which a read may be sent again (the request may never have arrived). */
const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'UND_ERR_SOCKET',
  'EAI_AGAIN',
]);

/** The final error of a call that was retried, saying so. */
export function afterRetries(error: UpstreamError, retries: number): UpstreamError {
  if (retries === 0) return error;
  const message = `${error.message} (after ${retries} ${retries === 1 ? 'retry' : 'retries'})`;
  const { service, operation, failure, status, upstreamCode, retryAfterMs, upstreamSaid } = error;
  return new UpstreamError({
    service,
    operation,
    failure,
    message,
    status,
    upstreamCode,
    retries,
    retryAfterMs,
    upstreamSaid,
  });
}

/** The system or undici code of an error (`ECONNREFUSED`, `UND_ERR_SOCKET`), if it has one. */
function errorCode(error: unknown): string | undefined {
  if (!(error instanceof Error) || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

/** An error raised by the connection or by undici (it carries a system or `UND_ERR_` code), or the deadline's abort. */
export function isTransportError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = errorCode(error);
  return (
    error.name === 'TimeoutError' ||
    error.name === 'AbortError' ||
    (code !== undefined && /^(UND_ERR_|E[A-Z]+$)/.test(code))
  );
}

/** The call's deadline ran out (its signal aborts with a TimeoutError). */
function isDeadline(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}

/** What ended a try before its answer was complete, as the retry rule and the message need it. */
export type TransportFailure = {
  /** which limit ran out, or that the connection failed */
  kind: 'connect-timeout' | 'headers-timeout' | 'body-timeout' | 'deadline' | 'connection';
  /** the system or undici code, or what happened in words, for the retry log */
  reason: string;
  /** a connection failure a read may be sent again after */
  transient: boolean;
};

/** Classifies the error of a try that failed before or while its answer arrived. */
export function transportFailure(error: unknown): TransportFailure {
  const code = errorCode(error);
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return { kind: 'connect-timeout', reason: code, transient: false };
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return { kind: 'headers-timeout', reason: code, transient: false };
  if (error instanceof BodyTimeout || code === 'UND_ERR_BODY_TIMEOUT')
    return { kind: 'body-timeout', reason: 'body timeout', transient: false };
  if (isDeadline(error)) return { kind: 'deadline', reason: 'deadline', transient: false };
  return { kind: 'connection', reason: code ?? 'connection error', transient: CONNECTION_ERROR_CODES.has(code ?? '') };
}

/**
 * The upstream's own message from an error body: `{message}` records (the pet store's
 * `{code, message}`, the plant area's `{error, message}`) in JSON or XML, or bare text, which
 * some servers send under a JSON or XML content type.
 */
export function errorMessage(text: string, contentType: string | undefined): { message: string; code?: number } {
  // An HTML page (a proxy's error page) is not a message meant for the caller.
  if (/^\s*text\/html\b/i.test(contentType ?? '') || /^\s*<(!doctype|html)\b/i.test(text)) return { message: '' };
  let decoded: unknown;
  try {
    decoded = decodeByContentType(text, contentType);
  } catch {
    decoded = text;
  }
  if (typeof decoded === 'object' && decoded !== null) {
    const record = decoded as Record<string, unknown>;
    const message = typeof record['message'] === 'string' ? record['message'] : '';
    const code = Number(record['error']);
    return { message: excerpt(message), ...(Number.isInteger(code) ? { code } : {}) };
  }
  return { message: excerpt(typeof decoded === 'string' ? decoded : '') };
}

/** At most 200 characters of a text passed on in a message, with any address left out. */
export function excerpt(text: string): string {
  // Addresses are left out of anything passed on: they may name internal hosts or carry secrets.
  const clean = text
    .trim()
    .replace(/\s+/g, ' ')
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, '[address]');
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}
