/**
 * `/health` (liveness: the process serves requests, whatever the upstreams do) and
 * `/readiness` (each configured upstream answers; 503 naming the one that does not).
 */
import { describe, expect, it } from 'vitest';
import { until } from './helpers/clock.js';
import { useObserved } from './helpers/observed.js';
import { closedPortUrl, json, scriptedUpstreams } from './helpers/scripted-upstream.js';

const observed = useObserved();

async function get(path: string) {
  const response = await fetch(`${observed.gateway.origin}${path}`);
  const text = await response.text();
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    cacheControl: response.headers.get('cache-control'),
    text,
  };
}

describe('/health', () => {
  it('answers 200 while the process serves requests, even with every upstream down', async () => {
    const down = await closedPortUrl();
    await observed.serve(scriptedUpstreams(down));

    const health = await get('/health');

    expect(health.status).toBe(200);
    expect(health.text).toBe('');
  });
});

describe('/readiness', () => {
  it('answers 200 with each upstream ready and how long it took to answer', async () => {
    await observed.serve();

    const readiness = await get('/readiness');

    expect(readiness).toMatchObject({
      status: 200,
      contentType: 'application/json; charset=utf-8',
      cacheControl: 'no-store',
    });
    expect(JSON.parse(readiness.text)).toEqual({
      status: 'ready',
      upstreams: {
        petstore: { ready: true, latencyMs: expect.any(Number), circuit: 'closed' },
        plants: { ready: true, latencyMs: expect.any(Number), circuit: 'closed' },
      },
    });
  });

  it('asks each base URL once, without a credential', async () => {
    await observed.serve({
      petstoreUrl: `${observed.scripted.url}/api/v3`,
      plantsUrl: `${observed.scripted.url}/plant-area`,
    });
    observed.scripted.answer(json(404, { message: 'not here' }));

    expect((await get('/readiness')).status).toBe(200);

    expect(
      observed.scripted.requests
        .map(
          (request) =>
            `${request.method} ${request.url} ${String(request.headers['authorization'] ?? '-')} ${String(request.headers['api_key'] ?? '-')}`,
        )
        .sort(),
    ).toEqual(['GET /api/v3 - -', 'GET /plant-area - -']);
  });

  it('answers 503 naming the upstream that refuses connections', async () => {
    const down = await closedPortUrl();
    await observed.serve({ petstoreUrl: observed.emulator.petstoreUrl, plantsUrl: down });

    const readiness = await get('/readiness');

    expect(readiness.status).toBe(503);
    expect(JSON.parse(readiness.text)).toEqual({
      status: 'unavailable',
      upstreams: {
        petstore: { ready: true, latencyMs: expect.any(Number), circuit: 'closed' },
        plants: { ready: false, reason: 'connection refused', circuit: 'closed' },
      },
      message: 'not ready: plants (connection refused)',
    });
  });

  it('answers 503 naming an upstream that says it cannot serve (503), or does not answer in time', async () => {
    await observed.serve(scriptedUpstreams(observed.scripted.url), { readinessTimeoutMs: 200 });
    observed.scripted.answer((request) =>
      request.url.startsWith('/api/v3') ? json(503, { message: 'maintenance' }) : { hang: true },
    );

    const readiness = await get('/readiness');

    expect(readiness.status).toBe(503);
    expect(JSON.parse(readiness.text)).toMatchObject({
      upstreams: {
        petstore: { ready: false, reason: 'answered 503' },
        plants: { ready: false, reason: 'no answer within 200 ms' },
      },
      message: 'not ready: petstore (answered 503), plants (no answer within 200 ms)',
    });
    // The check gave up on the plant area, which never answers: it sees its connection closed.
    const plants = observed.scripted.requests.find((request) => !request.url.startsWith('/api/v3'));
    expect(plants).toBeDefined();
    await until(
      () => !observed.scripted.isOpen(plants?.connection ?? 0),
      'the plant area to see its connection closed',
    );
  });

  it('never shows an upstream URL, which may carry credentials', async () => {
    const down = await closedPortUrl();
    await observed.serve({
      petstoreUrl: `${down.replace('http://', 'http://alice:s3cret@')}/api/v3`,
      plantsUrl: down,
    });

    const readiness = await get('/readiness');

    expect(readiness.text).not.toMatch(/s3cret|alice|127\.0\.0\.1/);
  });
});
