/**
 * Run-time contract sampling (UPSTREAM_CONTRACT_SAMPLE): a sampled upstream answer that does not
 * fit the response schema of its operation is counted in
 * `upstream_contract_mismatches_total{service,operation,path}` and logged once per operation and
 * path, and the GraphQL answer is exactly what it would be without sampling. The upstream is a
 * scripted one that drifts from the document in one way per test; the sample is 1 (every answer).
 */
import { describe, expect, test } from 'vitest';
import { ContractSampler, mismatchPath } from '../src/contract/sampling.js';
import { createLogger } from '../src/observability/logger.js';
import { createMetrics } from '../src/observability/metrics.js';
import type { UpstreamClient, UpstreamRequest } from '../src/upstream/http.js';
import { useObserved } from './helpers/observed.js';
import { json, scriptedUpstreams, type Answer } from './helpers/scripted-upstream.js';
import { ALL_CREDENTIALS, captureLog, type ObservedGateway } from './helpers/stack.js';

const observed = useObserved();

/** The samples of upstream_contract_mismatches_total, by their labels as written. */
async function mismatches(gateway: ObservedGateway): Promise<Record<string, number>> {
  const text = await (await fetch(`${gateway.origin}/metrics`)).text();
  const lines = text.split('\n').filter((line) => line.startsWith('upstream_contract_mismatches_total{'));
  return Object.fromEntries(
    lines.map((line) => [line.slice(0, line.lastIndexOf(' ')), Number(line.slice(line.lastIndexOf(' ') + 1))]),
  );
}

/** The log lines about contract mismatches. */
function mismatchLines(gateway: ObservedGateway): Record<string, unknown>[] {
  return gateway.log.lines().filter((line) => line['expected'] !== undefined);
}

/**
 * Serves two gateways over the scripted upstream giving `answer`, one sampling every answer and
 * one sampling none, and sends `query` `times` times to each: the GraphQL answers of both, and
 * the sampling gateway.
 */
async function withAndWithout(answer: Answer, query: string, times: number) {
  const upstream = observed.scripted;
  upstream.answer(answer);
  const origins = scriptedUpstreams(upstream.url);
  const without = await observed.serve(origins, { upstreamContractSample: 0 });
  const answersWithout = [];
  for (let count = 0; count < times; count += 1)
    answersWithout.push(await without.gql(query, undefined, ALL_CREDENTIALS));
  const sampled = await observed.serve(origins, { upstreamContractSample: 1 });
  const answersWith = [];
  for (let count = 0; count < times; count += 1) answersWith.push(await sampled.gql(query, undefined, ALL_CREDENTIALS));
  return { answersWith, answersWithout, sampled, without, received: upstream.requests.map((request) => request.url) };
}

describe('an upstream answer that does not fit its document', () => {
  test('a string where an integer is declared: counted at its path, logged once without the value', async () => {
    const order = {
      id: 7,
      petId: 3,
      quantity: '1234567',
      shipDate: '2025-01-01T00:00:00.000Z',
      status: 'placed',
      complete: false,
    };
    const run = await withAndWithout(json(200, order), '{ order(id: "7") { id petId quantity status complete } }', 3);

    expect(run.answersWith).toEqual(run.answersWithout);
    // Sampling makes no call of its own: three per gateway.
    expect(run.received).toEqual(Array(6).fill('/api/v3/store/order/7'));
    expect(await mismatches(run.sampled)).toEqual({
      'upstream_contract_mismatches_total{service="petstore",operation="getOrderById",path="$.quantity"}': 3,
    });
    expect(await mismatches(run.without)).toEqual({});
    expect(mismatchLines(run.sampled)).toMatchObject([
      {
        level: 'warn',
        service: 'petstore',
        operation: 'getOrderById',
        path: '$.quantity',
        expected: 'must be integer',
      },
    ]);
    expect(run.sampled.log.text()).not.toContain('1234567');
  });

  test('a required field dropped: counted as the missing field, logged once', async () => {
    const pet = { id: 5, photoUrls: [], tags: [], status: 'available' };
    const run = await withAndWithout(json(200, pet), '{ pet(id: "5") { id name status } }', 3);

    expect(run.answersWith).toEqual(run.answersWithout);
    expect(run.answersWith[0]).toEqual({ status: 200, data: { pet: { id: '5', name: null, status: 'AVAILABLE' } } });
    expect(run.received).toEqual(Array(6).fill('/api/v3/pet/5'));
    expect(await mismatches(run.sampled)).toEqual({
      'upstream_contract_mismatches_total{service="petstore",operation="getPetById",path="$.name"}': 3,
    });
    expect(mismatchLines(run.sampled)).toMatchObject([
      { operation: 'getPetById', path: '$.name', expected: "must have required property 'name'" },
    ]);
  });

  test('an undeclared enum value, inside a list: counted with the index as *, logged once', async () => {
    const pets = [
      { id: 1, name: 'Rex', photoUrls: [], tags: [], status: 'available' },
      { id: 2, name: 'Tom', photoUrls: [], tags: [], status: 'adopted' },
    ];
    const run = await withAndWithout(json(200, pets), '{ petsByStatus(status: [AVAILABLE]) { id name status } }', 2);

    expect(run.answersWith).toEqual(run.answersWithout);
    expect(run.received).toEqual(Array(4).fill('/api/v3/pet/findByStatus?status=available'));
    expect(await mismatches(run.sampled)).toEqual({
      'upstream_contract_mismatches_total{service="petstore",operation="findPetsByStatus",path="$[*].status"}': 2,
    });
    const lines = mismatchLines(run.sampled);
    expect(lines).toMatchObject([
      {
        operation: 'findPetsByStatus',
        path: '$[*].status',
        expected: 'must be equal to one of the allowed values: available, pending, sold',
      },
    ]);
    expect(JSON.stringify(lines)).not.toContain('adopted');
  });

  test('an answer that fits is neither counted nor logged', async () => {
    const order = { id: 7, petId: 3, quantity: 2, status: 'placed', complete: false };
    const run = await withAndWithout(json(200, order), '{ order(id: "7") { id quantity } }', 2);
    expect(run.answersWith).toEqual(run.answersWithout);
    expect(await mismatches(run.sampled)).toEqual({});
    expect(mismatchLines(run.sampled)).toEqual([]);
  });

  test('an int64 beyond 2^53 (kept exact as its digits by the decoder) is not a mismatch', async () => {
    const upstream = observed.scripted;
    upstream.answer({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"id":9007199254740993,"petId":3,"quantity":2,"status":"placed","complete":false}',
    });
    const gateway = await observed.serve(scriptedUpstreams(upstream.url), { upstreamContractSample: 1 });
    const answer = await gateway.gql('{ order(id: "9007199254740993") { id } }');
    expect(answer).toEqual({ status: 200, data: { order: { id: '9007199254740993' } } });
    expect(await mismatches(gateway)).toEqual({});
  });
});

describe('the sample', () => {
  /** A client whose every answer is an order with a string quantity, counting its calls. */
  function drifting(): UpstreamClient & { calls: number } {
    const client = {
      service: 'petstore' as const,
      calls: 0,
      request: (call: UpstreamRequest) => {
        client.calls += 1;
        return Promise.resolve({ status: 200, body: { id: 1, quantity: `q-${call.path}` } });
      },
      close: () => Promise.resolve(),
    };
    return client;
  }

  test('picks an answer when the random number is below the fraction, and only then', async () => {
    const log = captureLog();
    const randoms = [0.5, 0.05, 0.2, 0.09];
    const metrics = createMetrics();
    const sampler = new ContractSampler({
      fraction: 0.1,
      log: createLogger('info', log),
      metrics,
      random: () => randoms.shift() ?? 1,
    });
    const inner = drifting();
    const client = sampler.wrap(inner);
    for (let count = 0; count < 4; count += 1)
      await client.request({ operation: 'getOrderById', method: 'GET', path: `/store/order/${count}` });
    // 0.05 and 0.09 are below 0.1: two answers checked, each with its quantity a string.
    expect((await metrics.render()).body).toContain(
      'upstream_contract_mismatches_total{service="petstore",operation="getOrderById",path="$.quantity"} 2',
    );
    expect(inner.calls).toBe(4);
    expect(log.lines()).toHaveLength(1);
    // The time the two checks took is counted (what sampling costs the process), and only theirs.
    const checked = /^upstream_contract_check_seconds_total\{service="petstore"\} (\S+)$/m.exec(
      (await metrics.render()).body,
    );
    expect(Number(checked?.[1])).toBeGreaterThan(0);
  });

  test('counts no check time when no answer is picked', async () => {
    const metrics = createMetrics();
    const sampler = new ContractSampler({
      fraction: 0.1,
      log: createLogger('info', captureLog()),
      metrics,
      random: () => 0.5,
    });
    const client = sampler.wrap(drifting());
    await client.request({ operation: 'getOrderById', method: 'GET', path: '/store/order/1' });
    expect((await metrics.render()).body).not.toMatch(/^upstream_contract_check_seconds_total\{/m);
  });

  test('a check that cannot be made leaves the answer as it was, and is logged once', async () => {
    const log = captureLog();
    const sampler = new ContractSampler({ fraction: 1, log: createLogger('info', log), metrics: undefined });
    // A body whose field cannot be read: the check fails, not because of the answer's shape.
    const body = Object.defineProperty({}, 'quantity', {
      enumerable: true,
      get: () => {
        throw new Error('unreadable');
      },
    });
    const inner: UpstreamClient = {
      service: 'petstore',
      request: () => Promise.resolve({ status: 200, body }),
      close: () => Promise.resolve(),
    };
    const client = sampler.wrap(inner);
    const call = { operation: 'getOrderById', method: 'GET', path: '/store/order/1' } as const;
    for (const answer of [await client.request(call), await client.request(call)]) {
      expect(answer.status).toBe(200);
      expect(answer.body).toBe(body);
    }
    expect(log.lines().filter((line) => line['level'] === 'error')).toMatchObject([
      { operation: 'getOrderById', msg: 'contract sampling cannot check petstore answers: unreadable' },
    ]);
  });

  test('0 turns it off: the client is not even wrapped', () => {
    const inner = drifting();
    const sampler = new ContractSampler({ fraction: 0, log: createLogger('info', captureLog()), metrics: undefined });
    expect(sampler.wrap(inner)).toBe(inner);
  });

  test('a JSON location: indices as *, a missing field named', () => {
    expect(mismatchPath({ instancePath: '/tags/3/id', keyword: 'type', params: {} })).toBe('$.tags[*].id');
    expect(mismatchPath({ instancePath: '/1', keyword: 'required', params: { missingProperty: 'name' } })).toBe(
      '$[*].name',
    );
    expect(mismatchPath({ instancePath: '', keyword: 'type', params: {} })).toBe('$');
  });
});
