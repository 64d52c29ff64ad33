/**
 * The client of one upstream area: the chain of small policies a call goes down, composed in
 * {@link UpstreamCalls} in the order they apply (the upstream cache, the change seal, the
 * observer, in-flight sharing, the deadline, 429 holds and the circuit, retries, one try over
 * the area's keep-alive undici pool). Each policy is a module of its own: `cache.ts`,
 * `in-flight.ts`, `back-pressure.ts`, `circuit.ts`, `retry.ts`, `transport.ts`; what a failure
 * was is `failure.ts`'s to say. Area modules (`petstore.ts`, `plants.ts`) sit on top; resolvers
 * never see HTTP.
 *
 * Why not undici's interceptors (retry, deduplicate, cache) for these links:
 * docs/decisions/0009-upstream-call-chain.md.
 */
import type { RequestScope } from './request-scope.js';
import { credentialFingerprintOf } from '../secrets.js';
import { ANONYMOUS_CALLER, RateLimitHolds } from './back-pressure.js';
import {
  AreaCircuit,
  type AreaNews,
  type AreaNewsChannel,
  type CircuitSettings,
  type CircuitState,
} from './circuit.js';
import { afterRetries, UpstreamError, type UpstreamFailure, type UpstreamService } from './failure.js';
import { createInFlightCalls, type InFlightCalls, type Waiter } from './in-flight.js';
import type { CacheResult, RawResponse, StaleServed, UpstreamCache } from './cache.js';
import type { ChangeFeed } from './changes.js';
import type { UpstreamRequest, UpstreamResponse } from './call.js';
import { withRetries, type RetryEvent, type RetryPolicy, type Sent } from './retry.js';
import { RetryBudget } from './retry-budget.js';
import { queryString, Transport, type CallLimits, type Progress } from './transport.js';

// One call and its answer are described in call.ts (below this client and the cache); the client's
// users find them here too.
export type { UpstreamRequest, UpstreamResponse } from './call.js';
export type { RetryEvent } from './retry.js';
export { retryDelay } from './retry.js';

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
  /**
   * the share of the area's calls that retries may add over a sliding window, in percent, above a
   * small floor; 0: no budget (UPSTREAM_RETRY_BUDGET_PERCENT; see `retry-budget.ts`)
   */
  retryBudgetPercent: number;
  /** called for each retry the budget refused, for metrics */
  onRetryRefused?: (event: { service: UpstreamService; operation: string }) => void;
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
type UpstreamCallWatch = {
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

/** A client for one upstream area. */
export type UpstreamClient = {
  readonly service: UpstreamService;
  request(call: UpstreamRequest): Promise<UpstreamResponse>;
  /** closes the pool once in-flight calls are done */
  close(): Promise<void>;
};

/** Whether an area is called at all now: its circuit. (A 429's hold is one caller's, not the area's.) */
type AreaStanding = {
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

/** Creates the client of one upstream area, with its own keep-alive pool. */
export function createUpstreamClient(service: UpstreamService, options: UpstreamClientOptions): UpstreamPool {
  const calls = new UpstreamCalls(service, options);
  return {
    service,
    request: (call) => calls.request(call),
    ping: (timeoutMs) => calls.transport.ping(timeoutMs),
    standing: () => calls.standing(),
    close: () => calls.close(),
  };
}

/**
 * One area's client: the chain a call goes down, each link a module of its own, in the order
 * they apply (each method below is one link, and calls the next):
 *
 * 1. `request`: a GET through the upstream cache (`cache.ts`), which may answer it; a write seals
 *    the reads in flight of what its operation's row says it may change (`in-flight.ts`);
 * 2. `observed`: the call watched (metrics, traces, the request log), joined to an identical
 *    GET in flight (`in-flight.ts`) or made;
 * 3. `sendAlone` / the shared call: a deadline of its own (UPSTREAM_TIMEOUT_MS);
 * 4. `send`: refused at once while a 429 holds its caller back (`back-pressure.ts`) or its
 *    area's circuit is open (`circuit.ts`), which counts how it ends;
 * 5. `withRetries` (`retry.ts`): tried again as its method and failure allow, within the area's
 *    retry budget (`retry-budget.ts`);
 * 6. `Transport.attempt` (`transport.ts`): one try over the pool, its answer read and judged.
 *
 * The request scope goes down the chain on the call (`call.scope`); nothing comes back up but
 * the answer or the error.
 */
class UpstreamCalls {
  private readonly service: UpstreamService;
  /** read per call, for its observer and `onRetry` */
  private readonly options: UpstreamClientOptions;
  readonly transport: Transport;
  private readonly retry: RetryPolicy;
  /** the deadline of each call, in milliseconds (UPSTREAM_TIMEOUT_MS) */
  private readonly deadlineMs: number;
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
    this.deadlineMs = options.timeouts.totalMs;
    this.transport = new Transport(service, {
      ...options,
      keepRaw: options.cache !== undefined,
      onRateLimited: (call, ms) => this.hold(callerOf(call), ms),
    });
    const { retries, retryBackoffMs: backoffMs, retryBackoffMaxMs: backoffMaxMs, onRetry, onRetryRefused } = options;
    const budget = new RetryBudget(options.retryBudgetPercent);
    this.retry = { service, retries, backoffMs, backoffMaxMs, onRetry, budget, onRetryRefused };
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
      timeoutMs: this.deadlineMs,
      // Alone, it would not have waited for a retry that starts after its deadline: it would have got the failure.
      timedOut: (progress) =>
        progress.retrying ??
        afterRetries(
          new UpstreamError({
            service: this.service,
            operation: call.operation,
            failure: 'timeout',
            message: this.transport.deadlineMessage(call.operation, progress.answering),
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
    const timeoutMs = this.deadlineMs;
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
    // The caller's fingerprint is worked out only when asked (a hold, or a circuit to judge by), and once.
    let fingerprint: string | undefined;
    const caller = () => (fingerprint ??= callerOf(call));
    const held = this.holds.empty ? undefined : this.holds.refusal(caller(), call.operation);
    if (held !== undefined) return Promise.reject(held);
    return this.circuit.run(call.operation, caller, () =>
      withRetries(call, limits, this.retry, {
        attempt: (each, eachLimits) => this.transport.attempt(each, eachLimits),
        heldBack: (each) => this.heldBack(each),
        admits: () => this.circuit.admits(caller),
      }),
    );
  }

  /** The refusal of a call whose caller a 429 holds back; its fingerprint is only worked out while someone is held. */
  private heldBack(call: UpstreamRequest): UpstreamError | undefined {
    return this.holds.empty ? undefined : this.holds.refusal(callerOf(call), call.operation);
  }

  close(): Promise<void> {
    this.stopHearing();
    this.circuit.close();
    return this.transport.close();
  }
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
