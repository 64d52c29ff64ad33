/**
 * Tests wait for what they observe, and move time themselves, instead of reading the wall clock:
 * no test may fail because the machine running it was slow (a 2-core CI runner under load).
 *
 * - {@link until} polls an observed state (a request the upstream received, a log line, a socket
 *   closed, a promise settled) until it holds. Its limit is generous: only a missing event reaches it.
 * - {@link fakeClock} hands the clocks the gateway's own timing reads (`setTimeout`, `clearTimeout`,
 *   `performance.now()`) to the test, which moves them with `vi.advanceTimersByTimeAsync()` or
 *   `vi.advanceTimersToNextTimerAsync()`. Sockets stay real: a test waits for their traffic with
 *   {@link until}, never with `vi.waitFor` or `expect.poll`, which move fake timers as they poll.
 */
import { createRequire } from 'node:module';
import { onTestFinished, vi } from 'vitest';

// Taken before any test fakes it: polling runs on real time, fake timers or not.
const realSetTimeout = globalThis.setTimeout;

/** How long {@link until} polls before it gives up, unless told: far beyond any event a test waits for. */
const UNTIL_TIMEOUT_MS = 10_000;
const POLL_INTERVAL_MS = 5;

/**
 * Options for `expect.poll` on real timers: as patient as {@link until}, where its default (1 s)
 * could run out on a slow machine.
 */
export const EVENTUALLY = { timeout: UNTIL_TIMEOUT_MS, interval: 10 } as const;

/**
 * Resolves with what `read` gives as soon as it is truthy (`read` may be async); fails naming
 * `what`, with the last value read, if it is still not after `timeoutMs` of polling.
 */
export async function until<T>(
  read: () => T | Promise<T>,
  what: string,
  timeoutMs = UNTIL_TIMEOUT_MS,
): Promise<Exclude<T, undefined | null | false | 0 | ''>> {
  let last: T | undefined;
  // Counted in polls, not read from a clock: a test may have faked `performance` and `Date`.
  for (let waited = 0; waited <= timeoutMs; waited += POLL_INTERVAL_MS) {
    last = await read();
    if (last) return last as Exclude<T, undefined | null | false | 0 | ''>;
    await new Promise((resolve) => realSetTimeout(resolve, POLL_INTERVAL_MS));
  }
  throw new Error(`timed out waiting for ${what} (last seen: ${JSON.stringify(last)})`);
}

/** A promise, and whether it has settled yet (read without awaiting it). */
export type Tracked<T> = Promise<T> & { readonly settled: boolean };

/** Tracks `promise`, so that a test can ask whether it has settled, and wait for it with {@link until}. */
export function tracked<T>(promise: Promise<T>): Tracked<T> {
  let settled = false;
  const watched = promise.finally(() => {
    settled = true;
  });
  // Awaited, it still rejects; left behind by a test that failed first, it does not add an unhandled rejection.
  watched.catch(() => undefined);
  return Object.defineProperty(watched, 'settled', { get: () => settled }) as Tracked<T>;
}

/**
 * Fakes `setTimeout`, `clearTimeout` and `performance.now()` (and `Date`, with `date: true`) for
 * the rest of the calling test (restored when it ends). Fake time starts at the real `performance.now()` and moves only when
 * the test moves it. Call it inside a test, before the calls whose timing it controls start.
 */
export function fakeClock(options: { date?: boolean } = {}): void {
  startUndiciClock();
  const original = globalThis.performance;
  const startedAt = original.now();
  vi.useFakeTimers({
    // `Date` too when asked: the circuit breaker (cockatiel) and Retry-After dates read `Date.now()`.
    toFake: ['setTimeout', 'clearTimeout', 'performance', ...(options.date === true ? (['Date'] as const) : [])],
    shouldClearNativeTimers: true,
  });
  const fake = globalThis.performance;
  // Libraries that kept the `performance` object when they loaded (lru-cache, under the response
  // cache) read the same fake time; starting from the real time keeps their timestamps non-zero
  // (lru-cache takes a start of 0 for "no lifetime").
  const now = vi.spyOn(original, 'now').mockImplementation(() => startedAt + fake.now());
  onTestFinished(() => {
    now.mockRestore();
    vi.useRealTimers();
  });
}

/**
 * undici times its requests (headers, body timeouts) on one coarse clock of its own, a global
 * `setTimeout` started by the process's first request and refreshed ever after. Started while
 * timers are fake, it would stay a fake timer, and no undici timeout would fire again in this
 * process; started now, on real time, it stays real.
 */
function startUndiciClock(): void {
  const require = createRequire(import.meta.url);
  const timers = require('undici/lib/util/timers.js') as {
    setFastTimeout(callback: () => void, delay: number): unknown;
    clearFastTimeout(timer: unknown): void;
  };
  timers.clearFastTimeout(timers.setFastTimeout(() => undefined, 1_000));
}
