/**
 * Upstream back-pressure (`src/upstream/back-pressure.ts`): a 429 or 503 with `Retry-After`
 * (seconds or an HTTP-date) holds its area back until that time, at most
 * UPSTREAM_RETRY_AFTER_MAX_MS: queries fail at once with UPSTREAM_RATE_LIMITED (429) or
 * UPSTREAM_UNAVAILABLE (503) and `extensions.retryAfter`, the upstream receives nothing, and a
 * retry is never sent before the time, nor made when the time is past the call's deadline.
 * Times run on a fake clock (`Date` included: an HTTP-date is read against it).
 */
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { retryAfterMs } from '../src/upstream/back-pressure.js';
import type { AreaNews } from '../src/upstream/circuit.js';
import { UpstreamError } from '../src/upstream/failure.js';
import { createUpstreamClient, type RetryEvent } from '../src/upstream/http.js';
import { fakeClock, tracked, until } from './helpers/clock.js';
import { serveObserved, type ObservedGateway } from './helpers/observed.js';
import { json, sequence, useScriptedUpstream, type Answer } from './helpers/scripted-upstream.js';
import { ALL_CREDENTIALS, defaultClientOptions, timeoutsSetBy, type GraphQLResponse } from './helpers/stack.js';
import type { GatewayConfig } from '../src/gateway.js';

const upstream = useScriptedUpstream();
const PET_1 = { id: 1, name: 'Cat 1', photoUrls: [], tags: [], status: 'available' };
const PET_QUERY = '{ pet(id: 1) { id name } }';
const PET_ANSWER = { status: 200, data: { pet: { id: '1', name: 'Cat 1' } } };
const UPSTREAM = { service: 'petstore', operation: 'getPetById' };

/** An error answer with a Retry-After header. */
function asksToWait(status: number, retryAfter: string): Answer {
  return {
    status,
    headers: { 'content-type': 'application/json', 'retry-after': retryAfter },
    body: JSON.stringify({ code: status, message: status === 429 ? 'Too many requests' : 'Down for maintenance' }),
  };
}

/** A gateway in front of the scripted upstream, without retries unless told; closed when the test ends. */
async function serve(overrides: Partial<GatewayConfig> = {}): Promise<ObservedGateway> {
  const gateway = await serveObserved(
    { petstoreUrl: `${upstream().url}/api/v3`, plantsUrl: upstream().url },
    { upstreamRetries: 0, ...overrides },
  );
  onTestFinished(() => gateway.close());
  return gateway;
}

const ask = (gateway: ObservedGateway) => gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);
const extensionsOf = (result: GraphQLResponse) => result.errors?.map((error) => error.extensions);
const petCalls = () => upstream().requests.filter((request) => request.url.includes('/pet/'));

describe('Retry-After', () => {
  it('reads delay-seconds and HTTP-dates, capped; anything else is ignored', () => {
    const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');

    expect(retryAfterMs('120', now, 60_000)).toBe(60_000);
    expect(retryAfterMs(' 7 ', now, 60_000)).toBe(7000);
    expect(retryAfterMs('Wed, 21 Oct 2015 07:28:30 GMT', now, 60_000)).toBe(30_000);
    expect(retryAfterMs('Wed, 21 Oct 2015 07:27:00 GMT', now, 60_000)).toBe(0);
    expect(retryAfterMs('Thu, 22 Oct 2015 07:28:00 GMT', now, 60_000)).toBe(60_000);
    expect([retryAfterMs(undefined, now, 1), retryAfterMs('-1', now, 1), retryAfterMs('soon', now, 1)]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe('an area that answers 429 with Retry-After', () => {
  it('fails with UPSTREAM_RATE_LIMITED and retryAfter, and is not called again before the time', async () => {
    fakeClock({ date: true });
    const gateway = await serve();
    upstream().answer(asksToWait(429, '30'));

    const limited = await ask(gateway);
    upstream().answer(json(200, PET_1));
    await vi.advanceTimersByTimeAsync(20_000);
    const held = await ask(gateway);

    expect(extensionsOf(limited)).toEqual([
      { code: 'UPSTREAM_RATE_LIMITED', upstream: { ...UPSTREAM, status: 429 }, retryAfter: 30 },
    ]);
    expect(limited.errors?.[0]?.message).toBe('Too many requests');
    expect(extensionsOf(held)).toEqual([{ code: 'UPSTREAM_RATE_LIMITED', upstream: UPSTREAM, retryAfter: 10 }]);
    expect(held.errors?.[0]?.message).toBe(
      "petstore limits the gateway's calls and asked for none for 10 s (429 with Retry-After)",
    );
    expect(petCalls()).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await ask(gateway)).toEqual(PET_ANSWER);
    expect(petCalls()).toHaveLength(2);
  });

  it('without Retry-After: UPSTREAM_RATE_LIMITED, and the area is called again at once', async () => {
    const gateway = await serve();
    upstream().answer(sequence(json(429, { message: 'Too many requests' }), json(200, PET_1)));

    expect(extensionsOf(await ask(gateway))).toEqual([
      { code: 'UPSTREAM_RATE_LIMITED', upstream: { ...UPSTREAM, status: 429 } },
    ]);
    expect(await ask(gateway)).toEqual(PET_ANSWER);
    expect(petCalls()).toHaveLength(2);
  });

  it('holds back no longer than UPSTREAM_RETRY_AFTER_MAX_MS', async () => {
    fakeClock({ date: true });
    const gateway = await serve({ upstreamRetryAfterMaxMs: 2000 });
    upstream().answer(asksToWait(429, '86400'));

    expect(extensionsOf(await ask(gateway))).toEqual([
      { code: 'UPSTREAM_RATE_LIMITED', upstream: { ...UPSTREAM, status: 429 }, retryAfter: 2 },
    ]);
    upstream().answer(json(200, PET_1));
    await vi.advanceTimersByTimeAsync(2000);
    expect(await ask(gateway)).toEqual(PET_ANSWER);
  });
});

describe('an area that answers 503 with Retry-After', () => {
  it('reads an HTTP-date: UPSTREAM_UNAVAILABLE with retryAfter, nothing sent until then, readiness not ready', async () => {
    fakeClock({ date: true });
    const gateway = await serve();
    upstream().answer(asksToWait(503, new Date(Date.now() + 45_000).toUTCString()));

    const down = await ask(gateway);
    const held = await ask(gateway);
    const readiness = await fetch(`${gateway.origin}/readiness`);

    expect(extensionsOf(down)).toEqual([
      { code: 'UPSTREAM_UNAVAILABLE', upstream: { ...UPSTREAM, status: 503 }, retryAfter: expect.any(Number) },
    ]);
    // An HTTP-date has whole seconds: up to 45 s from now.
    expect(down.errors?.[0]?.extensions?.['retryAfter']).toBeGreaterThanOrEqual(44);
    expect(down.errors?.[0]?.extensions?.['retryAfter']).toBeLessThanOrEqual(45);
    expect(extensionsOf(held)).toEqual([
      { code: 'UPSTREAM_UNAVAILABLE', upstream: UPSTREAM, retryAfter: expect.any(Number) },
    ]);
    expect(held.errors?.[0]?.message).toMatch(/^petstore is unavailable and asked for no calls for \d+ s/);
    expect(readiness.status).toBe(503);
    expect(await readiness.json()).toMatchObject({
      upstreams: { petstore: { ready: false, reason: expect.stringMatching(/^answered 503 with Retry-After/) } },
    });
    // Neither the query nor readiness called the pet store again.
    expect(upstream().requests.filter((request) => request.url.startsWith('/api/v3'))).toHaveLength(1);
  });

  it('retries a read no earlier than Retry-After', async () => {
    fakeClock({ date: true });
    const gateway = await serve({ upstreamRetries: 2, logLevel: 'debug' });
    upstream().answer(sequence(asksToWait(503, '2'), json(200, PET_1)));

    const result = tracked(ask(gateway));
    // The retry's own backoff (25–50 ms) is far shorter: Retry-After decides.
    await until(
      () => gateway.log.text().includes('upstream petstore getPetById: retry 1 in 2000 ms after status 503'),
      'the retry to be scheduled',
    );
    await vi.advanceTimersByTimeAsync(1999);
    const before = petCalls().length;
    await vi.advanceTimersByTimeAsync(1);
    await until(() => result.settled, 'the answer after the retry');

    expect(before).toBe(1);
    expect(await result).toEqual(PET_ANSWER);
    expect(petCalls()).toHaveLength(2);
  });

  it('makes no retry whose Retry-After is past the call deadline: the caller gets the failure with retryAfter', async () => {
    const gateway = await serve({
      upstreamRetries: 2,
      upstreamTimeouts: timeoutsSetBy({ UPSTREAM_TIMEOUT_MS: '1000' }),
    });
    upstream().answer(asksToWait(503, '5'));

    const result = await ask(gateway);

    expect(extensionsOf(result)).toEqual([
      { code: 'UPSTREAM_UNAVAILABLE', upstream: { ...UPSTREAM, status: 503 }, retryAfter: 5 },
    ]);
    expect(petCalls()).toHaveLength(1);
  });

  it('does not count towards the circuit breaker', async () => {
    fakeClock({ date: true });
    const gateway = await serve({ upstreamCircuitFailures: 1 });
    upstream().answer(asksToWait(503, '1'));

    await ask(gateway);
    await vi.advanceTimersByTimeAsync(1000);
    upstream().answer(json(200, PET_1));

    expect(await ask(gateway)).toEqual(PET_ANSWER);
    expect(petCalls()).toHaveLength(2);
  });
});

describe('news from another replica', () => {
  /** A pet store client whose replicas' news the test delivers itself (Redis's part, in memory). */
  function clientHearing(overrides: { retries?: number; retryAfterMaxMs?: number } = {}) {
    const listeners: ((news: AreaNews) => void)[] = [];
    const retries: RetryEvent[] = [];
    const client = createUpstreamClient('petstore', {
      ...defaultClientOptions(`${upstream().url}/api/v3`),
      onRetry: (event) => retries.push(event),
      news: { publish: () => undefined, subscribe: (listener) => listeners.push(listener) },
      ...overrides,
    });
    onTestFinished(() => client.close());
    const tell = (news: AreaNews) => listeners.forEach((listener) => listener(news));
    const getPet = () =>
      client.request({ operation: 'getPetById', method: 'GET', path: '/pet/1' }).catch((error: unknown) => error);
    return { client, retries, tell, getPet };
  }

  it('a longer Retry-After heard while a read waits to retry stops the retry', async () => {
    fakeClock({ date: true });
    const { retries, tell, getPet } = clientHearing({ retries: 2 });
    upstream().answer(sequence(asksToWait(503, '2'), json(200, PET_1)));

    const failing = tracked(getPet());
    await until(() => retries.length === 1, 'the retry to be scheduled');
    tell({ service: 'petstore', hold: 503, ms: 30_000 });
    await vi.advanceTimersByTimeAsync(2000);
    const error = await failing;

    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ failure: 'circuit-open', retryAfterMs: 28_000, retries: 1 });
    expect(petCalls()).toHaveLength(1);
  });

  it('is believed no longer than this replica would hold the area itself', async () => {
    fakeClock({ date: true });
    const { client, tell } = clientHearing({ retryAfterMaxMs: 10_000 });

    tell({ service: 'petstore', hold: 429, ms: 3_600_000 });
    tell({ service: 'plants', hold: 429, ms: 3_600_000 });

    expect(client.standing?.()).toMatchObject({ gate: { shut: true, status: 429, remainingMs: 10_000 } });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(client.standing?.()).toMatchObject({ gate: { shut: false } });
  });
});
