/**
 * The circuit breaker of each upstream area (`src/upstream/circuit.ts`), seen by a GraphQL
 * caller and by the upstream. Over a sliding window with a minimum of calls, when more than the
 * configured share of them failed for want of the upstream (connection errors, timeouts, 502,
 * 503, 504), the area is not called, and queries fail at once with UPSTREAM_UNAVAILABLE and
 * `retryAfter`: for everyone when the failures came from more than one caller, for one caller
 * only when it was the window's only caller; a 4xx counts as a success and a 500 for nothing, so
 * no single caller can open it for others. After the cool-down (longer when a 503 asked for it with
 * Retry-After) one trial call goes through while the others still fail at once; its success
 * closes the circuit, its failure opens it again. A call shared by several callers counts once.
 * `upstream_circuit_state` and /readiness follow the state. With REDIS_URL, a circuit opened on
 * one replica holds the area back on the others, a 429 holds its caller back on the others, and
 * Redis being away never stops a call.
 *
 * Cool-downs run on a fake clock (`fakeClock({ date: true })`: cockatiel reads `Date.now()`).
 */
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { fakeClock, tracked, until } from './helpers/clock.js';
import { useRedis } from './helpers/redis.js';
import {
  hold,
  json,
  scriptedUpstreams,
  useScriptedUpstream,
  type ScriptedUpstream,
} from './helpers/scripted-upstream.js';
import { ALL_CREDENTIALS, serveObserved, type ObservedGateway } from './helpers/stack.js';
import type { GatewayConfig } from '../src/gateway.js';
import { extensionsOf, readinessOf } from './helpers/answers.js';

const upstream = useScriptedUpstream();
const PET_1 = { id: 1, name: 'Cat 1', photoUrls: [], tags: [], status: 'available' };
const PET_QUERY = '{ pet(id: 1) { id name } }';
const DOWN = json(503, { code: 503, message: 'Service is down' });
const PET_ANSWER = { status: 200, data: { pet: { id: '1', name: 'Cat 1' } } };
/** The error of a query refused because the pet store's circuit is open. */
const circuitOpen = (retryAfter: number) => ({
  code: 'UPSTREAM_UNAVAILABLE',
  upstream: { service: 'petstore', operation: 'getPetById' },
  retryAfter,
});
/**
 * A circuit judged on at least 3 calls in 10 s, opening when more than half failed, for 5 s; no
 * retries, so that each query makes one call.
 */
const BREAKER: Partial<GatewayConfig> = {
  upstreamCircuitFailureRate: 50,
  upstreamCircuitMinCalls: 3,
  upstreamCircuitWindowMs: 10_000,
  upstreamCircuitCooldownMs: 5000,
  upstreamRetries: 0,
};

/** A gateway in front of the scripted upstream (both areas), closed when the test ends. */
async function serve(overrides: Partial<GatewayConfig> = {}, up: ScriptedUpstream = upstream()) {
  const gateway = await serveObserved(scriptedUpstreams(up.url), { ...BREAKER, ...overrides });
  onTestFinished(() => gateway.close());
  return gateway;
}

/** The credentials of tenant `n`: a bearer token and an api_key of its own. */
const tenant = (n: number) => ({ authorization: `Bearer tenant-${n}-token`, api_key: `tenant-${n}-key` });

/** The pet query of tenant `n` (default: the suite's own credentials). */
const ask = (gateway: ObservedGateway, n?: number) =>
  gateway.gql(PET_QUERY, {}, n === undefined ? ALL_CREDENTIALS : tenant(n));

/** The pet store requests the upstream received (readiness's pings of the base URL left out). */
const petCalls = (up: ScriptedUpstream = upstream()) => up.requests.filter((request) => request.url.includes('/pet/'));

/** `upstream_circuit_state{service="petstore"}` in the gateway's /metrics. */
async function circuitMetric(gateway: ObservedGateway): Promise<number | undefined> {
  const text = await (await fetch(`${gateway.origin}/metrics`)).text();
  const line = /^upstream_circuit_state\{service="petstore"\} (\d+)$/m.exec(text);
  return line ? Number(line[1]) : undefined;
}

/** `count` queries through `gateway`, each of another tenant, with the upstream answering `answer` (503). */
async function failCalls(gateway: ObservedGateway, count: number, answer = DOWN): Promise<void> {
  upstream().answer(answer);
  for (let index = 0; index < count; index += 1) await ask(gateway, index);
}

describe('an area whose calls fail', () => {
  it('is not called once more than the failure rate of the window failed: queries fail at once with UPSTREAM_UNAVAILABLE and retryAfter', async () => {
    fakeClock({ date: true });
    const gateway = await serve();

    await failCalls(gateway, 3);
    expect(petCalls()).toHaveLength(3);
    upstream().answer((request) =>
      request.url.startsWith('/plants') ? json(200, { name: 'Fern' }) : json(200, PET_1),
    );
    const refused = await ask(gateway);

    expect(refused.data).toEqual({ pet: null });
    expect(extensionsOf(refused)).toEqual([circuitOpen(5)]);
    expect(refused.errors?.[0]?.message).toMatch(
      /^petstore is unavailable \(circuit open: most of its recent calls failed\)/,
    );
    expect(petCalls()).toHaveLength(3);
    // Counted as a call held back, not timed as one the upstream answered.
    const metrics = await (await fetch(`${gateway.origin}/metrics`)).text();
    expect(metrics).toContain(
      'upstream_requests_total{service="petstore",operation="getPetById",method="GET",status="none",outcome="circuit_open"} 1',
    );
    expect(metrics).toContain(
      'upstream_request_duration_seconds_count{service="petstore",operation="getPetById",method="GET"} 3',
    );
    // The plant area has its own circuit: still called.
    const plant = await gateway.gql(
      'mutation { createPlant(input: { id: 1, name: "Fern" }) { name } }',
      {},
      ALL_CREDENTIALS,
    );
    expect(plant).toEqual({ status: 200, data: { createPlant: { name: 'Fern' } } });
    expect(upstream().requests.map((request) => `${request.method} ${request.url}`)).toContain('POST /plants');
  });

  it("opens for a lone caller's failures, for that caller only: its queries fail at once, another caller's are still answered", async () => {
    fakeClock({ date: true });
    const gateway = await serve();
    upstream().answer((request) => (request.headers['api_key'] === 'tenant-0-key' ? DOWN : json(200, PET_1)));

    const own = [];
    for (let index = 0; index < 10; index += 1) own.push(await ask(gateway, 0));
    const other = await ask(gateway, 1);

    // The window's minimum (3 calls) reached the upstream; the other 7 were refused at once.
    expect(own.map((result) => extensionsOf(result)?.[0]?.['code'])).toEqual(Array(10).fill('UPSTREAM_UNAVAILABLE'));
    expect(own.slice(3).map((result) => extensionsOf(result)?.[0])).toEqual(Array(7).fill(circuitOpen(5)));
    expect(own[3]?.errors?.[0]?.message).toMatch(
      /^petstore is unavailable \(circuit open: most of the recent calls with this credential failed\)/,
    );
    expect(other).toEqual(PET_ANSWER);
    expect(petCalls().map((request) => request.headers['api_key'])).toEqual([
      'tenant-0-key',
      'tenant-0-key',
      'tenant-0-key',
      'tenant-1-key',
    ]);
    // The area's circuit, as metrics and /readiness show it, is open: its only caller's calls fail.
    expect(await circuitMetric(gateway)).toBe(2);
    // After the cool-down the lone caller's trial call goes through, and its success closes the circuit.
    await vi.advanceTimersByTimeAsync(5000);
    upstream().answer(json(200, PET_1));
    expect(await ask(gateway, 0)).toEqual(PET_ANSWER);
    expect(await circuitMetric(gateway)).toBe(0);
  });

  it("cannot be opened by one caller while others call: one tenant's failing calls leave the other's answered, and both called", async () => {
    fakeClock({ date: true });
    const gateway = await serve();
    upstream().answer((request) => (request.headers['api_key'] === 'tenant-0-key' ? DOWN : json(200, PET_1)));

    const own = [];
    const other = [];
    for (let index = 0; index < 10; index += 1) {
      own.push(await ask(gateway, 0));
      other.push(await ask(gateway, 1));
    }

    // Each of its calls was sent: the circuit stayed closed.
    expect(own.every((result) => extensionsOf(result)?.[0]?.['code'] === 'UPSTREAM_UNAVAILABLE')).toBe(true);
    expect(own.every((result) => result.errors?.[0]?.extensions?.['retryAfter'] === undefined)).toBe(true);
    expect(other).toEqual(Array(10).fill(PET_ANSWER));
    expect(petCalls()).toHaveLength(20);
    expect(await circuitMetric(gateway)).toBe(0);
  });

  it("opens for everyone once a second caller fails beside a lone caller's open circuit", async () => {
    fakeClock({ date: true });
    const gateway = await serve();
    upstream().answer(DOWN);
    for (let index = 0; index < 3; index += 1) await ask(gateway, 0);

    const second = await ask(gateway, 1);
    const third = await ask(gateway, 2);

    // The second caller's call was made, and failed: now no caller's call is.
    expect(extensionsOf(second)).toEqual([
      { code: 'UPSTREAM_UNAVAILABLE', upstream: { service: 'petstore', operation: 'getPetById', status: 503 } },
    ]);
    expect(extensionsOf(third)).toEqual([circuitOpen(5)]);
    expect(third.errors?.[0]?.message).toMatch(/\(circuit open: most of its recent calls failed\)/);
    expect(petCalls().map((request) => request.headers['api_key'])).toEqual([
      'tenant-0-key',
      'tenant-0-key',
      'tenant-0-key',
      'tenant-1-key',
    ]);
  });

  it("does not count a 500: ten queries that make the upstream answer 500 leave other callers' queries answered", async () => {
    fakeClock({ date: true });
    const gateway = await serve();

    upstream().answer(json(500, { code: 500, message: 'boom at /srv/app/server.js:12' }));
    const failed = [];
    for (let index = 0; index < 10; index += 1) failed.push(await ask(gateway, index));
    upstream().answer(json(200, PET_1));

    expect(await ask(gateway, 20)).toEqual(PET_ANSWER);
    // What the upstream said of itself reaches the log, not the callers.
    for (const result of failed)
      expect(result.errors).toEqual([
        expect.objectContaining({
          message: 'petstore answered getPetById with status 500',
          extensions: {
            code: 'UPSTREAM_ERROR',
            upstream: { service: 'petstore', operation: 'getPetById', status: 500 },
          },
        }),
      ]);
    expect(JSON.stringify(failed)).not.toContain('server.js');
    expect(gateway.log.text()).toContain('boom at /srv/app/server.js:12');
    expect(petCalls()).toHaveLength(11);
    expect(await circuitMetric(gateway)).toBe(0);
  });

  it('counts refused connections and timeouts, and 4xx answers as successes', async () => {
    fakeClock({ date: true });
    const gateway = await serve();

    await failCalls(gateway, 5, json(404, { code: 404, message: 'Pet not found' }));
    await failCalls(gateway, 3, { reset: true });
    upstream().answer(json(200, PET_1));
    // 5 answers of 404 and a success against 3 lost connections: less than half failed.
    expect(await ask(gateway)).toEqual(PET_ANSWER);
    // Three more lost connections are 6 of 12, not more than half; the fourth is 7 of 13.
    await failCalls(gateway, 4, { reset: true });
    const before = petCalls().length;

    expect(before).toBe(13);
    expect(extensionsOf(await ask(gateway, 7))).toEqual([circuitOpen(5)]);
    expect(petCalls()).toHaveLength(before);
  });

  it('stays closed below UPSTREAM_CIRCUIT_MIN_CALLS calls in the window, and forgets calls older than it', async () => {
    fakeClock({ date: true });
    const gateway = await serve({ upstreamCircuitMinCalls: 4 });

    await failCalls(gateway, 3);
    await vi.advanceTimersByTimeAsync(10_000);
    await failCalls(gateway, 3);
    upstream().answer(json(200, PET_1));

    expect(await ask(gateway)).toEqual(PET_ANSWER);
    expect(petCalls()).toHaveLength(7);
  });

  it('stays open as long as a 503 of the window asked with Retry-After, when that is longer than the cool-down', async () => {
    fakeClock({ date: true });
    const gateway = await serve();

    await failCalls(gateway, 3, {
      status: 503,
      headers: { 'content-type': 'application/json', 'retry-after': '20' },
      body: '{"message":"shedding load"}',
    });
    upstream().answer(json(200, PET_1));

    expect(extensionsOf(await ask(gateway))).toEqual([circuitOpen(20)]);
    await vi.advanceTimersByTimeAsync(5000);
    expect(extensionsOf(await ask(gateway))).toEqual([circuitOpen(15)]);
    await vi.advanceTimersByTimeAsync(15_000);
    expect(await ask(gateway)).toEqual(PET_ANSWER);
    expect(petCalls()).toHaveLength(4);
  });

  it('lets one trial call through after the cool-down, refusing the others meanwhile; its success closes the circuit', async () => {
    fakeClock({ date: true });
    const gateway = await serve();
    await failCalls(gateway, 3);

    await vi.advanceTimersByTimeAsync(4999);
    expect(extensionsOf(await ask(gateway))).toEqual([circuitOpen(1)]);
    expect(petCalls()).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(1);
    const held = hold(json(200, PET_1));
    upstream().answer(held.answer);
    const trial = tracked(ask(gateway));
    await until(() => petCalls().length === 4, 'the trial call to reach the upstream');
    // Another pet: the same one would join the trial call in flight (UPSTREAM_DEDUPE).
    const meanwhile = await gateway.gql('{ pet(id: 2) { id name } }', {}, ALL_CREDENTIALS);
    held.release();

    expect(extensionsOf(meanwhile)).toEqual([circuitOpen(1)]);
    expect(meanwhile.errors?.[0]?.message).toContain('a trial call is under way');
    expect(await trial).toEqual(PET_ANSWER);
    expect(await ask(gateway)).toEqual(PET_ANSWER);
    expect(petCalls()).toHaveLength(5);
  });

  it('opens again for another cool-down when the trial call fails', async () => {
    fakeClock({ date: true });
    const gateway = await serve();
    await failCalls(gateway, 3);

    await vi.advanceTimersByTimeAsync(5000);
    const trial = await ask(gateway);
    upstream().answer(json(200, PET_1));
    const after = await ask(gateway);

    expect(extensionsOf(trial)).toEqual([
      { code: 'UPSTREAM_UNAVAILABLE', upstream: { service: 'petstore', operation: 'getPetById', status: 503 } },
    ]);
    expect(extensionsOf(after)).toEqual([circuitOpen(5)]);
    expect(petCalls()).toHaveLength(4);
    await vi.advanceTimersByTimeAsync(5000);
    expect(await ask(gateway)).toEqual(PET_ANSWER);
  });

  it('counts a call shared by several queries once', async () => {
    fakeClock({ date: true });
    const gateway = await serve();
    const held = hold(DOWN);
    upstream().answer(held.answer);

    // Callers without a credential: the upstream cannot tell them apart, so their failures could open it.
    const shared = [gateway.gql(PET_QUERY), gateway.gql(PET_QUERY), gateway.gql(PET_QUERY)];
    await until(() => petCalls().length === 1, 'the shared call to reach the upstream');
    await until(
      async () =>
        / 2$/m.test(
          (await (await fetch(`${gateway.origin}/metrics`)).text())
            .split('\n')
            .filter((line) => line.startsWith('upstream_shared_calls_total{'))
            .join('\n'),
        ),
      'the other two queries to join the call in flight',
    );
    held.release();
    const results = await Promise.all(shared);

    expect(results.map((result) => extensionsOf(result)?.[0]?.['code'])).toEqual([
      'UPSTREAM_UNAVAILABLE',
      'UPSTREAM_UNAVAILABLE',
      'UPSTREAM_UNAVAILABLE',
    ]);
    expect(petCalls()).toHaveLength(1);
    upstream().answer(json(200, PET_1));
    // One failure, not three: the circuit (3 calls at least) is still closed.
    expect(await gateway.gql(PET_QUERY)).toEqual(PET_ANSWER);
    expect(petCalls()).toHaveLength(2);
  });

  it('keeps calling with UPSTREAM_CIRCUIT_FAILURE_RATE=0 (no breaker)', async () => {
    const gateway = await serve({ upstreamCircuitFailureRate: 0 });

    await failCalls(gateway, 10);

    expect(petCalls()).toHaveLength(10);
  });

  it('shows its state in upstream_circuit_state (0 closed, 1 half-open, 2 open), in /readiness and in the log', async () => {
    fakeClock({ date: true });
    const gateway = await serve();
    upstream().answer(json(200, PET_1));
    expect(await circuitMetric(gateway)).toBe(0);
    expect((await readinessOf(gateway.origin)).body.upstreams['petstore']).toMatchObject({
      ready: true,
      circuit: 'closed',
    });

    await failCalls(gateway, 3);
    const pingsBefore = upstream().requests.length;
    const open = await readinessOf(gateway.origin);

    expect(await circuitMetric(gateway)).toBe(2);
    expect(open.status).toBe(503);
    expect(open.body.upstreams['petstore']).toEqual({
      ready: false,
      reason: 'circuit open, not called for 5 s',
      circuit: 'open',
    });
    expect(open.body).toMatchObject({
      message: expect.stringContaining('petstore (circuit open, not called for 5 s)'),
    });
    // An open area is not asked, even by readiness; the plant area is.
    expect(
      upstream()
        .requests.slice(pingsBefore)
        .map((request) => request.url),
    ).toEqual(['/']);
    expect(gateway.log.text()).toContain('upstream petstore: circuit open, calls fail at once');

    await vi.advanceTimersByTimeAsync(5000);
    expect(await circuitMetric(gateway)).toBe(1);
    expect((await readinessOf(gateway.origin)).body.upstreams['petstore']).toMatchObject({ circuit: 'half-open' });
    upstream().answer(json(200, PET_1));
    await ask(gateway);

    expect(await circuitMetric(gateway)).toBe(0);
    expect((await readinessOf(gateway.origin)).body.upstreams['petstore']).toMatchObject({
      ready: true,
      circuit: 'closed',
    });
    expect(gateway.log.text()).toContain('upstream petstore: circuit closed, calls go through again');
  });
});

describe('replicas sharing Redis', () => {
  const redis = useRedis();

  /** Two gateways on the test's Redis, both subscribed to the circuits' news before the test goes on. */
  async function replicas(overrides: Partial<GatewayConfig> = {}): Promise<[ObservedGateway, ObservedGateway]> {
    const config = { redisUrl: redis.url, redisKeyPrefix: `circuit-test-${Math.random()}:`, ...overrides };
    const pair: [ObservedGateway, ObservedGateway] = [await serve(config), await serve(config)];
    for (const gateway of pair)
      await until(async () => {
        const body = (await readinessOf(gateway.origin)).body as { redis?: { ready: boolean } };
        return body.redis?.ready;
      }, 'the replica to reach Redis');
    return pair;
  }

  it('a circuit opened on one replica holds the area back on the other, which does not call it', async () => {
    const [a, b] = await replicas();

    await failCalls(a, 3);
    await until(
      async () => ((await readinessOf(b.origin)).body.upstreams['petstore'] as { circuit: string }).circuit === 'open',
      'the other replica to hold the pet store back',
    );
    upstream().answer(json(200, PET_1));
    const refused = await ask(b);

    expect(extensionsOf(refused)).toEqual([
      {
        code: 'UPSTREAM_UNAVAILABLE',
        upstream: { service: 'petstore', operation: 'getPetById' },
        retryAfter: expect.any(Number),
      },
    ]);
    expect(refused.errors?.[0]?.message).toContain('another replica of the gateway found it failing');
    expect(petCalls()).toHaveLength(3);
    // What the other replica shares is in Redis, under the prefix, for the cool-down.
    expect(await redis.cli('--scan', '--pattern', '*upstream-hold:petstore:circuit')).not.toBe('');
  });

  it('a 429 with Retry-After on one replica holds that caller back on the other; other callers are still called', async () => {
    const [a, b] = await replicas();
    // Only the first call of the caller is answered 429: a refusal on b can only come from a's news.
    let limited = false;
    upstream().answer((request) => {
      if (request.headers['api_key'] !== ALL_CREDENTIALS.api_key || limited) return json(200, PET_1);
      limited = true;
      return {
        ...json(429, { message: 'slow down' }),
        headers: { 'content-type': 'application/json', 'retry-after': '30' },
      };
    });
    expect(extensionsOf(await ask(a))).toEqual([
      {
        code: 'UPSTREAM_RATE_LIMITED',
        upstream: { service: 'petstore', operation: 'getPetById', status: 429 },
        retryAfter: 30,
      },
    ]);
    // Until the news reaches b, b calls for the caller and gets the pet.
    const refused = await until(async () => {
      const result = await ask(b);
      return result.errors === undefined ? undefined : result;
    }, 'the other replica to hold the caller back');

    expect(extensionsOf(refused)).toEqual([
      {
        code: 'UPSTREAM_RATE_LIMITED',
        upstream: { service: 'petstore', operation: 'getPetById' },
        retryAfter: expect.any(Number),
      },
    ]);
    const sent = petCalls().length;
    expect(await ask(b, 1)).toEqual(PET_ANSWER);
    expect(
      petCalls()
        .slice(sent)
        .map((request) => request.headers['api_key']),
    ).toEqual(['tenant-1-key']);
    expect(((await readinessOf(b.origin)).body.upstreams['petstore'] as { ready: boolean }).ready).toBe(true);
  });

  it('without Redis, calls still go through and each replica keeps its own circuit (fail open)', async () => {
    const [a, b] = await replicas();
    await redis.stop();
    onTestFinished(() => redis.start());

    upstream().answer(DOWN);
    await failCalls(a, 3);
    upstream().answer(json(200, PET_1));

    expect(await ask(b)).toEqual(PET_ANSWER);
    expect(extensionsOf(await ask(a))).toEqual([circuitOpen(5)]);
    expect(petCalls()).toHaveLength(4);
  });
});
