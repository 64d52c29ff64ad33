/**
 * Redis failing under a gateway (REDIS_URL): unreachable at start, lost while serving, back
 * again. Requests are always answered with data and never wait on Redis longer than
 * REDIS_TIMEOUT_MS; /readiness reports Redis as degraded (503 only with REDIS_REQUIRED); rate
 * limits fail open unless RATE_LIMIT_FAIL_CLOSED; errors are counted and each outage is logged
 * once; when Redis is back, sharing resumes without a restart.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../src/gateway.js';
import { tracked, until } from './helpers/clock.js';
import { useObserved } from './helpers/observed.js';
import { useRedis } from './helpers/redis.js';
import { ALL_CREDENTIALS, GRAPHQL_POST_HEADERS, timeoutsSetBy, type ObservedGateway } from './helpers/stack.js';
import { readinessOf } from './helpers/answers.js';

const redis = useRedis();
const observed = useObserved();
const REDIS_TIMEOUT_MS = 100;
const UPSTREAM_TIMEOUT_MS = 2000;

/** Redis running again, and empty, for the next test. */
afterEach(async () => {
  if ((await redis.cli('PING')).trim() !== 'PONG') await redis.start();
  await redis.cli('FLUSHALL');
});

const settings = (overrides: Partial<GatewayConfig> = {}): Partial<GatewayConfig> => ({
  redisUrl: redis.url,
  redisTimeoutMs: REDIS_TIMEOUT_MS,
  upstreamTimeouts: timeoutsSetBy({ UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS) }),
  ...overrides,
});

/** Waits until the gateway's Redis connection is up (or, `false`, down). */
async function redisReady(gateway: ObservedGateway, ready = true) {
  await expect
    .poll(async () => ((await readinessOf(gateway.origin)).body['redis'] as { ready?: boolean } | undefined)?.ready, {
      timeout: 10_000,
    })
    .toBe(ready);
}

/** One query of pet `id`: its status and the id it answered. */
async function petQuery(gateway: ObservedGateway, id: number) {
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: { ...GRAPHQL_POST_HEADERS, ...ALL_CREDENTIALS },
    body: JSON.stringify({ query: `{ pet(id: ${id}) { id } }` }),
  });
  const body = (await response.json()) as { data?: { pet?: { id: string } } };
  return { status: response.status, id: body.data?.pet?.id };
}

const redisErrors = async (gateway: ObservedGateway) => {
  const text = await (await fetch(`${gateway.origin}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('redis_errors_total{'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
};

describe('Redis lost while serving', () => {
  it('every request of a load is answered with data within its timeouts; Redis back, the cache is shared again', async () => {
    const overrides = settings({ responseCacheTtlMs: 60_000, rateLimitPerMinute: 100_000 });
    const a = await observed.serve(undefined, overrides);
    await redisReady(a);

    // 300 requests, 10 at a time, over 6 pets; Redis is killed after the first 100.
    const answers: Awaited<ReturnType<typeof petQuery>>[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (next < 300) {
          const index = next++;
          if (index === 100) void redis.stop();
          answers.push(await petQuery(a, (index % 6) + 1));
        }
      }),
    );

    // Redis stays down until all 300 are answered: a request that waited for it would never be.
    expect(answers).toHaveLength(300);
    expect(answers.filter((answer) => answer.status !== 200 || answer.id === undefined)).toEqual([]);
    expect(await redisErrors(a)).toBeGreaterThan(0);
    // Once per outage, not per request.
    const outageLines = a.log.lines().filter((line) => String(line['msg']).startsWith('Redis unreachable'));
    expect(outageLines).toHaveLength(1);
    expect(await readinessOf(a.origin)).toMatchObject({
      status: 200,
      body: { status: 'degraded', redis: { ready: false, required: false } },
    });

    await redis.start();
    await redisReady(a);
    const b = await observed.serve(undefined, overrides);
    await redisReady(b);
    observed.emulator.clearRequests();
    await a.gql('{ pet(id: 5) { name } }', {}, ALL_CREDENTIALS);
    const fromB = await b.gql('{ pet(id: 5) { name } }', {}, ALL_CREDENTIALS);

    expect(fromB).toEqual({ status: 200, data: { pet: { name: 'Dog 2' } } });
    expect(observed.emulator.requests.map((request) => request.path)).toEqual(['/api/v3/pet/5']);
    expect(a.log.lines().filter((line) => String(line['msg']).startsWith('Redis reachable again'))).toHaveLength(1);
  });

  it('that stops answering (frozen, its connections open) holds no request past REDIS_TIMEOUT_MS: each is answered with data', async () => {
    const gateway = await observed.serve(
      undefined,
      settings({ responseCacheTtlMs: 60_000, rateLimitPerMinute: 100_000 }),
    );
    await redisReady(gateway);
    const [, pid = ''] = /process_id:(\d+)/.exec(await redis.cli('INFO', 'server')) ?? [];
    process.kill(Number(pid), 'SIGSTOP');
    try {
      // Redis stays frozen until the answers are in: only the gateway's own timeouts let them through.
      const answering = tracked(Promise.all([1, 2, 3].map((id) => petQuery(gateway, id))));
      await until(() => answering.settled, 'the answers while Redis is frozen');
      const answers = await answering;

      expect(answers).toEqual([1, 2, 3].map((id) => ({ status: 200, id: String(id) })));
      expect(await redisErrors(gateway)).toBeGreaterThan(0);
    } finally {
      process.kill(Number(pid), 'SIGCONT');
    }
  });

  it('refuses requests with 503 RATE_LIMIT_UNAVAILABLE and Retry-After under RATE_LIMIT_FAIL_CLOSED', async () => {
    const gateway = await observed.serve(undefined, settings({ rateLimitPerMinute: 100, rateLimitFailClosed: true }));
    await redisReady(gateway);
    await redis.stop();
    await redisReady(gateway, false);
    observed.emulator.clearRequests();

    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: { ...GRAPHQL_POST_HEADERS, ...ALL_CREDENTIALS },
      body: JSON.stringify({ query: '{ pet(id: 1) { id } }' }),
    });

    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toMatchObject({ errors: [{ extensions: { code: 'RATE_LIMIT_UNAVAILABLE' } }] });
    expect(observed.emulator.requests).toEqual([]);
  });
});

describe('Redis unreachable at start', () => {
  it('the gateway starts and serves, /readiness says degraded (503 with REDIS_REQUIRED), and it connects once Redis is there', async () => {
    await redis.stop();
    const lenient = await observed.serve(undefined, settings());
    const strict = await observed.serve(undefined, settings({ redisRequired: true }));

    const answer = await petQuery(lenient, 1);
    const lenientReadiness = await readinessOf(lenient.origin);
    const strictReadiness = await readinessOf(strict.origin);

    expect(answer).toMatchObject({ status: 200, id: '1' });
    expect(lenientReadiness).toMatchObject({
      status: 200,
      body: { status: 'degraded', message: 'degraded: redis (unreachable)', redis: { ready: false } },
    });
    expect(strictReadiness).toMatchObject({
      status: 503,
      body: { status: 'unavailable', redis: { ready: false, required: true } },
    });

    await redis.start();
    await redisReady(lenient);
    await redisReady(strict);
    expect(await readinessOf(strict.origin)).toMatchObject({ status: 200, body: { status: 'ready' } });
  });
});
