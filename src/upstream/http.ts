/**
 * The one place that speaks HTTP to the upstreams: a keep-alive undici pool per upstream
 * origin, timeouts (connect, headers, whole body, and a deadline per call), retries of reads
 * that met a connection error or a 502/503/504, and decoding by Content-Type. What a failure
 * was is `failure.ts`'s to say, reading a bounded body `body.ts`'s, decoding `codec.ts`'s.
 * Identical GETs in flight at the same time share one call (`in-flight.ts`). Each area has a
 * circuit breaker (`circuit.ts`), judged on many calls of several callers, and honours
 * Retry-After (`back-pressure.ts`): a 429's holds back the caller that received it, a 503's
 * delays that call's retry. Area modules (`petstore.ts`, `plants.ts`) sit on top; resolvers
 * never see HTTP. An upstream's 5xx text, or an answer it cannot read, is told to the caller in
 * the gateway's own words; what the upstream said goes to the log only.
 *
 * Why not undici's interceptors (undici 7 has retry, deduplicate and cache), measured against
 * what this code must do:
 * - retry (`RetryHandler`): it has no deadline over the whole call, so retries and the waits
 *   between them could outlive UPSTREAM_TIMEOUT_MS; it retries 429 and 500 by default and resumes
 *   a cut body with a Range request, neither of which a JSON API wants; and it has no hook per
 *   attempt, where each retry is logged for its request and counted.
 * - deduplicate: it shares a call among identical requests, but a caller cannot leave at its own
 *   deadline while the others go on waiting (nor the call be aborted only once every caller has
 *   left), and a caller that joins is not observed (the `shared` mark of the request log and
 *   metrics); `in-flight.ts` does those.
 * - cache: the upstream cache (`cache.ts`, UPSTREAM_CACHE) keys its answers per credential
 *   fingerprint and per REST resource, so that writes through the gateway invalidate them, and
 *   serves stale answers the observed way (a call record, `extensions.upstreamCache`);
 *   `http-cache-semantics` does the RFC 9111 parts. GETs go through it first, and only what it
 *   does not answer is sent.
 */
import { Pool } from 'undici';
import type { RequestScope } from './request-scope.js';
import { credentialFingerprintOf, credentialSecretsOf, redact } from '../secrets.js';
import { ANONYMOUS_CALLER, RateLimitHolds, retryAfterMs } from './back-pressure.js';
import { readBoundedBody, ResponseTooLarge, type BodyLimits } from './body.js';
import {
  AreaCircuit,
  type AreaNews,
  type AreaNewsChannel,
  type CircuitSettings,
  type CircuitState,
} from './circuit.js';
import { decodeByContentType, DecodeError, normalize, type Payload, type Shape } from './codec.js';
import {
  afterRetries,
  errorMessage,
  excerpt,
  isTransportError,
  transportFailure,
  UNAVAILABLE_STATUSES,
  UpstreamError,
  type UpstreamFailure,
  type UpstreamService,
} from './failure.js';
import { createInFlightCalls, type InFlightCalls, type Waiter } from './in-flight.js';
import type { CacheResult, RawResponse, StaleServed, UpstreamCache } from './cache.js';
import type { ChangeFeed } from './changes.js';
import type { UpstreamRequest, UpstreamResponse } from './call.js';

// One call and its answer are described in call.ts (below this client and the cache); the client's
// users find them here too.
export type { UpstreamRequest, UpstreamResponse } from './call.js';

/**
 * Options of one upstream client; the gateway takes each from its configuration (the setting named),
 * which holds the defaults.
 */
export type UpstreamClientOptions = {
  /** base URL of the area, e.g. `https://petstore3.swagger.io/api/v3`; its path prefixes every call */
  baseUrl: string;
  /** maximum parallel connections (and so parallel calls) to this upstream; more calls queue (UPSTREAM_CONNECTIONS) */
  connections: number;
  /** the area's timeouts, in milliseconds (UPSTREAM_TIMEOUT_MS and the settings after it) */
  timeouts: Readonly<{
    /**
     * deadline for a whole call, from the first connect to the last body byte, retries and the waits
     * between them included
     */
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
  /**
   * the wait before the first retry, doubled for each further one, then jittered (see {@link retryDelay})
   * (UPSTREAM_RETRY_BACKOFF_MS)
   */
  retryBackoffMs: number;
  /** the longest wait before one retry, in milliseconds (UPSTREAM_RETRY_BACKOFF_MAX_MS) */
  retryBackoffMaxMs: number;
  /** called before each retry, for logs and metrics */
  onRetry?: (event: RetryEvent) => void;
  /** the area's circuit breaker (the UPSTREAM_CIRCUIT_* settings) */
  circuit: CircuitSettings;
  /** the longest wait a 429's or 503's Retry-After imposes, in milliseconds (UPSTREAM_RETRY_AFTER_MAX_MS) */
  retryAfterMaxMs: number;
  /** called each time the area's circuit changes state, for logs and metrics */
  onCircuitChange?: (state: CircuitState) => void;
  /** how replicas share circuits and Retry-After holds (with REDIS_URL); without it each keeps its own */
  news?: AreaNewsChannel;
  /** watches every call (metrics, traces, the request log): may add headers to it, and hears how it ended */
  observer?: UpstreamObserver;
  /**
   * Identical GETs in flight at the same time share one call: same path and query, same headers
   * (`Accept` and the credential: callers with different credentials, or one with and one
   * without, never share). Each caller keeps its own deadline. A POST, PUT or DELETE makes the
   * reads in flight of the resource kinds its operation's row says it may change (`pet`,
   * `inventory`, …) take no more callers, when it is sent and again when it ends, so that a read
   * that starts after a change never gets an answer fetched before it (UPSTREAM_DEDUPE).
   */
  dedupe: boolean;
  /** the upstream cache (UPSTREAM_CACHE; src/upstream/cache.ts): GETs are looked up there first; without it, none is kept */
  cache?: UpstreamCache;
  /**
   * what writes changed, through this replica or (with REDIS_URL) another: the reads of a changed
   * resource in flight take no more callers, as after a write through this client
   */
  changes?: ChangeFeed;
  /** called for each GET the cache looked at, with what it did (for metrics) */
  onCache?: (event: { service: UpstreamService; operation: string; result: CacheResult }) => void;
};

/**
 * Watches upstream calls without taking part in them: `src/observability/` counts, traces and
 * logs them through this one hook, so that this module stays about HTTP.
 */
export type UpstreamObserver = (call: {
  service: UpstreamService;
  operation: string;
  method: UpstreamRequest['method'];
  /**
   * true: the call joined an identical one already in flight and sends nothing itself (its watch's headers go nowhere)
   */
  shared?: boolean;
  /** the request it is made for, when its caller said (see {@link UpstreamRequest.scope}) */
  scope?: RequestScope;
  /** the path's template (`/pet/{petId}`): no value of the caller's in it (see {@link UpstreamRequest.template}) */
  template: string;
  /** true: a request's DataLoader made it, for the keys one tick gathered (see {@link UpstreamRequest.batched}) */
  batched?: boolean;
  /**
   * the upstream cache answered it, sending nothing: with a fresh answer, or a stale one and why
   * (src/upstream/cache.ts); its watch ends at once
   */
  cached?: 'fresh' | StaleServed;
  /** the age of the cached answer, in seconds, when `cached` */
  ageSeconds?: number;
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
  /**
   * why it failed; undefined when it succeeded. `aborted`: its request body failed (the client went
   * away, an upload limit)
   */
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

/** A client for one upstream area. */
export type UpstreamClient = {
  readonly service: UpstreamService;
  request(call: UpstreamRequest): Promise<UpstreamResponse>;
  /** closes the pool once in-flight calls are done */
  close(): Promise<void>;
};

/** Whether an area is called at all now: its circuit. (A 429's hold is one caller's, not the area's.) */
export type AreaStanding = {
  circuit: CircuitState;
  /** milliseconds until the circuit lets a call through again; 0 unless it is open */
  circuitRemainingMs: number;
};

/** An area's client as {@link createUpstreamClient} makes it: with its pool's own readiness check. */
export type UpstreamPool = UpstreamClient & {
  /**
   * A `GET` of the base URL through the pool, without a credential, within `timeoutMs`: the
   * status it answered; throws as a call does when there is no answer (see `transportFailure`).
   */
  ping(timeoutMs: number): Promise<number>;
  /** whether the area is called at all now (for /readiness); a stand-in pool without one counts as always called */
  standing?(): AreaStanding;
};

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
/** The outcome of one attempt: an answer, or a failure and whether trying again may help. */
type Attempt =
  { ok: true; response: RawResponse } | { ok: false; error: UpstreamError; transient: boolean; reason: string };

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
type Sent = { response: RawResponse; retries: number };

/** An answer as the pool gives it: status, headers, and the body still to read. */
type PoolAnswer = Awaited<ReturnType<Pool['request']>>;

/** Creates the client of one upstream area, with its own keep-alive pool. */
export function createUpstreamClient(service: UpstreamService, options: UpstreamClientOptions): UpstreamPool {
  const calls = new UpstreamCalls(service, options);
  return {
    service,
    request: (call) => calls.request(call),
    ping: (timeoutMs) => calls.ping(timeoutMs),
    standing: () => calls.standing(),
    close: () => calls.close(),
  };
}

/**
 * The state of one area's client (its pool, its limits, its calls in flight) and the steps of a
 * call: observed, shared or made alone, retried, and each try read and judged.
 */
class UpstreamCalls {
  private readonly service: UpstreamService;
  /** read per call, for its observer and `onRetry` */
  private readonly options: UpstreamClientOptions;
  private readonly pool: Pool;
  private readonly basePath: string;
  /** the options' timeouts and limits, as they were when the client was made */
  private readonly timeouts: UpstreamClientOptions['timeouts'];
  private readonly maxResponseBytes: number;
  private readonly retries: number;
  private readonly retryBackoffMs: number;
  private readonly retryBackoffMaxMs: number;
  // Identical GETs in flight share one call (see in-flight.ts); undefined when that is turned off.
  private readonly inFlight: InFlightCalls<Sent, Progress> | undefined;
  private readonly circuit: AreaCircuit;
  /** the callers a 429 with Retry-After holds back */
  private readonly holds: RateLimitHolds;
  /** stops hearing the change feed */
  private readonly stopHearing: () => void;

  constructor(service: UpstreamService, options: UpstreamClientOptions) {
    this.service = service;
    this.options = options;
    const base = new URL(options.baseUrl);
    this.basePath = base.pathname.replace(/\/+$/, '');
    const { totalMs, connectMs, headersMs, bodyMs } = options.timeouts;
    this.timeouts = { totalMs, connectMs, headersMs, bodyMs };
    this.maxResponseBytes = options.maxResponseBytes;
    this.retries = options.retries;
    this.retryBackoffMs = options.retryBackoffMs;
    this.retryBackoffMaxMs = options.retryBackoffMaxMs;
    // Every call goes to this one origin: the pool cannot send a request (or a credential) anywhere else.
    this.pool = new Pool(base.origin, {
      connections: options.connections,
      connect: { timeout: connectMs },
      headersTimeout: headersMs,
      // undici's own body timeout is the longest pause between two chunks; attempt() keeps the whole-body limit.
      bodyTimeout: bodyMs,
      keepAliveTimeout: 30_000,
    });
    this.inFlight = options.dedupe
      ? createInFlightCalls<Sent, Progress>(() => ({ answering: false, retries: 0 }))
      : undefined;
    this.holds = new RateLimitHolds(service);
    this.circuit = new AreaCircuit(service, {
      ...options.circuit,
      onChange: options.onCircuitChange,
      onOpen: (ms) => options.news?.publish({ service, hold: 'circuit', ms }),
    });
    options.news?.subscribe((news) => this.heard(news));
    // Another replica's write is not sent through this client: its reads in flight stop taking callers when it is told.
    const inFlight = this.inFlight;
    this.stopHearing =
      inFlight === undefined || options.changes === undefined
        ? () => undefined
        : options.changes.listen((changes) => {
            for (const change of changes) inFlight.seal(change.resource);
          });
  }

  /** What another replica found: its circuit opened, or the area answered a caller 429 with Retry-After. */
  private heard(news: AreaNews): void {
    if (news.service !== this.service) return;
    // However long the news says, no longer than this replica would hold the area or the caller itself.
    const { cooldownMs } = this.options.circuit;
    const ms = Math.min(news.ms, Math.max(cooldownMs, this.options.retryAfterMaxMs));
    if (news.hold === 'circuit') this.circuit.holdFor(ms);
    else this.holds.hold(news.caller, ms);
  }

  /** The area answered `caller` 429 with Retry-After: that caller held back for `ms`, and the other replicas told. */
  private hold(caller: string, ms: number): void {
    if (this.holds.hold(caller, ms)) this.options.news?.publish({ service: this.service, hold: 429, ms, caller });
  }

  standing(): AreaStanding {
    return { circuit: this.circuit.state(), circuitRemainingMs: this.circuit.remainingMs() };
  }

  async request(call: UpstreamRequest): Promise<UpstreamResponse> {
    if (call.method === 'GET' && this.options.cache !== undefined) return this.cached(call, this.options.cache);
    if (call.method === 'GET' || this.inFlight === undefined) return this.observed(call);
    // A change: the reads of its resource already in flight take no more callers, from when it
    // is sent, and again once it has ended (reads started while it was in flight may have been
    // answered before it was carried out).
    const sealed = () => {
      for (const resource of call.resources ?? []) this.inFlight?.seal(resource.kind);
    };
    sealed();
    try {
      return await this.observed(call);
    } finally {
      sealed();
    }
  }

  /**
   * A GET through the upstream cache: answered from it (observed as a call it answered), or sent
   * (observed as any call) and kept as HTTP allows.
   */
  private async cached(call: UpstreamRequest, cache: UpstreamCache): Promise<UpstreamResponse> {
    const { service } = this;
    const outcome = await cache.fetch(service, call, call.path + queryString(call.query), (sent) =>
      this.observed(sent),
    );
    if (outcome.result !== undefined)
      this.options.onCache?.({ service, operation: call.operation, result: outcome.result });
    const { status, body } = outcome.response;
    if (outcome.served !== undefined) {
      this.options
        .observer?.({
          service,
          operation: call.operation,
          method: call.method,
          scope: call.scope,
          template: call.template ?? call.path,
          batched: call.batched === true,
          cached: outcome.served,
          ageSeconds: outcome.ageSeconds,
        })
        ?.end({ status, retries: 0, durationMs: 0 });
    }
    // The text and headers the cache read stay here: callers get the decoded body only.
    return { status, body };
  }

  /** One call, as the observer watches it: joined to an identical one in flight, or made. */
  private async observed(call: UpstreamRequest): Promise<RawResponse> {
    const key = this.inFlight !== undefined && call.method === 'GET' ? sharingKey(call) : undefined;
    // Only a call others may share waits through a waiter of its own.
    const sharing = key === undefined ? undefined : { key, waiter: this.waiterFor(call) };
    const joined = sharing && this.inFlight?.join(sharing.key, sharing.waiter);
    const watch = this.options.observer?.({
      service: this.service,
      operation: call.operation,
      method: call.method,
      ...(joined ? { shared: true } : {}),
      scope: call.scope,
      template: call.template ?? call.path,
      batched: call.batched === true,
    });
    if (watch === undefined) return (await (joined ?? this.made(sharing, call))).response;
    const started = performance.now();
    try {
      // A shared call is made with its first caller's headers (request id, trace context).
      const { response, retries } = await (joined ??
        this.made(sharing, watch.headers ? { ...call, headers: { ...watch.headers, ...call.headers } } : call));
      endWatch(watch, started, { status: response.status, retries });
      return response;
    } catch (error) {
      endWatch(
        watch,
        started,
        error instanceof UpstreamError
          ? { status: error.status, failure: error.failure, retries: error.retries }
          : { failure: 'aborted', retries: 0 },
      );
      throw error;
    }
  }

  /** Each caller of a shared call waits until its own deadline, and then fails as it would have alone. */
  private waiterFor(call: UpstreamRequest): Waiter<Progress> {
    return {
      timeoutMs: this.timeouts.totalMs,
      // Alone, it would not have waited for a retry that starts after its deadline: it would have got the failure.
      timedOut: (progress) =>
        progress.retrying ??
        afterRetries(
          new UpstreamError({
            service: this.service,
            operation: call.operation,
            failure: 'timeout',
            message: this.deadlineMessage(call.operation, progress.answering),
          }),
          progress.retries,
        ),
    };
  }

  /** The call made for `headed`: started for others to join under `sharing.key`, or alone. */
  private made(sharing: { key: string; waiter: Waiter<Progress> } | undefined, headed: UpstreamRequest): Promise<Sent> {
    return sharing !== undefined && this.inFlight !== undefined
      ? this.inFlight.start(sharing.key, headed.resources?.[0]?.kind ?? '', sharing.waiter, (shared) =>
          this.send(headed, shared),
        )
      : this.sendAlone(headed);
  }

  /** A call nobody else joins, with a deadline of its own. */
  private async sendAlone(call: UpstreamRequest): Promise<Sent> {
    const timeoutMs = this.timeouts.totalMs;
    // The deadline's timer is cleared as soon as the call ends. (AbortSignal.timeout would keep
    // each signal, and what undici hangs on it, alive for the whole timeout: under load that
    // is seconds of calls promoted to the old heap, and a resident set far above the live data.)
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new DOMException(`deadline of ${timeoutMs} ms`, 'TimeoutError')),
      timeoutMs,
    );
    const deadline = performance.now() + timeoutMs;
    try {
      return await this.send(call, {
        signal: controller.signal,
        deadline: () => deadline,
        progress: { answering: false, retries: 0 },
      });
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * One call, unless its caller is held back (a 429's Retry-After not passed) or its area's
   * circuit is open: then it fails at once, sending nothing. Made once however many callers
   * share it (they share its credential), it counts once in the circuit.
   */
  private send(call: UpstreamRequest, limits: CallLimits): Promise<Sent> {
    const held = this.heldBack(call);
    if (held !== undefined) return Promise.reject(held);
    return this.circuit.run(
      call.operation,
      () => callerOf(call),
      () => this.retried(call, limits),
    );
  }

  /** The refusal of a call whose caller a 429 holds back; its fingerprint is only worked out while someone is held. */
  private heldBack(call: UpstreamRequest): UpstreamError | undefined {
    return this.holds.empty ? undefined : this.holds.refusal(callerOf(call), call.operation);
  }

  /** One call, retried as its method and failure allow, within `limits`. */
  private async retried(call: UpstreamRequest, limits: CallLimits): Promise<Sent> {
    const { retries, retryBackoffMs, retryBackoffMaxMs } = this;
    // Only a read can be sent twice without risk: a POST or PUT may have been carried out
    // although its answer was lost, and a second one would act twice.
    const idempotent = call.method === 'GET';

    for (let retry = 0; ; retry += 1) {
      // Another replica may have been told 429 for this caller while this call waited to retry.
      const held = retry > 0 ? this.heldBack(call) : undefined;
      if (held !== undefined) throw afterRetries(held, retry);
      const outcome = await this.attempt(call, limits);
      if (outcome.ok) return { response: outcome.response, retries: retry };
      // Nor is a retry made once the area's circuit has opened (other calls failed meanwhile).
      if (!idempotent || !outcome.transient || retry >= retries || !this.circuit.admits())
        throw afterRetries(outcome.error, retry);
      // Never before the time the answer's Retry-After (a 503's) asked for.
      const delayMs = Math.max(
        retryDelay(retry + 1, retryBackoffMs, retryBackoffMaxMs),
        outcome.error.retryAfterMs ?? 0,
      );
      // A retry that could only start at or after the deadline is not made; the caller gets the failure there is.
      if (performance.now() + delayMs >= limits.deadline()) throw afterRetries(outcome.error, retry);
      this.options.onRetry?.({
        service: this.service,
        operation: call.operation,
        retry: retry + 1,
        delayMs,
        reason: outcome.reason,
        ...(call.scope ? { scope: call.scope } : {}),
      });
      limits.progress.retries = retry + 1;
      limits.progress.retrying = afterRetries(outcome.error, retry);
      await sleep(delayMs);
      limits.progress.retrying = undefined;
    }
  }

  /** One try of a call, within the call's limits: sent, its body read, its answer judged. */
  private async attempt(call: UpstreamRequest, limits: CallLimits): Promise<Attempt> {
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
    const raw = this.options.cache !== undefined && call.method === 'GET' ? { raw: { headers, text } } : {};
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
        ? retryAfterMs(headerValue(headers['retry-after']), Date.now(), this.options.retryAfterMaxMs)
        : undefined;
    if (asked !== undefined && status === 429) this.hold(callerOf(call), asked);
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
  private deadlineMessage(operation: string, answering: boolean): string {
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

  close(): Promise<void> {
    this.stopHearing();
    this.circuit.close();
    return this.pool.close();
  }
}

/** A failed try: its error, why it failed (for the retry event), and whether trying again may help. */
function failed(error: UpstreamError, reason: string, transient = false): Attempt {
  return { ok: false, error, transient, reason };
}

/** Tells a watch its call has ended, with the time the call took. */
function endWatch(watch: UpstreamCallWatch, started: number, outcome: Omit<UpstreamCallOutcome, 'durationMs'>): void {
  watch.end({ ...outcome, durationMs: performance.now() - started });
}

/**
 * Who makes a call, as the circuit and the 429 holds tell callers apart: its credential
 * fingerprint, or {@link ANONYMOUS_CALLER} without one.
 */
function callerOf(call: UpstreamRequest): string {
  return credentialFingerprintOf(call.headers) ?? ANONYMOUS_CALLER;
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

/** Whether a call is a conditional GET (the upstream cache's revalidation), to which a 304 is an answer. */
function isConditional(call: UpstreamRequest): boolean {
  const headers = call.headers ?? {};
  return headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined;
}

/** The first value of a response header. */
function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
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

/**
 * Reads a successful answer's body as the payload `shape` describes; a body that does not fit
 * becomes an `invalid-response` error naming the offending field (never a crash).
 */
export function decodePayload<S extends Shape>(
  client: UpstreamClient,
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
