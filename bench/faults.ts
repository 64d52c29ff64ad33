/**
 * Faults under load, the longer run of `test/upstream-faults-load.test.ts`: the compiled gateway
 * (WORKERS=1, production settings, UPSTREAM_TIMEOUT_MS=1000 so that a stalled answer ends within
 * the run) in front of a pet store that fails a seeded random share of calls, and 20 callers,
 * each with its own credential, asking for pets 1–97 in turn (in-flight sharing answers few).
 * Three loads: every kind of fault on 20% of calls, 503 with `Retry-After: 1` on 3% (an
 * upstream shedding load), and one caller against 503 without `Retry-After` on 40% (below the
 * circuit's rate: the retry budget alone bounds the calls per query). Measured: the share of answers with data, HTTP 5xx, dropped
 * connections, uncoded errors, answers holding the upstream's words, latency, and the gateway's
 * resident memory each second.
 */
import { percentile } from './load.js';
import { memoryOf, startGateway } from './children.js';
import {
  runFaultLoad,
  startFaultyUpstream,
  type Fault,
  type FaultLoadResult,
} from '../test/helpers/faulty-upstream.js';

/** The deadline of each upstream call in these runs. */
export const FAULT_DEADLINE_MS = 1000;
const CLIENTS = 20;

/** One load's figures: what its answers were (see {@link FaultLoadResult}), latency, memory, and what the upstream did. */
export type FaultRun = FaultLoadResult & {
  label: string;
  seconds: number;
  clients: number;
  /** calls the upstream received, and the faults it gave */
  upstreamCalls: number;
  faults: Partial<Record<Fault, number>>;
  p50: number;
  p99: number;
  /** the gateway's resident set size, in bytes, once a second */
  rss: number[];
};

/** The three loads, each `seconds` long (after a warm-up of a second, not counted). */
export async function faultRuns(seconds: { faults: number; shedding: number }): Promise<FaultRun[]> {
  return [
    await faultRun('20% of calls fail, every kind of fault', { faultRate: 0.2, seed: 7 }, seconds.faults),
    await faultRun(
      '3% of calls shed: 503 with Retry-After: 1',
      { faultRate: 0.03, faults: ['shed-503'], seed: 11 },
      seconds.shedding,
    ),
    await faultRun(
      'one caller, 40% of calls fail with 503 (no Retry-After)',
      { faultRate: 0.4, faults: ['status-503'], seed: 5, clients: 1 },
      seconds.shedding,
    ),
  ];
}

/** A load that goes on for `seconds`. */
function forSeconds(seconds: number): { more: () => boolean } {
  const end = performance.now() + seconds * 1000;
  return { more: () => performance.now() < end };
}

async function faultRun(
  label: string,
  options: { faultRate: number; faults?: readonly Fault[]; seed: number; clients?: number },
  seconds: number,
): Promise<FaultRun> {
  const clients = options.clients ?? CLIENTS;
  const upstream = await startFaultyUpstream(options);
  const gateway = await startGateway(`faults-${options.seed}`, {
    NODE_ENV: 'production',
    WORKERS: '1',
    PETSTORE_URL: upstream.petstoreUrl,
    PLANTS_URL: upstream.plantsUrl,
    UPSTREAM_TIMEOUT_MS: String(FAULT_DEADLINE_MS),
  });
  try {
    await runFaultLoad(gateway.url, clients, forSeconds(1));
    const callsBefore = upstream.counts.calls;
    const faultsBefore = { ...upstream.counts.faults };
    const rss: number[] = [];
    const sampler = setInterval(() => rss.push(memoryOf(gateway.pid).rss), 1000);
    const latenciesMs: number[] = [];
    const result = await runFaultLoad(gateway.url, clients, {
      ...forSeconds(seconds),
      watch: async (request) => {
        const started = performance.now();
        try {
          return await request();
        } finally {
          latenciesMs.push(performance.now() - started);
        }
      },
    }).finally(() => clearInterval(sampler));
    const faults: Partial<Record<Fault, number>> = {};
    for (const [fault, count] of Object.entries(upstream.counts.faults) as [Fault, number][])
      faults[fault] = count - (faultsBefore[fault] ?? 0);
    return {
      label,
      seconds,
      clients,
      upstreamCalls: upstream.counts.calls - callsBefore,
      faults,
      ...result,
      p50: percentile(latenciesMs, 50),
      p99: percentile(latenciesMs, 99),
      rss,
    };
  } finally {
    await gateway.stop();
    await upstream.close();
  }
}
