/**
 * The circuit breaker of one upstream area (cockatiel's): after UPSTREAM_CIRCUIT_FAILURES calls
 * in a row failed for want of the upstream (a connection error, a timeout, a 5xx), the circuit
 * opens and calls fail at once with `circuit-open` (UPSTREAM_UNAVAILABLE) instead of each waiting
 * for a connection or a deadline. After UPSTREAM_CIRCUIT_COOLDOWN_MS the next call goes through
 * as a trial (half-open; other calls meanwhile still fail at once); its success closes the
 * circuit, its failure opens it again for another cool-down.
 *
 * What does not count: an answer the upstream gave on purpose (a 4xx, a body that cannot be
 * read), a call the client gave up on, and a 429 or 503 with Retry-After, which holds the area
 * back for the time it asks instead (`back-pressure.ts`). A call shared by several callers
 * (`in-flight.ts`) runs here once, and counts once.
 *
 * Replicas with REDIS_URL tell one another (`AreaNewsChannel`, `src/redis/area-news.ts`): when one
 * opens its circuit, the others hold the area open (cockatiel's `isolate()`) for the same
 * cool-down, so that none of them keeps calling an upstream that one of them found down.
 */
import {
  BrokenCircuitError,
  circuitBreaker,
  CircuitState as BreakerState,
  ConsecutiveBreaker,
  handleWhen,
  type CircuitBreakerPolicy,
} from 'cockatiel';
import type { HoldingStatus } from './back-pressure.js';
import { UpstreamError, type UpstreamService } from './failure.js';

/**
 * Where an area's circuit stands, as metrics and /readiness show it: `open` while calls fail at
 * once, `half-open` once the cool-down has passed (the next call is a trial) and while that trial
 * runs, `closed` otherwise.
 */
export type CircuitState = 'closed' | 'half-open' | 'open';

/** The value of `upstream_circuit_state{service}` for each state. */
export const CIRCUIT_STATE_VALUES: Readonly<Record<CircuitState, number>> = { closed: 0, 'half-open': 1, open: 2 };

/** The settings of an area's circuit. */
export type CircuitSettings = {
  /** failed calls in a row that open it; 0 turns the breaker off (UPSTREAM_CIRCUIT_FAILURES) */
  failures: number;
  /** how long it stays open before a trial call, in milliseconds (UPSTREAM_CIRCUIT_COOLDOWN_MS) */
  cooldownMs: number;
};

/** What one replica tells the others about an area: its circuit opened, or it asked (429, 503) for no calls. */
export type AreaNews = { service: UpstreamService; hold: 'circuit' | HoldingStatus; ms: number };

/**
 * How replicas share {@link AreaNews} (Redis). Neither method waits or throws: without the
 * channel each replica keeps its own circuits, and calls go on.
 */
export type AreaNewsChannel = {
  publish(news: AreaNews): void;
  /** `listener` hears what other replicas publish, and what is still in force when this one connects */
  subscribe(listener: (news: AreaNews) => void): void;
};

/**
 * True for a failure that says the upstream is not there: no connection, no answer in time, or
 * a 5xx (a 503 with Retry-After aside: it holds the area back by itself).
 */
export function isOutage(error: unknown): boolean {
  if (!(error instanceof UpstreamError)) return false;
  if (error.failure === 'unavailable' || error.failure === 'timeout') return true;
  return error.failure === 'status' && (error.status ?? 0) >= 500 && error.retryAfterMs === undefined;
}

/** The circuit of one area. Times are epoch milliseconds (`Date.now()`), the clock cockatiel reads. */
export class AreaCircuit {
  private readonly policy: CircuitBreakerPolicy | undefined;
  /** when calls may be tried again: the end of the cool-down, or of another replica's hold */
  private openUntil = 0;
  /** another replica's hold on this area: cockatiel's isolation handle, and what ends it */
  private isolation: { handle: { dispose(): void }; timer: NodeJS.Timeout } | undefined;
  /** reports the end of the cool-down (nothing happens in cockatiel until the next call) */
  private cooldownTimer: NodeJS.Timeout | undefined;
  private reported: CircuitState = 'closed';

  constructor(
    private readonly service: UpstreamService,
    private readonly settings: CircuitSettings & {
      /** hears each change of {@link AreaCircuit.state} */
      onChange?: (state: CircuitState) => void;
      /** hears that this replica opened the circuit, for `ms` */
      onOpen?: (ms: number) => void;
    },
  ) {
    if (settings.failures === 0) return;
    const policy = circuitBreaker(handleWhen(isOutage), {
      halfOpenAfter: settings.cooldownMs,
      breaker: new ConsecutiveBreaker(settings.failures),
    });
    policy.onBreak((reason) => {
      if ('isolated' in reason) return;
      this.openUntil = Date.now() + settings.cooldownMs;
      clearTimeout(this.cooldownTimer);
      this.cooldownTimer = setTimeout(() => this.report(), settings.cooldownMs).unref();
      settings.onOpen?.(settings.cooldownMs);
    });
    policy.onStateChange(() => this.report());
    this.policy = policy;
  }

  state(): CircuitState {
    switch (this.policy?.state) {
      case undefined:
      case BreakerState.Closed:
        return 'closed';
      case BreakerState.HalfOpen:
        return 'half-open';
      case BreakerState.Open:
        return Date.now() >= this.openUntil ? 'half-open' : 'open';
      case BreakerState.Isolated:
        return 'open';
    }
  }

  /** Milliseconds until a call may go through again; 0 unless open. */
  remainingMs(): number {
    return this.state() === 'open' ? Math.max(0, this.openUntil - Date.now()) : 0;
  }

  /**
   * Runs one call through the circuit: made, or refused at once with `circuit-open`. (Not an
   * async function: every upstream call comes through here, and each await is a promise more.)
   */
  run<T>(operation: string, call: () => Promise<T>): Promise<T> {
    const { policy } = this;
    if (policy === undefined) return call();
    // One trial at a time: while it runs, other calls fail at once rather than queue behind it.
    if (policy.state === BreakerState.HalfOpen) return Promise.reject(this.refusal(operation));
    return policy.execute(call).catch((error: unknown) => {
      // IsolatedCircuitError (another replica's hold) is a BrokenCircuitError too.
      throw error instanceof BrokenCircuitError ? this.refusal(operation) : error;
    });
  }

  /** False once the circuit is no longer closed: a call under way makes no further retries. */
  admits(): boolean {
    return this.policy === undefined || this.policy.state === BreakerState.Closed;
  }

  /** Another replica opened its circuit for this area: this one holds it open as long. */
  holdFor(ms: number): void {
    const { policy } = this;
    if (policy === undefined || ms <= 0) return;
    const until = Date.now() + ms;
    if (this.isolation !== undefined && until <= this.openUntil) return;
    // The new handle is taken before the old one is let go, so the circuit stays held between them.
    const handle = policy.isolate();
    this.release();
    this.openUntil = Math.max(this.openUntil, until);
    const timer = setTimeout(() => this.release(), this.openUntil - Date.now()).unref();
    this.isolation = { handle, timer };
  }

  /** Stops the timers (the client is closing). */
  close(): void {
    clearTimeout(this.cooldownTimer);
    this.release();
  }

  private release(): void {
    if (this.isolation === undefined) return;
    const { handle, timer } = this.isolation;
    this.isolation = undefined;
    clearTimeout(timer);
    handle.dispose();
  }

  private report(): void {
    const state = this.state();
    if (state === this.reported) return;
    this.reported = state;
    this.settings.onChange?.(state);
  }

  private refusal(operation: string): UpstreamError {
    const { service } = this;
    const remainingMs = this.remainingMs();
    const why =
      this.isolation !== undefined
        ? 'another replica of the gateway found it failing'
        : this.policy?.state === BreakerState.HalfOpen
          ? 'a trial call is under way after repeated failures'
          : `its last ${this.settings.failures} calls failed`;
    return new UpstreamError({
      service,
      operation,
      failure: 'circuit-open',
      message: `${service} is unavailable (circuit open: ${why}); not called for ${Math.max(1, Math.ceil(remainingMs / 1000))} s`,
      retryAfterMs: remainingMs,
    });
  }
}
