/**
 * Retries of one upstream call: a read (GET) that met a connection error or a 502/503/504 is
 * tried again, up to UPSTREAM_RETRIES times, after a backoff (UPSTREAM_RETRY_BACKOFF_MS, doubled
 * each time, jittered) or the time a 503's Retry-After asked for, whichever is longer; never
 * once the retry could only start at or after the call's deadline, never once the area's
 * circuit has opened, never once a 429 holds the caller back, and never past the area's retry
 * budget (`retry-budget.ts`). A write is sent once: it may have been carried out although its
 * answer was lost.
 */
import type { UpstreamRequest } from './call.js';
import type { RequestScope } from './request-scope.js';
import { afterRetries, type UpstreamError, type UpstreamService } from './failure.js';
import type { Attempt, CallLimits } from './transport.js';
import type { RawResponse } from './cache.js';
import type { RetryBudget } from './retry-budget.js';

/** A retry about to happen. */
export type RetryEvent = {
  service: UpstreamService;
  operation: string;
  /** 1 for the first retry */
  retry: number;
  /** the wait before it, in milliseconds */
  delayMs: number;
  /** the failure that caused it: `status 503`, `ECONNREFUSED`, … */
  reason: string;
  /** the request the call is made for, when its caller said */
  scope?: RequestScope;
};

/** How many retries, how long between them, and who hears of each. */
export type RetryPolicy = {
  service: UpstreamService;
  /** UPSTREAM_RETRIES; 0: none */
  retries: number;
  /** UPSTREAM_RETRY_BACKOFF_MS */
  backoffMs: number;
  /** UPSTREAM_RETRY_BACKOFF_MAX_MS */
  backoffMaxMs: number;
  onRetry?: ((event: RetryEvent) => void) | undefined;
  /** the area's retry budget (UPSTREAM_RETRY_BUDGET_PERCENT) */
  budget: RetryBudget;
  /** called for each retry the budget refused, for metrics */
  onRetryRefused?: ((event: { service: UpstreamService; operation: string }) => void) | undefined;
};

/** What the retries run between: one try, and the checks made before another. */
export type RetrySteps = {
  attempt(call: UpstreamRequest, limits: CallLimits): Promise<Attempt>;
  /** the refusal of a call whose caller a 429 holds back now, if it is */
  heldBack(call: UpstreamRequest): UpstreamError | undefined;
  /** false once the area's circuit is no longer closed */
  admits(): boolean;
};

/** A successful call: its answer, and the retries it took. */
export type Sent = { response: RawResponse; retries: number };

/**
 * The wait before retry number `retry` (1 for the first): `baseMs` doubled for each retry after
 * the first, capped at `maxMs`, then jittered to a random point in its upper half. The jitter
 * spreads out callers that failed together (so they do not all come back at once); keeping
 * the lower half out keeps each wait growing.
 */
export function retryDelay(retry: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** (retry - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** One call, retried as its method and failure allow, within `limits`. */
export async function withRetries(
  call: UpstreamRequest,
  limits: CallLimits,
  policy: RetryPolicy,
  steps: RetrySteps,
): Promise<Sent> {
  // Only a read can be sent twice without risk.
  const idempotent = call.method === 'GET';
  for (let retry = 0; ; retry += 1) {
    // Another replica may have been told 429 for this caller while this call waited to retry.
    const held = retry > 0 ? steps.heldBack(call) : undefined;
    if (held !== undefined) throw afterRetries(held, retry);
    if (retry === 0) policy.budget.noteCall();
    const outcome = await steps.attempt(call, limits);
    if (outcome.ok) return { response: outcome.response, retries: retry };
    // Nor is a retry made once the area's circuit has opened (other calls failed meanwhile).
    if (!idempotent || !outcome.transient || retry >= policy.retries || !steps.admits())
      throw afterRetries(outcome.error, retry);
    // Never before the time the answer's Retry-After (a 503's) asked for.
    const delayMs = Math.max(
      retryDelay(retry + 1, policy.backoffMs, policy.backoffMaxMs),
      outcome.error.retryAfterMs ?? 0,
    );
    // A retry that could only start at or after the deadline is not made; the caller gets the failure there is.
    if (performance.now() + delayMs >= limits.deadline()) throw afterRetries(outcome.error, retry);
    // Past the area's budget, the failure stands as it is: retries must not multiply a struggling upstream's load.
    if (!policy.budget.takeRetry()) {
      policy.onRetryRefused?.({ service: policy.service, operation: call.operation });
      throw afterRetries(outcome.error, retry);
    }
    policy.onRetry?.({
      service: policy.service,
      operation: call.operation,
      retry: retry + 1,
      delayMs,
      reason: outcome.reason,
      ...(call.scope ? { scope: call.scope } : {}),
    });
    limits.progress.retries = retry + 1;
    limits.progress.retrying = afterRetries(outcome.error, retry);
    await sleep(delayMs);
    limits.progress.retrying = undefined;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
