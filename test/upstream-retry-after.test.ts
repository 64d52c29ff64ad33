/**
 * Upstream back-pressure (`src/upstream/back-pressure.ts`), `Retry-After` in seconds or as an
 * HTTP-date, at most UPSTREAM_RETRY_AFTER_MAX_MS:
 * - a 429's holds back the credentials that received it: their queries fail at once with
 *   UPSTREAM_RATE_LIMITED and `extensions.retryAfter`, the upstream receives nothing for them,
 *   and other callers' queries are answered meanwhile;
 * - a 503's holds nobody: the next query is sent, readiness stays ready, and a retry of that
 *   call is never sent before the time, nor made when the time is past the call's deadline.
 * Times run on a fake clock (`Date` included: an HTTP-date is read against it).
 */
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { ANONYMOUS_CALLER, retryAfterMs } from '../src/upstream/back-pressure.js';
import type { AreaNews } from '../src/upstream/circuit.js';
import { UpstreamError } from '../src/upstream/failure.js';
import { createUpstreamClient, type RetryEvent } from '../src/upstream/http.js';
import { fakeClock, tracked, until } from './helpers/clock.js';
import { json, sequence, useScriptedUpstream, type Answer } from './helpers/scripted-upstream.js';
import { serveScripted } from './helpers/observed.js';
import { ALL_CREDENTIALS, defaultClientOptions, timeoutsSetBy, type ObservedGateway } from './helpers/stack.js';
import type { GatewayConfig } from '../src/gateway.js';
import { extensionsOf } from './helpers/answers.js';

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
  const gateway = await serveScripted(upstream().url, upstream().url, overrides);
  onTestFinished(() => gateway.close());
  return gateway;
}

const ask = (gateway: ObservedGateway) => gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);
/** Another tenant: its own bearer token and api_key. */
const TENANT_B = { authorization: 'Bearer tenant-b-token', api_key: 'tenant-b-key' };
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
  it('fails with UPSTREAM_RATE_LIMITED and retryAfter, and that caller is not called for again before the time', async () => {
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
    // A 4xx's message is about the caller's request: it is passed on.
    expect(limited.errors?.[0]?.message).toBe('Too many requests');
    expect(extensionsOf(held)).toEqual([{ code: 'UPSTREAM_RATE_LIMITED', upstream: UPSTREAM, retryAfter: 10 }]);
    expect(held.errors?.[0]?.message).toBe(
      "petstore limits these credentials' calls and asked for none for 10 s (429 with Retry-After)",
    );
    expect(petCalls()).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await ask(gateway)).toEqual(PET_ANSWER);
    expect(petCalls()).toHaveLength(2);
  });

  it("holds back only the tenant it was sent to: another tenant's queries are answered meanwhile", async () => {
    fakeClock({ date: true });
    const gateway = await serve();
    upstream().answer((request) =>
      request.headers['api_key'] === ALL_CREDENTIALS.api_key ? asksToWait(429, '30') : json(200, PET_1),
    );

    const limited = await ask(gateway);
    const tenantB = [await gateway.gql(PET_QUERY, {}, TENANT_B), await gateway.gql(PET_QUERY, {}, TENANT_B)];
    const heldA = await ask(gateway);
    const anonymous = await gateway.gql(PET_QUERY);

    expect(extensionsOf(limited)?.[0]?.['code']).toBe('UPSTREAM_RATE_LIMITED');
    expect(tenantB).toEqual([PET_ANSWER, PET_ANSWER]);
    expect(extensionsOf(heldA)).toEqual([{ code: 'UPSTREAM_RATE_LIMITED', upstream: UPSTREAM, retryAfter: 30 }]);
    expect(anonymous).toEqual(PET_ANSWER);
    // Tenant A's first call, tenant B's two and the anonymous one (getPetById forwards the api_key): A's second was not sent.
    expect(petCalls().map((request) => request.headers['api_key'])).toEqual([
      ALL_CREDENTIALS.api_key,
      TENANT_B.api_key,
      TENANT_B.api_key,
      undefined,
    ]);
    // Held back for one caller, the area is still ready.
    expect((await fetch(`${gateway.origin}/readiness`)).status).toBe(200);
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
  it('reads an HTTP-date: UPSTREAM_UNAVAILABLE with retryAfter; the next query is sent, and readiness stays ready', async () => {
    fakeClock({ date: true });
    const gateway = await serve();
    upstream().answer(sequence(asksToWait(503, new Date(Date.now() + 45_000).toUTCString()), json(200, PET_1)));

    const down = await ask(gateway);
    const next = await ask(gateway);
    const readiness = await fetch(`${gateway.origin}/readiness`);

    expect(extensionsOf(down)).toEqual([
      { code: 'UPSTREAM_UNAVAILABLE', upstream: { ...UPSTREAM, status: 503 }, retryAfter: expect.any(Number) },
    ]);
    // An HTTP-date has whole seconds: up to 45 s from now.
    expect(down.errors?.[0]?.extensions?.['retryAfter']).toBeGreaterThanOrEqual(44);
    expect(down.errors?.[0]?.extensions?.['retryAfter']).toBeLessThanOrEqual(45);
    // A 5xx is told in the gateway's words, not the upstream's.
    expect(down.errors?.[0]?.message).toBe('petstore answered getPetById with status 503');
    expect(next).toEqual(PET_ANSWER);
    expect(readiness.status).toBe(200);
    expect(petCalls()).toHaveLength(2);
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

  it('holds nobody: a few shed calls among many leave the circuit closed and every other query answered', async () => {
    const gateway = await serve({ upstreamCircuitFailureRate: 50, upstreamCircuitMinCalls: 5 });
    let calls = 0;
    // Every tenth call is shed.
    upstream().answer(() => ((calls += 1) % 10 === 0 ? asksToWait(503, '1') : json(200, PET_1)));

    const answers = [];
    for (let index = 0; index < 30; index += 1) answers.push(await ask(gateway));

    expect(answers.filter((answer) => answer.data?.['pet'] !== null)).toHaveLength(27);
    expect(petCalls()).toHaveLength(30);
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

  it("a 429 for this caller heard while its read waits to retry stops the retry; another caller's does not", async () => {
    fakeClock({ date: true });
    const { retries, tell, getPet } = clientHearing({ retries: 2 });
    upstream().answer(sequence(asksToWait(503, '2'), json(200, PET_1)));

    const failing = tracked(getPet());
    await until(() => retries.length === 1, 'the retry to be scheduled');
    tell({ service: 'petstore', hold: 429, ms: 30_000, caller: 'someone-else' });
    tell({ service: 'petstore', hold: 429, ms: 30_000, caller: ANONYMOUS_CALLER });
    await vi.advanceTimersByTimeAsync(2000);
    const error = await failing;

    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ failure: 'rate-limited', retryAfterMs: 28_000, retries: 1 });
    expect(petCalls()).toHaveLength(1);
  });

  it('is believed no longer than this replica would hold the caller itself', async () => {
    fakeClock({ date: true });
    const { tell, getPet } = clientHearing({ retryAfterMaxMs: 10_000 });
    upstream().answer(json(200, PET_1));

    tell({ service: 'petstore', hold: 429, ms: 3_600_000, caller: ANONYMOUS_CALLER });
    tell({ service: 'plants', hold: 429, ms: 3_600_000, caller: ANONYMOUS_CALLER });

    expect(await getPet()).toMatchObject({ failure: 'rate-limited', retryAfterMs: 10_000 });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await getPet()).toMatchObject({ status: 200 });
    expect(petCalls()).toHaveLength(1);
  });
});
