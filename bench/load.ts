/**
 * One load run with autocannon (programmatic), with exact latencies: autocannon's own
 * histogram has a resolution of 1 ms, too coarse for "p50 added latency ≤ 1 ms", so every
 * 2xx response time it reports is kept and the percentiles are computed from them.
 */
import { inspect } from 'node:util';
import autocannon from 'autocannon';
import { memoryOf } from './children.js';

/** What a run sends. */
export type Target = {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
};

/** The outcome of one run. */
export type RunResult = {
  /** 2xx answers */
  requests: number;
  seconds: number;
  /** 2xx response times, in milliseconds */
  latencies: number[];
  /** bytes of the 2xx responses as received (status line, headers, body as sent: compressed or not) */
  bytes: number;
  /** non-2xx answers, connection errors and timeouts */
  failures: number;
  /** highest resident set size of any one watched process during the run, in bytes (0 when none is watched) */
  peakRss: number;
};

/**
 * Drives `connections` keep-alive connections at `target` for `seconds` (or for `amount`
 * requests), sampling the resident set size of each of `watchPids` (a gateway's process tree:
 * the primary and its workers, each on its own) every 100 ms.
 */
export function runLoad(
  target: Target | Target[],
  options: { connections: number; seconds?: number; amount?: number; watchPids?: readonly number[] },
): Promise<RunResult> {
  const targets = Array.isArray(target) ? target : [target];
  const first = targets[0];
  if (first === undefined) throw new Error('no target');
  const latencies: number[] = [];
  let bytes = 0;
  let failures = 0;
  let peakRss = 0;
  const sample = () => {
    for (const pid of options.watchPids ?? []) peakRss = Math.max(peakRss, memoryOf(pid).rss);
  };
  sample();
  const sampler = setInterval(sample, 100);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: first.url,
        connections: options.connections,
        ...(options.amount !== undefined ? { amount: options.amount } : { duration: options.seconds ?? 1 }),
        requests: targets.map((each) => ({
          method: each.method,
          path: new URL(each.url).pathname + new URL(each.url).search,
          headers: each.headers,
          ...(each.body !== undefined ? { body: each.body } : {}),
        })),
        timeout: 10,
      },
      (error: unknown, result: autocannon.Result) => {
        clearInterval(sampler);
        sample();
        if (error) return reject(error instanceof Error ? error : new Error(inspect(error)));
        const seconds = (performance.now() - started) / 1000;
        failures += result.non2xx + result.errors + result.timeouts;
        resolve({ requests: latencies.length, seconds, latencies, bytes, failures, peakRss });
      },
    );
    instance.on('response', (_client, statusCode, responseBytes, responseTime) => {
      if (statusCode < 200 || statusCode >= 300) return;
      latencies.push(responseTime);
      bytes += responseBytes;
    });
  });
}

/** The p-th percentile (0–100) of unsorted values, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}
