/**
 * The retry policy of one upstream call (`src/upstream/retry.ts`), on its own: tries made by a
 * stub transport, time on a fake clock. A GET that failed transiently is tried again after its
 * backoff or a 503's Retry-After, whichever is longer; a write never is; no retry starts at or
 * after the deadline, once the circuit has opened, while a 429 holds the caller back, or past
 * the area's retry budget.
 */
import { describe, expect, it, vi } from 'vitest';
import type { UpstreamRequest } from '../src/upstream/call.js';
import { UpstreamError } from '../src/upstream/failure.js';
import { withRetries, type RetryEvent, type RetryPolicy } from '../src/upstream/retry.js';
import { RETRY_BUDGET_FLOOR, RETRY_BUDGET_WINDOW_MS, RetryBudget } from '../src/upstream/retry-budget.js';
import type { Attempt, CallLimits } from '../src/upstream/transport.js';
import { fakeClock, tracked, until } from './helpers/clock.js';

const GET: UpstreamRequest = { operation: 'getPetById', method: 'GET', path: '/pet/1' };
const ANSWER: Attempt = { ok: true, response: { status: 200, body: { id: 1 } } };

/** A failed try of `status`, transient (502–504) unless told. */
function failedTry(status: number, retryAfterMs?: number, transient = status >= 502): Attempt {
  const error = new UpstreamError({
    service: 'petstore',
    operation: 'getPetById',
    failure: 'status',
    message: `status ${status}`,
    status,
    retryAfterMs,
  });
  return { ok: false, error, transient, reason: `status ${status}` };
}

/** Runs `call` through withRetries with the tries given in turn; returns its outcome and what happened. */
function run(
  call: UpstreamRequest,
  tries: Attempt[],
  options: { deadlineMs?: number; admits?: () => boolean; budget?: RetryBudget } = {},
) {
  const events: RetryEvent[] = [];
  const sent: number[] = [];
  const refused: string[] = [];
  const policy: RetryPolicy = {
    service: 'petstore',
    retries: 2,
    backoffMs: 100,
    backoffMaxMs: 1000,
    onRetry: (event) => events.push(event),
    // Without a budget unless the test gives one.
    budget: options.budget ?? new RetryBudget(0),
    onRetryRefused: ({ operation }) => refused.push(operation),
  };
  const limits: CallLimits = {
    signal: new AbortController().signal,
    deadline: () => options.deadlineMs ?? Number.POSITIVE_INFINITY,
    progress: { answering: false, retries: 0 },
  };
  let held: UpstreamError | undefined;
  const outcome = tracked(
    withRetries(call, limits, policy, {
      attempt: () => {
        sent.push(performance.now());
        return Promise.resolve(tries.shift() ?? ANSWER);
      },
      heldBack: () => held,
      admits: options.admits ?? (() => true),
    }).catch((error: unknown) => error),
  );
  return { outcome, events, sent, refused, hold: (error: UpstreamError) => (held = error) };
}

describe('withRetries', () => {
  it('tries a GET again after a 503, no sooner than its Retry-After when that is longer than the backoff', async () => {
    fakeClock();
    const { outcome, events, sent } = run(GET, [failedTry(503, 2000)]);

    await until(() => events.length === 1, 'the retry to be scheduled');
    await vi.advanceTimersByTimeAsync(1999);
    expect(sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);

    expect(await outcome).toEqual({ response: ANSWER.ok && ANSWER.response, retries: 1 });
    expect(events.map(({ retry, delayMs, reason }) => ({ retry, delayMs, reason }))).toEqual([
      { retry: 1, delayMs: 2000, reason: 'status 503' },
    ]);
  });

  it('does not try a write again, nor a GET after an answer that is not transient', async () => {
    const write = run({ ...GET, method: 'PUT' }, [failedTry(503)]);
    const notTransient = run(GET, [failedTry(500)]);

    expect(await write.outcome).toMatchObject({ status: 503, retries: 0 });
    expect(await notTransient.outcome).toMatchObject({ status: 500, retries: 0 });
    expect([write.sent.length, notTransient.sent.length]).toEqual([1, 1]);
  });

  it('makes no retry that could only start at or after the deadline', async () => {
    fakeClock();
    const { outcome, sent, events } = run(GET, [failedTry(503, 5000)], { deadlineMs: performance.now() + 1000 });

    expect(await outcome).toMatchObject({ status: 503, retryAfterMs: 5000, retries: 0 });
    expect([sent.length, events.length]).toEqual([1, 0]);
  });

  it('stops once the circuit no longer admits calls, and when a 429 holds the caller back before the retry', async () => {
    fakeClock();
    const closed = run(GET, [failedTry(502)], { admits: () => false });
    const held = run(GET, [failedTry(502)]);
    const refusal = new UpstreamError({
      service: 'petstore',
      operation: 'getPetById',
      failure: 'rate-limited',
      message: 'held',
      retryAfterMs: 30_000,
    });

    expect(await closed.outcome).toMatchObject({ status: 502, retries: 0 });
    await until(() => held.events.length === 1, 'the retry to be scheduled');
    held.hold(refusal);
    await vi.advanceTimersToNextTimerAsync();
    expect(await held.outcome).toMatchObject({ failure: 'rate-limited', retries: 1 });
    expect(held.sent).toHaveLength(1);
  });

  it('gives up after UPSTREAM_RETRIES, saying how many retries were made', async () => {
    fakeClock();
    const { outcome, events } = run(GET, [failedTry(504), failedTry(504), failedTry(504)]);

    for (const retry of [1, 2]) {
      await until(() => events.length === retry, `retry ${retry} to be scheduled`);
      await vi.advanceTimersToNextTimerAsync();
    }

    expect(await outcome).toMatchObject({ status: 504, retries: 2, message: 'status 504 (after 2 retries)' });
  });

  it("makes no retry past the area's budget: the call fails as its last attempt did, and the refusal is counted", async () => {
    fakeClock({ date: true });
    const budget = new RetryBudget(20);
    // Retries may reach the floor plus 20% of the calls. Each of these calls fails once and is
    // retried: the nth call's retry is the nth, allowed while n - 1 < floor + 0.2 n, that is
    // while n < (floor + 1) / 0.8; the next call's retry is refused.
    const retried = [];
    const allowed = Math.ceil((RETRY_BUDGET_FLOOR + 1) / 0.8) - 1;
    for (let index = 0; index < allowed; index += 1) {
      const call = run(GET, [failedTry(503)], { budget });
      await until(() => call.events.length === 1, 'the retry to be scheduled');
      await vi.advanceTimersToNextTimerAsync();
      retried.push(await call.outcome);
    }
    const spent = run(GET, [failedTry(503)], { budget });

    expect(retried.every((outcome) => 'response' in (outcome as object))).toBe(true);
    expect(await spent.outcome).toMatchObject({ failure: 'status', status: 503, retries: 0 });
    expect([spent.sent.length, spent.events.length, spent.refused]).toEqual([1, 0, ['getPetById']]);
    // The window moves on: its calls and retries forgotten, the floor is there again.
    await vi.advanceTimersByTimeAsync(RETRY_BUDGET_WINDOW_MS);
    const later = run(GET, [failedTry(503)], { budget });
    await until(() => later.events.length === 1, 'the retry to be scheduled');
    await vi.advanceTimersToNextTimerAsync();
    expect(await later.outcome).toMatchObject({ retries: 1 });
  });

  it('retries a lone failure of a quiet gateway (the floor), and every failure with UPSTREAM_RETRY_BUDGET_PERCENT=0', async () => {
    fakeClock({ date: true });
    const quiet = run(GET, [failedTry(502)], { budget: new RetryBudget(20) });
    await until(() => quiet.events.length === 1, 'the retry to be scheduled');
    await vi.advanceTimersToNextTimerAsync();
    expect(await quiet.outcome).toMatchObject({ retries: 1 });

    const unbudgeted = new RetryBudget(0);
    for (let index = 0; index < RETRY_BUDGET_FLOOR * 3; index += 1) {
      const call = run(GET, [failedTry(502)], { budget: unbudgeted });
      await until(() => call.events.length === 1, 'the retry to be scheduled');
      await vi.advanceTimersToNextTimerAsync();
      expect(await call.outcome).toMatchObject({ retries: 1 });
      expect(call.refused).toEqual([]);
    }
  });
});
