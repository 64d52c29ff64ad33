/**
 * Shared in-flight calls: a caller that asks for what another caller is already fetching waits
 * for that call instead of making its own. Under load many requests ask for the same popular
 * entity at the same moment; one upstream call then answers all of them.
 *
 * This module knows nothing of HTTP: `http.ts` decides which calls may be shared (its key) and
 * which changes end the sharing (its scope). Here each shared call keeps, for each caller
 * (a waiter), that caller's own deadline:
 *
 * - a waiter never waits past its deadline (its `timeoutMs` counted from when it asked), and
 *   then gets the error it would have got alone (`timedOut`);
 * - a waiter that gives up leaves the call running for the others; only when every waiter has
 *   given up is the call aborted, since nobody wants its answer any more;
 * - the call itself may go on until the latest deadline of its waiters (`deadline()`), which
 *   grows as later callers join.
 *
 * Every waiter gets the very value (or error) the call settled with: callers must treat it as
 * read-only.
 */
import { ShortLivedTable } from '../short-lived-table.js';

/** One shared call, as the function that makes it sees it. */
type SharedCall<P> = {
  /** aborted (with a `TimeoutError`) once every waiter has given up */
  readonly signal: AbortSignal;
  /** the latest deadline of its waiters, in `performance.now()` milliseconds; it grows as callers join */
  deadline(): number;
  /** what the call has got to, kept up to date by the function that makes it; read by a waiter that gives up */
  readonly progress: P;
};

/** One caller of a shared call. */
export type Waiter<P> = {
  /** how long this caller waits, from the moment it asks, in milliseconds */
  timeoutMs: number;
  /** the error this caller gets when it gives up, given how far the call has got */
  timedOut(progress: P): Error;
};

/** The calls of one upstream client that others may still join, by key. */
export type InFlightCalls<T, P> = {
  /** Joins the call in flight under `key`, if there is one that accepts joiners; undefined otherwise. */
  join(key: string, waiter: Waiter<P>): Promise<T> | undefined;
  /**
   * Starts a call under `key`, made by `make`, that later callers with the same key can join
   * until it settles or a change of its `scope` is {@link InFlightCalls.seal}ed. A call already
   * under `key` (sealed ones are not) is replaced for later callers, and runs on for its own.
   */
  start(key: string, scope: string, waiter: Waiter<P>, make: (call: SharedCall<P>) => Promise<T>): Promise<T>;
  /** Makes every call of `scope` in flight stop accepting joiners; they run on for the callers they have. */
  seal(scope: string): void;
};

type Entry<T, P> = {
  scope: string;
  promise: Promise<T>;
  controller: AbortController;
  progress: P;
  /** callers still waiting */
  waiters: number;
  /** the latest deadline of its waiters */
  deadline: number;
};

/**
 * Creates the in-flight calls of one client. `initialProgress` gives each new call its
 * progress record, which the call's maker updates.
 */
export function createInFlightCalls<T, P>(initialProgress: () => P): InFlightCalls<T, P> {
  // Entries come and go with every shared call: a table made for that (see ShortLivedTable).
  const open = new ShortLivedTable<Entry<T, P>>();

  /** Stops `key` naming `entry` (when it still does): later callers start afresh. */
  const close = (key: string, entry: Entry<T, P>) => {
    if (open.get(key) === entry) open.delete(key);
  };

  /** Adds a waiter to `entry`: its own timer, and the call's outcome unless the timer fires first. */
  function wait(key: string, entry: Entry<T, P>, waiter: Waiter<P>): Promise<T> {
    entry.waiters += 1;
    entry.deadline = Math.max(entry.deadline, performance.now() + waiter.timeoutMs);
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(waiter.timedOut(entry.progress));
        entry.waiters -= 1;
        if (entry.waiters > 0) return;
        // The last waiter gave up: nobody wants the answer, so the call stops and nobody joins it.
        close(key, entry);
        entry.controller.abort(new DOMException('every caller of the shared call gave up', 'TimeoutError'));
      }, waiter.timeoutMs);
      entry.promise.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  return {
    join(key, waiter) {
      const entry = open.get(key);
      return entry === undefined ? undefined : wait(key, entry, waiter);
    },
    start(key, scope, waiter, make) {
      const controller = new AbortController();
      const progress = initialProgress();
      const state = { scope, controller, progress, waiters: 0, deadline: performance.now() + waiter.timeoutMs };
      const entry: Entry<T, P> = Object.assign(state, {
        promise: make({ signal: controller.signal, deadline: () => state.deadline, progress }),
      });
      open.set(key, entry);
      // Settled, the call takes no more joiners (this handler runs before any waiter's), and its
      // failure is handled even when every waiter has already given up.
      entry.promise.then(
        () => close(key, entry),
        () => close(key, entry),
      );
      return wait(key, entry, waiter);
    },
    seal(scope) {
      for (const [key, entry] of open.entries()) if (entry.scope === scope) open.delete(key);
    },
  };
}
