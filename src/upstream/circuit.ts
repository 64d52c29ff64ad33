/**
 * The circuit breaker of one upstream area: it judges the area's health from many calls, not
 * from a few in a row, so that no single caller can open it for others.
 *
 * - Over a sliding window (UPSTREAM_CIRCUIT_WINDOW_MS), once the area has had at least
 *   UPSTREAM_CIRCUIT_MIN_CALLS calls, it opens when more than UPSTREAM_CIRCUIT_FAILURE_RATE
 *   percent of them failed for want of the upstream (a breaker of cockatiel's circuit policy).
 * - What counts as a failure is what says the upstream is unwell: no connection, a reset, no
 *   answer in time, a 502, 503 or 504. A 4xx is an answer (it counts as a success); a 500 or an
 *   unreadable answer counts for nothing, since one request can provoke them.
 * - Whom it opens for depends on who called (credential fingerprint; callers without a credential
 *   are one key, and count as many, since the upstream cannot tell them apart). Failures of more
 *   than one caller open it for everyone. Failures of one caller open it for that caller only,
 *   and only when it was the window's only caller (a backend calling with one service
 *   credential): other callers' calls still go through beside it, and should one of them fail
 *   for want of the upstream too, it is open for everyone. One caller's failures while others
 *   called do not open it: one tenant whose calls time out does not close the area to the others.
 *
 * Open, calls fail at once with `circuit-open` (UPSTREAM_UNAVAILABLE) for the cool-down:
 * UPSTREAM_CIRCUIT_COOLDOWN_MS, or longer when a 503 of the window asked for it with
 * Retry-After. Then one trial call goes through (half-open; others still fail at once); its
 * success closes the circuit, its failure opens it again. A call shared by several callers
 * (`in-flight.ts`) runs here once, and counts once.
 *
 * Replicas with REDIS_URL tell one another (`AreaNewsChannel`, `src/redis/area-news.ts`): when one
 * opens its circuit for everyone, the others hold the area open (cockatiel's `isolate()`) for the same
 * cool-down, so that none of them keeps calling an upstream that one of them found down.
 */
import {
  BrokenCircuitError,
  circuitBreaker,
  CircuitState as BreakerState,
  handleWhen,
  type CircuitBreakerPolicy,
  type IBackoff,
  type IBreaker,
} from 'cockatiel';
import { ANONYMOUS_CALLER } from './back-pressure.js';
import { RecentKeys, SlidingTally } from './sliding-tally.js';
import { UNAVAILABLE_STATUSES, UpstreamError, type UpstreamService } from './failure.js';

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
  /** percent of the window's calls that must fail for it to open; 0 turns the breaker off (UPSTREAM_CIRCUIT_FAILURE_RATE) */
  failureRate: number;
  /** fewest calls in the window before it judges (UPSTREAM_CIRCUIT_MIN_CALLS) */
  minCalls: number;
  /** the sliding window, in milliseconds (UPSTREAM_CIRCUIT_WINDOW_MS) */
  windowMs: number;
  /** how long it stays open before a trial call, at least, in milliseconds (UPSTREAM_CIRCUIT_COOLDOWN_MS) */
  cooldownMs: number;
};

/**
 * What one replica tells the others: the area's circuit opened, or the area answered a caller
 * 429 with Retry-After (`caller`: its credential fingerprint, never the credential).
 */
export type AreaNews =
  | { service: UpstreamService; hold: 'circuit'; ms: number }
  | { service: UpstreamService; hold: 429; ms: number; caller: string };

/**
 * How replicas share {@link AreaNews} (Redis). Neither method waits or throws: without the
 * channel each replica keeps its own circuits, and calls go on.
 */
export type AreaNewsChannel = {
  publish(news: AreaNews): void;
  /** `listener` hears what other replicas publish, and what is still in force when this one connects */
  subscribe(listener: (news: AreaNews) => void): void;
};

/** True for a failure that says the upstream is unwell: no connection, no answer in time, or a 502, 503 or 504. */
function isOutage(error: unknown): error is UpstreamError {
  if (!(error instanceof UpstreamError)) return false;
  if (error.failure === 'unavailable' || error.failure === 'timeout') return true;
  return error.failure === 'status' && UNAVAILABLE_STATUSES.has(error.status ?? 0);
}

/** A 4xx: the upstream answered, on purpose. It counts as a success. */
function isAnswer(error: unknown): error is UpstreamError {
  return error instanceof UpstreamError && error.failure === 'status' && (error.status ?? 0) < 500;
}

/** A call the upstream answered with a 4xx, carried through cockatiel as a success. */
class Answered {
  constructor(readonly error: UpstreamError) {}
}

/** Callers kept at most per window; more than that is "several" in any case. */
const MAX_CALLERS = 1000;

/**
 * The area's health, as cockatiel's breaker (`IBreaker`): the calls and failures of the last
 * window ({@link SlidingTally}), the callers that called and the callers that failed. It opens
 * when the window holds at least `minCalls` calls and more than `failureRate` percent of them
 * failed, and then:
 *
 * - for everyone, when the failures came from more than one caller (or from callers without a
 *   credential, who count as many);
 * - for that caller only ({@link AreaHealth.owner}), when one caller failed and it was the only
 *   one to call in the window: its failures are all the area's traffic says;
 * - not at all when one caller failed while others called: one tenant whose calls fail does not
 *   close the area to the others.
 */
class AreaHealth implements IBreaker {
  private readonly tally: SlidingTally<'calls' | 'failures'>;
  /** the callers of every call in the window */
  private readonly active: RecentKeys;
  /** the callers of the window's failures */
  private readonly failing: RecentKeys;
  /** the caller the circuit is open for, when it opened on one lone caller's failures; undefined: everyone */
  owner: string | undefined;

  constructor(private readonly settings: CircuitSettings) {
    this.tally = new SlidingTally(['calls', 'failures'], settings.windowMs);
    this.active = new RecentKeys(settings.windowMs, MAX_CALLERS);
    this.failing = new RecentKeys(settings.windowMs, MAX_CALLERS);
  }

  /** Nothing to carry over to another process (cockatiel's `toJSON`). */
  state: unknown = undefined;

  /** `caller` makes a call through the closed circuit. */
  noteCall(caller: string): void {
    this.active.note(caller);
  }

  /** `caller`'s call failed for want of the upstream (told before cockatiel counts it). */
  noteFailure(caller: string): void {
    this.failing.note(caller);
  }

  success(state: BreakerState): void {
    // A trial that succeeds closes the circuit on a clean window.
    if (state === BreakerState.HalfOpen) this.reset();
    this.tally.add('calls');
  }

  failure(state: BreakerState): boolean {
    this.tally.add('calls');
    this.tally.add('failures');
    // A trial that fails opens it again, for those it was open for.
    if (state !== BreakerState.Closed) return true;
    const { calls, failures } = this.tally.totals();
    if (calls < this.settings.minCalls || failures * 100 <= this.settings.failureRate * calls) return false;
    const failing = this.failing.keys();
    if (failing.size > 1 || failing.has(ANONYMOUS_CALLER)) {
      this.owner = undefined;
      return true;
    }
    const [only] = failing;
    if (only === undefined || this.active.size !== 1 || !this.active.has(only)) return false;
    this.owner = only;
    return true;
  }

  /** Another caller failed for want of the upstream while the circuit was open for one: it is open for everyone now. */
  widen(caller: string): void {
    this.failing.note(caller);
    this.owner = undefined;
  }

  private reset(): void {
    this.tally.clear();
    this.active.clear();
    this.failing.clear();
    this.owner = undefined;
  }
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
  private readonly health: AreaHealth | undefined;
  /** when the latest 503 of the area asked, with Retry-After, to be called again (epoch milliseconds) */
  private askedUntil = 0;
  /** the cool-down of the opening under way, as {@link AreaCircuit.cooldown} chose it */
  private openedForMs = 0;

  constructor(
    private readonly service: UpstreamService,
    private readonly settings: CircuitSettings & {
      /** hears each change of {@link AreaCircuit.state} */
      onChange?: (state: CircuitState) => void;
      /** hears that this replica opened the circuit, for `ms` */
      onOpen?: (ms: number) => void;
    },
  ) {
    if (settings.failureRate === 0) return;
    const health = new AreaHealth(settings);
    const policy = circuitBreaker(handleWhen(isOutage), { halfOpenAfter: this.cooldown(), breaker: health });
    policy.onBreak((reason) => {
      if ('isolated' in reason) return;
      const ms = this.openedForMs;
      this.openUntil = Date.now() + ms;
      clearTimeout(this.cooldownTimer);
      this.cooldownTimer = setTimeout(() => this.report(), ms).unref();
      // A circuit open for one lone caller is this replica's own judgement: other replicas judge their own calls.
      if (health.owner === undefined) settings.onOpen?.(ms);
    });
    policy.onStateChange(() => this.report());
    this.policy = policy;
    this.health = health;
  }

  /**
   * cockatiel's `halfOpenAfter`, asked each time the circuit opens: the configured cool-down, or
   * what is left of the latest 503's Retry-After when that is longer.
   */
  private cooldown(): IBackoff<unknown> {
    const next = (): IBackoff<unknown> => {
      this.openedForMs = Math.max(this.settings.cooldownMs, this.askedUntil - Date.now());
      return { duration: this.openedForMs, next };
    };
    return { duration: 0, next };
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
   * Runs one call of `caller` (its credential fingerprint, or {@link ANONYMOUS_CALLER}; asked only
   * when there is a breaker) through the circuit: made, or refused at once with `circuit-open`.
   * While the circuit is open for one lone caller only, other callers' calls go through beside
   * it. (Not an async function: every upstream call comes through here, and each await is a
   * promise more.)
   */
  run<T>(operation: string, callerOf: () => string, call: () => Promise<T>): Promise<T> {
    const { policy, health } = this;
    if (policy === undefined || health === undefined) return call();
    const caller = callerOf();
    if (policy.state === BreakerState.Closed) health.noteCall(caller);
    else if (this.beside(caller)) return this.besideCircuit(caller, call);
    // One trial at a time: while it runs, other calls fail at once rather than queue behind it.
    else if (policy.state === BreakerState.HalfOpen) return Promise.reject(this.refusal(operation));
    const counted = () =>
      call().catch((error: unknown) => {
        if (isAnswer(error)) return new Answered(error);
        if (isOutage(error)) {
          health.noteFailure(caller);
          if (error.retryAfterMs !== undefined) this.askedUntil = Date.now() + error.retryAfterMs;
        }
        throw error;
      });
    return policy.execute(counted).then(
      (result) => {
        if (result instanceof Answered) throw result.error;
        return result;
      },
      (error: unknown) => {
        // IsolatedCircuitError (another replica's hold) is a BrokenCircuitError too.
        throw error instanceof BrokenCircuitError ? this.refusal(operation) : error;
      },
    );
  }

  /** Whether `caller`'s calls go beside a circuit that is open for another lone caller only. */
  private beside(caller: string): boolean {
    const owner = this.health?.owner;
    return owner !== undefined && owner !== caller && this.isolation === undefined;
  }

  /**
   * A call made beside a circuit open for one caller only. Should it fail for want of the
   * upstream too, two callers have: the circuit is open for everyone from then on.
   */
  private besideCircuit<T>(caller: string, call: () => Promise<T>): Promise<T> {
    return call().catch((error: unknown) => {
      if (isOutage(error) && this.beside(caller)) {
        this.health?.widen(caller);
        // Now the area's, not one caller's: the other replicas hold it too.
        this.settings.onOpen?.(this.remainingMs());
      }
      throw error;
    });
  }

  /** False once the circuit is no longer closed for the caller: a call under way makes no further retries. */
  admits(callerOf: () => string): boolean {
    return this.policy === undefined || this.policy.state === BreakerState.Closed || this.beside(callerOf());
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
          : this.health?.owner !== undefined
            ? 'most of the recent calls with this credential failed'
            : 'most of its recent calls failed';
    return new UpstreamError({
      service,
      operation,
      failure: 'circuit-open',
      message: `${service} is unavailable (circuit open: ${why}); not called for ${Math.max(1, Math.ceil(remainingMs / 1000))} s`,
      retryAfterMs: remainingMs,
    });
  }
}
