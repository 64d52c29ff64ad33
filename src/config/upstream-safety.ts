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
      'retries of a `GET` after a refused, reset or closed connection or a 502/503/504 answer (`0`: none). ' +
      'Never of a `POST`, `PUT` or `DELETE`, never after a timeout, and never one that would start after the ' +
      "call's deadline",
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
      "share of an area's calls, in percent, that retries may add over 10 s, beyond 10 retries every 10 s " +
      '(0: no budget)',
    details:
      "the share (0–100) of one area's calls over the last 10 s that retries may add, in percent, beyond a " +
      'floor of 10 retries every 10 s so that a quiet gateway still retries a lone failure; counted per ' +
      'process. A retry past the budget is not made: the call fails as its last attempt did (same code), and ' +
      '`upstream_retries_refused_total` counts it. Retries multiply the load of an upstream that fails many ' +
      'calls, just when it struggles. `0`: no budget, each call retried as `UPSTREAM_RETRIES` allows',
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
      "percent (1–99) of one area's calls over `UPSTREAM_CIRCUIT_WINDOW_MS` that must fail for want of the " +
      'upstream (no connection, a reset, no answer in time, a 502, 503 or 504) before its circuit opens, once ' +
      'the window holds `UPSTREAM_CIRCUIT_MIN_CALLS` calls, and only if those failures came from more than one ' +
      'caller (credential; callers without one count as many). A 4xx counts as a success; a 500 or an ' +
      'unreadable answer counts for nothing, since one request can provoke them. Open, calls fail at once with ' +
      '`UPSTREAM_UNAVAILABLE` for the cool-down, then one trial call goes through, and its success closes the ' +
      'circuit. `0`: no circuit breaker. See [Circuit ' +
      'breaking](operations.md#circuit-breaking-and-upstream-back-pressure)',
    parse: integer(0, 99),
  },
  {
    key: 'upstreamCircuitFailures',
    env: 'UPSTREAM_CIRCUIT_FAILURES',
    default: undefined,
    description:
      'retired (read until 2.0.0, with a warning): 0 turns the breaker off as UPSTREAM_CIRCUIT_FAILURE_RATE=0 does; ' +
      'another value is taken as UPSTREAM_CIRCUIT_MIN_CALLS',
    details:
      'retired: the circuit opens on a failure rate over a window, no longer on failures in a row. Still read ' +
      'until the next major release, with a warning at start: `0` turns the breaker off (as ' +
      '`UPSTREAM_CIRCUIT_FAILURE_RATE=0`), another value is taken as `UPSTREAM_CIRCUIT_MIN_CALLS`; either only ' +
      'where that setting is not set itself',
    parse: integer(0, 100_000),
  },
  {
    key: 'upstreamCircuitMinCalls',
    env: 'UPSTREAM_CIRCUIT_MIN_CALLS',
    default: '10',
    description: "fewest calls in the window before an area's circuit may open",
    details:
      'fewest calls (1–100000) to one area within `UPSTREAM_CIRCUIT_WINDOW_MS` before its failure rate is ' +
      'judged: below it, the circuit stays closed however many fail, so a few calls never close an area',
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
      'how long (1–600000 ms) an open circuit refuses calls to its area before one trial call goes through; ' +
      'longer when a 503 of the window asked for more with `Retry-After` (at most ' +
      '`UPSTREAM_RETRY_AFTER_MAX_MS`); with `REDIS_URL` the other replicas refuse calls to that area as long',
    parse: integer(1, 600_000),
  },
  {
    key: 'upstreamRetryAfterMaxMs',
    env: 'UPSTREAM_RETRY_AFTER_MAX_MS',
    default: '60000',
    description: "longest wait a 429's or 503's Retry-After imposes, in milliseconds",
    details:
      'the longest wait (1–3600000 ms) taken from a `Retry-After` (seconds or an HTTP-date). A 429 with ' +
      '`Retry-After` holds back the credentials that received it, for that area: their calls fail at once with ' +
      '`UPSTREAM_RATE_LIMITED` and `extensions.retryAfter` until then, while other callers keep calling ' +
      "(callers without a credential share one hold). A 503 with `Retry-After` holds nobody: that call's retry " +
      "waits for it (or is not made past the deadline), and it lengthens the cool-down if the area's circuit " +
      'opens',
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
      'the share of successful JSON upstream answers checked against the response schema of their operation in ' +
      '`schema/*.openapi.yaml`, from 0 (off) to 1. A mismatch never changes the answer: it is counted in ' +
      '`upstream_contract_mismatches_total{service,operation,path}` and logged once per operation and path. An ' +
      'answer not picked costs one random number; see [Upstream ' +
      'safety](upstream-safety.md#run-time-sampling-upstream_contract_sample)',
    parse: ratio,
  },
] as const satisfies readonly Setting[];
