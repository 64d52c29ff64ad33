/**
 * `/metrics` in Prometheus's text format: GraphQL operations (count, duration, errors by code)
 * and upstream calls (count by status and outcome, duration, retries, timeouts), by service and
 * operation, next to the process's own metrics.
 */
import { describe, expect, it } from 'vitest';
import { createMetrics, MAX_OPERATION_NAMES } from '../src/observability/metrics.js';
import { useObserved } from './helpers/observed.js';
import { json, scriptedUpstreams, sequence } from './helpers/scripted-upstream.js';
import { timeoutsSetBy } from './helpers/stack.js';

const observed = useObserved();

async function scrape(origin: string) {
  const response = await fetch(`${origin}/metrics`);
  return { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
}

/** The samples of `metric` (its name with labels, as written) and their values. */
function samples(text: string, metric: string): Record<string, number> {
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => line.startsWith(`${metric}{`) || line.startsWith(`${metric} `))
      .map((line) => {
        const at = line.lastIndexOf(' ');
        return [line.slice(0, at), Number(line.slice(at + 1))];
      }),
  );
}

describe('GraphQL operations', () => {
  it('are counted by name, type and result, timed, and their errors counted by code', async () => {
    const gateway = await observed.serve();

    await gateway.gql('query Order { order(id: 1) { id } }');
    await gateway.gql('query Order { order(id: 1) { id } }');
    // Without the api_key the pet store refuses the inventory: UNAUTHENTICATED.
    await gateway.gql('query Stock { inventory { entries { status } } }');
    await gateway.gql('{ user(username: "user1") { username } }');
    const { status, contentType, text } = await scrape(gateway.origin);

    expect(status).toBe(200);
    expect(contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(samples(text, 'graphql_operations_total')).toEqual({
      'graphql_operations_total{operation_name="Order",operation_type="query",result="success"}': 2,
      'graphql_operations_total{operation_name="Stock",operation_type="query",result="error"}': 1,
      'graphql_operations_total{operation_name="anonymous",operation_type="query",result="success"}': 1,
    });
    expect(samples(text, 'graphql_errors_total')).toEqual({
      'graphql_errors_total{operation_name="Stock",code="UNAUTHENTICATED"}': 1,
    });
    expect(samples(text, 'graphql_operation_duration_seconds_count')).toMatchObject({
      'graphql_operation_duration_seconds_count{operation_name="Order",operation_type="query"}': 2,
    });
    expect(text).toContain('# TYPE graphql_operation_duration_seconds histogram');
  });

  it('count a request refused before any operation ran under its code', async () => {
    const gateway = await observed.serve();

    await gateway.gql('{ pet(id: 1) { name ');
    await gateway.gql('{ pet(id: 1) { nickname } }');
    const { text } = await scrape(gateway.origin);

    expect(samples(text, 'graphql_errors_total')).toEqual({
      'graphql_errors_total{operation_name="anonymous",code="GRAPHQL_PARSE_FAILED"}': 1,
      'graphql_errors_total{operation_name="anonymous",code="GRAPHQL_VALIDATION_FAILED"}': 1,
    });
  });

  it(`give at most ${MAX_OPERATION_NAMES} operation names their own series; the rest count as "other"`, async () => {
    const metrics = createMetrics();
    for (let index = 0; index <= MAX_OPERATION_NAMES; index += 1)
      metrics.observeOperation({ name: `Op${index}`, type: 'query', started: 0, ended: 1, errorCodes: [] });

    const { body } = await metrics.render();

    const series = Object.keys(samples(body, 'graphql_operations_total'));
    expect(series).toHaveLength(MAX_OPERATION_NAMES + 1);
    expect(series).toContain(
      'graphql_operations_total{operation_name="other",operation_type="query",result="success"}',
    );
  });
});

describe('upstream calls', () => {
  it('are counted by service, operation, method, status and outcome, and timed', async () => {
    const gateway = await observed.serve();

    await gateway.gql('{ pet(id: 1) { name } order(id: 1) { id } }', {}, { api_key: 'demo' });
    await gateway.gql('{ pet(id: 404404) { name } }', {}, { api_key: 'demo' });
    await gateway.gql('mutation { createPlant(input: { id: 1, name: "Fern" }) { name } }');
    const { text } = await scrape(gateway.origin);

    expect(samples(text, 'upstream_requests_total')).toEqual({
      'upstream_requests_total{service="petstore",operation="getPetById",method="GET",status="200",outcome="ok"}': 1,
      'upstream_requests_total{service="petstore",operation="getPetById",method="GET",status="404",outcome="http_error"}': 1,
      'upstream_requests_total{service="petstore",operation="getOrderById",method="GET",status="200",outcome="ok"}': 1,
      'upstream_requests_total{service="plants",operation="createPlant",method="POST",status="401",outcome="http_error"}': 1,
    });
    expect(samples(text, 'upstream_request_duration_seconds_count')).toMatchObject({
      'upstream_request_duration_seconds_count{service="petstore",operation="getPetById",method="GET"}': 2,
      'upstream_request_duration_seconds_count{service="plants",operation="createPlant",method="POST"}': 1,
    });
  });

  it('count retries and timeouts', async () => {
    const upstreams = scriptedUpstreams(observed.scripted.url);
    const gateway = await observed.serve(upstreams, {
      upstreamRetries: 2,
      upstreamRetryBackoffMs: 1,
      upstreamTimeouts: timeoutsSetBy({ UPSTREAM_TIMEOUT_MS: '300' }),
    });
    const pet = { id: 1, name: 'Cat 1', photoUrls: [], tags: [] };

    observed.scripted.answer(sequence(json(503, { message: 'busy' }), json(503, { message: 'busy' }), json(200, pet)));
    await gateway.gql('{ pet(id: 1) { name } }', {}, { api_key: 'demo' });
    observed.scripted.answer({ hang: true });
    await gateway.gql('{ order(id: 1) { id } }');
    const { text } = await scrape(gateway.origin);

    expect(samples(text, 'upstream_retries_total')).toEqual({
      'upstream_retries_total{service="petstore",operation="getPetById"}': 2,
    });
    expect(samples(text, 'upstream_timeouts_total')).toEqual({
      'upstream_timeouts_total{service="petstore",operation="getOrderById"}': 1,
    });
    expect(samples(text, 'upstream_requests_total')).toEqual({
      'upstream_requests_total{service="petstore",operation="getPetById",method="GET",status="200",outcome="ok"}': 1,
      'upstream_requests_total{service="petstore",operation="getOrderById",method="GET",status="none",outcome="timeout"}': 1,
    });
  });
});

describe('the endpoint', () => {
  it("also serves the process's metrics (CPU, memory, event loop)", async () => {
    const gateway = await observed.serve();

    const { text } = await scrape(gateway.origin);

    for (const metric of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
    ])
      expect(text).toContain(`# TYPE ${metric} `);
  });

  it('is not served with METRICS=false', async () => {
    const gateway = await observed.serve(undefined, { metrics: false });

    const { status, text } = await scrape(gateway.origin);

    expect(status).toBe(404);
    expect(text).not.toContain('graphql_operations_total');
  });
});
