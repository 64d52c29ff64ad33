/**
 * Settings that keep the gateway honest with a failing or changing upstream: retries, the circuit
 * breaker, Retry-After holds, and the sampled check of answers against their OpenAPI schema.
 */
import { integer, ratio, type Setting } from './parse.js';

/** Retries, the circuit breaker per area, Retry-After holds, and the contract sample. */
export const UPSTREAM_SAFETY_SETTINGS = [
  {
    key: 'upstreamRetries',
    env: 'UPSTREAM_RETRIES',
    default: '2',
    description: 'retries of an upstream GET after a connection error or a 502/503/504 (0: none)',
    details:
      'retries of a `GET` after a refused, reset or closed connection or a 502/503/504 (`0`: none); never ' +
      'of a write, after a timeout, or past the deadline',
    parse: integer(0, 10),
  },
  {
    key: 'upstreamRetryBackoffMs',
    env: 'UPSTREAM_RETRY_BACKOFF_MS',
    default: '50',
    description: 'wait before the first retry, doubled for each further one and jittered, in milliseconds',
    details:
      'wait before the first retry, doubled for each further one, then jittered to a random point in its upper ' +
      'half: 25–50 ms, 50–100 ms, 100–200 ms, …',
    parse: integer(1, 60_000),
  },
  {
    key: 'upstreamRetryBackoffMaxMs',
    env: 'UPSTREAM_RETRY_BACKOFF_MAX_MS',
    default: '1000',
    description: 'longest wait before one retry, in milliseconds',
    details: 'longest wait before one retry (before jitter)',
    parse: integer(1, 600_000),
  },
  {
    key: 'upstreamRetryBudgetPercent',
    env: 'UPSTREAM_RETRY_BUDGET_PERCENT',
    default: '20',
    description:
      "share of an area's calls, in percent, that retries may add over 10 s, beyond 3 retries every 10 s " +
      '(0: no budget)',
    details:
      "percent (0–100) of an area's calls over 10 s that retries may add, beyond 3 retries per 10 s, per " +
      'process; past it the call fails as its last attempt did. `0`: no budget',
    parse: integer(0, 100),
  },
  {
    key: 'upstreamCircuitFailureRate',
    env: 'UPSTREAM_CIRCUIT_FAILURE_RATE',
    default: '50',
    description:
      "percent of an area's calls over the window that must fail for want of the upstream before its circuit " +
      'opens (0: no circuit breaker)',
    details:
      "percent of an area's calls in `UPSTREAM_CIRCUIT_WINDOW_MS` that must fail for want of the upstream " +
      'before its circuit opens; `0`: no breaker. See [When an upstream fails](connect-upstreams.md#when-an-upstream-fails)',
    parse: integer(0, 99),
  },
  {
    key: 'upstreamCircuitFailures',
    env: 'UPSTREAM_CIRCUIT_FAILURES',
    default: undefined,
    description:
      'retired (read until 2.0.0, with a warning): 0 turns the breaker off as UPSTREAM_CIRCUIT_FAILURE_RATE=0 does; ' +
      'another value is taken as UPSTREAM_CIRCUIT_MIN_CALLS; unset: not read',
    details:
      'retired, read until 2.0.0 with a warning: `0` is `UPSTREAM_CIRCUIT_FAILURE_RATE=0`, another value ' +
      '`UPSTREAM_CIRCUIT_MIN_CALLS` (unless that is set); unset: not read',
    parse: integer(0, 100_000),
  },
  {
    key: 'upstreamCircuitMinCalls',
    env: 'UPSTREAM_CIRCUIT_MIN_CALLS',
    default: '10',
    description: "fewest calls in the window before an area's circuit may open",
    details:
      'fewest calls (1–100000) to an area within `UPSTREAM_CIRCUIT_WINDOW_MS` before its failure rate is ' + 'judged',
    parse: integer(1, 100_000),
  },
  {
    key: 'upstreamCircuitWindowMs',
    env: 'UPSTREAM_CIRCUIT_WINDOW_MS',
    default: '10000',
    description: "the sliding window over which an area's failure rate is judged, in milliseconds",
    details:
      "the sliding window (1000–600000 ms) over which an area's failure rate is judged; it moves a tenth of " +
      'its length at a time',
    parse: integer(1000, 600_000),
  },
  {
    key: 'upstreamCircuitCooldownMs',
    env: 'UPSTREAM_CIRCUIT_COOLDOWN_MS',
    default: '5000',
    description: 'how long an open circuit refuses calls to its area before a trial call, in milliseconds',
    details:
      'how long (1–600000 ms) an open circuit refuses calls to its area before one trial call goes through ' +
      '(longer when a 503 asked for more with `Retry-After`)',
    parse: integer(1, 600_000),
  },
  {
    key: 'upstreamRetryAfterMaxMs',
    env: 'UPSTREAM_RETRY_AFTER_MAX_MS',
    default: '60000',
    description: "longest wait a 429's or 503's Retry-After imposes, in milliseconds",
    details:
      "the longest wait (1–3600000 ms) taken from an upstream's `Retry-After`: a 429's holds back the " +
      "caller that received it, a 503's delays that call's retry",
    parse: integer(1, 3_600_000),
  },
  {
    key: 'upstreamContractSample',
    env: 'UPSTREAM_CONTRACT_SAMPLE',
    default: '0.01',
    description:
      'fraction of upstream answers checked against their OpenAPI response schema, from 0 (off) to 1; a ' +
      'mismatch is counted and logged, never changes the answer',
    details:
      'share of JSON upstream answers checked against their response schema (`0`: off); a mismatch is ' +
      'logged, the answer kept. See [Watch its answers](connect-upstreams.md#watch-its-answers)',
    parse: ratio,
  },
] as const satisfies readonly Setting[];
