/**
 * The retry budget of one upstream area, in this process: retries may add at most a share of
 * the calls the area gets (UPSTREAM_RETRY_BUDGET_PERCENT, 20 by default) over a sliding window,
 * plus a few a window whatever the traffic, so that a quiet gateway still retries a lone failure.
 *
 * Why: each call retried up to UPSTREAM_RETRIES times multiplies the load of an upstream that
 * fails many calls (two retries: up to three times the calls) just when it is struggling; the
 * circuit does not open below its failure rate. A budget keeps a brown-out from becoming an
 * outage, as Google's SRE book ("Handling Overload"), gRPC's retry throttling and Finagle's
 * `RetryBudget` do. A retry the budget refuses is not made: the call fails as its last attempt did.
 */
import { SlidingTally } from './sliding-tally.js';

/** The window the budget is counted over. */
export const RETRY_BUDGET_WINDOW_MS = 10_000;
/** Retries allowed in any window, whatever the share allows. */
export const RETRY_BUDGET_FLOOR = 3;

/** Calls and retries of one area over the last {@link RETRY_BUDGET_WINDOW_MS}. */
export class RetryBudget {
  private readonly tally = new SlidingTally(['calls', 'retries'], RETRY_BUDGET_WINDOW_MS);

  /** @param percent the share of calls retries may add, in percent; 0: no budget (retries as UPSTREAM_RETRIES allows) */
  constructor(private readonly percent: number) {}

  /** A call's first attempt is about to be made. */
  noteCall(): void {
    if (this.percent > 0) this.tally.add('calls');
  }

  /** Takes one retry from the budget: false when it is spent (the retry is not made). */
  takeRetry(): boolean {
    if (this.percent === 0) return true;
    const { calls, retries } = this.tally.totals();
    if (retries * 100 >= RETRY_BUDGET_FLOOR * 100 + this.percent * calls) return false;
    this.tally.add('retries');
    return true;
  }
}
