/**
 * One try of an upstream call, over the area's keep-alive undici pool: sent within the call's
 * limits, its body read (bounded: `body.ts`), and its answer judged: a 2xx decoded by its
 * Content-Type (`codec.ts`), anything else an {@link UpstreamError} saying what went wrong
 * (`failure.ts`) and whether trying again may help. The last link of the chain `http.ts`
 * composes; retries (`retry.ts`) call it again.
 *
 * What the caller is told: a 4xx with the upstream's own message (it is about the caller's
 * request), a 5xx or an answer that cannot be read in the gateway's words, what the upstream
 * said kept for the log (`upstreamSaid`), every credential and password of the call redacted.
 */
import { Pool } from 'undici';
import { credentialSecretsOf, redact } from '../secrets.js';
import { retryAfterMs } from './back-pressure.js';
import { readBoundedBody, ResponseTooLarge, type BodyLimits } from './body.js';
import type { RawResponse } from './cache.js';
import type { UpstreamRequest } from './call.js';
import { decodeByContentType } from './codec.js';
import {
  errorMessage,
  excerpt,
  isTransportError,
  transportFailure,
  UNAVAILABLE_STATUSES,
  UpstreamError,
  type UpstreamFailure,
  type UpstreamService,
} from './failure.js';

/** The outcome of one try: an answer, or a failure and whether trying again may help. */
export type Attempt =
  { ok: true; response: RawResponse } | { ok: false; error: UpstreamError; transient: boolean; reason: string };

/** Where a call has got to: a caller that gives up on a shared call gets the error it would have got alone. */
export type Progress = {
  /** the current try has its answer's headers, and is reading the body */
  answering: boolean;
  /** retries made so far */
  retries: number;
  /** the failure the call is waiting to retry after (worded with its retries so far), during that wait */
  retrying?: UpstreamError;
};

/** What bounds one call: a signal that ends it, the time after which no retry starts, and its progress. */
export type CallLimits = {
  signal: AbortSignal;
  /** `performance.now()` milliseconds */
  deadline(): number;
  progress: Progress;
};

/** An answer as the pool gives it: status, headers, and the body still to read. */
type PoolAnswer = Awaited<ReturnType<Pool['request']>>;

/** What a transport is made with: the area's base URL, limits, and who hears of a 429 with Retry-After. */
export type TransportOptions = {
  baseUrl: string;
  connections: number;
  timeouts: Readonly<{ totalMs: number; connectMs: number; headersMs: number; bodyMs: number }>;
  maxResponseBytes: number;
  retryAfterMaxMs: number;
  /** a GET's answer keeps its headers and text, for the upstream cache */
  keepRaw: boolean;
  /** the upstream answered `call` 429 with a Retry-After of `ms` */
  onRateLimited: (call: UpstreamRequest, ms: number) => void;
};

/** One area's pool, and how one try over it goes. */
export class Transport {
  private readonly pool: Pool;
  private readonly basePath: string;
  private readonly timeouts: TransportOptions['timeouts'];
  private readonly maxResponseBytes: number;
  private readonly retryAfterMaxMs: number;
  private readonly keepRaw: boolean;
  private readonly onRateLimited: TransportOptions['onRateLimited'];

  constructor(
    private readonly service: UpstreamService,
    options: TransportOptions,
  ) {
    const base = new URL(options.baseUrl);
    this.basePath = base.pathname.replace(/\/+$/, '');
    const { totalMs, connectMs, headersMs, bodyMs } = options.timeouts;
    this.timeouts = { totalMs, connectMs, headersMs, bodyMs };
    this.maxResponseBytes = options.maxResponseBytes;
    this.retryAfterMaxMs = options.retryAfterMaxMs;
    this.keepRaw = options.keepRaw;
    this.onRateLimited = options.onRateLimited;
    // Every call goes to this one origin: the pool cannot send a request (or a credential) anywhere else.
    this.pool = new Pool(base.origin, {
      connections: options.connections,
      connect: { timeout: connectMs },
      headersTimeout: headersMs,
      // undici's own body timeout is the longest pause between two chunks; attempt() keeps the whole-body limit.
      bodyTimeout: bodyMs,
      keepAliveTimeout: 30_000,
    });
  }

  /** One try of a call, within the call's limits: sent, its body read, its answer judged. */
  async attempt(call: UpstreamRequest, limits: CallLimits): Promise<Attempt> {
    // A streamed body can fail on its own (the client went away, an upload limit was hit);
    // that error, not undici's consequence of it, is what the caller must see.
    const source: { error?: Error } = {};
    const data = call.body?.data;
    if (data !== undefined && typeof data !== 'string') data.once('error', (error) => (source.error = error));

    const headers: Record<string, string> = { ...call.headers };
    if (call.body) headers['content-type'] = call.body.contentType;

    let response: PoolAnswer;
    limits.progress.answering = false;
    try {
      response = await this.pool.request({
        method: call.method,
        path: this.basePath + call.path + queryString(call.query),
        headers,
        body: data,
        signal: limits.signal,
      });
    } catch (error) {
      // undici destroys the body with its own error when the call fails; only a failure that
      // came from the body's source (an upload limit, a client gone) is passed on as it is.
      if (source.error !== undefined && !isTransportError(source.error)) throw source.error;
      return this.cut(call, error, false);
    }

    limits.progress.answering = true;
    const status = response.statusCode;
    let text: string;
    try {
      text = await readBoundedBody(response.body, this.bodyLimits(response.headers, limits));
    } catch (error) {
      return this.unread(call, error, status);
    }
    return this.judge(call, status, response.headers, text);
  }

  /** How much of an answer's body is read, and for how long. */
  private bodyLimits(headers: PoolAnswer['headers'], limits: CallLimits): BodyLimits {
    const { bodyMs } = this.timeouts;
    return {
      maxBytes: this.maxResponseBytes,
      declaredLength: Number(headerValue(headers['content-length']) ?? 0),
      // The whole body must arrive within `bodyMs` of the headers. When the call's deadline
      // comes first (as with the defaults, where both are the same), that deadline already ends
      // the read: no second timer per call.
      timeoutMs: performance.now() + bodyMs < limits.deadline() ? bodyMs : undefined,
    };
  }

  /** A try whose answer's body could not be read: too large, or cut off. */
  private unread(call: UpstreamRequest, error: unknown, status: number): Attempt {
    if (!(error instanceof ResponseTooLarge)) return this.cut(call, error, true);
    const message = `${this.service} answered ${call.operation} with more than ${this.maxResponseBytes} bytes`;
    return failed(this.fail(call, 'invalid-response', message, { status }), 'too large');
  }

  /** A complete answer, as its caller is told: a redirect, an error status, or a 2xx body decoded. */
  private judge(call: UpstreamRequest, status: number, headers: PoolAnswer['headers'], text: string): Attempt {
    const { service } = this;
    const contentType = headerValue(headers['content-type']);
    // What the upstream cache reads of a GET's answer: its headers and its text, as received.
    const raw = this.keepRaw && call.method === 'GET' ? { raw: { headers, text } } : {};
    // A 304 answers the cache's conditional GET: the answer it keeps is still good.
    if (status === 304 && isConditional(call)) return { ok: true, response: { status, body: undefined, ...raw } };
    if (status >= 300 && status <= 399) {
      // Redirects are not followed: the location may be another origin, which must not receive credentials.
      const message = `${service} answered ${call.operation} with a redirect (status ${status}), which the gateway does not follow`;
      return failed(this.fail(call, 'status', message, { status }), `status ${status}`);
    }
    if (status < 200 || status > 299) return this.errorAnswer(call, status, headers, text);
    if (call.ignoreBody) return { ok: true, response: { status, body: undefined } };
    try {
      return { ok: true, response: { status, body: decodeByContentType(text, contentType), ...raw } };
    } catch {
      // What the body held is the upstream's: the log gets an excerpt, the caller the gateway's words.
      const message = `${service} answered ${call.operation} with a body that is not valid ${contentType ?? 'content'}`;
      return failed(
        this.fail(call, 'invalid-response', message, { status, upstreamSaid: excerpt(text) }),
        'invalid body',
      );
    }
  }

  /**
   * An answer with an error status, as its caller is told: a 4xx with the upstream's own message
   * (it is about the caller's request), a 5xx in the gateway's words (what the upstream says of
   * itself, paths or stack lines, goes to the log only). A 429 with Retry-After also holds the
   * caller back, and a 503's bounds its retry, for the time it asks (at most UPSTREAM_RETRY_AFTER_MAX_MS).
   */
  private errorAnswer(call: UpstreamRequest, status: number, headers: PoolAnswer['headers'], text: string): Attempt {
    const { message, code } = errorMessage(text, headerValue(headers['content-type']));
    const asked =
      status === 429 || status === 503
        ? retryAfterMs(headerValue(headers['retry-after']), Date.now(), this.retryAfterMaxMs)
        : undefined;
    if (asked !== undefined && status === 429) this.onRateLimited(call, asked);
    const own = `${this.service} answered ${call.operation} with status ${status}`;
    const error =
      status >= 500
        ? this.fail(call, 'status', own, { status, code, retryAfterMs: asked, upstreamSaid: message || undefined })
        : this.fail(call, 'status', message || own, { status, code, retryAfterMs: asked });
    return failed(error, `status ${status}`, UNAVAILABLE_STATUSES.has(status));
  }

  /** A try that ended before its answer was complete, as its caller is told. */
  private cut(call: UpstreamRequest, error: unknown, answering: boolean): Attempt {
    const { service } = this;
    const { kind, reason, transient } = transportFailure(error);
    const { operation } = call;
    const lost = answering
      ? `${service} broke the connection while answering ${operation}`
      : `${service} is unavailable for ${operation}`;
    const messages = {
      'connect-timeout': `${service} did not accept a connection for ${operation} within ${this.timeouts.connectMs} ms`,
      'headers-timeout': `${service} did not answer ${operation} within ${this.timeouts.headersMs} ms`,
      'body-timeout': `${service} did not finish answering ${operation} within ${this.timeouts.bodyMs} ms`,
      deadline: this.deadlineMessage(operation, answering),
    } as const;
    return kind === 'connection'
      ? failed(this.fail(call, 'unavailable', lost), reason, transient)
      : failed(this.fail(call, 'timeout', messages[kind]), reason);
  }

  /** The error of a failed call, its credentials taken out of the message and of what the upstream said. */
  private fail(
    call: UpstreamRequest,
    failure: UpstreamFailure,
    message: string,
    answer: {
      status?: number;
      code?: number | undefined;
      retryAfterMs?: number | undefined;
      upstreamSaid?: string | undefined;
    } = {},
  ): UpstreamError {
    // The secrets are only gathered when a message has to be cleared of them. An upstream that
    // echoes a credential or a password must not get it into a response or a log.
    const secrets = [...credentialSecretsOf(call.headers), ...(call.secrets ?? [])];
    const { status, code, retryAfterMs, upstreamSaid } = answer;
    return new UpstreamError({
      service: this.service,
      operation: call.operation,
      failure,
      message: redact(message, secrets),
      status,
      upstreamCode: code,
      retryAfterMs,
      upstreamSaid: upstreamSaid === undefined ? undefined : redact(upstreamSaid, secrets),
    });
  }

  /** What a call that ran out of its deadline says, by whether its answer had begun to arrive. */
  deadlineMessage(operation: string, answering: boolean): string {
    const { service } = this;
    const { totalMs: timeoutMs } = this.timeouts;
    return answering
      ? `${service} did not finish answering ${operation} within ${timeoutMs} ms`
      : `${service} did not answer ${operation} within ${timeoutMs} ms`;
  }

  async ping(pingTimeoutMs: number): Promise<number> {
    // As a call's deadline: a timer cleared when the answer is in, not AbortSignal.timeout.
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new DOMException(`deadline of ${pingTimeoutMs} ms`, 'TimeoutError')),
      pingTimeoutMs,
    );
    try {
      const answer = await this.pool.request({ method: 'GET', path: this.basePath || '/', signal: controller.signal });
      // Only the status counts; the body is dropped, and with it the connection is freed.
      await answer.body.dump();
      return answer.statusCode;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes the pool once the calls in flight are done. */
  close(): Promise<void> {
    return this.pool.close();
  }
}

/** A failed try: its error, why it failed (for the retry event), and whether trying again may help. */
function failed(error: UpstreamError, reason: string, transient = false): Attempt {
  return { ok: false, error, transient, reason };
}

/** Whether a call is a conditional GET (the upstream cache's revalidation), to which a 304 is an answer. */
function isConditional(call: UpstreamRequest): boolean {
  const headers = call.headers ?? {};
  return headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined;
}

/** The first value of a response header. */
function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The query string of a call, `?` included, or '' without parameters; an array value is sent as repeated parameters. */
export function queryString(query: UpstreamRequest['query']): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const item of typeof value === 'string' ? [value] : value) params.append(name, item);
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}
