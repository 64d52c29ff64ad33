/**
 * The one place that speaks HTTP to the upstreams: a keep-alive undici pool per upstream
 * origin, timeouts (connect, headers, whole body, and a deadline per call), retries of reads
 * that met a connection error or a 502/503/504, a response size cap, decoding by Content-Type,
 * and a typed {@link UpstreamError} for every failure. Identical GETs in flight at the same time
 * share one call (`in-flight.ts`). Area modules (`petstore.ts`, `plants.ts`) sit on top;
 * resolvers never see HTTP.
 */
import type { Readable } from 'node:stream';
import { Pool } from 'undici';
import type { RequestScope } from '../observability/request-context.js';
import { DecodeError, decodeJson, decodeXml, normalize, type Payload, type Shape } from './codec.js';
import { createInFlightCalls, type Waiter } from './in-flight.js';

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
  | 'invalid-response';

/**
 * A failed upstream call. It names the service and operation, never the URL (which may carry
 * secrets in a user's configuration) and never a credential. `message` is the upstream's own
 * message when it sent one.
 */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  constructor(
    readonly service: UpstreamService,
    readonly operation: string,
    readonly failure: UpstreamFailure,
    message: string,
    /** the upstream's HTTP status, when it answered */
    readonly status?: number,
    /** the plant area's numeric `error` field, when its Error record was sent */
    readonly upstreamCode?: number,
    /** how many times the call was retried before it failed for good (for metrics) */
    readonly retries = 0,
  ) {
    super(message);
  }
}

/** Options of one upstream client; the gateway takes each from its configuration (the setting named), which holds the defaults. */
export type UpstreamClientOptions = {
  /** base URL of the area, e.g. `https://petstore3.swagger.io/api/v3`; its path prefixes every call */
  baseUrl: string;
  /** maximum parallel connections (and so parallel calls) to this upstream; more calls queue (UPSTREAM_CONNECTIONS) */
  connections: number;
  /** the area's timeouts, in milliseconds (UPSTREAM_TIMEOUT_MS and the settings after it) */
  timeouts: Readonly<{
    /** deadline for a whole call, from the first connect to the last body byte, retries and the waits between them included */
    totalMs: number;
    /** time to establish a connection (TCP, and TLS for https) */
    connectMs: number;
    /** time from sending the request to receiving the response headers */
    headersMs: number;
    /** time from the response headers to the last body byte */
    bodyMs: number;
  }>;
  /** largest response body read, in bytes; a larger one is an `invalid-response` (UPSTREAM_MAX_RESPONSE_BYTES) */
  maxResponseBytes: number;
  /** retries of a GET after a connection error or a 502/503/504 answer; 0 turns retries off (UPSTREAM_RETRIES) */
  retries: number;
  /** the wait before the first retry, doubled for each further one, then jittered (see {@link retryDelay}) (UPSTREAM_RETRY_BACKOFF_MS) */
  retryBackoffMs: number;
  /** the longest wait before one retry, in milliseconds (UPSTREAM_RETRY_BACKOFF_MAX_MS) */
  retryBackoffMaxMs: number;
  /** called before each retry, for logs and metrics */
  onRetry?: (event: RetryEvent) => void;
  /** watches every call (metrics, traces, the request log): may add headers to it, and hears how it ended */
  observer?: UpstreamObserver;
  /**
   * Identical GETs in flight at the same time share one call: same path and query, same headers
   * (`Accept` and the credential: callers with different credentials, or one with and one
   * without, never share). Each caller keeps its own deadline. A POST, PUT or DELETE makes the
   * reads in flight under its path's first segment (`/pet`, `/store`, `/user`, `/plants`) take
   * no more callers, when it is sent and again when it ends, so that a read that starts after a
   * change never gets an answer fetched before it (UPSTREAM_DEDUPE).
   */
  dedupe: boolean;
};

/**
 * Watches upstream calls without taking part in them: `src/observability/` counts, traces and
 * logs them through this one hook, so that this module stays about HTTP.
 */
export type UpstreamObserver = (call: {
  service: UpstreamService;
  operation: string;
  method: UpstreamRequest['method'];
  /** true: the call joined an identical one already in flight and sends nothing itself (its watch's headers go nowhere) */
  shared?: boolean;
  /** the request it is made for, when its caller said (see {@link UpstreamRequest.scope}) */
  scope?: RequestScope;
}) => UpstreamCallWatch;

/** One call being watched. */
export type UpstreamCallWatch = {
  /** headers added to every attempt (trace context, request id); the call's own headers win */
  headers?: Readonly<Record<string, string>>;
  /** called once, when the call has ended, however it ended */
  end(outcome: UpstreamCallOutcome): void;
};

/** How a watched call ended. */
export type UpstreamCallOutcome = {
  /** the last answer's HTTP status, when there was one */
  status?: number;
  /** why it failed; undefined when it succeeded. `aborted`: its request body failed (the client went away, an upload limit) */
  failure?: UpstreamFailure | 'aborted';
  /** retries made */
  retries: number;
  /** from the start of the call to its end, retries and the waits between them included */
  durationMs: number;
};

/** A retry about to happen. */
export type RetryEvent = {
  service: UpstreamService;
  operation: string;
  /** 1 for the first retry */
  retry: number;
  /** the wait before it, in milliseconds */
  delayMs: number;
  /** the failure that caused it: `status 503`, `ECONNREFUSED`, … */
  reason: string;
  /** the request the call is made for, when its caller said */
  scope?: RequestScope;
};

type QueryValue = string | readonly string[] | undefined;

/** One call, described without HTTP plumbing. */
export type UpstreamRequest = {
  /** the REST operation's name (its operationId), used in errors and metrics */
  operation: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** path below the base URL, already encoded; build it with {@link path} */
  path: string;
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

/** A client for one upstream area. */
export type UpstreamClient = {
  readonly service: UpstreamService;
  request(call: UpstreamRequest): Promise<UpstreamResponse>;
  /** closes the pool once in-flight calls are done */
  close(): Promise<void>;
};

/**
 * Builds a path from a template, percent-encoding every interpolated value as one path
 * segment, so that no input (`../`, `?`, `/`) can change which resource is called.
 */
export function path(strings: TemplateStringsArray, ...values: readonly (string | number)[]): string {
  return strings.reduce((result, literal, index) => {
    const value = index < values.length ? encodeSegment(String(values[index])) : '';
    return result + literal + value;
  }, '');
}

function encodeSegment(value: string): string {
  // encodeURIComponent leaves '.' alone, and a segment of '.' or '..' would be resolved away.
  return encodeURIComponent(value).replace(/\./g, '%2E');
}

/**
 * The wait before retry number `retry` (1 for the first): `baseMs` doubled for each retry after
 * the first, capped at `maxMs`, then jittered to a random point in its upper half. The jitter
 * spreads out callers that failed together (so they do not all come back at once); keeping
 * the lower half out keeps each wait growing.
 */
export function retryDelay(retry: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** (retry - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** Connection failures after which a GET can safely be sent again: refused, reset, closed. */
const CONNECTION_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'UND_ERR_SOCKET', 'EAI_AGAIN']);

/** Answers that say "try again": the upstream or a proxy in front of it is briefly unable to serve. */
const RETRYABLE_STATUSES = new Set([502, 503, 504]);

/** The outcome of one attempt: an answer, or a failure and whether trying again may help. */
type Attempt = { ok: true; response: UpstreamResponse } | { ok: false; error: UpstreamError; transient: boolean; reason: string };

/** Builds the error of a failed call (its credentials already taken out of the message). */
type Fail = (failure: UpstreamFailure, message: string, status?: number, code?: number) => UpstreamError;

/** The body read was cut short by the whole-body timeout. */
class BodyTimeout extends Error {}

/** Where a call has got to: a caller that gives up on a shared call gets the error it would have got alone. */
type Progress = {
  /** the current try has its answer's headers, and is reading the body */
  answering: boolean;
  /** retries made so far */
  retries: number;
  /** the failure the call is waiting to retry after (worded with its retries so far), during that wait */
  retrying?: UpstreamError;
};

/** What bounds one call: a signal that ends it, the time after which no retry starts, and its progress. */
type CallLimits = {
  signal: AbortSignal;
  /** `performance.now()` milliseconds */
  deadline(): number;
  progress: Progress;
};

/** A successful call: its answer, and the retries it took. */
type Sent = { response: UpstreamResponse; retries: number };

/** Creates the client of one upstream area, with its own keep-alive pool. */
export function createUpstreamClient(service: UpstreamService, options: UpstreamClientOptions): UpstreamClient {
  const base = new URL(options.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const { totalMs: timeoutMs, connectMs: connectTimeoutMs, headersMs: headersTimeoutMs, bodyMs: bodyTimeoutMs } = options.timeouts;
  const { maxResponseBytes, retries, retryBackoffMs, retryBackoffMaxMs } = options;
  // Every call goes to this one origin: the pool cannot send a request (or a credential) anywhere else.
  const pool = new Pool(base.origin, {
    connections: options.connections,
    connect: { timeout: connectTimeoutMs },
    headersTimeout: headersTimeoutMs,
    // undici's own body timeout is the longest pause between two chunks; attempt() keeps the whole-body limit.
    bodyTimeout: bodyTimeoutMs,
    keepAliveTimeout: 30_000,
  });

  // Identical GETs in flight share one call (see in-flight.ts); undefined when that is turned off.
  const inFlight = options.dedupe ? createInFlightCalls<Sent, Progress>(() => ({ answering: false, retries: 0 })) : undefined;

  async function request(call: UpstreamRequest): Promise<UpstreamResponse> {
    if (call.method === 'GET' || inFlight === undefined) return observed(call);
    // A change: the reads of its resource already in flight take no more callers, from when it
    // is sent, and again once it has ended (reads started while it was in flight may have been
    // answered before it was carried out).
    const scope = sharingScope(call.path);
    inFlight.seal(scope);
    try {
      return await observed(call);
    } finally {
      inFlight.seal(scope);
    }
  }

  /** One call, as the observer watches it: joined to an identical one in flight, or made. */
  async function observed(call: UpstreamRequest): Promise<UpstreamResponse> {
    const key = inFlight !== undefined && call.method === 'GET' ? sharingKey(call) : undefined;
    // Each caller of a shared call waits until its own deadline, and then fails as it would have alone.
    const waiter: Waiter<Progress> = {
      timeoutMs,
      // Alone, it would not have waited for a retry that starts after its deadline: it would have got the failure.
      timedOut: (progress) =>
        progress.retrying ?? afterRetries(new UpstreamError(service, call.operation, 'timeout', deadlineMessage(call.operation, progress.answering)), progress.retries),
    };
    const joined = key === undefined ? undefined : inFlight?.join(key, waiter);
    const made = (headed: UpstreamRequest): Promise<Sent> =>
      key !== undefined && inFlight !== undefined ? inFlight.start(key, sharingScope(call.path), waiter, (shared) => send(headed, shared)) : sendAlone(headed);
    const watch = options.observer?.({ service, operation: call.operation, method: call.method, ...(joined ? { shared: true } : {}), scope: call.scope });
    if (watch === undefined) return (await (joined ?? made(call))).response;
    const started = performance.now();
    const end = (outcome: Omit<UpstreamCallOutcome, 'durationMs'>) => watch.end({ ...outcome, durationMs: performance.now() - started });
    try {
      // A shared call is made with its first caller's headers (request id, trace context).
      const { response, retries } = await (joined ?? made(watch.headers ? { ...call, headers: { ...watch.headers, ...call.headers } } : call));
      end({ status: response.status, retries });
      return response;
    } catch (error) {
      end(error instanceof UpstreamError ? { status: error.status, failure: error.failure, retries: error.retries } : { failure: 'aborted', retries: 0 });
      throw error;
    }
  }

  /** A call nobody else joins, with a deadline of its own. */
  async function sendAlone(call: UpstreamRequest): Promise<Sent> {
    // The deadline's timer is cleared as soon as the call ends. (AbortSignal.timeout would keep
    // each signal, and what undici hangs on it, alive for the whole timeout: under load that
    // is seconds of calls promoted to the old heap, and a resident set far above the live data.)
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new DOMException(`deadline of ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
    const deadline = performance.now() + timeoutMs;
    try {
      return await send(call, { signal: controller.signal, deadline: () => deadline, progress: { answering: false, retries: 0 } });
    } finally {
      clearTimeout(timer);
    }
  }

  /** One call, retried as its method and failure allow, within `limits`. */
  async function send(call: UpstreamRequest, limits: CallLimits): Promise<Sent> {
    // The secrets are only gathered when a message has to be cleared of them.
    const fail: Fail = (failure, message, status, code) => {
      const secrets = [...credentialValues(call.headers), ...(call.secrets ?? []).filter((secret) => secret !== '')];
      return new UpstreamError(service, call.operation, failure, withoutSecrets(message, secrets), status, code);
    };
    // Only a read can be sent twice without risk: a POST or PUT may have been carried out
    // although its answer was lost, and a second one would act twice.
    const idempotent = call.method === 'GET';

    for (let retry = 0; ; retry += 1) {
      const outcome = await attempt(call, limits, fail);
      if (outcome.ok) return { response: outcome.response, retries: retry };
      if (!idempotent || !outcome.transient || retry >= retries) throw afterRetries(outcome.error, retry);
      const delayMs = retryDelay(retry + 1, retryBackoffMs, retryBackoffMaxMs);
      // A retry that could only start at or after the deadline is not made; the caller gets the failure there is.
      if (performance.now() + delayMs >= limits.deadline()) throw afterRetries(outcome.error, retry);
      options.onRetry?.({ service, operation: call.operation, retry: retry + 1, delayMs, reason: outcome.reason, ...(call.scope ? { scope: call.scope } : {}) });
      limits.progress.retries = retry + 1;
      limits.progress.retrying = afterRetries(outcome.error, retry);
      await sleep(delayMs);
      limits.progress.retrying = undefined;
    }
  }

  /** What a call that ran out of its deadline says, by whether its answer had begun to arrive. */
  function deadlineMessage(operation: string, answering: boolean): string {
    return answering ? `${service} did not finish answering ${operation} within ${timeoutMs} ms` : `${service} did not answer ${operation} within ${timeoutMs} ms`;
  }

  /** One try of a call, within the call's limits. */
  async function attempt(call: UpstreamRequest, limits: CallLimits, fail: Fail): Promise<Attempt> {
    const failed = (error: UpstreamError, reason: string, transient = false): Attempt => ({ ok: false, error, transient, reason });

    // A streamed body can fail on its own (the client went away, an upload limit was hit);
    // that error, not undici's consequence of it, is what the caller must see.
    let bodyError: unknown;
    const data = call.body?.data;
    if (data !== undefined && typeof data !== 'string') data.once('error', (error) => (bodyError = error));

    const headers: Record<string, string> = { ...call.headers };
    if (call.body) headers['content-type'] = call.body.contentType;

    let response: Awaited<ReturnType<Pool['request']>>;
    limits.progress.answering = false;
    try {
      response = await pool.request({
        method: call.method,
        path: basePath + call.path + queryString(call.query),
        headers,
        body: data,
        signal: limits.signal,
      });
    } catch (error) {
      // undici destroys the body with its own error when the call fails; only a failure that
      // came from the body's source (an upload limit, a client gone) is passed on as it is.
      if (bodyError !== undefined && !isTransportError(bodyError)) throw bodyError;
      const code = errorCode(error);
      if (code === 'UND_ERR_CONNECT_TIMEOUT') return failed(fail('timeout', `${service} did not accept a connection for ${call.operation} within ${connectTimeoutMs} ms`), code);
      if (code === 'UND_ERR_HEADERS_TIMEOUT') return failed(fail('timeout', `${service} did not answer ${call.operation} within ${headersTimeoutMs} ms`), code);
      if (isDeadline(error)) return failed(fail('timeout', deadlineMessage(call.operation, false)), 'deadline');
      return failed(fail('unavailable', `${service} is unavailable for ${call.operation}`), code ?? 'connection error', CONNECTION_ERROR_CODES.has(code ?? ''));
    }

    limits.progress.answering = true;
    const body = response.body;
    // The body is destroyed when it is too large or too slow, perhaps while nothing reads it; its
    // error then has a listener (and never becomes an uncaught exception); readers still get it.
    body.on('error', () => undefined);
    const declaredLength = Number(headerValue(response.headers['content-length']) ?? 0);
    let text: string;
    // The whole body must arrive within bodyTimeoutMs of the headers, however steadily it trickles.
    // When the call's deadline comes first (as with the defaults, where both are the same), that
    // deadline already ends the read: no second timer per call.
    const bodyTimer = performance.now() + bodyTimeoutMs < limits.deadline() ? setTimeout(() => body.destroy(new BodyTimeout()), bodyTimeoutMs) : undefined;
    try {
      // A declared length over the cap is refused before a byte of the body is read.
      if (declaredLength > maxResponseBytes) {
        body.destroy();
        throw new ResponseTooLarge();
      }
      text = await readText(body, maxResponseBytes);
    } catch (error) {
      if (error instanceof ResponseTooLarge) {
        return failed(fail('invalid-response', `${service} answered ${call.operation} with more than ${maxResponseBytes} bytes`, response.statusCode), 'too large');
      }
      if (error instanceof BodyTimeout || errorCode(error) === 'UND_ERR_BODY_TIMEOUT') {
        return failed(fail('timeout', `${service} did not finish answering ${call.operation} within ${bodyTimeoutMs} ms`), 'body timeout');
      }
      if (isDeadline(error)) return failed(fail('timeout', deadlineMessage(call.operation, true)), 'deadline');
      const code = errorCode(error);
      return failed(fail('unavailable', `${service} broke the connection while answering ${call.operation}`), code ?? 'connection error', CONNECTION_ERROR_CODES.has(code ?? ''));
    } finally {
      clearTimeout(bodyTimer);
    }

    const status = response.statusCode;
    const contentType = headerValue(response.headers['content-type']);
    if (status >= 300 && status <= 399) {
      // Redirects are not followed: the location may be another origin, which must not receive credentials.
      return failed(fail('status', `${service} answered ${call.operation} with a redirect (status ${status}), which the gateway does not follow`, status), `status ${status}`);
    }
    if (status < 200 || status > 299) {
      const { message, code } = errorMessage(text, contentType);
      return failed(fail('status', message || `${service} answered ${call.operation} with status ${status}`, status, code), `status ${status}`, RETRYABLE_STATUSES.has(status));
    }
    if (call.ignoreBody) return { ok: true, response: { status, body: undefined } };
    try {
      return { ok: true, response: { status, body: decodeBody(text, contentType) } };
    } catch {
      return failed(fail('invalid-response', `${service} answered ${call.operation} with a body that is not valid ${contentType ?? 'content'}: ${excerpt(text)}`, status), 'invalid body');
    }
  }

  return { service, request, close: () => pool.close() };
}

/** The final error of a call that was retried, saying so. */
function afterRetries(error: UpstreamError, retries: number): UpstreamError {
  if (retries === 0) return error;
  const message = `${error.message} (after ${retries} ${retries === 1 ? 'retry' : 'retries'})`;
  return new UpstreamError(error.service, error.operation, error.failure, message, error.status, error.upstreamCode, retries);
}

/**
 * What makes two GETs the same call: the path and query, every header the caller set (`Accept`
 * and the credential among them: callers with different credentials, or one with and one
 * without, never share), and whether the body is read. The key stays in memory; it is never
 * logged. A call with a body or secrets is never shared (undefined).
 */
function sharingKey(call: UpstreamRequest): string | undefined {
  if (call.body !== undefined || (call.secrets?.length ?? 0) > 0) return undefined;
  // Header values cannot hold line breaks, so lines keep the parts apart.
  let key = `${call.ignoreBody === true ? '!' : ''}${call.path}${queryString(call.query)}`;
  const headers = call.headers ?? {};
  for (const name of Object.keys(headers).sort()) key += `\n${name.toLowerCase()}:${headers[name]}`;
  return key;
}

/**
 * The resources a change may affect, for the rule that keeps a later read from joining a call
 * that started before the change: its path's first segment (`/pet/1` → `/pet`, `/store/order`
 * → `/store`). Coarse (a `PUT /pet` also stops `/pet/findByStatus` from taking callers), and so
 * sound without knowing which resources each operation touches.
 */
function sharingScope(path: string): string {
  return `/${path.split('/')[1] ?? ''}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const CREDENTIAL_HEADERS = new Set(['authorization', 'api_key']);

/** The credential values a call carries: the whole header and, for `Bearer x`, the token alone. */
function credentialValues(headers: UpstreamRequest['headers']): string[] {
  return Object.entries(headers ?? {})
    .filter(([name]) => CREDENTIAL_HEADERS.has(name.toLowerCase()))
    .flatMap(([, value]) => [value, value.replace(/^\S+\s+/, '')])
    .filter((value) => value.length >= 4);
}

/** An upstream that echoes a credential in its error message must not get it into a response or a log. */
function withoutSecrets(message: string, secrets: readonly string[]): string {
  return secrets.reduce((text, secret) => text.split(secret).join('[redacted]'), message);
}

function queryString(query: UpstreamRequest['query']): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const item of typeof value === 'string' ? [value] : value) params.append(name, item);
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** An error raised by the connection or by undici (it carries a system or `UND_ERR_` code), or the deadline's abort. */
function isTransportError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = errorCode(error);
  return error.name === 'TimeoutError' || error.name === 'AbortError' || (code !== undefined && /^(UND_ERR_|E[A-Z]+$)/.test(code));
}

/** The call's deadline ran out (its signal aborts with a TimeoutError). */
function isDeadline(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}

/** The system or undici code of an error (`ECONNREFUSED`, `UND_ERR_SOCKET`), if it has one. */
function errorCode(error: unknown): string | undefined {
  if (!(error instanceof Error) || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

class ResponseTooLarge extends Error {}

/**
 * Reads a body up to `limit` bytes. At the first chunk past it the stream is destroyed, which
 * aborts the answer and closes its connection (a half-read answer cannot be reused), so no
 * more than one chunk beyond the limit is ever read.
 */
async function readText(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      throw new ResponseTooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function mediaType(contentType: string | undefined): 'json' | 'xml' | 'text' {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'application/json' || type.endsWith('+json')) return 'json';
  if (type === 'application/xml' || type === 'text/xml' || type.endsWith('+xml')) return 'xml';
  return 'text';
}

/** Decodes a body by its Content-Type: JSON, XML, or anything else as text. */
function decodeBody(text: string, contentType: string | undefined): unknown {
  if (text.trim() === '') return undefined;
  const type = mediaType(contentType);
  return type === 'json' ? decodeJson(text) : type === 'xml' ? decodeXml(text) : text;
}

/**
 * The upstream's own message from an error body: `{message}` records (the pet store's
 * `{code, message}`, the plant area's `{error, message}`) in JSON or XML, or bare text, which
 * some servers send under a JSON or XML content type.
 */
function errorMessage(text: string, contentType: string | undefined): { message: string; code?: number } {
  // An HTML page (a proxy's error page) is not a message meant for the caller.
  if (/^\s*text\/html\b/i.test(contentType ?? '') || /^\s*<(!doctype|html)\b/i.test(text)) return { message: '' };
  let decoded: unknown;
  try {
    decoded = decodeBody(text, contentType);
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

function excerpt(text: string): string {
  // Addresses are left out of anything passed on: they may name internal hosts or carry secrets.
  const clean = text.trim().replace(/\s+/g, ' ').replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, '[address]');
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}

/**
 * Reads a successful answer's body as the payload `shape` describes; a body that does not fit
 * becomes an `invalid-response` error naming the offending field (never a crash).
 */
export function decodePayload<S extends Shape>(client: UpstreamClient, operation: string, shape: S, response: UpstreamResponse): Payload<S> {
  try {
    return normalize(shape, response.body);
  } catch (error) {
    const reason = error instanceof DecodeError ? error.message : 'unreadable body';
    throw new UpstreamError(client.service, operation, 'invalid-response', `${client.service} answered ${operation} with an unexpected body (${reason})`, response.status);
  }
}
