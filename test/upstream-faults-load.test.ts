/**
 * Faults under load: 20 callers, each with its own credential, against a gateway with its
 * default upstream safety (retries, circuit breaker, Retry-After) in front of a pet store that
 * fails a seeded random share of its calls (`helpers/faulty-upstream.ts`). What must hold,
 * whatever the upstream does: no HTTP 5xx and no dropped connection, every error coded from
 * `ErrorCode`, nothing of the upstream's own words in any answer, and a share of clean answers
 * close to what the upstream's success rate allows. The bench runs the same load for longer,
 * and measures its latency and memory (bench/RESULTS.md).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import {
  FAULTS,
  runFaultLoad,
  startFaultyUpstream,
  type FaultLoadResult,
  type FaultyUpstreamOptions,
} from './helpers/faulty-upstream.js';
import { serveObserved, timeoutsSetBy, type ObservedGateway } from './helpers/stack.js';
import { RETRY_BUDGET_FLOOR } from '../src/upstream/retry-budget.js';

const CLIENTS = 20;
const QUERIES = 400;
const DEFAULTS = loadConfig([], {});

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/** A gateway with the default upstream safety (a short deadline, so stalls end soon) in front of a faulty pet store. */
async function faultyStack(options: FaultyUpstreamOptions) {
  const upstream = await startFaultyUpstream(options);
  const gateway: ObservedGateway = await serveObserved(upstream, {
    upstreamCircuitFailureRate: DEFAULTS.upstreamCircuitFailureRate,
    upstreamRetryBudgetPercent: DEFAULTS.upstreamRetryBudgetPercent,
    upstreamTimeouts: timeoutsSetBy({ UPSTREAM_TIMEOUT_MS: '500' }),
    logLevel: 'warn',
  });
  closing.push(
    () => gateway.close(),
    () => upstream.close(),
  );
  return { upstream, gateway };
}

/** The properties every answer of a load must have, whatever the upstream did. */
function expectSound(result: FaultLoadResult): void {
  expect(result.answers).toBe(QUERIES);
  expect(result).toMatchObject({ serverErrors: 0, dropped: 0, uncoded: 0, leaked: 0 });
}

describe('an upstream that fails 20% of calls at random, with every kind of fault', () => {
  it('leaves at least 60% of answers clean, and none a 5xx, uncoded or leaking the upstream text', async () => {
    const { upstream, gateway } = await faultyStack({ faultRate: 0.2, seed: 7 });

    const result = await runFaultLoad(gateway.url, CLIENTS, { more: (sent) => sent < QUERIES });

    expectSound(result);
    expect(result.clean / result.answers).toBeGreaterThanOrEqual(0.6);
    // Every kind of fault was met, and each became a coded error or was retried away.
    expect(Object.keys(upstream.counts.faults).sort()).toEqual([...FAULTS].sort());
    expect(Object.keys(result.codes).every((code) => code.startsWith('UPSTREAM_'))).toBe(true);
    // The circuit stayed closed: the faults are a fifth of the calls, not most of them.
    expect(result.codes['UPSTREAM_UNAVAILABLE'] ?? 0).toBeLessThan(QUERIES * 0.2);
    expect(gateway.log.text()).not.toContain('circuit open');
  });
});

describe('an upstream that sheds 3% of calls with 503 and Retry-After: 1', () => {
  it('leaves at least 80% of answers with data: a shed call holds nobody back', async () => {
    const { upstream, gateway } = await faultyStack({ faultRate: 0.03, faults: ['shed-503'], seed: 11 });

    const result = await runFaultLoad(gateway.url, CLIENTS, { more: (sent) => sent < QUERIES });

    expectSound(result);
    expect(upstream.counts.faults['shed-503']).toBeGreaterThan(0);
    expect(result.clean / result.answers).toBeGreaterThanOrEqual(0.8);
    // Every query was asked of the upstream (none refused for another's 503), retries besides.
    expect(upstream.counts.calls).toBeGreaterThanOrEqual(QUERIES);
  });
});

describe('one caller, an upstream that fails 40% of calls at random with 503 (no Retry-After)', () => {
  it("makes at most 1.3 upstream calls per query (plus the budget's floor): retries stay within the retry budget", async () => {
    const { upstream, gateway } = await faultyStack({ faultRate: 0.4, faults: ['status-503'], seed: 5 });
    const queries = 300;

    const result = await runFaultLoad(gateway.url, 1, { more: (sent) => sent < queries });

    expect(result).toMatchObject({ answers: queries, serverErrors: 0, dropped: 0, uncoded: 0, leaked: 0 });
    expect(Object.keys(result.codes)).toEqual(['UPSTREAM_UNAVAILABLE']);
    expect(upstream.counts.calls).toBeLessThanOrEqual(queries * 1.3 + RETRY_BUDGET_FLOOR);
    // Retries were made, and those past the budget refused and counted.
    expect(upstream.counts.calls).toBeGreaterThan(queries);
    const metrics = await (await fetch(new URL('/metrics', gateway.url))).text();
    expect(metrics).toMatch(/^upstream_retries_refused_total\{service="petstore",operation="getPetById"\} [1-9]\d*$/m);
  });
});
